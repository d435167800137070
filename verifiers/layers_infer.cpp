// SPDX-License-Identifier: Apache-2.0
// Inference families: EFFECT (state effects carried and ordered), KV (KV-cache bytes), WS
// (workspace bound), CAPM (memory fits the declared capacity).
#include "verifiers/gate.h"
#include "verifiers/layers.h"

#include <map>
#include <set>
#include <unordered_map>

namespace plancert::layers {
using check::at;
namespace {

// a <= b, decided only for constants (an undecided comparison is a failure).
bool le(const Expr& a, const Expr& b) {
  auto v = (b - a).constant();
  return v && *v >= 0;
}

// Per-rank bytes of one KV state, b c max(k/t,1) d e, and the seed's workspace bound
// D + e max(3bqH/t, b(a/t)qc, bqF/t), D = bqHe; nullopt when the shape is ill-formed (KV-1).
struct Bounds {
  Expr kv, ws;
};
std::optional<Bounds> bounds(const InferenceShape& s, std::int64_t t) {
  auto e = dtype_size(s.dtype);
  auto k = s.kv_heads.constant();
  if (!e || !k || *k < 1 || denominator(*k) != 1 || (*k >= t ? numerator(*k) % t != 0 : t % numerator(*k) != 0)) return std::nullopt;
  const Expr E(*e), inv_t(make_rat(1, t)), bq = s.batch * s.query;
  Expr widest = Expr::max(Expr::max(Expr(3) * bq * s.hidden * inv_t, s.batch * s.heads * inv_t * s.query * s.context), bq * s.ffn * inv_t);
  return Bounds{s.batch * s.context * Expr(*k >= t ? *k / Rat(t) : Rat(1)) * s.head_dim * E, bq * s.hidden * E + E * widest};
}

// EFFECT-2 / EFFECT-3: a read or write depends directly on the last earlier writer of its value.
template <class T>
void order(check::Ctx& c, const std::vector<T>& tasks) {
  std::unordered_map<std::string_view, std::vector<std::size_t>> writers;  // in index order
  for (std::size_t i = 0; i < tasks.size(); ++i)
    for (const auto& e : tasks[i].effects)
      if (auto& w = writers[e.value]; e.kind == EffectKind::write && (w.empty() || w.back() != i)) w.push_back(i);
  std::vector<std::size_t> stamp(tasks.size(), SIZE_MAX);
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    for (Index u : tasks[i].dependencies) stamp[static_cast<std::size_t>(u)] = i;
    for (std::size_t k = 0; k < tasks[i].effects.size(); ++k) {
      const auto& e = tasks[i].effects[k];
      const auto& w = writers[e.value];
      auto p = std::lower_bound(w.begin(), w.end(), i);
      if (p == w.begin() ? e.kind == EffectKind::write : stamp[*(p - 1)] == i) continue;
      bool read = e.kind == EffectKind::read;
      c.err(read ? "EFFECT-2" : "EFFECT-3", at("tasks", i, "effects", static_cast<std::int64_t>(k)),
            (read ? "reads \"" : "writes \"") + e.value + "\" " +
                (p == w.begin() ? std::string("that no earlier task writes") : "but its last earlier writer \"" + tasks[*(p - 1)].id + "\" is not a direct dependency"));
    }
  }
}

}  // namespace

void effects(check::Ctx& c, const DistributedTaskIR& d) { order(c, d.tasks); }
void effects(check::Ctx& c, const PortablePlanIR& p) { order(c, p.tasks); }

