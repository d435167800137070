// SPDX-License-Identifier: Apache-2.0
#include "passes/infer/distribute.h"

#include "passes/frontend/room.h"
#include "passes/infer/layout.h"
#include "passes/train/model_builder.h"

#include <map>
#include <set>
#include <stdexcept>

namespace plancert::passes {
namespace {

class Distributor {
 public:
  Distributor(const ModelIR& m, const frontend::ModelConfig& cfg, const InferenceWorkload& w, const InferenceParallelism& par)
      : m_(m), t_(par.tp), p_(par.pp), layout_(infer::Layout::of(m, par.tp, cfg.kv_heads)) {
    if (t_ < 1 || p_ < 1 || cfg.layers % p_ != 0) throw std::invalid_argument("distribute_inference: p must divide the layer count");
    out_.rules = {"infer.op", "infer.tp_collective", "infer.pp_transfer"};
    out_.symbols = m.symbols;
    out_.mesh.axes = {MeshAxis{"pp", p_}, MeshAxis{"tp", t_}};
    std::string dtype;
    for (const auto& v : m.values)
      if (v.role == ValueRole::state) { dtype = v.dtype; break; }
    for (const auto& op : m.operations)
      if (op.kind == "embedding") table_.insert(op.inputs.at(1));
    out_.inference = InferenceShape{w.batch, w.context, dtype, Expr(cfg.ffn), Expr(cfg.head_dim), Expr(cfg.heads), Expr(cfg.hidden), Expr(cfg.kv_heads), w.query()};
    per_stage_ = cfg.layers / p_;
  }

  DistributedTaskIR run() {
    // CONFIG-8 (passes/frontend/room.h): every operation gives a task whose rank list holds the
    // t ranks of its stage.
    frontend::require_room(rank_list_bytes(m_.operations.size(), static_cast<std::uintmax_t>(t_)),
                           "", "a DistributedTaskIR of at least " + std::to_string(m_.operations.size()) + " tasks, each with a rank list of tp = " + std::to_string(t_) + " ranks");
    Index after = -1;
    for (std::int64_t st = 0; st < p_; ++st) {
      Index last_value = -1;
      for (const auto& op : m_.operations) {
        if (stage_of(op) != st) continue;
        after = op_task(op, st, after);
        const std::string& tp = op.attrs.at("tp");
        if (t_ > 1 && (tp == "row" || (tp == "vocab" && op.kind == "embedding"))) after = collective(op, st, CollectiveKind::all_reduce, after);
        if (t_ > 1 && tp == "vocab" && op.kind == "linear") after = collective(op, st, CollectiveKind::all_gather, after);
        if (!op.outputs.empty()) last_value = op.outputs.front();
      }
      if (st + 1 < p_) after = transfer(last_value, st, after);
    }
    shards();
    return std::move(out_);
  }

 private:
  std::int64_t stage_of(const Operation& op) const {
    const std::string& l = op.attrs.at("layer");
    if (l == "embedding") return 0;
    if (l == "head") return p_ - 1;
    return std::stoll(l) / per_stage_;
  }

  Indices ranks(std::int64_t st) const {
    Indices r;
    for (std::int64_t i = st * t_; i < (st + 1) * t_; ++i) r.push_back(static_cast<Index>(i));
    return r;
  }

  Index emit(DistTask t, Index after) {
    if (after >= 0 && std::find(t.dependencies.begin(), t.dependencies.end(), after) == t.dependencies.end()) t.dependencies.insert(t.dependencies.begin(), after);
    out_.tasks.push_back(std::move(t));
    return static_cast<Index>(out_.tasks.size() - 1);
  }

  Index op_task(const Operation& op, std::int64_t st, Index after) {
    DistTask t;
    t.id = "op:" + op.id;
    t.kind = TaskKind::compute;
    t.phase = Phase::forward;
    t.ranks = ranks(st);
    t.replication = t_ / layout_.op_divisor(op);
    t.work = layout_.work(m_, op);
    t.lineage = Lineage{LineageKind::derived, "infer.op", {op.id}};
    t.attrs = op.attrs;
    for (const auto& e : op.effects) {
      const std::string& v = m_.values[static_cast<std::size_t>(e.value)].id;
      t.effects.push_back(TaskEffect{e.kind, v});
      // a read depends directly on the task that last wrote the state (EFFECT-2)
      if (e.kind == EffectKind::read)
        if (auto it = writer_.find(v); it != writer_.end() && it->second != after && std::find(t.dependencies.begin(), t.dependencies.end(), it->second) == t.dependencies.end())
          t.dependencies.push_back(it->second);
    }
    Index id = emit(std::move(t), after);
    for (const auto& e : op.effects)
      if (e.kind == EffectKind::write) writer_[m_.values[static_cast<std::size_t>(e.value)].id] = id;
    return id;
  }

