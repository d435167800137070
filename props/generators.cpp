// SPDX-License-Identifier: Apache-2.0
// Valid-by-construction builders of every IR layer, driven by RapidCheck-generated knobs.
#include "props/generators.h"

#include "passes/bind/common.h"
#include "passes/emit/emit.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <utility>
#include <vector>

namespace plancert::props {
namespace {

using bind::detail::queue_kind;
using bind::detail::command_kind;


// ---- knobs -------------------------------------------------------------------------------

using Row = std::vector<std::uint32_t>;
using Rows = std::vector<Row>;

constexpr std::size_t kWidth = 24;  // knobs per row

// One row of knobs; k(i, n) is a choice in [0, n) (0 is the simplest choice).
struct K {
  const Row* r = nullptr;
  [[nodiscard]] std::uint32_t operator()(std::size_t i, std::uint32_t n) const {
    if (n == 0 || r == nullptr || r->empty()) return 0;
    return (*r)[i % r->size()] % n;
  }
  [[nodiscard]] bool flag(std::size_t i, std::uint32_t one_in) const { return (*this)(i, one_in) == 1 % one_in; }
};

// Row i of `rows`, reused cyclically when there are fewer rows than entities.
K row(const Rows& rows, std::size_t i) { return K{rows.empty() ? nullptr : &rows[i % rows.size()]}; }

rc::Gen<Row> knob_row() { return rc::gen::container<Row>(kWidth, rc::gen::inRange<std::uint32_t>(0, 1u << 16)); }

// Between lo and hi rows of knobs (the count shrinks too).
rc::Gen<Rows> knob_rows(int lo, int hi) {
  return rc::gen::mapcat(rc::gen::inRange(lo, hi + 1), [](int n) { return rc::gen::container<Rows>(static_cast<std::size_t>(n), knob_row()); });
}

struct Knobs {
  Row global;
  Rows rows;
};

rc::Gen<Knobs> knobs(int lo, int hi) {
  return rc::gen::apply([](Row g, Rows r) { return Knobs{std::move(g), std::move(r)}; }, knob_row(), knob_rows(lo, hi));
}

// ---- small helpers -------------------------------------------------------------------------

Lineage introduced(std::string rule) { return Lineage{LineageKind::introduced, std::move(rule), {}}; }
Lineage derived(std::string rule, codec::List<std::string> sources) { return Lineage{LineageKind::derived, std::move(rule), std::move(sources)}; }

Expr sym(std::string_view n) { return Expr::symbol(n); }

void sort_unique(Indices& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

Int align_up(const Int& x, std::int64_t a) {
  Int r = x % a;
  return r == 0 ? x : x + (a - r);
}

// Ranks encoded by a non-empty bit mask over [0, world).
Indices ranks_from(std::uint32_t knob, std::int64_t world) {
  const std::uint32_t full = world >= 31 ? 0x7fffffffu : (1u << world) - 1u;
  std::uint32_t mask = knob % full + 1u;
  Indices out;
  for (std::int64_t r = 0; r < world && r < 31; ++r)
    if (mask & (1u << r)) out.push_back(static_cast<Index>(r));
  return out;
}

// ---- ModelIR -------------------------------------------------------------------------------

Snapshot<ModelIR> build_model(const Knobs& kn, std::optional<bool> inference) {
  K g{&kn.global};
  ModelIR m;
  m.name = "model-" + std::to_string(g(0, 100));
  m.rules = {"model.define"};
  if (g.flag(1, 2)) m.rules.push_back("model.import");
  Symbol b;
  b.axis = SymbolAxis::workload;
  b.name = "B";
  if (g.flag(2, 2)) b.max = Int(4096);
  Symbol s;
  s.axis = SymbolAxis::workload;
  s.name = "S";
  s.divisible_by = 8;
  s.min = 8;
  m.symbols = {b, s};

  static constexpr std::int64_t kHidden[] = {64, 128, 256};
  const Expr H = Expr(static_cast<long long>(kHidden[g(3, 3)]));
  // a model with state is an inference model: its state is a KV cache [b, c, k, d] and its
  // shapes are constant (the verifiers decide the workspace bound only for constants)
  const bool has_state = inference.value_or(g.flag(6, 2));
  const bool symbolic = !has_state && g(4, 4) != 0;
  const Expr D0 = symbolic ? sym("B") : Expr(2LL), D1 = symbolic ? sym("S") : Expr(16LL);
  const Expr tokens = D0 * D1;
  const std::vector<Expr> act_shape = {D0, D1, H};
  static constexpr const char* kDtypes[] = {"bf16", "fp16", "fp32"};
  const std::string dtype = kDtypes[g(5, 3)];

  auto add_value = [&](std::string id, ValueRole role, std::vector<Expr> shape) {
    m.values.push_back(ModelValue{dtype, std::move(id), introduced("model.define"), role, std::move(shape)});
    return static_cast<Index>(m.values.size() - 1);
  };
  const Index x = add_value("v:x", ValueRole::input, act_shape);
  std::optional<Index> state;
  static constexpr long long kKvHeads[] = {1, 2, 4};
  if (has_state) state = add_value("v:state", ValueRole::state, {D0, Expr(static_cast<long long>(16 * (1 + g(7, 3)))), Expr(kKvHeads[g(8, 3)]), Expr(32LL * (1 + g(9, 2)))});
  bool written = false;  // the first effect on the state is a write

  const std::size_t nops = kn.rows.size();
  std::vector<Index> acts;  // activation defined by op i
  for (std::size_t i = 0; i < nops; ++i) {
    K r = row(kn.rows, i);
    const std::string n = std::to_string(i);
    Operation op;
    op.id = "op:" + n;
    op.lineage = introduced("model.define");
    const bool weight = r(0, 3) != 0;
    // main input: x or an earlier activation
    std::uint32_t pick = r(1, static_cast<std::uint32_t>(i + 1));
    op.inputs.push_back(pick == 0 ? x : acts[pick - 1]);
    if (r.flag(2, 3) && i > 0) op.inputs.push_back(acts[r(3, static_cast<std::uint32_t>(i))]);
    if (weight) op.inputs.push_back(add_value("v:w" + n, ValueRole::weight, {H, H}));
    if (r.flag(4, 5)) op.inputs.push_back(add_value("v:c" + n, ValueRole::constant, {H}));
    sort_unique(op.inputs);
    const bool last = i + 1 == nops;
    ValueRole role = last ? ValueRole::output : (r.flag(5, 4) ? ValueRole::gradient : ValueRole::activation);
    Index out = add_value("v:a" + n, role, act_shape);
    acts.push_back(out);
    op.outputs = {out};
    if (state && (i == 0 || written)) {  // the first op writes the state; every later op reads and/or writes it
      switch (written ? r(7, 4) : 3) {  // after the first writer: read-only half of the time
        case 0:
        case 1: op.effects.push_back({EffectKind::read, *state}); break;
        case 2: op.effects = {{EffectKind::read, *state}, {EffectKind::write, *state}}; break;
        default: op.effects.push_back({EffectKind::write, *state}); break;
      }
      written = true;
    }
    if (weight) {
      op.kind = "matmul";
      op.work.matrix_ops = Expr(2LL) * tokens * H * H;
      op.work.read_bytes = Expr(2LL) * tokens * H + Expr(2LL) * H * H;
      op.work.persistent_bytes = Expr(2LL) * H * H;
    } else {
      static constexpr const char* kKinds[] = {"add", "gelu", "layernorm", "softmax"};
      op.kind = kKinds[r(8, 4)];
      op.work.vector_ops = Expr(static_cast<long long>(1 + r(9, 8))) * tokens * H;
      op.work.read_bytes = Expr(2LL) * tokens * H;
    }
    op.work.write_bytes = Expr(2LL) * tokens * H;
    if (r(10, 4) == 1) op.work.temporary_bytes = tokens * Expr(4LL);
    switch (r(11, 3)) {
      case 1: op.attrs["note"] = "op" + n; break;
      case 2: op.attrs["fused"] = "false"; break;
      default: break;
    }
    m.operations.push_back(std::move(op));
  }
  return make_snapshot(std::move(m), {});
}

// ---- DistributedTaskIR ---------------------------------------------------------------------

// Row-major mesh geometry (axes outermost first, as the verifiers read them).
struct Geometry {
  std::vector<MeshAxis> axes;
  std::int64_t world = 1;
  explicit Geometry(const Mesh& m) : axes(m.axes) {
    for (const auto& a : axes) world *= a.size;
  }
  [[nodiscard]] std::int64_t size(std::string_view name) const {
    for (const auto& a : axes)
      if (a.name == name) return a.size;
    return -1;
  }
  [[nodiscard]] std::int64_t stride(std::string_view name) const {
    std::int64_t s = 1;
    for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
      if (it->name == name) return s;
      s *= it->size;
    }
    return s;
  }
  // The pipeline stage of rank r (its pp coordinate; 0 without a pp axis). Stages interleave
  // when pp is not the first axis.
  [[nodiscard]] std::int64_t stage(Index r) const { return size("pp") > 0 ? r / stride("pp") % size("pp") : 0; }
  // The union of the complete `name` groups containing the given ranks (sorted).
  [[nodiscard]] Indices complete_groups(std::string_view name, const Indices& seeds) const {
    const std::int64_t n = size(name), st = stride(name);
    Indices out;
    for (Index r : seeds) {
      const auto base = static_cast<Index>(r - ((r / st) % n) * st);
      for (std::int64_t k = 0; k < n; ++k) out.push_back(static_cast<Index>(base + k * st));
    }
    sort_unique(out);
    return out;
  }
};

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> d;
  for (std::int64_t k = 1; k <= n; ++k)
    if (n % k == 0) d.push_back(k);
  return d;
}

// Bytes of a model value (dtype size times its shape), when the dtype is known.
std::optional<Expr> value_bytes(const ModelValue& v) {
  std::int64_t e = v.dtype == "fp32" ? 4 : (v.dtype == "bf16" || v.dtype == "fp16") ? 2 : 0;
  if (e == 0) return std::nullopt;
  Expr b(static_cast<long long>(e));
  for (const auto& d : v.shape) b = b * d;
  return b;
}

// A stage schedule that forwards every (chunk, microbatch) once and then backwards it once,
// interleaved as the knobs say.
StageSchedule make_schedule(std::int64_t stage, std::int64_t chunks, std::int64_t microbatches, K r) {
  StageSchedule s;
  s.stage = stage;
  s.chunks = chunks;
  std::vector<std::pair<std::int64_t, std::int64_t>> todo;  // (chunk, microbatch) in forward order
  const bool chunk_major = r.flag(0, 2);
  for (std::int64_t a = 0; a < (chunk_major ? chunks : microbatches); ++a)
    for (std::int64_t b = 0; b < (chunk_major ? microbatches : chunks); ++b) todo.emplace_back(chunk_major ? a : b, chunk_major ? b : a);
  std::vector<std::pair<std::int64_t, std::int64_t>> in_flight;
  std::size_t next = 0;
  for (std::size_t j = 0; next < todo.size() || !in_flight.empty(); ++j) {
    const bool forward = next < todo.size() && (in_flight.empty() || r(1 + j % 11, 3) != 0);
    if (forward) {
      s.steps.push_back(Step{todo[next].first, StepKind::forward, todo[next].second});
      in_flight.push_back(todo[next++]);
    } else {
      const std::size_t k = r(12 + j % 11, 2) ? 0 : in_flight.size() - 1;  // oldest or newest
      s.steps.push_back(Step{in_flight[k].first, StepKind::backward, in_flight[k].second});
      in_flight.erase(in_flight.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
  return s;
}

Snapshot<DistributedTaskIR> build_distributed(const Snapshot<ModelIR>& parent, const Knobs& kn) {
  const ModelIR& m = parent.payload;
  K g{&kn.global};
  DistributedTaskIR d;
  d.rules = {"dist.shard", "dist.collective", "dist.p2p", "dist.backward", "dist.optimizer"};
  d.symbols = m.symbols;
  const std::int64_t tp = 1 + g(0, 2), pp = 1 + g(1, 2), dp = 1 + g(2, 3);
  std::vector<MeshAxis> axes = {{"tp", tp}, {"pp", pp}, {"dp", dp}};
  for (std::uint32_t k = g(3, 6); k > 0; --k) std::next_permutation(axes.begin(), axes.end(), [](const MeshAxis& a, const MeshAxis& b) { return a.name < b.name; });
  d.mesh.axes = axes;
  const Geometry geo(d.mesh);
  const std::int64_t world = geo.world;
  d.microbatches = 1 + g(4, 3);
  const std::int64_t mb = d.microbatches;
  const bool training = g.flag(5, 2);

  // value index -> index of the operation defining it
  std::vector<std::int64_t> def(m.values.size(), -1);
  for (std::size_t i = 0; i < m.operations.size(); ++i)
    for (Index v : m.operations[i].outputs) def[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(i);
  std::vector<Index> last(m.operations.size(), -1);  // last forward-side task emitted for op i
  std::map<std::string, Index> last_writer;           // state value id -> last task writing it
  // Adds a task; a compute task derived from one operation carries the operation's effects
  // (EFFECT-1) and depends directly on the last earlier writer of each state (EFFECT-2/3).
  auto add = [&](DistTask t) {
    if (t.kind == TaskKind::compute && t.lineage.sources.size() == 1)
      for (const auto& op : m.operations)
        if (op.id == t.lineage.sources[0])
          for (const auto& e : op.effects) t.effects.push_back(TaskEffect{e.kind, m.values[static_cast<std::size_t>(e.value)].id});
    for (const auto& e : t.effects)
      if (auto it = last_writer.find(e.value); it != last_writer.end()) t.dependencies.push_back(it->second);
    sort_unique(t.dependencies);
    const Index idx = static_cast<Index>(d.tasks.size());
    for (const auto& e : t.effects)
      if (e.kind == EffectKind::write) last_writer[e.value] = idx;
    d.tasks.push_back(std::move(t));
    return idx;
  };
  // per-rank matrix work of one of `parts` tasks on `ranks` so that the parts add up to
  // `factor` times the model operation's work times m * dp (WORK-2)
  // Compute, host and optimizer tasks span ranks 0 and world - 1 and a rank of each of their
  // dependencies, so that every dependency joins rank sets that share a rank (P2P-3: only a
  // send/receive pair joins disjoint ones).
  auto spanning = [&](std::uint32_t knob, const Indices& deps) {
    Indices rs = ranks_from(knob, world);
    rs.push_back(0);
    rs.push_back(static_cast<Index>(world - 1));
    for (Index u : deps) rs.push_back(d.tasks[static_cast<std::size_t>(u)].ranks.front());
    sort_unique(rs);
    return rs;
  };
  auto share = [&](const Operation& op, std::int64_t factor, const DistTask& t, std::int64_t parts) {
    return op.work.matrix_ops * Expr(make_rat(Int(factor * mb * dp * t.replication), Int(parts * t.repeat * static_cast<std::int64_t>(t.ranks.size()))));
  };

  for (std::size_t i = 0; i < m.operations.size(); ++i) {
    const Operation& op = m.operations[i];
    K r = row(kn.rows, i);
    Indices producers;
    for (Index v : op.inputs)
      if (def[static_cast<std::size_t>(v)] >= 0) producers.push_back(last[static_cast<std::size_t>(def[static_cast<std::size_t>(v)])]);
    if (r.flag(13, 4) && !d.tasks.empty()) producers.push_back(static_cast<Index>(r(14, static_cast<std::uint32_t>(d.tasks.size()))));

    // forward compute, in one or two parts
    const std::int64_t parts = r.flag(3, 4) ? 2 : 1;
    Index cur = -1;
    for (std::int64_t part = 0; part < parts; ++part) {
      DistTask t;
      t.id = "t:" + op.id + (parts > 1 ? ":part" + std::to_string(part) : "");
      t.kind = TaskKind::compute;
      t.phase = Phase::forward;
      t.lineage = derived("dist.shard", {op.id});
      t.dependencies = producers;
      t.ranks = spanning(r(0 + static_cast<std::size_t>(part) * 20, 1u << 16), t.dependencies);
      auto divs = divisors(static_cast<std::int64_t>(t.ranks.size()));
      t.replication = divs[r(1, static_cast<std::uint32_t>(divs.size()))];
      t.repeat = r.flag(2, 3) ? 1 : mb;
      t.work = op.work;
      t.work.matrix_ops = share(op, 1, t, parts);
      if (r.flag(15, 3)) t.attrs["shard"] = tp > 1 ? "column" : "replicated";
      cur = add(std::move(t));
    }
    if (r.flag(4, 3)) {  // a collective after the compute
      DistTask c;
      c.id = "t:" + op.id + ":coll";
      c.kind = TaskKind::collective;
      c.phase = Phase::forward;
      c.lineage = derived("dist.collective", {op.id});
      c.dependencies = {cur};
      Collective col;
      const std::uint32_t how = r(5, 3);
      const char* axis = how == 1 ? "tp" : how == 2 ? "dp" : "";
      const Index joint = d.tasks[static_cast<std::size_t>(cur)].ranks.front();  // a rank shared with its input's task (P2P-3)
      if (*axis) {
        col.axis = axis;
        Indices seeds = ranks_from(r(21, 1u << 16), world);
        seeds.push_back(joint);
        c.ranks = geo.complete_groups(axis, seeds);
      } else {  // one group: within the pipeline stage of the shared rank (COLL-2)
        for (Index x : ranks_from(r(21, 1u << 16), world))
          if (geo.stage(x) == geo.stage(joint)) c.ranks.push_back(x);
        c.ranks.push_back(joint);
        sort_unique(c.ranks);
      }
      col.group = c.ranks;
      col.kind = static_cast<CollectiveKind>(r(6, 5));
      static constexpr Reduction kReductions[] = {Reduction::sum, Reduction::max, Reduction::min};
      col.reduction = (col.kind == CollectiveKind::all_reduce || col.kind == CollectiveKind::reduce_scatter) ? kReductions[r(7, 3)] : Reduction::none;
      const ModelValue& out = m.values[static_cast<std::size_t>(op.outputs.at(0))];
      auto vb = value_bytes(out);
      if (vb && r.flag(8, 2)) {
        c.value = out.id;
        col.message_bytes = *vb;
      } else {
        col.message_bytes = op.work.write_bytes;
      }
      c.collective = col;
      c.work.message_bytes = col.message_bytes;
      c.repeat = r.flag(2, 3) ? 1 : mb;
      cur = add(std::move(c));
    }
    if (world >= 2 && r.flag(9, 3)) {  // a point-to-point transfer to the next stage
      const Index send = static_cast<Index>(d.tasks.size()), recv = send + 1;
      const Indices& from = d.tasks[static_cast<std::size_t>(cur)].ranks;  // the send runs where its input is
      const std::int64_t src = from[r(10, static_cast<std::uint32_t>(from.size()))], dst = (src + 1 + r(11, static_cast<std::uint32_t>(world - 1))) % world;
      DistTask s;
      s.id = "t:" + op.id + ":send";
      s.kind = TaskKind::send;
      s.phase = Phase::forward;
      s.lineage = derived("dist.p2p", {op.id});
      s.dependencies = {cur};
      s.peer = recv;
      s.ranks = {static_cast<Index>(src)};
      s.repeat = mb;
      s.value = m.values[static_cast<std::size_t>(op.outputs.at(0))].id;
      s.work.message_bytes = op.work.write_bytes;
      DistTask v = s;
      v.id = "t:" + op.id + ":recv";
      v.kind = TaskKind::recv;
      v.dependencies = {send};
      v.peer = send;
      v.ranks = {static_cast<Index>(dst)};
      add(std::move(s));
      cur = add(std::move(v));
    }
    if (r.flag(12, 6)) {  // a host-side step
      DistTask h;
      h.id = "t:" + op.id + ":host";
      h.kind = TaskKind::host;
      h.lineage = derived("dist.shard", {op.id});
      h.dependencies = {cur};
      h.ranks = spanning(r(23, 1u << 16), h.dependencies);
      cur = add(std::move(h));
    }
    last[i] = cur;
  }
  if (training) {  // backward (twice the forward matrix work) and optional recompute, in reverse
    Index prev = d.tasks.empty() ? -1 : static_cast<Index>(d.tasks.size() - 1);
    for (std::size_t i = m.operations.size(); i-- > 0;) {
      const Operation& op = m.operations[i];
      K r = row(kn.rows, i);
      auto backward = [&](std::string suffix, Phase ph, std::int64_t factor, std::size_t knob) {
        DistTask t;
        t.id = "t:" + op.id + ":" + suffix;
        t.kind = TaskKind::compute;
        t.phase = ph;
        t.lineage = derived(ph == Phase::recompute ? "dist.shard" : "dist.backward", {op.id});
        t.dependencies = {last[i]};
        if (prev >= 0) t.dependencies.push_back(prev);
        t.ranks = spanning(r(knob, 1u << 16), t.dependencies);
        t.repeat = mb;
        t.work.matrix_ops = share(op, factor, t, 1);
        t.work.read_bytes = op.work.write_bytes;
        prev = add(std::move(t));
      };
      if (r.flag(17, 3)) backward("recompute", Phase::recompute, 1, 18);
      if (r.flag(16, 2)) {
        backward("bwd.act", Phase::backward_activation, 1, 19);
        backward("bwd.weight", Phase::backward_weight, 1, 20);
      } else {
        backward("bwd", Phase::backward_activation, 2, 19);
      }
    }
    // SHARD-4: when the plan shards weights, one update on every rank names every weight.
    const bool weights = g.flag(6, 2) && std::any_of(m.values.begin(), m.values.end(), [](const ModelValue& v) { return v.role == ValueRole::weight; });
    if (g.flag(8, 2) || weights) {
      DistTask o;
      o.id = "t:optimizer";
      o.kind = TaskKind::compute;
      o.phase = Phase::optimizer;
      codec::List<std::string> sources{m.values.front().id};  // from a value, not one operation
      for (const auto& v : m.values)
        if (v.role == ValueRole::weight && v.id != sources.front()) sources.push_back(v.id);
      o.lineage = derived("dist.optimizer", sources);
      if (prev >= 0) o.dependencies = {prev};
      o.ranks = geo.complete_groups("dp", spanning(g(9, 1u << 16), o.dependencies));
      if (weights) {
        o.ranks.clear();
        for (std::int64_t r = 0; r < world; ++r) o.ranks.push_back(static_cast<Index>(r));
      }
      o.work.vector_ops = Expr(12LL) * m.operations.front().work.persistent_bytes;
      if (dp > 1) {  // COLL-4: the update follows the sum of its gradients over dp
        DistTask a;
        a.id = "t:optimizer:dp";
        a.kind = TaskKind::collective;
        a.lineage = o.lineage;
        a.dependencies = o.dependencies;
        a.ranks = o.ranks;
        a.collective = Collective{o.ranks, CollectiveKind::all_reduce, m.operations.front().work.persistent_bytes, Reduction::sum, "dp"};
        a.work.message_bytes = a.collective->message_bytes;
        o.dependencies = {add(std::move(a))};
      }
      add(std::move(o));
    }
  }
  if (g.flag(6, 2)) {  // shards: every weight owned by a stage, split along tp or replicated
    for (std::size_t v = 0; v < m.values.size(); ++v) {
      const ModelValue& val = m.values[v];
      K r = row(kn.rows, 400 + v);
      const std::int64_t stage = r(0, static_cast<std::uint32_t>(pp));
      if (val.role == ValueRole::weight) {
        if (r.flag(1, 2)) d.shards.push_back(Shard{"tp", static_cast<std::int64_t>(val.shape.size()) - 1, tp, stage, val.id});
        else d.shards.push_back(Shard{"", -1, 1, stage, val.id});
      } else if (val.role == ValueRole::input && val.shape.size() >= 2 && r.flag(2, 2)) {
        d.shards.push_back(Shard{"tp", 1, tp, stage, val.id});  // S (a multiple of 8) or 16
      }
    }
  }
  // inference: the phase's shape, matching the KV-cache state (KV-1) and bounding every
  // task's materialised activations (WS-1: b q H e covers one activation of the model)
  for (const auto& v : m.values)
    if (v.role == ValueRole::state && v.shape.size() == 4) {
      InferenceShape is;
      is.batch = v.shape[0];
      is.context = v.shape[1];
      is.kv_heads = v.shape[2];
      is.head_dim = v.shape[3];
      is.dtype = v.dtype;
      for (const auto& a : m.values)
        if (a.role != ValueRole::state && a.shape.size() == 3) {
          is.query = a.shape[1];
          is.hidden = a.shape[2];
          break;
        }
      is.heads = Expr(static_cast<long long>(4 << g(11, 2)));
      is.ffn = is.hidden * Expr(4LL);
      d.inference = is;
      break;
    }
  if (!d.inference && (g.flag(7, 2) || pp > 1)) {  // a pipeline schedule per stage
    for (std::int64_t s = 0; s < pp; ++s) d.schedule.push_back(make_schedule(s, 1 + row(kn.rows, 600 + static_cast<std::size_t>(s))(0, 2), mb, row(kn.rows, 650 + static_cast<std::size_t>(s))));
    if (g.flag(10, 2)) std::reverse(d.schedule.begin(), d.schedule.end());
  }
  return make_snapshot(std::move(d), {parent.digest});
}

// ---- PortablePlanIR ------------------------------------------------------------------------

// The peak over a schedule of the in-flight activations, given one microbatch's bytes per
// chunk (all equal, or all constant).
Expr peak_activations(const StageSchedule& s, const std::vector<Expr>& per_chunk) {
  std::vector<std::int64_t> count(per_chunk.size(), 0);
  std::int64_t in_flight = 0, peak = 0;
  Rat best = 0;
  bool equal = true;
  for (const auto& b : per_chunk) equal = equal && b == per_chunk.front();
  for (const auto& st : s.steps) {
    const std::int64_t delta = st.kind == StepKind::forward ? 1 : -1;
    count[static_cast<std::size_t>(st.chunk)] += delta;
    in_flight += delta;
    peak = std::max(peak, in_flight);
    if (!equal) {
      Rat v = 0;
      for (std::size_t k = 0; k < count.size(); ++k) v += Rat(count[k]) * *per_chunk[k].constant();
      best = std::max(best, v);
    }
  }
  if (per_chunk.empty()) return Expr();
  return equal ? Expr(static_cast<long long>(peak)) * per_chunk.front() : Expr(best);
}

// Size of an axis, searched from the outermost axis (as the inference families do).
std::int64_t axis_or_one(const Mesh& m, std::string_view name) {
  for (const auto& a : m.axes)
    if (a.name == name) return a.size;
  return 1;
}

// Per stage: the weight, KV-cache and workspace buffers and the facts that account for them
// (CAPM-1), with the KV cache sized by the inference shape (KV-2), a workspace above the
// unfused bound (WS-2) and a capacity the total fits (CAPM-2).
void add_inference_memory(PortablePlanIR& p, const DistributedTaskIR& d, const Knobs& kn) {
  const InferenceShape& is = *d.inference;
  const std::int64_t t = axis_or_one(d.mesh, "tp"), stages = axis_or_one(d.mesh, "pp");
  const Geometry geo(d.mesh);
  auto val = [](const Expr& e) { return e.constant().value_or(Rat(0)); };
  const Rat E = is.dtype == "fp32" ? 4 : 2, k = val(is.kv_heads), b = val(is.batch), q = val(is.query), c = val(is.context), H = val(is.hidden),
            a = val(is.heads), F = val(is.ffn), dd = val(is.head_dim);
  const Rat T(t);
  const Rat kv = b * c * (k >= T ? Rat(k / T) : Rat(1)) * dd * E;
  const Rat ws = b * q * H * E + E * std::max({Rat(3 * b * q * H / T), Rat(b * (a / T) * q * c), Rat(b * q * F / T)});
  std::vector<std::set<std::string>> written(static_cast<std::size_t>(stages));
  for (const auto& task : d.tasks)
    for (const auto& e : task.effects)
      if (e.kind == EffectKind::write) written[static_cast<std::size_t>(geo.stage(task.ranks.front()))].insert(e.value);
  const std::string src = d.tasks.front().id;
  auto buffer = [&](std::string id, BufferRole role, Storage storage, Expr size) {
    p.buffers.push_back(PortableBuffer{64, {}, std::move(id), derived("portable.buffer", {src}), std::nullopt, role, std::move(size), storage});
    return static_cast<Index>(p.buffers.size() - 1);
  };
  for (std::int64_t s = 0; s < stages; ++s) {
    K r = row(kn.rows, 1200 + static_cast<std::size_t>(s));
    const std::string tag = "s" + std::to_string(s);
    Indices w, kvs;
    Expr wsum;
    for (std::uint32_t j = 0; j <= r(0, 2); ++j) {
      const Expr size(static_cast<long long>(256 * (1 + r(1 + j, 64))));
      w.push_back(buffer("b:weight." + tag + "." + std::to_string(j), BufferRole::weight, Storage::constant, size));
      wsum += size;
    }
    for (std::size_t j = 0; j < written[static_cast<std::size_t>(s)].size(); ++j) kvs.push_back(buffer("b:kv." + tag + "." + std::to_string(j), BufferRole::kv_cache, Storage::state, Expr(kv)));
    const Expr ws_size = Expr(ws) + Expr(static_cast<long long>(64 * r(3, 16)));
    const Index wsb = buffer("b:workspace." + tag, BufferRole::workspace, Storage::workspace, ws_size);
    const Expr kv_total = Expr(kv * static_cast<std::int64_t>(kvs.size()));
    const Expr total = wsum + kv_total + ws_size;
    std::vector<MemoryFact> facts = {
        MemoryFact{w, wsum, MemoryCategory::weights, -1, s},
        MemoryFact{kvs, kv_total, MemoryCategory::kv_cache, -1, s},
        MemoryFact{{wsb}, ws_size, MemoryCategory::workspace, -1, s},
        MemoryFact{{}, total, MemoryCategory::total, -1, s},
        MemoryFact{{}, total + Expr(static_cast<long long>(1 + r(4, 1u << 16))), MemoryCategory::capacity, -1, s},
    };
    if (r.flag(5, 2)) std::reverse(facts.begin(), facts.end());
    p.memory.insert(p.memory.end(), facts.begin(), facts.end());
  }
}

Snapshot<PortablePlanIR> build_portable(const Snapshot<DistributedTaskIR>& parent, const Knobs& kn) {
  const DistributedTaskIR& d = parent.payload;
  K g{&kn.global};
  PortablePlanIR p;
  p.rules = {"portable.task", "portable.buffer"};
  p.symbols = d.symbols;
  static constexpr BufferRole kRoles[] = {BufferRole::activation, BufferRole::gradient, BufferRole::kv_cache, BufferRole::message,
                                          BufferRole::optimizer_state, BufferRole::output, BufferRole::weight, BufferRole::workspace};
  static constexpr Storage kProduced[] = {Storage::transient, Storage::output, Storage::persistent, Storage::state, Storage::workspace};
  static constexpr Storage kGiven[] = {Storage::input, Storage::constant, Storage::state, Storage::workspace};
  // an inference plan accounts for every weight, KV-cache and workspace buffer (CAPM-1), so
  // the task buffers take the other roles and the accounted buffers are added per stage
  static constexpr BufferRole kPlainRoles[] = {BufferRole::activation, BufferRole::gradient, BufferRole::message, BufferRole::optimizer_state, BufferRole::output};
  const bool inference = d.inference.has_value();
  auto role = [&](K r, std::size_t i) { return inference ? kPlainRoles[r(i, 5)] : kRoles[r(i, 8)]; };

  auto size_of = [](K r, std::size_t i) {
    switch (r(i, 4)) {
      case 0: return Expr(static_cast<long long>(r(i + 1, 4097)));
      case 1: return sym("B") * sym("S") * Expr(static_cast<long long>(2 + r(i + 1, 6)));
      case 2: return sym("B") * Expr(static_cast<long long>(64 * (1 + r(i + 1, 4)))) + Expr(static_cast<long long>(r(i + 2, 64)));
      default: return Expr(static_cast<long long>(64 * (1 + r(i + 1, 64))));
    }
  };

  // given buffers (no producer) first
  const std::size_t ngiven = d.tasks.empty() ? 0 : g(0, 3);
  std::vector<Index> given;
  for (std::size_t k = 0; k < ngiven; ++k) {
    K r = row(kn.rows, 1000 + k);
    PortableBuffer b;
    b.id = "b:in" + std::to_string(k);
    b.storage = kGiven[g(1 + k, 4)];
    b.role = b.storage == Storage::input ? BufferRole::input : role(r, 0);
    b.alignment = std::int64_t{1} << r(1, 9);
    b.size = size_of(r, 2);
    b.lineage = derived("portable.buffer", {d.tasks[r(5, static_cast<std::uint32_t>(d.tasks.size()))].id});
    p.buffers.push_back(std::move(b));
    given.push_back(static_cast<Index>(p.buffers.size() - 1));
  }

  std::vector<Indices> produced(d.tasks.size());
  for (std::size_t t = 0; t < d.tasks.size(); ++t) {
    const DistTask& dt = d.tasks[t];
    K r = row(kn.rows, t);
    PortableTask pt;
    pt.id = "p:" + dt.id;
    pt.kind = dt.kind;
    pt.phase = dt.phase;
    pt.repeat = dt.repeat;
    pt.replication = dt.replication;
    pt.effects = dt.effects;
    pt.lineage = derived("portable.task", {dt.id});
    pt.dependencies = dt.dependencies;
    pt.ranks = dt.ranks;
    pt.work = dt.work;
    pt.group = "g" + std::to_string(r(0, 3));
    switch (dt.kind) {
      case TaskKind::compute: pt.requires_.push_back(Capability{std::nullopt, "bf16", dt.work.matrix_ops == Expr() ? CapabilityKind::vector : CapabilityKind::matrix, std::nullopt}); break;
      case TaskKind::collective: pt.requires_.push_back(Capability{dt.collective->kind, "", CapabilityKind::collective, dt.collective->reduction}); break;
      case TaskKind::host: pt.requires_.push_back(Capability{std::nullopt, "", CapabilityKind::host, std::nullopt}); break;
      default: pt.requires_.push_back(Capability{std::nullopt, "", CapabilityKind::transfer, std::nullopt}); break;
    }
    if (r.flag(1, 4)) pt.requires_.push_back(Capability{std::nullopt, "", CapabilityKind::memory, std::nullopt});
    if (r.flag(2, 5)) pt.attrs["fusion"] = "none";
    // inputs: outputs of direct dependencies and given buffers
    Indices cand;
    for (Index u : pt.dependencies) cand.insert(cand.end(), produced[static_cast<std::size_t>(u)].begin(), produced[static_cast<std::size_t>(u)].end());
    cand.insert(cand.end(), given.begin(), given.end());
    const std::uint32_t mask = r(3, 1u << 16);
    for (std::size_t k = 0; k < cand.size(); ++k)
      if (mask & (1u << (k % 16))) pt.inputs.push_back(cand[k]);
    sort_unique(pt.inputs);
    // outputs: 0..2 new buffers
    const std::uint32_t nout = r(4, 3);
    for (std::uint32_t k = 0; k < nout; ++k) {
      PortableBuffer b;
      b.id = "b:" + dt.id + ":" + std::to_string(k);
      b.producer = static_cast<Index>(t);
      b.storage = kProduced[r(5 + k, 5)];
      b.role = role(r, 7 + k);
      b.alignment = std::int64_t{1} << r(9 + k, 9);
      b.size = size_of(row(kn.rows, t + 500 + k), 0);
      b.lineage = derived("portable.buffer", {dt.id});
      p.buffers.push_back(std::move(b));
      const Index bi = static_cast<Index>(p.buffers.size() - 1);
      pt.outputs.push_back(bi);
      produced[t].push_back(bi);
    }
    p.tasks.push_back(std::move(pt));
  }
  for (std::size_t t = 0; t < p.tasks.size(); ++t)
    for (Index b : p.tasks[t].inputs) p.buffers[static_cast<std::size_t>(b)].consumers.push_back(static_cast<Index>(t));

  if (inference) {
    add_inference_memory(p, d, kn);
    return make_snapshot(std::move(p), {parent.digest});
  }
  // memory facts: every scheduled stage (MEM-2 needs its peak), or stage 0 if the knobs say so
  std::vector<const StageSchedule*> stages;
  for (const auto& s : d.schedule) stages.push_back(&s);
  const StageSchedule unscheduled{};
  if (stages.empty() && g.flag(5, 2)) stages.push_back(&unscheduled);
  const std::size_t nb = p.buffers.size();
  auto subset = [&](std::uint32_t mask) {
    Indices out;
    for (std::size_t b = 0; b < nb; ++b)
      if (mask & (1u << (b % 16))) out.push_back(static_cast<Index>(b));
    return out;
  };
  auto sum = [&](const Indices& bs) {
    Expr s;
    for (Index b : bs) s += p.buffers[static_cast<std::size_t>(b)].size;
    return s;
  };
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const StageSchedule& s = *stages[k];
    K r = row(kn.rows, 1100 + k);
    std::vector<MemoryFact> facts;
    // one microbatch's activations per chunk: the same buffers for every chunk, or (when
    // all the buffers have constant sizes) different ones
    const Indices a = subset(r(0, 1u << 16));
    Indices constant_sized;  // chunks may claim different buffers only when all have constant sizes
    for (std::size_t b = 0; b < nb; ++b)
      if (p.buffers[b].size.is_constant()) constant_sized.push_back(static_cast<Index>(b));
    const bool differ = !constant_sized.empty() && r.flag(1, 2);
    std::vector<Expr> per_chunk;
    for (std::int64_t ch = 0; ch < s.chunks && !s.steps.empty(); ++ch) {
      Indices bs;
      if (differ) {
        const std::uint32_t mask = r(2 + static_cast<std::size_t>(ch), 1u << 16);
        for (std::size_t k = 0; k < constant_sized.size(); ++k)
          if (mask & (1u << (k % 16))) bs.push_back(constant_sized[k]);
      } else {
        bs = a;
      }
      per_chunk.push_back(sum(bs));
      facts.push_back(MemoryFact{bs, per_chunk.back(), MemoryCategory::activations, ch, s.stage});
    }
    const Expr peak = s.steps.empty() ? sum(subset(r(4, 1u << 16))) : peak_activations(s, per_chunk);
    const Indices w = subset(r(5, 1u << 16)), gr = subset(r(6, 1u << 16)), o = subset(r(7, 1u << 16));
    facts.push_back(MemoryFact{w, sum(w), MemoryCategory::weights, -1, s.stage});
    facts.push_back(MemoryFact{gr, sum(gr), MemoryCategory::weight_gradients, -1, s.stage});
    facts.push_back(MemoryFact{o, sum(o), MemoryCategory::optimizer_state, -1, s.stage});
    facts.push_back(MemoryFact{{}, peak, MemoryCategory::activations_peak, -1, s.stage});
    facts.push_back(MemoryFact{{}, sum(w) + sum(gr) + sum(o) + peak, MemoryCategory::total, -1, s.stage});
    if (r.flag(9, 2))  // a device capacity with at least one byte to spare (CAPM-2)
      facts.push_back(MemoryFact{{}, facts.back().bytes + Expr(static_cast<long long>(1 + r(10, 1u << 16))), MemoryCategory::capacity, -1, s.stage});
    if (r.flag(8, 2)) std::reverse(facts.begin(), facts.end());
    p.memory.insert(p.memory.end(), facts.begin(), facts.end());
  }
  return make_snapshot(std::move(p), {parent.digest});
}


// ---- ConcretePlanIR ------------------------------------------------------------------------

bool transfer(CommandKind k) { return k == CommandKind::send || k == CommandKind::recv || k == CommandKind::copy; }

Snapshot<ConcretePlanIR> build_concrete(const Snapshot<PortablePlanIR>& parent, TargetKind target, const Knobs& kn) {
  const PortablePlanIR& pp = parent.payload;
  K g{&kn.global};
  ConcretePlanIR c;
  c.rules = {"concrete.bind", "concrete.place", "concrete.copy"};
  c.target = target;
  const std::size_t nd = 2 + g(0, 2);
  for (std::size_t i = 0; i < nd; ++i) c.devices.push_back(Device{"dev:" + std::to_string(i), i == 0 || !g.flag(1, 3) ? "gpu" : "cpu", Int(0), {}});

  // regions: 1 or 2 per device (memory is laid out after the buffers are placed)
  for (std::size_t dv = 0; dv < nd; ++dv) {
    const std::size_t nr = 1 + row(kn.rows, 700 + dv)(0, 2);
    for (std::size_t k = 0; k < nr; ++k) {
      K r = row(kn.rows, 800 + dv * 2 + k);
      c.regions.push_back(Region{std::int64_t{1} << r(0, 9), Int(0), static_cast<Index>(dv), "r:" + std::to_string(dv) + ":" + std::to_string(k), Int(0),
                                 r.flag(1, 3) ? "ddr" : "hbm"});
    }
  }
  if (g.flag(2, 2)) std::reverse(c.regions.begin(), c.regions.end());

  // buffers: concrete sizes at a sample binding of the symbols
  const Rat bval = Rat(1 + g(3, 4)), sval = Rat(8 * (1 + g(4, 3)));
  auto env = [&](std::string_view s) -> std::optional<Rat> {
    if (s == "B") return bval;
    if (s == "S") return sval;
    return Rat(1);
  };
  for (std::size_t b = 0; b < pp.buffers.size(); ++b) {
    const PortableBuffer& pb = pp.buffers[b];
    K r = row(kn.rows, 300 + b);
    Rat v = pb.size.eval(env).value_or(Rat(0));
    Int size = v < 0 ? Int(0) : ceil(v);
    c.buffers.push_back(ConcreteBuffer{pb.alignment, "cb:" + pb.id, derived("concrete.place", {pb.id}), Int(0), static_cast<Index>(r(0, static_cast<std::uint32_t>(c.regions.size()))), size, pb.storage});
  }
  // place buffers in each region, then regions in each device
  std::vector<Int> cursor(c.regions.size());
  for (std::size_t i = 0; i < c.regions.size(); ++i) cursor[i] = Int(64 * row(kn.rows, 900 + i)(0, 3));  // optional leading pad
  for (auto& b : c.buffers) {
    auto ri = static_cast<std::size_t>(b.region);
    std::int64_t a = std::max(b.alignment, c.regions[ri].alignment);
    b.offset = align_up(cursor[ri], a);
    cursor[ri] = b.offset + b.size;
  }
  std::vector<Int> dev_cursor(nd, Int(0));
  for (std::size_t i = 0; i < c.regions.size(); ++i) {
    Region& r = c.regions[i];
    K k = row(kn.rows, 950 + i);
    r.capacity = cursor[i] + Int(k(0, 256)) + 1;
    auto dv = static_cast<std::size_t>(r.device);
    r.offset = dev_cursor[dv] + Int(k(1, 4) * 256);
    dev_cursor[dv] = r.offset + r.capacity;
  }
  for (std::size_t dv = 0; dv < nd; ++dv) c.devices[dv].memory_bytes = dev_cursor[dv] + Int(row(kn.rows, 990 + dv)(0, 4096));

  // commands: one per portable task, then copies of some produced buffers
  for (std::size_t t = 0; t < pp.tasks.size(); ++t) {
    const PortableTask& pt = pp.tasks[t];
    K r = row(kn.rows, t);
    Command cmd;
    cmd.id = "c:" + pt.id;
    cmd.kind = command_kind(pt.kind);
    cmd.device = r.flag(0, 2) ? static_cast<Index>(r(1, static_cast<std::uint32_t>(nd))) : static_cast<Index>(static_cast<std::size_t>(pt.ranks.empty() ? 0 : pt.ranks[0]) % nd);
    cmd.dependencies = pt.dependencies;
    cmd.reads = pt.inputs;
    cmd.writes = pt.outputs;
    cmd.lineage = derived("concrete.bind", {pt.id});
    cmd.implementation = std::string("impl.") + std::string(codec::enum_name(cmd.kind)) + ".v" + std::to_string(r(2, 3));
    cmd.repeat = pt.repeat;  // one instance's work, as many times as the portable task
    cmd.work = pt.work;
    if (r.flag(3, 3)) cmd.attrs["kernel"] = "k" + std::to_string(r(4, 10));
    c.commands.push_back(std::move(cmd));
  }
  for (std::size_t b = 0; b < pp.buffers.size(); ++b) {
    const PortableBuffer& pb = pp.buffers[b];
    K r = row(kn.rows, 400 + b);
    if (!r.flag(0, 3)) continue;
    Command cmd;
    cmd.id = "c:copy:" + pb.id;
    cmd.kind = CommandKind::copy;
    cmd.device = static_cast<Index>(r(1, static_cast<std::uint32_t>(nd)));
    if (pb.producer) cmd.dependencies = {*pb.producer};
    cmd.reads = {static_cast<Index>(b)};
    cmd.lineage = derived("concrete.copy", {pb.id});
    cmd.implementation = "impl.copy.dma";
    c.commands.push_back(std::move(cmd));
  }
  // tokens: for cross-device dependencies (and some same-device ones)
  for (std::size_t v = 0; v < c.commands.size(); ++v) {
    K r = row(kn.rows, 600 + v);
    const Indices deps = c.commands[v].dependencies;
    for (std::size_t k = 0; k < deps.size(); ++k) {
      auto u = static_cast<std::size_t>(deps[k]);
      if (c.commands[u].device == c.commands[v].device && !r.flag(k, 4)) continue;
      c.tokens.push_back(Token{"tok:" + std::to_string(u) + "." + std::to_string(v)});
      const Index tk = static_cast<Index>(c.tokens.size() - 1);
      c.commands[u].signals.push_back(tk);
      c.commands[v].waits.push_back(tk);
    }
  }

  if (target == TargetKind::queue) {
    QueueSchedule qs;
    std::map<std::pair<Index, QueueKind>, std::size_t> qidx;
    for (std::size_t v = 0; v < c.commands.size(); ++v) {
      auto key = std::pair{c.commands[v].device, queue_kind(c.commands[v].kind)};
      auto [it, fresh] = qidx.try_emplace(key, qs.queues.size());
      if (fresh)
        qs.queues.push_back(Queue{{}, key.first, "q:" + std::to_string(key.first) + ":" + std::string(codec::enum_name(key.second)), key.second});
      qs.queues[it->second].commands.push_back(static_cast<Index>(v));
    }
    c.queue = std::move(qs);
  } else {
    SlotDataflow sd;
    sd.slots_per_cycle = 1 + g(5, 4);
    Issue prev{0, 0};
    for (std::size_t v = 0; v < c.commands.size(); ++v) {
      K r = row(kn.rows, 650 + v);
      Issue is;
      if (v > 0 && r.flag(0, 2) && prev.slot + 1 < sd.slots_per_cycle) {
        is = {prev.cycle, prev.slot + 1 + static_cast<std::int64_t>(r(1, static_cast<std::uint32_t>(sd.slots_per_cycle - prev.slot - 1)))};
      } else {  // cycles used are even, so odd cycles stay free
        is = {(v == 0 ? 0 : prev.cycle) + 2 * (1 + static_cast<std::int64_t>(r(2, 3))), static_cast<std::int64_t>(r(3, static_cast<std::uint32_t>(sd.slots_per_cycle)))};
      }
      sd.issue.push_back(is);
      prev = is;
      const Command& cmd = c.commands[v];
      if (transfer(cmd.kind)) {
        const Index other = static_cast<Index>((static_cast<std::size_t>(cmd.device) + 1 + r(4, static_cast<std::uint32_t>(nd - 1))) % nd);
        const bool outgoing = cmd.kind == CommandKind::send || (cmd.kind == CommandKind::copy && r.flag(5, 2));
        sd.routes.push_back(outgoing ? Route{static_cast<Index>(v), other, cmd.device} : Route{static_cast<Index>(v), cmd.device, other});
      }
    }
    if (g.flag(6, 2)) std::reverse(sd.routes.begin(), sd.routes.end());
    c.slot = std::move(sd);
  }
  // target facts: the bindings the sizes were evaluated at (CAP-4), the implementations and
  // engines that provide what each task requires (IMPL-1), and each device's memory figures
  // with no witness: the highest buffer end and the pinned bytes (CAP-5)
  for (const auto& sy : pp.symbols)
    if (sy.name == "B" || sy.name == "S") c.bindings.push_back(SymbolBinding{sy.name, boost::multiprecision::numerator(sy.name == "B" ? bval : sval)});
  std::map<std::string, std::vector<Capability>> provides;
  std::vector<std::vector<Capability>> runs(nd);
  auto add_cap = [](std::vector<Capability>& v, const Capability& x) {
    auto key = codec::to_canonical(x);
    if (std::none_of(v.begin(), v.end(), [&](const Capability& y) { return codec::to_canonical(y) == key; })) v.push_back(x);
  };
  for (std::size_t v = 0; v < c.commands.size(); ++v) {
    auto& caps = provides[c.commands[v].implementation];
    if (v < pp.tasks.size())
      for (const auto& req : pp.tasks[v].requires_) {
        add_cap(caps, req);
        add_cap(runs[static_cast<std::size_t>(c.commands[v].device)], req);
      }
  }
  for (auto& [name, caps] : provides) c.implementations.push_back(Implementation{name, caps});
  for (std::size_t dv = 0; dv < nd; ++dv) c.engines.push_back(Engine{runs[dv], static_cast<Index>(dv), "eng:" + std::to_string(dv)});
  if (g.flag(7, 2))
    for (std::size_t dv = 0; dv < nd; ++dv) {
      Int peak = 0, pinned = 0;
      for (const auto& bf : c.buffers) {
        const Region& rg = c.regions[static_cast<std::size_t>(bf.region)];
        if (static_cast<std::size_t>(rg.device) != dv) continue;
        peak = std::max(peak, Int(rg.offset + bf.offset + bf.size));
        if (bf.storage != Storage::transient && bf.storage != Storage::workspace) pinned += bf.size;
      }
      c.memory.push_back(DeviceMemory{static_cast<Index>(dv), pinned, peak, std::nullopt});
    }
  return make_snapshot(std::move(c), {parent.digest});
}

// ---- TimelineBundle ------------------------------------------------------------------------

Snapshot<TimelineBundle> build_timeline(const Snapshot<ConcretePlanIR>& parent, const Knobs& kn) {
  const ConcretePlanIR& c = parent.payload;
  K g{&kn.global};
  const std::size_t n = c.commands.size();
  std::vector<std::int64_t> qprev(n, -1), signaller(c.tokens.size(), -1);
  if (c.queue)
    for (const auto& q : c.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) qprev[static_cast<std::size_t>(q.commands[k])] = q.commands[k - 1];
  for (std::size_t v = 0; v < n; ++v)
    for (Index t : c.commands[v].signals) signaller[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(v);
  auto preds = [&](std::size_t v) {
    std::vector<std::size_t> ps;
    for (Index u : c.commands[v].dependencies) ps.push_back(static_cast<std::size_t>(u));
    if (qprev[v] >= 0) ps.push_back(static_cast<std::size_t>(qprev[v]));
    for (Index t : c.commands[v].waits)
      if (signaller[static_cast<std::size_t>(t)] >= 0) ps.push_back(static_cast<std::size_t>(signaller[static_cast<std::size_t>(t)]));
    return ps;
  };
  // commands are indexed in a topological order of all these edges: simulate in index order
  std::vector<Rat> start(n), end(n);
  for (std::size_t v = 0; v < n; ++v) {
    K r = row(kn.rows, v);
    Rat s = 0;
    for (std::size_t u : preds(v)) s = std::max(s, end[u]);
    start[v] = s;
    end[v] = s + make_rat(Int(1 + r(0, 8)), Int(1 + r(1, 4)));
  }
  TimelineBundle t;
  t.evidence = "evidence:" + std::to_string(g(0, 1000));
  t.policy = g.flag(1, 2) ? "policy:fifo" : "policy:list";
  for (std::size_t k = 0; k < n; ++k) {
    std::size_t v = (k + g(2, static_cast<std::uint32_t>(n))) % n;
    t.intervals.push_back(Interval{static_cast<Index>(v), end[v], start[v]});
  }
  if (n > 0) {
    std::size_t v = 0;
    for (std::size_t u = 1; u < n; ++u)
      if (end[u] > end[v] || (end[u] == end[v] && g.flag(3, 2))) v = u;
    Indices cp = {static_cast<Index>(v)};
    while (start[v] != 0) {
      for (std::size_t u : preds(v))
        if (end[u] == start[v]) { v = u; break; }
      cp.push_back(static_cast<Index>(v));
    }
    t.critical_path.assign(cp.rbegin(), cp.rend());
  }
  return make_snapshot(std::move(t), {parent.digest});
}

// ---- MachineIR -----------------------------------------------------------------------------

Snapshot<MachineIR> build_machine(const Snapshot<ConcretePlanIR>& parent, const Knobs& kn) {
  const ConcretePlanIR& c = parent.payload;
  K g{&kn.global};
  MachineIR m;
  m.dialects = {"cuda", "host"};
  const bool nccl = g.flag(0, 2);
  if (nccl) m.dialects.push_back("nccl");
  if (g.flag(1, 2)) std::reverse(m.dialects.begin(), m.dialects.end());
  std::vector<Index> call(c.commands.size(), -1), signal_of(c.tokens.size(), -1);
  for (std::size_t v = 0; v < c.commands.size(); ++v) {
    const Command& cmd = c.commands[v];
    const std::string base = "m" + std::to_string(v);
    const std::string dialect = cmd.kind == CommandKind::host ? "host" : (cmd.kind == CommandKind::collective && nccl ? "nccl" : "cuda");
    Indices call_deps;
    for (std::size_t k = 0; k < cmd.waits.size(); ++k) {
      const Index tok = cmd.waits[k];
      Instruction w{static_cast<Index>(v), {}, dialect, base + ".w" + std::to_string(k), MachineOp::wait, "sync.wait", tok};
      if (signal_of[static_cast<std::size_t>(tok)] >= 0 && row(kn.rows, v)(k, 3) != 0) w.dependencies = {signal_of[static_cast<std::size_t>(tok)]};
      m.instructions.push_back(std::move(w));
      call_deps.push_back(static_cast<Index>(m.instructions.size() - 1));
    }
    for (Index u : cmd.dependencies) call_deps.push_back(call[static_cast<std::size_t>(u)]);
    sort_unique(call_deps);
    m.instructions.push_back(Instruction{static_cast<Index>(v), call_deps, dialect, base, transfer(cmd.kind) ? MachineOp::copy : MachineOp::call, cmd.implementation, std::nullopt});
    call[v] = static_cast<Index>(m.instructions.size() - 1);
    for (std::size_t k = 0; k < cmd.signals.size(); ++k) {
      const Index tok = cmd.signals[k];
      m.instructions.push_back(Instruction{static_cast<Index>(v), {call[v]}, dialect, base + ".s" + std::to_string(k), MachineOp::signal, "sync.signal", tok});
      signal_of[static_cast<std::size_t>(tok)] = static_cast<Index>(m.instructions.size() - 1);
    }
  }
  for (std::size_t i = 0; i < m.instructions.size(); ++i)
    if (m.instructions[i].dependencies.empty()) m.entry_points.push_back(static_cast<Index>(i));
  return make_snapshot(std::move(m), {parent.digest});
}

// ---- ObservationSet ------------------------------------------------------------------------

Snapshot<ObservationSet> build_observations(const Snapshot<ConcretePlanIR>& parent, const Knobs& kn) {
  const ConcretePlanIR& c = parent.payload;
  ObservationSet o;
  for (std::size_t v = 0; v < c.commands.size(); ++v) {
    K r = row(kn.rows, v);
    if (v == 0 || r.flag(0, 2))
      o.observations.push_back(Observation{c.commands[v].id, make_rat(Int(r(1, 1000)), Int(1 + r(2, 7))), "nsys"});
    if (r.flag(3, 3)) o.observations.push_back(Observation{c.commands[v].id, make_rat(Int(r(4, 1000)), Int(1 + r(5, 7))), "cupti"});
  }
  return make_snapshot(std::move(o), {parent.digest});
}

// ---- chains --------------------------------------------------------------------------------

rc::Gen<Chain> extend(Chain c, Layer top, std::optional<TargetKind> target, bool all_children);

template <class P, class G>
rc::Gen<Chain> step(Chain c, G gen, std::optional<Snapshot<P>> Chain::*slot, Layer l, Layer top, std::optional<TargetKind> target, bool all) {
  return rc::gen::mapcat(std::move(gen), [c, slot, l, top, target, all](Snapshot<P> s) {
    Chain n = c;
    n.*slot = std::move(s);
    n.top = l;
    return extend(std::move(n), top, target, all);
  });
}

rc::Gen<Chain> extend(Chain c, Layer top, std::optional<TargetKind> target, bool all) {
  if (c.top == top) return rc::gen::just(std::move(c));
  switch (c.top) {
    case Layer::model: return step(c, distributed(c.model), &Chain::distributed, Layer::distributed, top, target, all);
    case Layer::distributed: return step(c, portable(*c.distributed), &Chain::portable, Layer::portable, top, target, all);
    case Layer::portable: return step(c, concrete(*c.portable, target), &Chain::concrete, Layer::concrete, top, target, all);
    case Layer::concrete:
      if (all) return step(c, timeline(*c.concrete), &Chain::timeline, Layer::timeline, top, target, all);
      if (top == Layer::timeline) return step(c, timeline(*c.concrete), &Chain::timeline, Layer::timeline, top, target, all);
      if (top == Layer::machine) return step(c, machine(*c.concrete), &Chain::machine, Layer::machine, top, target, all);
      return step(c, observations(*c.concrete), &Chain::observations, Layer::observations, top, target, all);
    case Layer::timeline: return step(c, machine(*c.concrete), &Chain::machine, Layer::machine, top, target, all);
    case Layer::machine: return step(c, observations(*c.concrete), &Chain::observations, Layer::observations, top, target, all);
    case Layer::observations: break;
  }
  return rc::gen::just(std::move(c));
}

}  // namespace

// ---- public API ----------------------------------------------------------------------------

std::string_view layer_name(Layer l) {
  static constexpr std::string_view kNames[] = {"ModelIR", "DistributedTaskIR", "PortablePlanIR", "ConcretePlanIR", "TimelineBundle", "MachineIR", "ObservationSet"};
  return kNames[static_cast<std::size_t>(l)];
}

std::optional<Layer> layer_from_name(std::string_view name) {
  for (std::size_t i = 0; i < 7; ++i)
    if (layer_name(static_cast<Layer>(i)) == name) return static_cast<Layer>(i);
  return std::nullopt;
}

std::optional<Layer> parent_layer(Layer l) {
  switch (l) {
    case Layer::model: return std::nullopt;
    case Layer::distributed: return Layer::model;
    case Layer::portable: return Layer::distributed;
    case Layer::concrete: return Layer::portable;
    default: return Layer::concrete;
  }
}

bool Chain::has(Layer l) const {
  switch (l) {
    case Layer::model: return true;
    case Layer::distributed: return distributed.has_value();
    case Layer::portable: return portable.has_value();
    case Layer::concrete: return concrete.has_value();
    case Layer::timeline: return timeline.has_value();
    case Layer::machine: return machine.has_value();
    case Layer::observations: return observations.has_value();
  }
  return false;
}

AnySnapshot Chain::at(Layer l) const {
  switch (l) {
    case Layer::model: return model;
    case Layer::distributed: return distributed.value();
    case Layer::portable: return portable.value();
    case Layer::concrete: return concrete.value();
    case Layer::timeline: return timeline.value();
    case Layer::machine: return machine.value();
    case Layer::observations: return observations.value();
  }
  return model;
}

std::optional<AnySnapshot> Chain::parent() const {
  auto p = parent_layer(top);
  if (!p) return std::nullopt;
  return at(*p);
}

void showValue(Layer l, std::ostream& os) { os << layer_name(l); }

void showValue(const Chain& c, std::ostream& os) {
  os << "Chain up to " << layer_name(c.top) << ":\n";
  for (std::size_t i = 0; i < 7; ++i) {
    auto l = static_cast<Layer>(i);
    if (!c.has(l)) continue;
    os << "  " << std::visit([](const auto& s) { return encode_snapshot(s); }, c.at(l)) << "\n";
  }
}

rc::Gen<Snapshot<ModelIR>> model(std::optional<bool> inference) {
  return rc::gen::map(knobs(1, 6), [inference](const Knobs& k) { return build_model(k, inference); });
}

rc::Gen<Snapshot<DistributedTaskIR>> distributed(const Snapshot<ModelIR>& parent) {
  const std::size_t n = parent.payload.operations.size();
  return rc::gen::map(knobs(static_cast<int>(n), static_cast<int>(n)), [parent](const Knobs& k) { return build_distributed(parent, k); });
}

rc::Gen<Snapshot<PortablePlanIR>> portable(const Snapshot<DistributedTaskIR>& parent) {
  const int n = std::max<int>(1, static_cast<int>(parent.payload.tasks.size()));
  return rc::gen::map(knobs(n, n), [parent](const Knobs& k) { return build_portable(parent, k); });
}

rc::Gen<Snapshot<ConcretePlanIR>> concrete(const Snapshot<PortablePlanIR>& parent, std::optional<TargetKind> target) {
  const int n = std::max<int>(1, static_cast<int>(parent.payload.tasks.size()));
  rc::Gen<TargetKind> tg = target ? rc::gen::just(*target) : rc::gen::element(TargetKind::queue, TargetKind::slot);
  return rc::gen::apply([parent](TargetKind t, const Knobs& k) { return build_concrete(parent, t, k); }, tg, knobs(n, n + 8));
}

rc::Gen<Snapshot<TimelineBundle>> timeline(const Snapshot<ConcretePlanIR>& parent) {
  const int n = std::max<int>(1, static_cast<int>(parent.payload.commands.size()));
  return rc::gen::map(knobs(n, n), [parent](const Knobs& k) { return build_timeline(parent, k); });
}

rc::Gen<Snapshot<MachineIR>> machine(const Snapshot<ConcretePlanIR>& parent) {
  const int n = std::max<int>(1, static_cast<int>(parent.payload.commands.size()));
  return rc::gen::map(knobs(n, n), [parent](const Knobs& k) { return build_machine(parent, k); });
}

rc::Gen<Snapshot<ObservationSet>> observations(const Snapshot<ConcretePlanIR>& parent) {
  const int n = std::max<int>(1, static_cast<int>(parent.payload.commands.size()));
  return rc::gen::map(knobs(n, n), [parent](const Knobs& k) { return build_observations(parent, k); });
}

rc::Gen<Chain> chain(Layer top, std::optional<TargetKind> target, std::optional<bool> inference) {
  return rc::gen::mapcat(model(inference), [top, target](Snapshot<ModelIR> m) {
    Chain c;
    c.model = std::move(m);
    return extend(std::move(c), top, target, false);
  });
}

rc::Gen<Chain> full_chain(std::optional<TargetKind> target, std::optional<bool> inference) {
  return rc::gen::mapcat(model(inference), [target](Snapshot<ModelIR> m) {
    Chain c;
    c.model = std::move(m);
    return extend(std::move(c), Layer::observations, target, true);
  });
}

}  // namespace plancert::props
