// SPDX-License-Identifier: Apache-2.0
#include "passes/train/distribute.h"

#include "passes/frontend/room.h"
#include "passes/train/model_builder.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>

namespace plancert::passes {
namespace {

using frontend::Recompute;
using frontend::StrategyConfig;

struct VecRule {
  int fwd, act, weight;
};
const std::map<std::string, VecRule, std::less<>> kVec = {
    {"layernorm", {9, 14, 7}}, {"rmsnorm", {7, 10, 4}}, {"softmax", {5, 8, 0}}, {"dropout", {1, 1, 0}}, {"gelu", {8, 13, 0}},
    {"silu", {5, 8, 0}},       {"relu", {1, 1, 0}},     {"mul", {1, 2, 0}},     {"add", {1, 2, 0}},     {"rope", {6, 6, 0}},
    {"cross_entropy", {6, 6, 0}}, {"embedding", {0, 0, 1}}, {"linear", {0, 0, 0}}, {"matmul", {0, 0, 0}}};

const char* phase_tag(Phase p) {
  switch (p) {
    case Phase::forward: return "fwd";
    case Phase::recompute: return "rec";
    case Phase::backward_activation: return "bwa";
    case Phase::backward_weight: return "bww";
    case Phase::optimizer: return "opt";
    default: return "none";
  }
}

struct Op {
  std::size_t index = 0;
  std::int64_t layer = -1;  // -1 embedding, -2 head
  std::string tp;
  bool core = false;
  bool recomputed = false;
  bool has_weights = false;
  Indices saves;
  std::int64_t stage = 0, chunk = 0;
};

class Distributor {
 public:
  Distributor(const ModelIR& m, const std::string& digest, const StrategyConfig& s) : m_(m), s_(s) {
    (void)digest;
    t_ = s.tp;
    p_ = s.pp;
    dp_ = s.dp;
    v_ = s.schedule == frontend::Schedule::Interleaved ? s.interleave : 1;
    mb_ = s.num_microbatches();
    sp_ = s.sequence_parallel && t_ > 1;
    out_.rules = {"train.op", "train.tp_collective", "train.pp_transfer", "train.dp_collective", "train.optimizer", "train.tied_gradient"};
    out_.symbols = m.symbols;
    out_.microbatches = mb_;
    out_.mesh.axes = {MeshAxis{"pp", p_}, MeshAxis{"dp", dp_}, MeshAxis{"tp", t_}};
    producer_.assign(m.values.size(), -1);
    for (std::size_t i = 0; i < m.operations.size(); ++i)
      for (Index v : m.operations[i].outputs) producer_[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(i);
  }

  DistributedTaskIR run() {
    classify();
    require_room();
    out_.schedule = pipeline_schedule(p_, v_, mb_);
    for (std::int64_t g = 0; g < p_ * v_; ++g) forward_chain(g);
    for (std::int64_t g = p_ * v_ - 1; g >= 0; --g) backward_chain(g);
    tied_gradients();
    for (std::int64_t st = 0; st < p_; ++st) data_parallel(st);
    return std::move(out_);
  }

 private:
  // CONFIG-8 (passes/frontend/room.h), before anything large is built: the schedule has
  // 2 m v steps on each of the p stages, and every operation gives at least one task whose rank
  // list holds the t dp ranks of its stage.
  void require_room() const {
    using frontend::saturating_product;
    const auto u = [](std::int64_t x) { return static_cast<std::uintmax_t>(x); };
    frontend::require_room(saturating_product({u(p_), 2, u(mb_), u(v_), sizeof(Step)}), s_.source, "global_batch",
                           "a pipeline schedule of " + std::to_string(mb_) + " microbatches x " + std::to_string(v_) + " chunks x 2 steps on each of " +
                               std::to_string(p_) + " stages");
    frontend::require_room(rank_list_bytes(ops_.size(), saturating_product({u(t_), u(dp_)})), s_.source, "dp",
                           "a DistributedTaskIR of at least " + std::to_string(ops_.size()) + " tasks, each with a rank list of tp x dp = " +
                               std::to_string(t_) + " x " + std::to_string(dp_) + " ranks");
  }

  // ---- model analysis -------------------------------------------------------------------
  void classify() {
    std::int64_t layers = 0;
    for (const auto& op : m_.operations) {
      const auto& l = op.attrs.at("layer");
      if (l != "embedding" && l != "head") layers = std::max<std::int64_t>(layers, std::stoll(l) + 1);
    }
    Placement pl{p_, v_, layers};
    const bool full = s_.recompute == Recompute::Full, selective = s_.recompute == Recompute::Selective;
    for (std::size_t i = 0; i < m_.operations.size(); ++i) {
      const auto& op = m_.operations[i];
      Op o;
      o.index = i;
      o.tp = op.attrs.at("tp");
      o.core = op.attrs.count("region") > 0;
      const auto& l = op.attrs.at("layer");
      o.layer = l == "embedding" ? -1 : l == "head" ? -2 : std::stoll(l);
      if (o.layer >= 0) { o.stage = pl.stage_of(o.layer); o.chunk = pl.chunk_of(o.layer); }
      else if (o.layer == -2) { o.stage = p_ - 1; o.chunk = v_ - 1; }
      o.recomputed = o.layer >= 0 && (full || (selective && o.core));
      for (Index v : op.inputs) o.has_weights |= m_.values[static_cast<std::size_t>(v)].role == ValueRole::weight;
      o.saves = saved_values(op, m_.values.size());
      ops_.push_back(std::move(o));
    }
    // Inputs feeding column-parallel operations: where the "f" operator of Megatron sits.
    for (const auto& o : ops_)
      if (o.tp == "column" || (o.tp == "vocab" && m_.operations[o.index].kind == "linear")) {
        Index x = m_.operations[o.index].inputs[0];
        if (!first_column_.count(x)) first_column_[x] = o.index;
      }
  }

  Indices stage_ranks(std::int64_t st) const {
    Indices r;
    for (std::int64_t i = st * dp_ * t_; i < (st + 1) * dp_ * t_; ++i) r.push_back(static_cast<Index>(i));
    return r;
  }

  // Per-rank share of an operation: sharded over t, replicated on all t ranks, or (layout kv)
  // split over the t_kv = min(k, t) KV-head groups, each computed by t / t_kv ranks.
  std::pair<Rat, std::int64_t> share(const Op& o) const {
    if (o.tp == "replicated" && !sp_) return {Rat(1), t_};
    if (o.tp == "kv") {
      const std::int64_t g = kv_groups(m_.operations[o.index], t_);
      return {make_rat(1, g), t_ / g};
    }
    return {make_rat(1, t_), 1};
  }

  Expr value_bytes(Index v) const { return elements(m_.values[static_cast<std::size_t>(v)]) * Expr(dtype_bytes(m_.values[static_cast<std::size_t>(v)].dtype)); }

  Work phase_work(const Op& o, Phase ph) const {
    const Operation& op = m_.operations[o.index];
    const Work& f = op.work;
    auto [share_f, rep] = share(o);
    (void)rep;
    const VecRule rule = kVec.at(op.kind);
    Expr E = rule.fwd ? f.vector_ops / Rat(rule.fwd) : elements(m_.values[static_cast<std::size_t>(op.outputs[0])]);
    Work w;
    switch (ph) {
      case Phase::forward:
      case Phase::recompute: w = f; break;
      case Phase::backward_activation:
        w.matrix_ops = op.kind == "matmul" ? Expr(2) * f.matrix_ops : op.kind == "linear" ? f.matrix_ops : Expr();
        w.vector_ops = Expr(rule.act) * E;
        w.read_bytes = f.read_bytes + f.write_bytes;
        w.write_bytes = f.read_bytes - f.persistent_bytes;
        break;
      default:  // backward_weight
        w.matrix_ops = op.kind == "linear" ? f.matrix_ops : Expr();
        w.vector_ops = Expr(rule.weight) * E;
        w.read_bytes = f.write_bytes + f.read_bytes - f.persistent_bytes;
        w.write_bytes = f.persistent_bytes;
        break;
    }
    for (Expr* x : {&w.matrix_ops, &w.vector_ops, &w.read_bytes, &w.write_bytes, &w.persistent_bytes, &w.temporary_bytes, &w.message_bytes}) *x = *x * Expr(share_f);
    return w;
  }

  // ---- task emission ---------------------------------------------------------------------
  Index emit(DistTask t, Index after) {
    if (after >= 0) t.dependencies.push_back(after);
    out_.tasks.push_back(std::move(t));
    return static_cast<Index>(out_.tasks.size() - 1);
  }

  Index op_task(const Op& o, Phase ph, Index after) {
    const Operation& op = m_.operations[o.index];
    DistTask t;
    t.id = std::string(phase_tag(ph)) + ":" + op.id;
    t.kind = TaskKind::compute;
    t.phase = ph;
    t.ranks = stage_ranks(o.stage);
    t.repeat = mb_;
    t.replication = share(o).second;
    t.work = phase_work(o, ph);
    t.lineage = Lineage{LineageKind::derived, "train.op", {op.id}};
    for (const auto& [k, v] : op.attrs)
      if (k == "layer" || k == "tp" || k == "region") t.attrs[k] = v;
    t.attrs["chunk"] = std::to_string(o.chunk);
    if (ph == Phase::backward_activation || ph == Phase::backward_weight) {
      // BUF-3 later needs the producer of every stored tensor as a direct dependency.
      std::set<Index> deps;
      if (after >= 0) deps.insert(after);
      for (Index v : o.saves) {
        auto it = saved_by_.find(v);
        if (it != saved_by_.end() && !deps.count(it->second)) { deps.insert(it->second); t.dependencies.push_back(it->second); }
      }
    }
    Index id = emit(std::move(t), after);
    if (ph == Phase::forward || ph == Phase::recompute)
      for (Index v : op.outputs) saved_by_[v] = id;
    return id;
  }

  Index collective(const Op& o, Phase ph, CollectiveKind kind, Index value, Index after) {
    const Operation& op = m_.operations[o.index];
    DistTask t;
    t.id = std::string("tp.") + phase_tag(ph) + "." + std::string(codec::enum_name(kind)) + ":" + op.id;
    t.kind = TaskKind::collective;
    t.phase = ph;
    t.ranks = stage_ranks(o.stage);
    t.repeat = mb_;
    t.value = m_.values[static_cast<std::size_t>(value)].id;
    Expr M = value_bytes(value);
    Rat frac = make_rat(t_ - 1, t_);
    t.collective = Collective{t.ranks, kind, M, kind == CollectiveKind::all_gather ? Reduction::none : Reduction::sum, "tp"};
    t.work.message_bytes = Expr(kind == CollectiveKind::all_reduce ? frac * 2 : frac) * M;
    if (kind != CollectiveKind::all_gather) t.work.vector_ops = Expr(frac) * elements(m_.values[static_cast<std::size_t>(value)]);
    t.work.read_bytes = M;
    t.work.write_bytes = M;
    t.lineage = Lineage{LineageKind::derived, "train.tp_collective", {op.id}};
    t.attrs["chunk"] = std::to_string(o.chunk);
    return emit(std::move(t), after);
  }

  bool row(const Op& o) const { return o.tp == "row" || (o.tp == "vocab" && m_.operations[o.index].kind == "embedding"); }
  std::optional<Index> column_input(const Op& o) const {
    Index x = m_.operations[o.index].inputs[0];
    auto it = first_column_.find(x);
    if (it != first_column_.end() && it->second == o.index) return x;
    return std::nullopt;
  }

  // Forward (or recompute) of one operation with its tensor-parallel collectives.
  Index forward_op(const Op& o, Phase ph, Index after) {
    if (t_ > 1 && sp_)
      if (auto x = column_input(o)) after = collective(o, ph, CollectiveKind::all_gather, *x, after);
    after = op_task(o, ph, after);
    if (t_ > 1 && row(o)) after = collective(o, ph, sp_ ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, m_.operations[o.index].outputs[0], after);
    return after;
  }

  std::vector<const Op*> ops_of(std::int64_t g) const {
    std::vector<const Op*> r;
    for (const auto& o : ops_)
      if (o.stage + o.chunk * p_ == g) r.push_back(&o);
    return r;
  }

  Index last_value_of(std::int64_t g) const {
    Index v = -1;
    for (const Op* o : ops_of(g))
      if (o->layer >= 0) v = m_.operations[o->index].outputs[0];
    return v;
  }

  // A send on stage `from` paired with a receive on stage `to` (both repeat m).
  Index transfer(const std::string& name, Index value, std::int64_t from, std::int64_t to, Index send_after, Index recv_after, std::int64_t chunk_from, std::int64_t chunk_to) {
    Expr bytes = value_bytes(value) * Expr(sp_ ? make_rat(1, t_) : Rat(1));
    const std::string vid = m_.values[static_cast<std::size_t>(value)].id;
    auto make = [&](TaskKind k, std::int64_t st, std::int64_t chunk) {
      DistTask t;
      t.id = std::string(k == TaskKind::send ? "send:" : "recv:") + name;
      t.kind = k;
      t.ranks = stage_ranks(st);
      t.repeat = mb_;
      t.value = vid;
      t.work.message_bytes = bytes;
      (k == TaskKind::send ? t.work.read_bytes : t.work.write_bytes) = bytes;
      t.lineage = Lineage{LineageKind::derived, "train.pp_transfer", {vid}};
      t.attrs["chunk"] = std::to_string(chunk);
      return t;
    };
    Index send = emit(make(TaskKind::send, from, chunk_from), send_after);
    DistTask r = make(TaskKind::recv, to, chunk_to);
    r.dependencies.push_back(send);
    Index recv = emit(std::move(r), recv_after);
    out_.tasks[static_cast<std::size_t>(send)].peer = recv;
    out_.tasks[static_cast<std::size_t>(recv)].peer = send;
    return recv;
  }

  void forward_chain(std::int64_t g) {
    Index after = g > 0 ? fwd_in_[g] : -1;
    for (const Op* o : ops_of(g)) after = forward_op(*o, Phase::forward, after);
    fwd_end_[g] = after;
    if (g + 1 < p_ * v_) {
      if (p_ == 1) fwd_in_[g + 1] = after;
      else {
        fwd_in_[g + 1] = transfer("fwd.g" + std::to_string(g), last_value_of(g), g % p_, (g + 1) % p_, after, -1, g / p_, (g + 1) / p_);
        saved_by_[last_value_of(g)] = fwd_in_[g + 1];  // the next stage stores what it received
      }
    }
  }

  void backward_chain(std::int64_t g) {
    Index after = fwd_end_[g];
    if (g + 1 < p_ * v_) {
      Index in = bwd_in_[g];
      // the backward of a chunk starts after its own forward and the gradient it receives
      DistTask& first = out_.tasks[static_cast<std::size_t>(in)];
      if (std::find(first.dependencies.begin(), first.dependencies.end(), after) == first.dependencies.end()) first.dependencies.push_back(after);
      after = in;
    }
    auto ops = ops_of(g);
    for (const Op* o : ops)
      if (o->recomputed) after = forward_op(*o, Phase::recompute, after);
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      const Op& o = **it;
      const Operation& op = m_.operations[o.index];
      if (t_ > 1 && sp_ && row(o)) after = collective(o, Phase::backward_activation, CollectiveKind::all_gather, op.outputs[0], after);
      after = op_task(o, Phase::backward_activation, after);
      if (o.has_weights) after = op_task(o, Phase::backward_weight, after);
      if (t_ > 1)
        if (auto x = column_input(o)) after = collective(o, Phase::backward_activation, sp_ ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, *x, after);
    }
    bwd_end_[g % p_].push_back(after);
    if (g > 0) {
      Index v = last_value_of(g - 1);
      if (p_ == 1) bwd_in_[g - 1] = after;
      else bwd_in_[g - 1] = transfer("bwd.g" + std::to_string(g), v, g % p_, (g - 1) % p_, after, -1, g / p_, (g - 1) / p_);
    }
  }