  Index collective(const Operation& op, std::int64_t st, CollectiveKind kind, Index after) {
    Index value = op.outputs.front();
    const ModelValue& v = m_.values[static_cast<std::size_t>(value)];
    DistTask t;
    t.id = "tp." + std::string(codec::enum_name(kind)) + ":" + op.id;
    t.kind = TaskKind::collective;
    t.phase = Phase::forward;
    t.ranks = ranks(st);
    t.value = v.id;
    Expr M = elements(v) * Expr(dtype_bytes(v.dtype));
    Rat frac = make_rat(t_ - 1, t_);
    t.collective = Collective{t.ranks, kind, M, kind == CollectiveKind::all_gather ? Reduction::none : Reduction::sum, "tp"};
    t.work.message_bytes = Expr(kind == CollectiveKind::all_reduce ? frac * 2 : frac) * M;
    if (kind == CollectiveKind::all_reduce) t.work.vector_ops = Expr(frac) * elements(v);
    t.work.read_bytes = kind == CollectiveKind::all_reduce ? M : M / Rat(t_);
    t.work.write_bytes = M;
    t.lineage = Lineage{LineageKind::derived, "infer.tp_collective", {op.id}};
    t.attrs = op.attrs;
    return emit(std::move(t), after);
  }

  // The residual stream from stage st to st + 1.
  Index transfer(Index value, std::int64_t st, Index after) {
    const ModelValue& v = m_.values[static_cast<std::size_t>(value)];
    Expr bytes = elements(v) * Expr(dtype_bytes(v.dtype));
    auto make = [&](TaskKind k, std::int64_t stage) {
      DistTask t;
      t.id = std::string(k == TaskKind::send ? "send:s" : "recv:s") + std::to_string(stage);
      t.kind = k;
      t.ranks = ranks(stage);
      t.value = v.id;
      t.work.message_bytes = bytes;
      (k == TaskKind::send ? t.work.read_bytes : t.work.write_bytes) = bytes;
      t.lineage = Lineage{LineageKind::derived, "infer.pp_transfer", {v.id}};
      return t;
    };
    Index send = emit(make(TaskKind::send, st), after);
    Index recv = emit(make(TaskKind::recv, st + 1), send);
    out_.tasks[static_cast<std::size_t>(send)].peer = recv;
    out_.tasks[static_cast<std::size_t>(recv)].peer = send;
    return recv;
  }

  // Weight ownership per stage: split over tp where the layout splits it evenly over the t
  // ranks, else replicated (KV weights with k < t are held as max(k/t, 1) heads per rank,
  // which a Shard cannot state; the planner's buffers hold the exact share).
  void shards() {
    for (std::int64_t st = 0; st < p_; ++st) {
      std::set<Index> seen;
      for (const auto& op : m_.operations) {
        if (stage_of(op) != st) continue;
        const std::string& tp = op.attrs.at("tp");
        for (std::size_t k = 0; k < op.inputs.size(); ++k) {
          Index v = op.inputs[k];
          const ModelValue& x = m_.values[static_cast<std::size_t>(v)];
          if (x.role != ValueRole::weight || !seen.insert(v).second) continue;
          Shard sh;
          sh.value = x.id;
          sh.stage = st;
          if (t_ > 1 && layout_.divisor[static_cast<std::size_t>(v)] == t_) {
            sh.axis = "tp";
            sh.pieces = t_;
            // [in, out] weights split their output columns (column, vocab head, kv) or input
            // rows (row); embedding tables [V, H] and 1-D biases split dimension 0
            sh.dim = x.shape.size() == 1 || tp == "row" || table_.count(v) ? 0 : 1;
          }
          out_.shards.push_back(std::move(sh));
        }
      }
    }
  }

  const ModelIR& m_;
  std::int64_t t_, p_, per_stage_ = 1;
  infer::Layout layout_;
  DistributedTaskIR out_;
  std::map<std::string, Index> writer_;
  std::set<Index> table_;  // embedding tables [V, H] (also the tied LM head's weight)
};

}  // namespace

DistributedTaskIR distribute_inference(const ModelIR& model, const frontend::ModelConfig& config, const InferenceWorkload& w, const InferenceParallelism& par) {
  return Distributor(model, config, w, par).run();
}

}  // namespace plancert::passes
