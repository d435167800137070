// SPDX-License-Identifier: Apache-2.0
// Cross-stage families: WORK (conservation), SHARD, COLL, P2P, VOL, MEM, SCHED.
#include "verifiers/gate.h"
#include "verifiers/layers.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_set>
#include <unordered_map>

namespace plancert {

std::optional<Expr> schedule_peak(const StageSchedule& s, const std::vector<Expr>& chunk_bytes) {
  // In-flight (chunk, microbatch) counts per chunk after each step, O(1) a step (a step changes
  // one chunk's count). With sizes >= 0 the peak is where the count vector is largest: with equal
  // or constant sizes the largest weighted sum; otherwise decided only when one step's vector
  // reaches every chunk's maximum `top` (a second pass counts the chunks at their maximum), and
  // then it is that vector's weighted sum for every shape.
  const std::size_t n = chunk_bytes.size();
  std::vector<std::int64_t> count(n, 0), top(n, 0);
  bool constant = true, equal = true;
  for (const auto& b : chunk_bytes) { constant = constant && b.is_constant(); equal = equal && b == chunk_bytes.front(); }
  Rat value = 0, peak_value = 0;  // with equal sizes: of in-flight microbatches, times the size at the end
  for (const auto& st : s.steps) {
    if (st.chunk < 0 || static_cast<std::size_t>(st.chunk) >= n) return std::nullopt;
    const auto k = static_cast<std::size_t>(st.chunk);
    const std::int64_t d = st.kind == StepKind::forward ? 1 : -1;
    top[k] = std::max(top[k], count[k] += d);
    if (constant || equal) peak_value = std::max(peak_value, value += Rat(d) * (equal ? Rat(1) : *chunk_bytes[k].constant()));
  }
  if (n == 0) return Expr();
  if (equal) return Expr(peak_value) * chunk_bytes.front();
  if (constant) return Expr(peak_value);
  std::fill(count.begin(), count.end(), 0);
  auto at_top = static_cast<std::size_t>(std::count(top.begin(), top.end(), 0));
  for (std::size_t i = 0; i < s.steps.size() && at_top < n; ++i) {
    const auto k = static_cast<std::size_t>(s.steps[i].chunk);
    at_top -= count[k] == top[k] ? 1U : 0U;
    at_top += (count[k] += s.steps[i].kind == StepKind::forward ? 1 : -1) == top[k] ? 1U : 0U;
  }
  if (at_top < n) return std::nullopt;  // no dominating step: not decided by normalisation (rejected as such)
  std::vector<Expr> peak;  // summed at once (Expr::sum): one chunk at a time is quadratic in distinct sizes
  for (std::size_t k = 0; k < n; ++k) peak.push_back(Expr(top[k]) * chunk_bytes[k]);
  return Expr::sum(peak);
}

std::optional<std::int64_t> dtype_size(std::string_view dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32" || dtype == "i32") return 4;
  if (dtype == "u8") return 1;
  return std::nullopt;
}

namespace layers {
using check::at;
namespace {

// Two sorted rank sets share no rank: each rank of the smaller is looked up in the larger,
// O(min log max), after the O(1) test of their ranges.
bool disjoint(const Indices& a, const Indices& b) {
  const Indices &s = a.size() < b.size() ? a : b, &l = a.size() < b.size() ? b : a;
  if (s.empty() || s.back() < l.front() || l.back() < s.front()) return true;
  return std::none_of(s.begin(), s.end(), [&](Index r) { return std::binary_search(l.begin(), l.end(), r); });
}

// Divisibility of a polynomial by n from the symbols' divisibility facts (sufficient test): each
// term's coefficient times its symbols' divisors, taken modulo n. The product itself can have
// hundreds of millions of digits (powers up to 64 of many 4,096-digit divisors): minutes.
bool divisible(const Expr& e, const Int& n, const std::vector<Symbol>& symbols, const std::unordered_map<std::string_view, std::size_t>& symbol_of) {
  for (const auto& term : e.terms()) {
    if (boost::multiprecision::denominator(term.coef) != 1) return false;
    Int f = boost::multiprecision::numerator(term.coef) % n;
    for (const auto& fac : term.mono)
      if (auto it = symbol_of.find(fac.atom->name); fac.atom->kind == Atom::Kind::Symbol && it != symbol_of.end())
        for (unsigned k = 0; k < fac.power; ++k) f = f * symbols[it->second].divisible_by % n;
    if (f != 0) return false;
  }
  return true;
}

// Work of all instances of `t` (none when replication < 1: WORK-3 reports it, and direct
// callers of verify_transition must not see a division by zero).
Expr task_total(const DistTask& t, const Expr& x) {
  return t.replication < 1 ? Expr() : x * Expr(make_rat(Int(t.repeat) * t.ranks.size(), t.replication));  // exact: repeat x ranks may pass 2^63
}

// COLL-3: the tensor-parallel collectives of every operation that declares its layout (attribute
// tp) are exactly those of Megatron-LM's conjugate operators f and g: g after a row-parallel
// operation (all-reduce; reduce-scatter under sequence parallelism, all-gather in its backward),
// f before the first column-parallel consumer of a value (identity forward, all-reduce backward;
// all-gather forward and reduce-scatter backward under sequence parallelism). Inference gathers
// the vocabulary-parallel logits. Multisets keyed by (operation, value, phase, kind, ranks, repeat).
// When the model declares layouts, an operation without one is replicated: no tp collective
// derives from it.
void tensor_parallel(check::Ctx& c, const ModelIR& m, const DistributedTaskIR& d, const std::unordered_map<std::string_view, std::size_t>& op_of) {
  const std::int64_t t = degree(d.mesh, "tp");
  auto layout = [&](std::size_t k) -> std::string_view { auto it = m.operations[k].attrs.find("tp"); return it == m.operations[k].attrs.end() ? "" : std::string_view(it->second); };
  auto source = [&](const DistTask& x) { auto it = x.lineage.sources.size() == 1 ? op_of.find(x.lineage.sources[0]) : op_of.end(); return it == op_of.end() || layout(it->second).empty() ? -1 : static_cast<std::int64_t>(it->second); };
  using Key = std::tuple<std::int64_t, std::string_view, Phase, CollectiveKind, Index, std::size_t, std::int64_t>;
  std::map<Key, std::pair<std::int64_t, std::size_t>> need;  // required minus present, and a task to point at
  bool sp = false, declared = false;  // declared: some operation declares its layout
  std::unordered_map<Index, std::size_t> f_op;  // value -> its first column-parallel consumer
  for (std::size_t k = 0; k < m.operations.size(); ++k) {
    declared = declared || !layout(k).empty();
    if ((layout(k) == "column" || (layout(k) == "vocab" && m.operations[k].kind == "linear")) && !m.operations[k].inputs.empty()) f_op.try_emplace(m.operations[k].inputs[0], k);
  }
  for (const auto& x : d.tasks) sp = sp || (x.collective && x.collective->axis == "tp" && x.collective->kind == CollectiveKind::reduce_scatter && source(x) >= 0);
  // The weights a tp rank holds whole but computes the gradient of in part (COLL-6, below).
  std::unordered_set<std::string_view> kv, whole;
  for (std::size_t k = 0; k < m.operations.size(); ++k)
    if (layout(k) == "kv") for (Index v : m.operations[k].inputs) kv.insert(m.values[static_cast<std::size_t>(v)].id);
  for (const auto& sh : d.shards)
    if (t > 1 && sh.axis.empty() && (sp || kv.count(sh.value))) whole.insert(sh.value);
  auto tp_sum = [](const DistTask& a) { return a.collective && a.collective->axis == "tp" && a.collective->kind == CollectiveKind::all_reduce && a.collective->reduction == Reduction::sum; };
  std::map<std::pair<std::string_view, Index>, int> sums;  // COLL-6's gradient sums per (weight, first rank): one each
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& x = d.tasks[i];
    const std::int64_t k = source(x);
    const bool gradient_sum = k < 0 && tp_sum(x) && !x.lineage.sources.empty() && std::all_of(x.lineage.sources.begin(), x.lineage.sources.end(), [&](const auto& s) { return whole.count(s) > 0; });
    if (k < 0 && declared && x.collective && x.collective->axis == "tp" && !gradient_sum)
      c.err("COLL-3", at("tasks", i, "lineage"), "a tensor-parallel collective derives from one operation that declares a tensor-parallel layout (one without is replicated and needs none; a second source would hide it), or is COLL-6's all-reduce (sum) of the gradients of weights held whole");
    bool once = true;  // (one finding per collective)
    for (std::size_t j = 0; gradient_sum && once && j < x.lineage.sources.size(); ++j) once = ++sums[{x.lineage.sources[j], x.ranks.empty() ? -1 : x.ranks.front()}] == 1;
    if (!once) c.err("COLL-3", at("tasks", i, "lineage"), "a second tp all-reduce (sum) of the gradient of a weight it names, on the same ranks: the gradient would be summed twice");
    if (k < 0 || x.ranks.empty()) continue;
    const auto& op = m.operations[static_cast<std::size_t>(k)];
    auto count = [&](Index v, Phase ph, CollectiveKind kind, std::int64_t n) {
      if (v < 0) return;
      auto& e = need[Key{k, m.values[static_cast<std::size_t>(v)].id, ph, kind, x.ranks.front(), x.ranks.size(), x.repeat}];
      e.first += n;
      if (e.second == 0 || n < 0) e.second = i + 1;
    };
    const Index y = op.outputs.empty() ? -1 : op.outputs[0], in = op.inputs.empty() ? -1 : op.inputs[0];
    if (x.collective && x.collective->axis == "tp") {
      const Index v = in >= 0 && m.values[static_cast<std::size_t>(in)].id == x.value ? in : y >= 0 && m.values[static_cast<std::size_t>(y)].id == x.value ? y : -1;
      if (v < 0) c.err("COLL-3", at("tasks", i, "value"), "a tensor-parallel collective of \"" + op.id + "\" must move the operation's first input or its output");
      count(v, x.phase, x.collective->kind, -1);
    }
    if (x.kind != TaskKind::compute || t < 2 || y < 0) continue;
    const bool fwd = x.phase == Phase::forward || x.phase == Phase::recompute, bwd = x.phase == Phase::backward_activation && !d.inference;
    const bool row = layout(static_cast<std::size_t>(k)) == "row" || (layout(static_cast<std::size_t>(k)) == "vocab" && op.kind == "embedding");
    const bool first = in >= 0 && f_op.count(in) && f_op.at(in) == static_cast<std::size_t>(k) && !d.inference;
    if (row && fwd) count(y, x.phase, sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, 1);
    if (row && bwd && sp) count(y, x.phase, CollectiveKind::all_gather, 1);
    if (first && fwd && sp) count(in, x.phase, CollectiveKind::all_gather, 1);
    if (first && bwd) count(in, x.phase, sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, 1);
    if (d.inference && fwd && layout(static_cast<std::size_t>(k)) == "vocab" && op.kind == "linear") count(y, x.phase, CollectiveKind::all_gather, 1);
  }
  // COLL-6: a tp rank computes only part of the gradient of a weight it holds whole (a shard
  // without axis) under sequence parallelism (its sequence shard), and of a whole weight a
  // layout-kv operation reads (its own KV head), so the update depends on a tp all-reduce
  // (sum) on its ranks naming them.
  if (t > 1) {
    for (std::size_t i = 0; i < d.tasks.size(); ++i) {
      const auto& o = d.tasks[i];
      if (o.phase != Phase::optimizer) continue;
      auto summed = [&](const DistTask& a) {
        if (!tp_sum(a) || a.ranks != o.ranks) return false;
        const std::unordered_set<std::string_view> names(a.lineage.sources.begin(), a.lineage.sources.end());
        return std::all_of(o.lineage.sources.begin(), o.lineage.sources.end(), [&](const std::string& w) { return !whole.count(w) || names.count(w); });
      };
      const bool any = std::any_of(o.lineage.sources.begin(), o.lineage.sources.end(), [&](const std::string& w) { return whole.count(w) > 0; });
      if (any && std::none_of(o.dependencies.begin(), o.dependencies.end(), [&](Index u) { return summed(d.tasks[static_cast<std::size_t>(u)]); }))
        c.err("COLL-6", at("tasks", i, "dependencies"), "update \"" + o.id + "\" must depend on a tp all-reduce (sum) of the gradients of the weights every tp rank holds whole but computed in part (sequence parallelism, KV heads fewer than t)");
    }
  }
  for (const auto& [key, e] : need)
    if (e.first != 0)
      c.err("COLL-3", at("tasks", e.second - 1), std::string(e.first > 0 ? "missing" : "unexpected") + " tensor-parallel " + std::string(codec::enum_name(std::get<3>(key))) + " of \"" + std::string(std::get<1>(key)) +
                                                     "\" in phase " + std::string(codec::enum_name(std::get<2>(key))) + " (" + std::to_string(e.first > 0 ? e.first : -e.first) + "): the layout of \"" +
                                                     m.operations[static_cast<std::size_t>(std::get<0>(key))].id + "\" (tp = " + std::string(layout(static_cast<std::size_t>(std::get<0>(key)))) + ") needs exactly its conjugate operators");
}

}  // namespace

void distributed(check::Ctx& c, const DistributedTaskIR& d) {
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& t = d.tasks[i];
    if (t.repeat < 1 || t.replication < 1 || t.ranks.size() % static_cast<std::size_t>(t.replication) != 0)
      c.err("WORK-3", at("tasks", i), "repeat and replication must be positive and replication must divide the rank count");
    if (t.collective) {
      // COLL-1: participants are the group, and the group is a union of complete axis groups.
      const auto& col = *t.collective;
      std::int64_t stride = 1, n = col.axis.empty() ? static_cast<std::int64_t>(t.ranks.size()) : axis_size(d.mesh, col.axis, stride);
      if (col.group != t.ranks || n < 1) { c.err("COLL-1", at("tasks", i, "collective"), "the collective's group must equal the task's ranks and its axis must be a mesh axis"); continue; }
      if (!col.axis.empty()) {
        std::unordered_map<std::int64_t, std::int64_t> members;
        for (Index r : t.ranks) ++members[r - ((r / stride) % n) * stride];
        for (const auto& [base, k] : members)
          if (k != n) { c.err("COLL-1", at("tasks", i, "collective/group"), "the " + col.axis + " group of rank " + std::to_string(base) + " is incomplete: " + std::to_string(k) + " of " + std::to_string(n) + " ranks"); break; }
      }
      // COLL-2: a group shares one pipeline stage, hence one schedule and one issue order.
      const std::int64_t stage = stage_of(d.mesh, t.ranks.front());
      if (col.axis == "pp" || (col.axis.empty() && std::any_of(t.ranks.begin(), t.ranks.end(), [&](Index r) { return stage_of(d.mesh, r) != stage; })))
        c.err("COLL-2", at("tasks", i, "collective/axis"), "a collective spanning pipeline stages has no common schedule to order it on every rank");
    }
    if (t.kind == TaskKind::send || t.kind == TaskKind::recv) {
      const auto& peer = d.tasks[static_cast<std::size_t>(*t.peer)];
      TaskKind want = t.kind == TaskKind::send ? TaskKind::recv : TaskKind::send;
      if (peer.kind != want || peer.peer != static_cast<Index>(i) || !(peer.work.message_bytes == t.work.message_bytes) || peer.repeat != t.repeat ||
          peer.ranks.size() != t.ranks.size() || !disjoint(peer.ranks, t.ranks))
        c.err("P2P-1", at("tasks", i, "peer"), "a send and its receive must name each other and agree on bytes, repetition and rank count, on disjoint ranks");
      else if (t.kind == TaskKind::recv && std::find(t.dependencies.begin(), t.dependencies.end(), *t.peer) == t.dependencies.end())
        c.err("P2P-2", at("tasks", i, "dependencies"), "a receive must depend on its send");
    }
  }
  // P2P-3: data crosses between disjoint rank sets only through a send and its receive.
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& t = d.tasks[i];
    for (std::size_t k = 0; k < t.dependencies.size(); ++k) {
      const auto& u = d.tasks[static_cast<std::size_t>(t.dependencies[k])];
      if (!t.ranks.empty() && !u.ranks.empty() && disjoint(t.ranks, u.ranks) && !(t.kind == TaskKind::recv && u.kind == TaskKind::send && t.peer == t.dependencies[k]))
        c.err("P2P-3", at("tasks", i, "dependencies", static_cast<std::int64_t>(k)), "\"" + t.id + "\" depends on \"" + u.id + "\" on disjoint ranks without a send/receive pair to carry the data");
    }
  }
  // COLL-4: with data parallelism, an update follows the sum of its gradients over dp, and a
  // sharded update (after a reduce-scatter) is gathered back over dp.
  if (degree(d.mesh, "dp") > 1) {
    auto over_dp = [&](const DistTask& a, const DistTask& o) {
      return a.collective && a.collective->axis == "dp" && a.ranks == o.ranks && a.lineage.sources == o.lineage.sources;
    };
    std::vector<bool> gathered(d.tasks.size(), false);
    for (const auto& a : d.tasks)
      if (a.collective && a.collective->kind == CollectiveKind::all_gather)
        for (Index u : a.dependencies) gathered[static_cast<std::size_t>(u)] = gathered[static_cast<std::size_t>(u)] || over_dp(a, d.tasks[static_cast<std::size_t>(u)]);
    for (std::size_t i = 0; i < d.tasks.size(); ++i) {
      const auto& o = d.tasks[i];
      if (o.phase != Phase::optimizer) continue;
      const DistTask* red = nullptr;
      int reductions = 0;  // exactly one, a sum: a second sum multiplies the gradients by n, a max replaces them (a dependency listed twice is DAG-1's)
      for (Index u : o.dependencies) {
        const auto& a = d.tasks[static_cast<std::size_t>(u)];
        if (over_dp(a, o) && (a.collective->kind == CollectiveKind::all_reduce || a.collective->kind == CollectiveKind::reduce_scatter)) reductions += &a != red, red = &a;
      }
      if (!red || reductions > 1 || red->collective->reduction != Reduction::sum)
        c.err("COLL-4", at("tasks", i, "dependencies"), "update \"" + o.id + "\" must depend on exactly one dp all-reduce or reduce-scatter of its gradients on the same ranks and sources, a sum");
      else if (red->collective->kind == CollectiveKind::reduce_scatter && !gathered[i])
        c.err("COLL-4", at("tasks", i), "update \"" + o.id + "\" follows a reduce-scatter, so a dp all-gather on the same ranks and sources must depend on it");
    }
  }
  // COLL-5: a weight updated on several rank sets (tied across stages) is updated on each only
  // after receiving the gradients of every other one. Rank sets are numbered once a task, and an
  // update's receives collected once (not per source), so an update costs its sources and
  // dependencies: it stops at its first missing set, and the sets found before are receives.
  std::map<Indices, std::size_t> ids;
  std::vector<std::size_t> rid(d.tasks.size());  // each task's rank set, numbered
  std::vector<const Indices*> ranks_of;
  for (std::size_t i = 0; i < d.tasks.size(); ++i)
    if (auto [it, fresh] = ids.emplace(d.tasks[i].ranks, ids.size()); (rid[i] = it->second, fresh)) ranks_of.push_back(&it->first);
  std::map<std::string_view, std::set<std::size_t>> sets;  // weight -> its updates' rank sets
  for (std::size_t i = 0; i < d.tasks.size(); ++i)
    if (d.tasks[i].phase == Phase::optimizer)
      for (const auto& w : d.tasks[i].lineage.sources) sets[w].insert(rid[i]);
  std::set<std::pair<std::string_view, std::size_t>> got;  // (value, the sender's rank set) of an update's receives
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& o = d.tasks[i];
    if (o.phase != Phase::optimizer) continue;
    got.clear();
    for (Index u : o.dependencies)
      if (const auto& r = d.tasks[static_cast<std::size_t>(u)]; r.kind == TaskKind::recv && r.peer) got.emplace(r.value, rid[static_cast<std::size_t>(*r.peer)]);
    for (const auto& w : o.lineage.sources)
      for (std::size_t other : sets[w])
        if (other != rid[i] && !got.count({w, other})) {
          c.err("COLL-5", at("tasks", i, "dependencies"), "update \"" + o.id + "\" of \"" + w + "\", which ranks " + std::to_string(ranks_of[other]->front()) + ".." + std::to_string(ranks_of[other]->back()) + " also update, must depend on a receive of their gradient");
          break;
        }
  }
  // SCHED-1: each stage's schedule runs every (chunk, microbatch) forward once, then backward once.
  // Microbatches are checked with or without schedules (WORK-2 scales by them), and chunks are
  // bounded by division: a product that overflows must not pass the bound.
  if (d.microbatches < 1) c.err("SCHED-1", "/payload/microbatches", "microbatches must be positive");
  std::set<std::int64_t> seen_stage;
  for (std::size_t k = 0; k < d.schedule.size() && d.microbatches >= 1; ++k) {
    const auto& s = d.schedule[k];
    std::string path = "/payload/schedule/" + std::to_string(k);
    if (s.chunks < 1 || s.stage < 0 || s.chunks > (std::int64_t{1} << 26) / d.microbatches) { c.err("SCHED-1", path, "stage and chunk count must be positive, and chunks x microbatches at most 2^26"); continue; }
    if (!seen_stage.insert(s.stage).second) c.err("SCHED-1", path + "/stage", "stage " + std::to_string(s.stage) + " has two schedules");
    std::vector<std::int8_t> state(static_cast<std::size_t>(s.chunks * d.microbatches), 0);
    bool ok = s.steps.size() == state.size() * 2;
    for (std::size_t j = 0; j < s.steps.size() && ok; ++j) {
      const auto& st = s.steps[j];
      if (st.chunk < 0 || st.chunk >= s.chunks || st.microbatch < 0 || st.microbatch >= d.microbatches) { ok = false; break; }
      auto& x = state[static_cast<std::size_t>(st.chunk * d.microbatches + st.microbatch)];
      if (x != (st.kind == StepKind::forward ? 0 : 1)) ok = false;
      ++x;
    }
    if (!ok) c.err("SCHED-1", path + "/steps", "the schedule must run every (chunk, microbatch) forward exactly once and then backward exactly once");
  }
}