void capacity(check::Ctx& c, const PortablePlanIR& p) {
  using M = MemoryCategory;
  constexpr std::size_t kCats = std::size(codec::EnumNames<M>::names);
  auto ix = [](M m) { return static_cast<std::size_t>(m); };
  auto own = [](BufferRole r) { return r == BufferRole::weight ? M::weights : r == BufferRole::kv_cache ? M::kv_cache : M::workspace; };
  std::map<std::int64_t, std::array<const MemoryFact*, kCats>> fact;
  std::map<std::int64_t, std::array<int, kCats>> n;
  std::vector<int> claims(p.buffers.size(), 0);
  bool inference = false;
  for (const auto& f : p.memory) {
    fact[f.stage][ix(f.category)] = &f;
    ++n[f.stage][ix(f.category)];
    inference = inference || f.category == M::kv_cache;
    for (Index b : f.buffers)
      if (b >= 0 && static_cast<std::size_t>(b) < p.buffers.size()) claims[static_cast<std::size_t>(b)] += own(p.buffers[static_cast<std::size_t>(b)].role) == f.category ? 1 : 2;
  }
  for (const auto& [stage, f] : fact) {
    const auto& k = n[stage];
    const std::string where = "stage " + std::to_string(stage);
    // CAPM-1: an inference stage states weights, KV cache, workspace, total and capacity once each.
    if (k[ix(M::kv_cache)] && (k[ix(M::weights)] != 1 || k[ix(M::kv_cache)] != 1 || k[ix(M::workspace)] != 1 || k[ix(M::total)] != 1 || k[ix(M::capacity)] != 1))
      c.err("CAPM-1", "/payload/memory", where + " must have exactly one fact each of weights, kv_cache, workspace, total and capacity");
    else if (k[ix(M::kv_cache)] && !(f[ix(M::total)]->bytes == f[ix(M::weights)]->bytes + f[ix(M::kv_cache)]->bytes + f[ix(M::workspace)]->bytes))
      c.err("CAPM-1", "/payload/memory", where + ": total is not weights + kv_cache + workspace");
    // CAPM-2: the total of every stage with a capacity fact fits it.
    if (k[ix(M::capacity)] != 1 || k[ix(M::total)] != 1 || le(f[ix(M::total)]->bytes, f[ix(M::capacity)]->bytes)) continue;
    std::string parts;
    for (M m : {M::weights, M::weight_gradients, M::optimizer_state, M::activations_peak, M::kv_cache, M::workspace})
      if (f[ix(m)]) parts += (parts.empty() ? "" : " + ") + std::string(codec::enum_name(m)) + " " + f[ix(m)]->bytes.str();
    c.err("CAPM-2", "/payload/memory", where + ": " + f[ix(M::total)]->bytes.str() + " bytes per rank (" + parts + ") do not fit the capacity of " + f[ix(M::capacity)]->bytes.str() + " bytes");
  }
  for (std::size_t b = 0; inference && b < p.buffers.size(); ++b) {
    BufferRole r = p.buffers[b].role;
    if ((r == BufferRole::weight || r == BufferRole::kv_cache || r == BufferRole::workspace) && claims[b] != 1)
      c.err("CAPM-1", at("buffers", b), "a " + std::string(codec::enum_name(r)) + " buffer of an inference plan must be listed by exactly one memory fact, of its own category");
  }
}