  // A weight used on several stages (the embedding tied to the LM head, on the first and last
  // stage) is updated by each of them, so its copies stay equal only if every stage adds the
  // others' gradients first: Megatron-LM all-reduces the word-embedding gradients over the
  // embedding group before the data-parallel reduction. Here one send/receive pair per ordered
  // pair of stages carries a stage's gradient shard, after that stage's backward (COLL-5).
  void tied_gradients() {
    std::map<Index, std::map<std::int64_t, Expr>> uses;  // weight -> stage -> gradient bytes per rank
    const Rat grad = bytes_per_parameter(s_.dtype, s_.distributed_optimizer, dp_)[1];
    for (const auto& o : ops_) {
      const Operation& op = m_.operations[o.index];
      for (std::size_t k = 0; k < op.inputs.size(); ++k)
        if (Index v = op.inputs[k]; m_.values[static_cast<std::size_t>(v)].role == ValueRole::weight && !uses[v].count(o.stage))
          uses[v][o.stage] = elements(m_.values[static_cast<std::size_t>(v)]) * Expr(grad / Rat(shard_of(o, k, v).pieces));
    }
    for (const auto& [v, stages] : uses) {
      if (stages.size() < 2) continue;
      const std::string& vid = m_.values[static_cast<std::size_t>(v)].id;
      for (const auto& [from, bytes] : stages)
        for (const auto& [to, unused] : stages) {
          (void)unused;
          if (from == to) continue;
          auto make = [&, from = from, to = to, &bytes = bytes](TaskKind k, std::int64_t st) {  // clang 14 captures no structured binding
            DistTask t;
            t.id = std::string(k == TaskKind::send ? "send" : "recv") + ":tied." + vid + ":s" + std::to_string(from) + ":s" + std::to_string(to);
            t.kind = k;
            t.ranks = stage_ranks(st);
            t.value = vid;
            t.work.message_bytes = bytes;
            (k == TaskKind::send ? t.work.read_bytes : t.work.write_bytes) = bytes;
            t.lineage = Lineage{LineageKind::derived, "train.tied_gradient", {vid}};
            return t;
          };
          DistTask send = make(TaskKind::send, from);
          send.dependencies = bwd_end_[from];
          const Index si = emit(std::move(send), -1);
          DistTask recv = make(TaskKind::recv, to);
          recv.peer = si;
          const Index ri = emit(std::move(recv), si);
          out_.tasks[static_cast<std::size_t>(si)].peer = ri;
          tied_in_[to].push_back(ri);
        }
    }
  }

