// SPDX-License-Identifier: Apache-2.0
#include "passes/bind/common.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>
#include <set>

namespace plancert::bind::detail {
namespace {

Device make_device(const Indices& ranks, const TargetProfile& t) {
  std::string id = ranks.empty() ? std::string("dev:ref") : "dev:r" + std::to_string(ranks.front());
  return Device{std::move(id), t.device_kind, t.spaces.empty() ? Int(0) : t.spaces[0].capacity_bytes, ranks};
}

bool same(const Capability& a, const Capability& b) { return a.kind == b.kind && a.dtype == b.dtype && a.collective == b.collective && a.reduction == b.reduction; }

}  // namespace

std::vector<codec::Shared<Work>> shared_works(const PortablePlanIR& p) {
  std::map<std::array<const void*, 7>, codec::Shared<Work>> by_reps;  // the seven quantities' representations
  std::vector<codec::Shared<Work>> out;
  out.reserve(p.tasks.size());
  for (const auto& t : p.tasks) {
    const Work& w = t.work;
    const std::array<const void*, 7> key{&w.matrix_ops.terms(), &w.message_bytes.terms(), &w.persistent_bytes.terms(), &w.read_bytes.terms(),
                                         &w.temporary_bytes.terms(), &w.vector_ops.terms(), &w.write_bytes.terms()};
    const auto [it, first] = by_reps.try_emplace(key);
    if (first) it->second = w;
    out.push_back(it->second);
  }
  return out;
}

CommandKind command_kind(TaskKind k) {
  switch (k) {
    case TaskKind::collective: return CommandKind::collective;
    case TaskKind::host: return CommandKind::host;
    case TaskKind::send: return CommandKind::send;
    case TaskKind::recv: return CommandKind::recv;
    default: return CommandKind::launch;
  }
}

QueueKind queue_kind(CommandKind k) {
  switch (k) {
    case CommandKind::launch: return QueueKind::compute;
    case CommandKind::collective: return QueueKind::collective;
    case CommandKind::host: return QueueKind::host;
    default: return QueueKind::transfer;
  }
}

Placement reference_devices(const PortablePlanIR& p, const TargetProfile& t) {
  std::map<Indices, Index> sets;
  for (const auto& task : p.tasks) sets.emplace(task.ranks, 0);
  std::set<Index> seen;
  bool disjoint = !p.tasks.empty();
  for (const auto& [r, d] : sets) {
    disjoint = disjoint && !r.empty();
    for (Index x : r) disjoint = disjoint && seen.insert(x).second;
    disjoint = disjoint && r.size() == sets.begin()->first.size();  // every device stands for as many ranks (IMPL-2)
  }
  Placement out;
  if (!disjoint) sets = {{Indices{}, 0}};
  for (auto& [r, d] : sets) {
    d = static_cast<Index>(out.devices.size());
    out.devices.push_back(make_device(r, t));
  }
  for (const auto& task : p.tasks) out.of_task.push_back({disjoint ? sets.at(task.ranks) : 0});
  return out;
}

Placement class_devices(const PortablePlanIR& p, const TargetProfile& t) {
  std::map<Index, std::vector<std::uint32_t>> signature;  // rank -> tasks that run on it
  for (std::size_t i = 0; i < p.tasks.size(); ++i) {
    if (p.tasks[i].ranks.empty()) throw BindError("task \"" + p.tasks[i].id + "\" has no ranks: the queue binder binds every task on the devices of its ranks");
    for (Index r : p.tasks[i].ranks) signature[r].push_back(static_cast<std::uint32_t>(i));
  }
  std::map<std::vector<std::uint32_t>, Indices> classes;
  for (const auto& [r, sig] : signature) classes[sig].push_back(r);
  std::vector<Indices> sets;
  for (auto& [sig, ranks] : classes) sets.push_back(ranks);
  const bool uniform = std::all_of(sets.begin(), sets.end(), [&](const Indices& s) { return s.size() == sets.front().size(); });
  if (!uniform) {
    sets.clear();
    for (const auto& [r, sig] : signature) sets.push_back({r});
  }
  std::sort(sets.begin(), sets.end());
  Placement out;
  std::map<Index, Index> device_of_rank;
  for (const auto& s : sets) {
    for (Index r : s) device_of_rank[r] = static_cast<Index>(out.devices.size());
    out.devices.push_back(make_device(s, t));
  }
  for (const auto& task : p.tasks) {
    std::set<Index> ds;
    for (Index r : task.ranks) ds.insert(device_of_rank.at(r));
    out.of_task.emplace_back(ds.begin(), ds.end());
  }
  return out;
}

void add_regions(ConcretePlanIR& plan, const TargetProfile& t, std::int64_t alignment) {
  const std::string space = t.spaces.empty() ? "hbm" : t.spaces[0].name;
  for (std::size_t d = 0; d < plan.devices.size(); ++d)
    plan.regions.push_back(Region{alignment, plan.devices[d].memory_bytes, static_cast<Index>(d), "r:" + plan.devices[d].id, Int(0), space});
}

std::vector<std::string> add_engines_and_implementations(ConcretePlanIR& plan, const PortablePlanIR& p, const TargetProfile& t) {
  for (std::size_t d = 0; d < plan.devices.size(); ++d)
    for (const auto& e : t.engines) plan.engines.push_back(Engine{e.capabilities, static_cast<Index>(d), "e:" + plan.devices[d].id + ":" + e.name});
  std::map<std::string, std::vector<Capability>> used;
  std::vector<std::string> names;
  for (const auto& task : p.tasks) {
    std::vector<std::string> parts;
    std::vector<Capability> provides;
    for (const auto& r : task.requires_) {
      auto it = std::find_if(t.implementations.begin(), t.implementations.end(), [&](const ImplementationProfile& x) { return same(x.provides, r); });
      if (it == t.implementations.end()) {
        parts.push_back("unavailable." + std::string(codec::enum_name(r.kind)) + (r.dtype.empty() ? "" : "." + r.dtype));
        continue;
      }
      if (std::find(parts.begin(), parts.end(), it->name) != parts.end()) continue;
      parts.push_back(it->name);
      provides.push_back(it->provides);
    }
    std::string name = parts.empty() ? std::string("generic") : parts.size() == 1 ? parts[0] : "fused";
    if (parts.size() > 1)
      for (std::size_t k = 0; k < parts.size(); ++k) name += (k ? "+" : ":") + parts[k];
    used.emplace(name, provides);
    names.push_back(name);
  }
  for (auto& [name, provides] : used) plan.implementations.push_back(Implementation{name, std::move(provides)});
  return names;
}

std::vector<Int> buffer_sizes(const PortablePlanIR& p, const SymbolValues& values) {
  auto env = [&](std::string_view s) -> std::optional<Rat> {
    auto it = values.find(std::string(s));
    if (it == values.end()) return std::nullopt;
    return Rat(it->second);
  };
  std::vector<Int> out;
  for (const auto& b : p.buffers) {
    auto v = b.size.eval(env);
    if (!v || *v < 0 || boost::multiprecision::denominator(*v) != 1)
      throw BindError("portable buffer \"" + b.id + "\" has size " + b.size.str() + ", which is not a non-negative integer under the given symbol values");
    out.push_back(boost::multiprecision::numerator(*v));
  }
  return out;
}

std::vector<SymbolBinding> binding_list(const PortablePlanIR& p, const SymbolValues& values) {
  std::vector<SymbolBinding> out;
  for (const auto& s : p.symbols)
    if (auto it = values.find(s.name); it != values.end()) out.push_back(SymbolBinding{s.name, it->second});
  return out;
}

std::unordered_map<std::string, std::size_t> tasks_by_source(const PortablePlanIR& p) {
  std::unordered_map<std::string, std::size_t> out;
  for (std::size_t t = 0; t < p.tasks.size(); ++t)
    if (!p.tasks[t].lineage.sources.empty()) out.emplace(p.tasks[t].lineage.sources[0], t);
  return out;
}

std::int64_t home_task(const PortablePlanIR& p, std::size_t buffer, const std::unordered_map<std::string, std::size_t>& by_source) {
  const auto& b = p.buffers[buffer];
  if (b.producer) return *b.producer;
  if (!b.consumers.empty()) return b.consumers.front();
  if (!b.lineage.sources.empty())
    if (auto it = by_source.find(b.lineage.sources[0]); it != by_source.end()) return static_cast<std::int64_t>(it->second);
  return -1;
}

void fill_memory(ConcretePlanIR& plan) {
  const std::size_t n = plan.commands.size(), nb = plan.buffers.size(), nd = plan.devices.size();
  // Happens-before as vector clocks over the queues (queue target) or a greedy chain cover
  // (slot target); the index order is topological.
  std::vector<std::int64_t> qprev(n, -1), signaller(plan.tokens.size(), -1);
  if (plan.queue)
    for (const auto& q : plan.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) qprev[static_cast<std::size_t>(q.commands[k])] = q.commands[k - 1];
  for (std::size_t v = 0; v < n; ++v)
    for (Index t : plan.commands[v].signals) signaller[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(v);
  auto preds = [&](std::size_t v, auto&& fn) {
    for (Index u : plan.commands[v].dependencies) fn(static_cast<std::size_t>(u));
    if (qprev[v] >= 0) fn(static_cast<std::size_t>(qprev[v]));
    for (Index t : plan.commands[v].waits)
      if (signaller[static_cast<std::size_t>(t)] >= 0) fn(static_cast<std::size_t>(signaller[static_cast<std::size_t>(t)]));
  };
  // Chains, and the last successor of each command (itself without one): its clock is needed
  // until then, so only the clocks of that frontier are kept.
  std::vector<std::uint32_t> chain(n, 0), pos(n, 0), tails, last(n, 0);
  std::vector<std::int64_t> delta(n + 1, 0);  // clocks taken at step v minus clocks freed after step v - 1
  for (std::size_t v = 0; v < n; ++v) {
    std::int64_t q = plan.queue && qprev[v] >= 0 ? std::int64_t{chain[static_cast<std::size_t>(qprev[v])]} : -1;
    preds(v, [&](std::size_t u) {
      if (!plan.queue && q < 0 && tails[chain[u]] == u) q = chain[u];
      if (u != v) last[u] = static_cast<std::uint32_t>(v);
    });
    if (q < 0) { q = static_cast<std::int64_t>(tails.size()); tails.push_back(static_cast<std::uint32_t>(v)); }
    pos[v] = pos[tails[static_cast<std::size_t>(q)]] + 1;
    chain[v] = static_cast<std::uint32_t>(q);
    tails[static_cast<std::size_t>(q)] = static_cast<std::uint32_t>(v);
    last[v] = static_cast<std::uint32_t>(v), ++delta[v];
  }
  for (std::size_t v = 0; v < n; ++v) --delta[last[v] + 1];
  // Leading accesses (reads before the first write, and it) and trailing ones (the last write
  // and the reads after it) of each buffer, and its first and last access.
  std::vector<std::vector<std::uint32_t>> head(nb), tail(nb);
  std::vector<std::int64_t> first(nb, -1), latest(nb, -1);
  std::vector<char> written(nb, 0);
  for (std::size_t v = 0; v < n; ++v) {
    const auto& c = plan.commands[v];
    auto touch = [&](Index bi, bool wr) {
      auto b = static_cast<std::size_t>(bi);
      if (first[b] < 0) first[b] = static_cast<std::int64_t>(v);
      latest[b] = static_cast<std::int64_t>(v);
      if (!written[b]) head[b].push_back(static_cast<std::uint32_t>(v));
      if (wr) { written[b] = 1; tail[b] = {static_cast<std::uint32_t>(v)}; }
      else tail[b].push_back(static_cast<std::uint32_t>(v));
    };
    for (Index b : c.writes) touch(b, true);
    for (Index b : c.reads)
      if (std::find(c.writes.begin(), c.writes.end(), b) == c.writes.end()) touch(b, false);
  }
  // Per device: the peak, the pinned bytes, and the issue-order live curve, whose highest
  // points are the candidate witnesses; the figure is the best exact live total among them.
  std::vector<Int> peak(nd), pinned_bytes(nd);
  std::vector<std::vector<std::size_t>> dynamic(nd);
  std::vector<std::vector<std::pair<std::int64_t, Int>>> deltas(nd);
  std::vector<std::uint32_t> device_of(nb), slot_of(nb);  // a dynamic buffer's device, and its index in dynamic[device]
  for (std::size_t b = 0; b < nb; ++b) {
    const auto& buf = plan.buffers[b];
    const auto& reg = plan.regions[static_cast<std::size_t>(buf.region)];
    auto d = static_cast<std::size_t>(reg.device);
    peak[d] = std::max(peak[d], Int(reg.offset + buf.offset + buf.size));
    if (pinned(buf.storage)) { pinned_bytes[d] += buf.size; continue; }
    if (first[b] < 0) continue;
    device_of[b] = static_cast<std::uint32_t>(d), slot_of[b] = static_cast<std::uint32_t>(dynamic[d].size());
    dynamic[d].push_back(b);
    if (latest[b] > first[b]) {
      deltas[d].emplace_back(first[b], buf.size);
      deltas[d].emplace_back(latest[b], -buf.size);
    }
  }
  std::vector<std::vector<std::uint32_t>> cands(nd);  // per device: up to 32 candidate witnesses, highest live first
  std::vector<std::array<std::uint32_t, 3>> witnesses;  // (command, device, candidate), sorted by command
  for (std::size_t d = 0; d < nd; ++d) {
    auto& ds = deltas[d];
    std::sort(ds.begin(), ds.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::pair<Int, std::int64_t>> curve;  // (live bytes after the command, command)
    Int live = 0;
    for (std::size_t i = 0; i < ds.size(); ++i) {
      live += ds[i].second;
      if (i + 1 == ds.size() || ds[i + 1].first != ds[i].first) curve.emplace_back(live, ds[i].first);
    }
    std::sort(curve.begin(), curve.end(), [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); });
    if (curve.size() > 32) curve.resize(32);
    for (const auto& cand : curve) {
      witnesses.push_back({static_cast<std::uint32_t>(cand.second), static_cast<std::uint32_t>(d), static_cast<std::uint32_t>(cands[d].size())});
      cands[d].push_back(static_cast<std::uint32_t>(cand.second));
    }
  }
  // A dynamic buffer is live at candidate w when one of its leading accesses happens before w
  // (or is w) and w happens before one of its trailing accesses other than w. Both questions
  // are answered while the later command's clock is live: "from" at w, "to" at the trailing
  // access. from/to[d][c * |dynamic[d]| + j]: the j-th dynamic buffer of d at candidate c.
  std::vector<std::vector<char>> from(nd), to(nd);
  for (std::size_t d = 0; d < nd; ++d) from[d].assign(cands[d].size() * dynamic[d].size(), 0), to[d].assign(cands[d].size() * dynamic[d].size(), 0);
  std::sort(witnesses.begin(), witnesses.end());
  // Per command v: the dynamic buffers (of a device with candidates) it is a trailing access
  // of, trailing[at[v] .. at[v + 1]).
  std::vector<std::uint32_t> at(n + 1, 0), trailing;
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t d = 0; d < nd; ++d)
      if (!cands[d].empty())
        for (std::size_t b : dynamic[d])
          for (std::uint32_t x : tail[b]) {
            if (pass == 0) ++at[x + 1];
            else trailing[at[x]++] = static_cast<std::uint32_t>(b);
          }
    if (pass == 0) std::partial_sum(at.begin(), at.end(), at.begin()), trailing.resize(at[n]);
    else std::rotate(at.begin(), at.end() - 1, at.end()), at[0] = 0;  // the fill advanced at[x] to where x's entries end
  }
  const std::size_t k = tails.size();
  std::size_t rows = 0;
  for (std::size_t v = 0, live = 0; v < n; ++v) rows = std::max(rows, live += static_cast<std::size_t>(delta[v]));
  std::vector<std::uint32_t> vc(rows * k), slot(n, 0), spare(rows);
  for (std::size_t r = 0; r < rows; ++r) spare[r] = static_cast<std::uint32_t>(rows - 1 - r);
  std::size_t wi = 0;
  for (std::size_t v = 0; v < n; ++v) {
    slot[v] = spare.back(), spare.pop_back();
    std::uint32_t* cv = std::fill_n(&vc[std::size_t{slot[v]} * k], k, 0U) - k;
    preds(v, [&](std::size_t u) {
      const std::uint32_t* cu = &vc[std::size_t{slot[u]} * k];
      if (cv[chain[u]] < pos[u])  // else u happens before a predecessor merged already: its clock is no larger
        for (std::size_t q = 0, kk = k; q < kk; ++q) cv[q] = std::max(cv[q], cu[q]);
      if (last[u] == v) spare.push_back(slot[u]), last[u] = UINT32_MAX;  // v is u's last successor (once: u may be listed twice)
    });
    cv[chain[v]] = pos[v];
    auto before_v = [&](std::size_t a) { return a == v || cv[chain[a]] >= pos[a]; };  // a happens before v, or is v
    for (; wi < witnesses.size() && witnesses[wi][0] == v; ++wi) {
      const std::size_t d = witnesses[wi][1], c = witnesses[wi][2];
      for (std::size_t j = 0; j < dynamic[d].size(); ++j)
        from[d][c * dynamic[d].size() + j] = std::any_of(head[dynamic[d][j]].begin(), head[dynamic[d][j]].end(), before_v);
    }
    for (std::uint32_t i = at[v]; i < at[v + 1]; ++i) {
      const std::uint32_t b = trailing[i];
      const std::size_t d = device_of[b], m = dynamic[d].size();
      for (std::size_t c = 0; c < cands[d].size(); ++c)
        if (cands[d][c] != v && before_v(cands[d][c])) to[d][c * m + slot_of[b]] = 1;
    }
    if (last[v] == v) spare.push_back(slot[v]);
  }
  plan.memory.clear();
  for (std::size_t d = 0; d < nd; ++d) {
    Int best = pinned_bytes[d];
    std::optional<Index> witness;
    for (std::size_t c = 0; c < cands[d].size(); ++c) {
      Int total = pinned_bytes[d];
      for (std::size_t j = 0; j < dynamic[d].size(); ++j)
        if (from[d][c * dynamic[d].size() + j] && to[d][c * dynamic[d].size() + j]) total += plan.buffers[dynamic[d][j]].size;
      if (!witness || total > best) { best = total; witness = static_cast<Index>(cands[d][c]); }
    }
    plan.memory.push_back(DeviceMemory{static_cast<Index>(d), best, peak[d], witness});
  }
}

}  // namespace plancert::bind::detail
