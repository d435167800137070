// SPDX-License-Identifier: Apache-2.0
#include "passes/bind/profiles.h"

#include <algorithm>

namespace plancert::bind {

std::string ir_dtype(std::string_view k) {
  if (k == "float16") return "fp16";
  if (k == "bfloat16") return "bf16";
  if (k == "float32") return "fp32";
  if (k == "float8") return "fp8";
  return std::string(k);
}

namespace {

Capability cap(CapabilityKind kind, std::string dtype = {}, std::optional<CollectiveKind> coll = std::nullopt, std::optional<Reduction> red = std::nullopt) {
  return Capability{coll, std::move(dtype), kind, red};
}

std::string impl_name(const Capability& c) {
  switch (c.kind) {
    case CapabilityKind::matrix: return "gemm." + c.dtype;
    case CapabilityKind::vector: return "vector." + c.dtype;
    case CapabilityKind::collective: {
      std::string n = "ring." + std::string(codec::enum_name(*c.collective));
      if (c.reduction && *c.reduction != Reduction::none) n += "." + std::string(codec::enum_name(*c.reduction));
      return n;
    }
    case CapabilityKind::transfer: return "p2p";
    case CapabilityKind::host: return "host.call";
    default: return c.dtype.empty() ? std::string("memcpy") : "memcpy." + c.dtype;
  }
}

}  // namespace

TargetProfile target_profile(const frontend::SystemConfig& s) {
  TargetProfile t;
  t.name = s.name;
  EngineProfile matrix{"matrix", {}}, vector{"vector", {}}, collective{"collective", {}}, transfer{"transfer", {}};
  for (const auto& [k, peak] : s.matrix) matrix.capabilities.push_back(cap(CapabilityKind::matrix, ir_dtype(k)));
  std::vector<std::string> vdt;
  for (const auto& [k, peak] : s.vector) vdt.push_back(ir_dtype(k));
  if (std::find(vdt.begin(), vdt.end(), "fp32") == vdt.end()) vdt.push_back("fp32");
  for (const auto& d : vdt) vector.capabilities.push_back(cap(CapabilityKind::vector, d));
  auto every_tier = [&](const char* op) {
    return !s.networks.empty() && std::all_of(s.networks.begin(), s.networks.end(), [&](const frontend::NetworkTier& n) { return n.ops.count(op) > 0; });
  };
  if (every_tier("all_gather")) collective.capabilities.push_back(cap(CapabilityKind::collective, "", CollectiveKind::all_gather, Reduction::none));
  if (every_tier("reduce_scatter")) collective.capabilities.push_back(cap(CapabilityKind::collective, "", CollectiveKind::reduce_scatter, Reduction::sum));
  if (every_tier("all_reduce")) collective.capabilities.push_back(cap(CapabilityKind::collective, "", CollectiveKind::all_reduce, Reduction::sum));
  if (every_tier("p2p")) transfer.capabilities.push_back(cap(CapabilityKind::transfer));
  // Copies move bytes of any dtype the device computes in (a KV-cache write names its dtype).
  EngineProfile memory{"memory", {cap(CapabilityKind::memory)}};
  for (const auto& c : matrix.capabilities) memory.capabilities.push_back(cap(CapabilityKind::memory, c.dtype));
  for (const auto& c : vector.capabilities)
    if (std::none_of(memory.capabilities.begin(), memory.capabilities.end(), [&](const Capability& m) { return m.dtype == c.dtype; }))
      memory.capabilities.push_back(cap(CapabilityKind::memory, c.dtype));
  t.engines = {matrix, vector, collective, transfer, EngineProfile{"host", {cap(CapabilityKind::host)}}, memory};
  for (const auto& e : t.engines)
    for (const auto& c : e.capabilities) t.implementations.push_back(ImplementationProfile{impl_name(c), c});
  t.spaces = {MemorySpace{"hbm", s.mem1.capacity_bytes, 256}, MemorySpace{"host", s.mem2.capacity_bytes, 64}};
  return t;
}

DeploymentProfile deployment_profile(const frontend::SystemConfig& s, const frontend::StrategyConfig& st) {
  DeploymentProfile d;
  d.devices = st.tp * st.pp * st.dp;
  for (const auto& n : s.networks) d.tier_sizes.push_back(n.size);
  if (st.tp_net) d.axis_tier["tp"] = *st.tp_net;
  if (st.pp_net) d.axis_tier["pp"] = *st.pp_net;
  if (st.dp_net) d.axis_tier["dp"] = *st.dp_net;
  return d;
}

std::vector<std::string> deployment_problems(const DeploymentProfile& d, const frontend::StrategyConfig& st) {
  std::vector<std::string> out;
  std::int64_t widest = 0;
  for (auto n : d.tier_sizes) widest = std::max(widest, n);
  if (!d.tier_sizes.empty() && d.devices > widest)
    out.push_back("the deployment needs " + std::to_string(d.devices) + " devices, but the widest network tier reaches " + std::to_string(widest));
  const std::pair<const char*, std::int64_t> axes[] = {{"tp", st.tp}, {"pp", st.pp}, {"dp", st.dp}};
  for (const auto& [axis, size] : axes) {
    auto it = d.axis_tier.find(axis);
    if (it == d.axis_tier.end() || it->second < 0 || static_cast<std::size_t>(it->second) >= d.tier_sizes.size()) continue;
    // A pipeline axis only pairs neighbours; a collective axis needs all its ranks on one tier.
    const std::int64_t group = std::string_view(axis) == "pp" ? std::min<std::int64_t>(size, 2) : size;
    if (group > d.tier_sizes[static_cast<std::size_t>(it->second)])
      out.push_back(std::string("mesh axis ") + axis + " of size " + std::to_string(size) + " does not fit network tier " + std::to_string(it->second) + " of " +
                    std::to_string(d.tier_sizes[static_cast<std::size_t>(it->second)]) + " ranks");
  }
  return out;
}

TargetProfile permissive_target(const Int& capacity) {
  TargetProfile t;
  t.name = "permissive";
  auto cap = [](CapabilityKind k, std::string dt = {}, std::optional<CollectiveKind> c = std::nullopt, std::optional<Reduction> r = std::nullopt) {
    return Capability{c, std::move(dt), k, r};
  };
  EngineProfile matrix{"matrix", {}}, vector{"vector", {}}, coll{"collective", {}}, memory{"memory", {cap(CapabilityKind::memory)}};
  for (const char* d : {"fp8", "fp16", "bf16", "fp32"}) {
    matrix.capabilities.push_back(cap(CapabilityKind::matrix, d));
    vector.capabilities.push_back(cap(CapabilityKind::vector, d));
    memory.capabilities.push_back(cap(CapabilityKind::memory, d));
  }
  for (auto k : {CollectiveKind::all_gather, CollectiveKind::all_to_all, CollectiveKind::broadcast}) coll.capabilities.push_back(cap(CapabilityKind::collective, "", k, Reduction::none));
  for (auto k : {CollectiveKind::all_reduce, CollectiveKind::reduce_scatter})
    for (auto r : {Reduction::sum, Reduction::max, Reduction::min}) coll.capabilities.push_back(cap(CapabilityKind::collective, "", k, r));
  t.engines = {matrix, vector, coll, EngineProfile{"transfer", {cap(CapabilityKind::transfer)}}, EngineProfile{"host", {cap(CapabilityKind::host)}}, memory};
  for (const auto& e : t.engines)
    for (const auto& c : e.capabilities) {
      std::string name = std::string(codec::enum_name(c.kind)) + (c.dtype.empty() ? "" : "." + c.dtype);
      if (c.collective) name += "." + std::string(codec::enum_name(*c.collective)) + "." + std::string(codec::enum_name(*c.reduction));
      t.implementations.push_back(ImplementationProfile{name, c});
    }
  t.spaces = {MemorySpace{"hbm", capacity, 256}};
  return t;
}

DeploymentProfile deployment(std::int64_t devices) {
  DeploymentProfile d;
  d.devices = devices;
  d.tier_sizes = {devices};
  return d;
}

}  // namespace plancert::bind