void model_to_distributed(check::Ctx& c, const ModelIR& m, const DistributedTaskIR& d) {
  std::unordered_map<std::string_view, std::size_t> op_of, value_of, symbol_of;  // (SYM-1: symbol names are unique)
  for (std::size_t i = 0; i < m.operations.size(); ++i) op_of[m.operations[i].id] = i;
  for (std::size_t i = 0; i < d.symbols.size(); ++i) symbol_of[d.symbols[i].name] = i;
  for (std::size_t i = 0; i < m.values.size(); ++i) value_of[m.values[i].id] = i;
  const std::int64_t dp = degree(d.mesh, "dp");
  // WORK-2: per model operation and phase, the matrix work summed over ranks and microbatches.
  std::vector<std::vector<Expr>> fwd(m.operations.size()), rec(m.operations.size()), bwd(m.operations.size());  // summed at once (Expr::sum)
  bool training = false;
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& t = d.tasks[i];
    if (t.kind != TaskKind::compute || t.phase == Phase::optimizer || t.phase == Phase::none) continue;
    auto it = t.lineage.sources.size() == 1 ? op_of.find(t.lineage.sources[0]) : op_of.end();
    if (it == op_of.end()) { c.err("WORK-2", at("tasks", i, "lineage/sources"), "a compute task must derive from exactly one model operation"); continue; }
    Expr total = task_total(t, t.work.matrix_ops);
    if (t.phase == Phase::forward) fwd[it->second].push_back(total);
    else if (t.phase == Phase::recompute) rec[it->second].push_back(total);
    else { bwd[it->second].push_back(total); training = true; }
  }
  const Expr scale = Expr(Int(d.microbatches) * dp);  // exact: m x dp may pass 2^63 (without schedules SCHED-1 does not bound m)
  for (std::size_t i = 0; i < m.operations.size(); ++i) {
    Expr w = m.operations[i].work.matrix_ops * scale;
    std::string path = at("operations", i, "work/matrix_ops");
    const Expr fw = Expr::sum(fwd[i]), rc = Expr::sum(rec[i]), bw = Expr::sum(bwd[i]);
    if (!(fw == w)) c.err("WORK-2", path, "forward matrix work over all ranks and microbatches is " + fw.str() + ", the model's work times m*dp is " + w.str());
    if (!(rc == Expr()) && !(rc == w)) c.err("WORK-2", path, "recomputed matrix work is " + rc.str() + ", expected 0 or " + w.str());
    Expr want_b = training ? Expr(2) * w : Expr();
    if (!(bw == want_b)) c.err("WORK-2", path, "backward matrix work is " + bw.str() + ", expected " + want_b.str());
  }
  // VOL-1: a collective's logical payload is the bytes of the value it moves (formed once a
  // value: any number of collectives may move one, each product of its shape up to SYM-3's bound).
  std::vector<std::optional<Expr>> bytes_of(m.values.size());
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& t = d.tasks[i];
    if (!t.collective || t.value.empty()) continue;
    auto it = value_of.find(t.value);
    std::optional<std::int64_t> e = it == value_of.end() ? std::nullopt : dtype_size(m.values[it->second].dtype);
    if (e && !bytes_of[it->second]) { Expr w(*e); for (const auto& dim : m.values[it->second].shape) w = w * dim; bytes_of[it->second] = w; }
    const Expr want = e ? *bytes_of[it->second] : Expr();
    if (!e || !(t.collective->message_bytes == want))
      c.err("VOL-1", at("tasks", i, "collective/message_bytes"), "the payload must be the bytes of value \"" + t.value + "\"" + (e ? " (" + want.str() + ")" : std::string(", which the model does not define with a known dtype")));
  }
  tensor_parallel(c, m, d, op_of);
  // SHARD-1/2/3/4: split dimensions divide, pieces match the mesh, every weight is owned, and
  // a training plan updates every weight shard on its stage (an optimizer task there names it).
  std::vector<bool> owned(m.values.size(), false);
  std::set<std::pair<std::int64_t, std::string_view>> updated;
  for (const auto& t : d.tasks)
    if (std::set<std::int64_t> stages; t.phase == Phase::optimizer)
      for (std::int64_t r : t.ranks) if (auto [s, fresh] = stages.insert(stage_of(d.mesh, r)); fresh) for (const auto& w : t.lineage.sources) updated.emplace(*s, w);
  for (std::size_t k = 0; k < d.shards.size(); ++k) {
    const auto& s = d.shards[k];
    std::string path = "/payload/shards/" + std::to_string(k);
    auto it = value_of.find(s.value);
    if (it == value_of.end()) { c.err("SHARD-1", path + "/value", "\"" + s.value + "\" is not a value of the model"); continue; }
    owned[it->second] = true;
    if (training && m.values[it->second].role == ValueRole::weight && !updated.count({s.stage, s.value}))
      c.err("SHARD-4", path, "weight \"" + s.value + "\" is updated by no optimizer task with a rank on stage " + std::to_string(s.stage));
    const auto& shape = m.values[it->second].shape;
    std::int64_t stride2 = 1, n = s.axis.empty() ? 1 : axis_size(d.mesh, s.axis, stride2);
    if (n < 1 || s.pieces != n || (s.axis.empty() != (s.dim < 0)) || s.dim >= static_cast<std::int64_t>(shape.size()))
      c.err("SHARD-2", path, "pieces must equal the size of the split axis, and a split needs a dimension of the value");
    else if (s.dim >= 0 && !divisible(shape[static_cast<std::size_t>(s.dim)], Int(s.pieces), d.symbols, symbol_of))
      c.err("SHARD-1", path + "/dim", "dimension " + shape[static_cast<std::size_t>(s.dim)].str() + " is not divisible by " + std::to_string(s.pieces) + " for every allowed shape");
  }
  if (!d.shards.empty())
    for (std::size_t v = 0; v < m.values.size(); ++v)
      if (m.values[v].role == ValueRole::weight && !owned[v]) c.err("SHARD-3", "/payload/shards", "weight \"" + m.values[v].id + "\" is owned by no stage");
}