void model_to_distributed_infer(check::Ctx& c, const ModelIR& m, const DistributedTaskIR& d) {
  std::unordered_map<std::string_view, std::size_t> op_of;
  for (std::size_t i = 0; i < m.operations.size(); ++i) op_of[m.operations[i].id] = i;
  auto b = d.inference ? bounds(*d.inference, degree(d.mesh, "tp")) : std::nullopt;
  std::vector<bool> carried(m.operations.size(), false);
  std::map<std::pair<std::size_t, Rat>, bool> fits;  // WS-1 per (operation, a task's share of it): tasks of one operation repeat it
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& t = d.tasks[i];
    auto it = t.kind == TaskKind::compute && t.lineage.sources.size() == 1 ? op_of.find(t.lineage.sources[0]) : op_of.end();
    const Operation* op = it == op_of.end() ? nullptr : &m.operations[it->second];
    // EFFECT-1: a compute task carries exactly the effects of its operation; others carry none.
    bool same = t.effects.size() == (op ? op->effects.size() : 0);
    for (std::size_t k = 0; same && k < t.effects.size(); ++k)
      same = t.effects[k].kind == op->effects[k].kind && t.effects[k].value == m.values[static_cast<std::size_t>(op->effects[k].value)].id;
    if (!same) c.err("EFFECT-1", at("tasks", i, "effects"), op ? "the effects must be those of model operation \"" + op->id + "\", in order" : "only a compute task derived from a model operation has effects");
    if (op) carried[it->second] = true;
    if (!op || !b || t.ranks.empty()) continue;  // (no product of shapes without a bound to compare it with)
    // WS-1: the phase's workspace bound covers what the task materialises per rank (once found
    // to, for every task of the operation with the same share; a finding is made per task).
    const std::pair key{it->second, make_rat(t.replication, static_cast<std::int64_t>(t.ranks.size()))};
    if (auto f = fits.find(key); f != fits.end() && f->second) continue;
    std::vector<Expr> outs;  // summed at once (Expr::sum)
    for (Index v : op->outputs) {
      const ModelValue& x = m.values[static_cast<std::size_t>(v)];
      if (x.role != ValueRole::activation) continue;
      Expr bytes(dtype_size(x.dtype).value_or(0));
      if (bytes == Expr()) c.err("WS-1", at("tasks", i), "output \"" + x.id + "\" has a dtype of unknown size: the workspace bound is not decided");
      for (const auto& dim : x.shape) bytes = bytes * dim;
      outs.push_back(bytes);
    }
    const Expr out = Expr::sum(outs) * Expr(key.second);  // per rank
    if (!(fits[key] = le(out, b->ws))) c.err("WS-1", at("tasks", i), "materialises " + out.str() + " bytes per rank, more than (or not decided to be at most) the workspace bound " + b->ws.str());
  }
  for (std::size_t i = 0; i < m.operations.size(); ++i)
    if (!m.operations[i].effects.empty() && !carried[i]) c.err("EFFECT-1", at("operations", i, "effects"), "no compute task carries the effects of \"" + m.operations[i].id + "\"");
  // KV-1: every state value is a KV cache of the declared shape [b, c, k, d].
  bool state = false;
  for (std::size_t v = 0; v < m.values.size(); ++v) {
    if (m.values[v].role != ValueRole::state) continue;
    state = true;
    const auto* s = b ? &*d.inference : nullptr;
    if (s && (m.values[v].shape != std::vector<Expr>{s->batch, s->context, s->kv_heads, s->head_dim} || m.values[v].dtype != s->dtype))
      c.err("KV-1", at("values", v, "shape"), "state \"" + m.values[v].id + "\" is not a KV cache [" + s->batch.str() + ", " + s->context.str() + ", " + s->kv_heads.str() + ", " + s->head_dim.str() + "] of " + s->dtype);
  }
  if (state && !b) c.err("KV-1", "/payload/inference", "the model has state values: the plan must declare an inference shape with a known dtype and a constant kv_heads k, with t | k or k | t");
}