  void data_parallel(std::int64_t st) {
    // The stage's parameters per rank (sharded ones over t).
    Expr params, summed_params;
    codec::List<std::string> weights, summed;
    std::set<Index> seen;
    for (const auto& o : ops_) {
      if (o.stage != st) continue;
      const Operation& op = m_.operations[o.index];
      for (std::size_t k = 0; k < op.inputs.size(); ++k) {
        Index v = op.inputs[k];
        if (m_.values[static_cast<std::size_t>(v)].role != ValueRole::weight || !seen.insert(v).second) continue;
        Shard sh = shard_of(o, k, v);
        sh.stage = st;
        params += elements(m_.values[static_cast<std::size_t>(v)]) / Rat(sh.pieces);
        weights.push_back(sh.value);
        if (sh.axis.empty() && (sp_ || o.tp == "kv")) {
          summed_params += elements(m_.values[static_cast<std::size_t>(v)]);
          summed.push_back(sh.value);
        }
        out_.shards.push_back(std::move(sh));
      }
    }
    if (weights.empty()) return;
    auto bpp = bytes_per_parameter(s_.dtype, s_.distributed_optimizer, dp_);
    Indices ranks = stage_ranks(st);
    Index after = -1;
    // The gradients the update must wait for besides the stage's backward: the tied weights'
    // exchange (COLL-5) and the tp sum of the gradients of weights every tp rank holds whole
    // but computed only part of (COLL-6): under sequence parallelism every such weight (each
    // rank saw only its sequence shard: Megatron-LM's all-reduce of layer-norm gradients), and
    // the KV projection of fewer KV heads than t (each rank computed only its own head's
    // columns; the sum gives every rank the whole gradient).
    Indices ready = tied_in_[st];
    if (t_ > 1 && !summed.empty()) {
      DistTask t;
      t.id = "tp.all_reduce.gradients:s" + std::to_string(st);
      t.kind = TaskKind::collective;
      t.ranks = ranks;
      const Expr M = summed_params * Expr(bpp[1]);
      t.collective = Collective{ranks, CollectiveKind::all_reduce, M, Reduction::sum, "tp"};
      t.work.message_bytes = Expr(make_rat(t_ - 1, t_) * 2) * M;
      t.work.vector_ops = Expr(make_rat(t_ - 1, t_)) * summed_params;
      t.lineage = Lineage{LineageKind::derived, "train.tp_collective", summed};
      t.dependencies = bwd_end_[st];
      for (Index e : tied_in_[st]) t.dependencies.push_back(e);
      ready.push_back(emit(std::move(t), -1));
    }
    auto dp_coll = [&](CollectiveKind kind, const Rat& bytes_per_param, Index dep) {
      DistTask t;
      t.id = std::string("dp.") + std::string(codec::enum_name(kind)) + ":s" + std::to_string(st);
      t.kind = TaskKind::collective;
      t.ranks = ranks;
      Expr M = params * Expr(bytes_per_param);
      t.collective = Collective{ranks, kind, M, kind == CollectiveKind::all_gather ? Reduction::none : Reduction::sum, "dp"};
      Rat frac = make_rat(dp_ - 1, dp_);
      t.work.message_bytes = Expr(kind == CollectiveKind::all_reduce ? frac * 2 : frac) * M;
      t.lineage = Lineage{LineageKind::derived, "train.dp_collective", weights};
      if (dep < 0)
        for (Index e : bwd_end_[st]) t.dependencies.push_back(e);
      if (kind != CollectiveKind::all_gather)  // reduce the gradients once complete
        for (Index e : ready) t.dependencies.push_back(e);
      return emit(std::move(t), dep);
    };
    if (dp_ > 1) after = dp_coll(s_.distributed_optimizer ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce, bpp[1], -1);
    DistTask opt;
    opt.id = "opt:s" + std::to_string(st);
    opt.kind = TaskKind::compute;
    opt.phase = Phase::optimizer;
    opt.ranks = ranks;
    Expr local = s_.distributed_optimizer ? params / Rat(dp_) : params;
    opt.work.vector_ops = Expr(11) * local;
    opt.work.read_bytes = local * Expr(bpp[1] + bpp[2] * Rat(dp_ > 1 && s_.distributed_optimizer ? dp_ : 1));
    opt.work.write_bytes = opt.work.read_bytes;
    opt.lineage = Lineage{LineageKind::derived, "train.optimizer", weights};
    if (after < 0)
      for (Index e : bwd_end_[st]) opt.dependencies.push_back(e);
    for (Index e : ready) opt.dependencies.push_back(e);
    after = emit(std::move(opt), after);
    if (dp_ > 1 && s_.distributed_optimizer) dp_coll(CollectiveKind::all_gather, bpp[0], after);
  }