void portable(check::Ctx& c, const PortablePlanIR& p) {
  constexpr std::size_t kCats = std::size(codec::EnumNames<MemoryCategory>::names);
  std::map<std::int64_t, std::array<Expr, kCats>> by_stage;
  std::map<std::int64_t, std::array<int, kCats>> count;
  for (std::size_t k = 0; k < p.memory.size(); ++k) {
    const auto& f = p.memory[k];
    std::string path = "/payload/memory/" + std::to_string(k);
    std::vector<Expr> sizes;  // summed at once (Expr::sum)
    bool refs_ok = true;
    for (std::size_t j = 0; j < f.buffers.size(); ++j) {
      if (!check::ref(c, f.buffers[j], p.buffers.size(), path + "/buffers/" + std::to_string(j))) { refs_ok = false; continue; }
      sizes.push_back(p.buffers[static_cast<std::size_t>(f.buffers[j])].size);
    }
    const Expr sum = Expr::sum(sizes);
    bool derived = f.category == MemoryCategory::activations_peak || f.category == MemoryCategory::total || f.category == MemoryCategory::capacity;
    if (refs_ok && !derived && !(sum == f.bytes)) c.err("MEM-1", path + "/bytes", "claims " + f.bytes.str() + " bytes but its buffers add up to " + sum.str());
    if (f.category != MemoryCategory::activations) {
      by_stage[f.stage][static_cast<std::size_t>(f.category)] = f.bytes;
      ++count[f.stage][static_cast<std::size_t>(f.category)];
    }
  }
  for (const auto& [stage, b] : by_stage) {
    const auto& n = count[stage];
    using M = MemoryCategory;
    auto ix = [](M m) { return static_cast<std::size_t>(m); };
    if (n[ix(M::kv_cache)] > 0) continue;  // an inference stage: CAPM-1
    if (n[ix(M::weights)] != 1 || n[ix(M::weight_gradients)] != 1 || n[ix(M::optimizer_state)] != 1 || n[ix(M::activations_peak)] != 1 || n[ix(M::total)] != 1 || n[ix(M::workspace)] > 1)
      c.err("MEM-3", "/payload/memory", "stage " + std::to_string(stage) + " must have exactly one fact of each category (and at most one workspace fact)");
    else if (!(b[ix(M::total)] == b[ix(M::weights)] + b[ix(M::weight_gradients)] + b[ix(M::optimizer_state)] + b[ix(M::activations_peak)] + b[ix(M::workspace)]))
      c.err("MEM-3", "/payload/memory", "stage " + std::to_string(stage) + ": total is not weights + gradients + optimizer state + peak activations (+ workspace)");
  }
  for (std::size_t i = 0; i < p.tasks.size(); ++i)
    if (p.tasks[i].repeat < 1 || p.tasks[i].replication < 1 || p.tasks[i].ranks.size() % static_cast<std::size_t>(p.tasks[i].replication) != 0)
      c.err("WORK-3", at("tasks", i), "repeat and replication must be positive and replication must divide the rank count");
}