void distributed_to_portable_infer(check::Ctx& c, const DistributedTaskIR& d, const PortablePlanIR& p) {
  // EFFECT-4: a portable task has the effects of the distributed task it copies.
  std::unordered_map<std::string_view, std::size_t> task_of;
  for (std::size_t i = 0; i < d.tasks.size(); ++i) task_of[d.tasks[i].id] = i;
  for (std::size_t i = 0; i < p.tasks.size(); ++i) {
    auto it = p.tasks[i].lineage.sources.size() == 1 ? task_of.find(p.tasks[i].lineage.sources[0]) : task_of.end();
    const auto &pe = p.tasks[i].effects, *de = it == task_of.end() ? nullptr : &d.tasks[it->second].effects;
    bool same = pe.size() == (de ? de->size() : 0);
    for (std::size_t k = 0; same && k < pe.size(); ++k) same = pe[k].kind == (*de)[k].kind && pe[k].value == (*de)[k].value;
    if (!same) c.err("EFFECT-4", at("tasks", i, "effects"), "the effects must be those of the distributed task it derives from");
  }
  // KV-2: without the parent's inference shape no stage is an inference stage (a stage with a kv_cache fact would escape MEM-3).
  auto kv_fact = std::find_if(p.memory.begin(), p.memory.end(), [](const MemoryFact& f) { return f.category == MemoryCategory::kv_cache; });
  if (!d.inference) return kv_fact == p.memory.end() ? void() : c.err("KV-2", "/payload/memory/" + std::to_string(kv_fact - p.memory.begin()), "a kv_cache fact needs an inference shape in the parent");
  const std::int64_t t = degree(d.mesh, "tp"), stages = degree(d.mesh, "pp"), per_stage = t * degree(d.mesh, "dp");
  auto b = bounds(*d.inference, t);
  if (!b) return c.err("KV-2", "/payload/memory", "the parent's inference shape is ill-formed (KV-1)");
  // KV-2: a stage's kv_cache fact is one per-rank KV state per value its tasks write.
  std::vector<std::set<std::string_view>> written(static_cast<std::size_t>(stages));
  for (const auto& task : d.tasks)
    for (const auto& e : task.effects)
      if (e.kind == EffectKind::write && !task.ranks.empty() && task.ranks.front() >= 0 && task.ranks.front() < stages * per_stage)
        written[static_cast<std::size_t>(stage_of(d.mesh, task.ranks.front()))].insert(e.value);
  std::vector<int> kv(static_cast<std::size_t>(stages), 0), ws(static_cast<std::size_t>(stages), 0);
  for (std::size_t k = 0; k < p.memory.size(); ++k) {
    const auto& f = p.memory[k];
    const bool in = f.stage >= 0 && f.stage < stages, is_kv = f.category == MemoryCategory::kv_cache;
    if (!is_kv && f.category != MemoryCategory::workspace) continue;
    if (in) ++(is_kv ? kv : ws)[static_cast<std::size_t>(f.stage)];
    Expr want = is_kv && in ? b->kv * Expr(static_cast<std::int64_t>(written[static_cast<std::size_t>(f.stage)].size())) : Expr();
    if (!in || (is_kv && !(f.bytes == want)) || (!is_kv && f.buffers.empty()))
      c.err(is_kv ? "KV-2" : "WS-2", "/payload/memory/" + std::to_string(k), is_kv ? "the KV cache per rank must be " + want.str() + " bytes: " + b->kv.str() + " per state the stage writes" : "a workspace fact needs a stage of the mesh and its buffers");
    for (Index j : f.buffers) {
      if (j < 0 || static_cast<std::size_t>(j) >= p.buffers.size()) continue;  // REF-1
      const Expr& size = p.buffers[static_cast<std::size_t>(j)].size;
      if (is_kv ? !(size == b->kv) : !le(b->ws, size))
        c.err(is_kv ? "KV-2" : "WS-2", at("buffers", static_cast<std::size_t>(j), "size"),
              size.str() + " bytes: " + (is_kv ? "a KV-cache buffer holds one state per rank, " + b->kv.str() : "below (or not decided to be at least) the unfused workspace bound " + b->ws.str()) + " bytes");
    }
  }
  for (std::int64_t s = 0; s < stages; ++s) {
    if (kv[static_cast<std::size_t>(s)] != 1) c.err("KV-2", "/payload/memory", "stage " + std::to_string(s) + " must have exactly one kv_cache fact");
    if (ws[static_cast<std::size_t>(s)] != 1) c.err("WS-2", "/payload/memory", "stage " + std::to_string(s) + " must have exactly one workspace fact");
  }
}

}  // namespace plancert::layers
