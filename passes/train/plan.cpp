// SPDX-License-Identifier: Apache-2.0
#include "passes/train/plan.h"

#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "verifiers/gate.h"

#include <map>
#include <set>

namespace plancert::passes {
namespace {

std::vector<Capability> requirements(const DistTask& t, const std::string& dtype) {
  std::vector<Capability> r;
  if (t.kind == TaskKind::collective) r.push_back(Capability{t.collective->kind, "", CapabilityKind::collective, t.collective->reduction});
  else if (t.kind == TaskKind::send || t.kind == TaskKind::recv) r.push_back(Capability{std::nullopt, "", CapabilityKind::transfer, std::nullopt});
  else {
    if (t.work.matrix_ops != Expr()) r.push_back(Capability{std::nullopt, dtype, CapabilityKind::matrix, std::nullopt});
    if (t.work.vector_ops != Expr()) r.push_back(Capability{std::nullopt, t.phase == Phase::optimizer ? "fp32" : dtype, CapabilityKind::vector, std::nullopt});
  }
  return r;
}

}  // namespace

PortableTask portable_task(const DistTask& dt, const std::string& rule) {
  PortableTask pt;
  pt.id = "p:" + dt.id;
  pt.kind = dt.kind;
  pt.dependencies = dt.dependencies;
  pt.ranks = dt.ranks;
  pt.work = dt.work;
  pt.phase = dt.phase;
  pt.repeat = dt.repeat;
  pt.replication = dt.replication;
  pt.attrs = dt.attrs;
  pt.effects = dt.effects;
  pt.lineage = Lineage{LineageKind::derived, rule, {dt.id}};
  pt.group = dt.kind == TaskKind::collective ? (dt.collective->axis == "dp" ? "dp" : "tp") : dt.kind == TaskKind::compute ? "compute" : "pp";
  return pt;
}

PortablePlanIR plan_training(const ModelIR& m, const DistributedTaskIR& d, const frontend::StrategyConfig& s) {
  PortablePlanIR p;
  p.rules = {"train.plan.task", "train.plan.buffer"};
  p.symbols = d.symbols;
  const std::string dtype(frontend::to_string(s.dtype));
  const std::int64_t t = s.tp, dp = s.dp;
  const bool sp = s.sequence_parallel && t > 1;
  std::map<std::string, std::size_t> op_index, value_index;
  for (std::size_t i = 0; i < m.operations.size(); ++i) op_index[m.operations[i].id] = i;
  for (std::size_t i = 0; i < m.values.size(); ++i) value_index[m.values[i].id] = i;
  std::vector<std::int64_t> producer(m.values.size(), -1);
  for (std::size_t i = 0; i < m.operations.size(); ++i)
    for (Index v : m.operations[i].outputs) producer[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(i);

  // Tasks: one per distributed task, same index, same dependencies and work.
  for (const auto& dt : d.tasks) {
    PortableTask pt = portable_task(dt, "train.plan.task");
    pt.requires_ = requirements(dt, dtype);
    p.tasks.push_back(std::move(pt));
  }
  auto stage_of = [&](const Indices& ranks) { return ranks.front() / (dp * t); };

  // Stored activations: walk backward tasks and the tensors their operation saves.
  const bool full = s.recompute == frontend::Recompute::Full, selective = s.recompute == frontend::Recompute::Selective;
  auto recomputed = [&](std::size_t op) {
    const auto& a = m.operations[op].attrs;
    const std::string& layer = a.at("layer");
    if (layer == "embedding" || layer == "head") return false;
    return full || (selective && a.count("region"));
  };
  auto unit = [&](std::size_t op) {
    const auto& a = m.operations[op].attrs;
    return a.at("layer") + (full ? "" : "/" + (a.count("region") ? a.at("region") : std::string()));
  };
  // The ranks a stored tensor is split over: t, t_kv for the KV heads, or 1.
  auto divisor = [&](Index v) -> std::int64_t {
    std::int64_t prod = producer[static_cast<std::size_t>(v)];
    if (prod < 0) return sp ? t : 1;  // a graph input (layer 0 without a vocabulary) arrives sequence-sharded under SP
    const Operation& op = m.operations[static_cast<std::size_t>(prod)];
    const std::string& tp = op.attrs.at("tp");
    if (tp == "kv") return kv_groups(op, t);
    return tp == "column" || tp == "head" || (tp == "vocab" && op.kind != "embedding") || (sp && (tp == "replicated" || tp == "row" || tp == "vocab")) ? t : 1;
  };
  // Which portable task produced each model value last (forward, recompute or receive).
  std::map<std::pair<std::int64_t, std::string>, Index> made_by;  // (stage, value id) -> task
  std::map<std::pair<std::int64_t, std::string>, Index> act_buffer;
  std::map<std::pair<std::int64_t, std::int64_t>, Indices> chunk_buffers;
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& dt = d.tasks[i];
    const std::int64_t st = stage_of(dt.ranks);
    if (dt.kind == TaskKind::recv) { made_by[{st, dt.value}] = static_cast<Index>(i); continue; }
    if (dt.kind != TaskKind::compute || dt.phase == Phase::optimizer) continue;
    std::size_t op = op_index.at(dt.lineage.sources.at(0));
    if (dt.phase == Phase::forward || dt.phase == Phase::recompute) {
      for (Index v : m.operations[op].outputs) made_by[{st, m.values[static_cast<std::size_t>(v)].id}] = static_cast<Index>(i);
      continue;
    }
    for (const Index v : saved_values(m.operations[op], m.values.size())) {
      const std::string& vid = m.values[static_cast<std::size_t>(v)].id;
      std::int64_t prod = producer[static_cast<std::size_t>(v)];
      bool stored = !recomputed(op) || !(prod >= 0 && recomputed(static_cast<std::size_t>(prod)) && unit(static_cast<std::size_t>(prod)) == unit(op));
      if (!stored) continue;
      auto key = std::make_pair(st, vid);
      auto it = act_buffer.find(key);
      if (it == act_buffer.end()) {
        PortableBuffer b;
        b.id = "act:s" + std::to_string(st) + ":" + vid;
        b.role = BufferRole::activation;
        b.storage = prod < 0 ? Storage::input : Storage::transient;
        b.alignment = 256;
        Expr bytes = elements(m.values[static_cast<std::size_t>(v)]) * Expr(dtype_bytes(m.values[static_cast<std::size_t>(v)].dtype));
        b.size = bytes / Rat(divisor(v));
        b.lineage = Lineage{LineageKind::derived, "train.plan.buffer", {prod >= 0 ? d.tasks[static_cast<std::size_t>(made_by.at(key))].id : dt.id}};
        if (prod >= 0) {
          Index maker = made_by.at(key);
          b.producer = maker;
          p.tasks[static_cast<std::size_t>(maker)].outputs.push_back(static_cast<Index>(p.buffers.size()));
        }
        it = act_buffer.emplace(key, static_cast<Index>(p.buffers.size())).first;
        chunk_buffers[{st, std::stoll(dt.attrs.at("chunk"))}].push_back(it->second);
        p.buffers.push_back(std::move(b));
      }
      auto& task_in = p.tasks[i].inputs;
      if (std::find(task_in.begin(), task_in.end(), it->second) == task_in.end()) {
        task_in.push_back(it->second);
        p.buffers[static_cast<std::size_t>(it->second)].consumers.push_back(static_cast<Index>(i));
      }
    }
  }

  // Weights, gradients and optimizer state per stage, from the distribution's shards.
  auto bpp = bytes_per_parameter(s.dtype, s.distributed_optimizer, dp);
  std::map<std::int64_t, std::array<Indices, 3>> static_buffers;
  std::map<std::int64_t, Index> optimizer_task;
  for (std::size_t i = 0; i < d.tasks.size(); ++i)
    if (d.tasks[i].phase == Phase::optimizer) optimizer_task[stage_of(d.tasks[i].ranks)] = static_cast<Index>(i);
  // A distributed optimizer keeps the state as one flat buffer per stage, sharded over the d_p
  // replicas: each holds ceil(P / d_p) parameters' state (Megatron pads the flat buffer to a
  // multiple of d_p), so no size is fractional.
  const bool flat_state = s.distributed_optimizer && dp > 1;
  std::map<std::int64_t, Expr> stage_params;
  auto add_buffer = [&](PortableBuffer b, std::int64_t stage, int k) {
    b.storage = Storage::state;
    b.alignment = 256;
    b.lineage = Lineage{LineageKind::derived, "train.plan.buffer", {d.tasks[static_cast<std::size_t>(optimizer_task.at(stage))].id}};
    Index bi = static_cast<Index>(p.buffers.size());
    if (k > 0) {
      Index ot = optimizer_task.at(stage);
      b.consumers.push_back(ot);
      p.tasks[static_cast<std::size_t>(ot)].inputs.push_back(bi);
    }
    static_buffers[stage][static_cast<std::size_t>(k)].push_back(bi);
    p.buffers.push_back(std::move(b));
  };
  for (const auto& sh : d.shards) {
    const ModelValue& v = m.values[value_index.at(sh.value)];
    Expr params = elements(v) / Rat(sh.pieces);
    stage_params[sh.stage] += params;
    static const char* kPrefix[3] = {"w:", "g:", "o:"};
    static const BufferRole kRole[3] = {BufferRole::weight, BufferRole::gradient, BufferRole::optimizer_state};
    for (int k = 0; k < (flat_state ? 2 : 3); ++k) {
      PortableBuffer b;
      b.id = std::string(kPrefix[k]) + "s" + std::to_string(sh.stage) + ":" + sh.value;
      b.role = kRole[k];
      b.size = params * Expr(bpp[static_cast<std::size_t>(k)]);
      add_buffer(std::move(b), sh.stage, k);
    }
  }
  if (flat_state)
    for (const auto& [stage, params] : stage_params) {
      PortableBuffer b;
      b.id = "o:s" + std::to_string(stage) + ":flat";
      b.role = BufferRole::optimizer_state;
      b.size = Expr::ceil_div(params, Expr(dp)) * Expr(bpp[2] * Rat(dp));
      add_buffer(std::move(b), stage, 2);
    }

  // Memory facts per stage: claimed buffers, the schedule peak and the total.
  for (const auto& sc : d.schedule) {
    const std::int64_t st = sc.stage;
    Expr total;
    static const MemoryCategory kCat[3] = {MemoryCategory::weights, MemoryCategory::weight_gradients, MemoryCategory::optimizer_state};
    for (int k = 0; k < 3; ++k) {
      MemoryFact f;
      f.stage = st;
      f.category = kCat[k];
      f.buffers = static_buffers[st][static_cast<std::size_t>(k)];
      for (Index b : f.buffers) f.bytes += p.buffers[static_cast<std::size_t>(b)].size;
      total += f.bytes;
      p.memory.push_back(std::move(f));
    }
    std::vector<Expr> per_chunk;
    for (std::int64_t c = 0; c < sc.chunks; ++c) {
      MemoryFact f;
      f.stage = st;
      f.chunk = c;
      f.category = MemoryCategory::activations;
      f.buffers = chunk_buffers[{st, c}];
      for (Index b : f.buffers) f.bytes += p.buffers[static_cast<std::size_t>(b)].size;
      per_chunk.push_back(f.bytes);
      p.memory.push_back(std::move(f));
    }
    MemoryFact peak;
    peak.stage = st;
    peak.category = MemoryCategory::activations_peak;
    peak.bytes = schedule_peak(sc, per_chunk).value_or(Expr());
    total += peak.bytes;
    p.memory.push_back(std::move(peak));
    MemoryFact tot;
    tot.stage = st;
    tot.category = MemoryCategory::total;
    tot.bytes = total;
    p.memory.push_back(std::move(tot));
  }
  for (auto& b : p.buffers) std::sort(b.consumers.begin(), b.consumers.end());
  return p;
}

}  // namespace plancert::passes