void distributed_to_portable(check::Ctx& c, const DistributedTaskIR& d, const PortablePlanIR& p) {
  // WORK-1: every portable task copies exactly one distributed task, which is copied once.
  std::unordered_map<std::string_view, std::size_t> task_of;
  for (std::size_t i = 0; i < d.tasks.size(); ++i) task_of[d.tasks[i].id] = i;
  std::vector<int> copies(d.tasks.size(), 0);
  std::vector<std::int64_t> src(p.tasks.size(), -1), planned(d.tasks.size(), -1);  // what each portable task copies; a copy of each distributed task
  for (std::size_t i = 0; i < p.tasks.size(); ++i) {
    const auto& pt = p.tasks[i];
    auto it = pt.lineage.sources.size() == 1 ? task_of.find(pt.lineage.sources[0]) : task_of.end();
    if (it == task_of.end()) { c.err("WORK-1", at("tasks", i, "lineage/sources"), "a portable task must derive from exactly one distributed task"); continue; }
    const auto& dt = d.tasks[it->second];
    ++copies[it->second];
    src[i] = static_cast<std::int64_t>(it->second), planned[it->second] = static_cast<std::int64_t>(i);
    if (pt.work != dt.work || pt.kind != dt.kind || pt.phase != dt.phase || pt.repeat != dt.repeat || pt.replication != dt.replication || pt.ranks != dt.ranks)
      c.err("WORK-1", at("tasks", i, "work"), "the work vector, kind, phase, repetition and ranks must equal those of distributed task \"" + dt.id + "\" exactly");
  }
  for (std::size_t i = 0; i < d.tasks.size(); ++i)
    if (copies[i] != 1) c.err("WORK-1", "/payload/tasks", "distributed task \"" + d.tasks[i].id + "\" is planned " + std::to_string(copies[i]) + " times, not once");
  // DAG-4: every dependency of a distributed task is a dependency of its portable copy (tasks
  // planned once only: the others are WORK-1 findings; planned[e] is the copy when there is one).
  // Stamps make it O(T + E).
  std::vector<std::size_t> stamp(p.tasks.size(), 0);
  for (std::size_t i = 0; i < p.tasks.size(); ++i) {
    if (src[i] < 0 || copies[static_cast<std::size_t>(src[i])] != 1) continue;
    for (Index u : p.tasks[i].dependencies) stamp[static_cast<std::size_t>(u)] = i + 1;
    for (Index e : d.tasks[static_cast<std::size_t>(src[i])].dependencies)
      if (auto q = planned[static_cast<std::size_t>(e)]; copies[static_cast<std::size_t>(e)] == 1 && stamp[static_cast<std::size_t>(q)] != i + 1)
        c.err("DAG-4", at("tasks", i, "dependencies"), "\"" + p.tasks[i].id + "\" must depend on \"" + p.tasks[static_cast<std::size_t>(q)].id +
                                                         "\": its distributed task depends on \"" + d.tasks[static_cast<std::size_t>(e)].id + "\"");
  }
  // MEM-2: the peak activation fact is the schedule's peak of in-flight chunk activations.
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> chunk;  // (stage, chunk) -> its activations fact
  std::map<std::int64_t, std::size_t> peak;  // stage -> its (last) activations_peak fact (MEM-3: one)
  for (std::size_t k = 0; k < p.memory.size(); ++k) {
    if (const auto& f = p.memory[k]; f.category == MemoryCategory::activations && !chunk.emplace(std::pair{f.stage, f.chunk}, k).second)
      c.err("MEM-2", at("memory", k, "chunk"), "stage " + std::to_string(f.stage) + " has two activations facts for chunk " + std::to_string(f.chunk));
    if (p.memory[k].category == MemoryCategory::activations_peak) peak[p.memory[k].stage] = k;
  }
  for (const auto& s : d.schedule) {  // each fact is taken by its chunk; one no schedule takes is a violation
    std::vector<Expr> per;
    for (std::int64_t ch = 0; ch < s.chunks; ++ch) if (auto f = chunk.extract({s.stage, ch})) per.push_back(p.memory[f.mapped()].bytes); else per.emplace_back();
    auto want = schedule_peak(s, per);
    const std::string path = peak.count(s.stage) ? at("memory", peak[s.stage], "bytes") : "/payload/memory";
    if (!want) c.err("MEM-2", path, "stage " + std::to_string(s.stage) + ": the peak over chunks of different symbolic sizes is not decided");
    else if (!peak.count(s.stage) || !(p.memory[peak[s.stage]].bytes == *want))
      c.err("MEM-2", path, "stage " + std::to_string(s.stage) + ": peak activations must be " + want->str() + " (the schedule's peak of in-flight microbatch activations)");
  }
  for (const auto& [sc, k] : chunk) c.err("MEM-2", at("memory", k, "chunk"), "an activations fact for stage " + std::to_string(sc.first) + ", chunk " + std::to_string(sc.second) + ", which no schedule of the parent has");
}

}  // namespace layers
}  // namespace plancert