  Shard shard_of(const Op& o, std::size_t input_pos, Index v) const {
    const std::string& kind = m_.operations[o.index].kind;
    Shard sh;
    sh.value = m_.values[static_cast<std::size_t>(v)].id;
    bool weight = input_pos == 1, split = false;
    std::int64_t dim = -1;
    if (o.tp == "column" || (o.tp == "kv" && kv_groups(m_.operations[o.index], t_) == t_)) { split = true; dim = weight ? 1 : 0; }
    else if (o.tp == "row") { split = weight; dim = 0; }
    else if (o.tp == "vocab") {  // vocabulary-parallel: split the vocabulary dimension
      split = true;
      dim = kind == "embedding" || sh.value == "embed.w" ? 0 : 1;
    }
    if (split && t_ > 1) { sh.axis = "tp"; sh.dim = dim; sh.pieces = t_; }
    return sh;
  }

  const ModelIR& m_;
  const StrategyConfig& s_;
  DistributedTaskIR out_;
  std::int64_t t_, p_, dp_, v_, mb_;
  bool sp_;
  std::vector<std::int64_t> producer_;
  std::vector<Op> ops_;
  std::map<Index, std::size_t> first_column_;
  std::map<Index, Index> saved_by_;
  std::map<std::int64_t, Index> fwd_in_, fwd_end_, bwd_in_;
  std::map<std::int64_t, Indices> bwd_end_, tied_in_;
};

}  // namespace

std::vector<StageSchedule> pipeline_schedule(std::int64_t p, std::int64_t v, std::int64_t m) {
  std::vector<StageSchedule> out;
  const std::int64_t total = m * v;
  for (std::int64_t s = 0; s < p; ++s) {
    StageSchedule sc;
    sc.stage = s;
    sc.chunks = v;
    std::int64_t warm = v == 1 ? std::min(p - s - 1, m) : std::min((p - s - 1) * 2 + (v - 1) * p, total);
    auto step = [&](std::int64_t k, bool fwd) {
      std::int64_t in_group = k % (p * v);
      std::int64_t chunk = v == 1 ? 0 : in_group / p;
      if (!fwd) chunk = v - 1 - chunk;
      std::int64_t mbi = v == 1 ? k : (k / (p * v)) * p + k % p;
      sc.steps.push_back(Step{chunk, fwd ? StepKind::forward : StepKind::backward, mbi});
    };
    for (std::int64_t k = 0; k < warm; ++k) step(k, true);
    for (std::int64_t k = 0; k < total - warm; ++k) { step(warm + k, true); step(k, false); }
    for (std::int64_t k = total - warm; k < total; ++k) step(k, false);
    out.push_back(std::move(sc));
  }
  return out;
}

std::array<Rat, 3> bytes_per_parameter(frontend::DType dtype, bool dist, std::int64_t dp) {
  std::array<Rat, 3> b;
  switch (dtype) {
    case frontend::DType::BF16: b = {Rat(2), Rat(4), Rat(12)}; break;
    case frontend::DType::FP16: b = {Rat(2), Rat(2), Rat(16)}; break;
    default: b = {Rat(4), Rat(4), Rat(8)}; break;
  }
  if (dist) b[2] = b[2] / Rat(dp);
  return b;
}

DistributedTaskIR distribute_training(const ModelIR& model, const std::string& model_digest, const StrategyConfig& strategy) {
  return Distributor(model, model_digest, strategy).run();
}

}  // namespace plancert::passes
