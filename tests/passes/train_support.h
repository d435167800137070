// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the training-derivation tests (tests/passes): model and strategy records
// built in code, the three passes chained through the gate as `plancert certify` chains them,
// and exact totals read back from the committed snapshots.
#pragma once

#include "core/diag.h"
#include "core/expr.h"
#include "core/ir.h"
#include "core/snapshot.h"
#include "passes/emit/emit.h"
#include "passes/frontend/configs.h"
#include "passes/frontend/room.h"
#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <cstdint>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <variant>

namespace plancert::testing {

using frontend::Activation;
using frontend::DType;
using frontend::ModelConfig;
using frontend::ModelFamily;
using frontend::NormKind;
using frontend::Recompute;
using frontend::Schedule;
using frontend::StrategyConfig;
using frontend::TpCommType;

/// A GPT-style model as Narayanan et al. count it: learned positions (as many as the
/// sequence), biases, tied embeddings, LayerNorm, GeLU, F = 4h, MHA with d = h / a.
inline ModelConfig gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads, std::optional<std::int64_t> vocab, bool dropout = true) {
  ModelConfig m;
  m.name = "gpt-test";
  m.family = ModelFamily::Gpt;
  m.hidden = hidden;
  m.ffn = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.layers = layers;
  m.vocab = vocab;
  m.learned_positions = true;
  m.biases = true;
  m.tied_embeddings = true;
  m.norm = NormKind::LayerNorm;
  m.activation = Activation::Gelu;
  m.dropout = dropout;
  return m;
}

/// Knobs of a strategy (everything else at its default).
struct Knobs {
  std::int64_t tp = 1, pp = 1, dp = 1;
  std::int64_t microbatch = 1;
  std::int64_t microbatches = 1;  ///< m; the global batch is microbatch * dp * m
  std::int64_t interleave = 1;    ///< v > 1 selects the interleaved schedule
  bool sequence_parallel = false;
  Recompute recompute = Recompute::None;
  DType dtype = DType::BF16;
  bool distributed_optimizer = false;
  std::optional<std::int64_t> seq = std::nullopt;
};

inline StrategyConfig strategy(const Knobs& k) {
  StrategyConfig s;
  s.name = "test-strategy";
  s.tp = k.tp;
  s.pp = k.pp;
  s.dp = k.dp;
  s.num_procs = k.tp * k.pp * k.dp;
  s.microbatch = k.microbatch;
  s.global_batch = k.microbatch * k.dp * k.microbatches;
  s.sequence_parallel = k.sequence_parallel;
  s.tp_comm_type = k.sequence_parallel ? TpCommType::RsAg : TpCommType::AllReduce;
  s.recompute = k.recompute;
  s.schedule = k.interleave > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  s.interleave = k.interleave;
  s.distributed_optimizer = k.distributed_optimizer;
  s.dtype = k.dtype;
  s.seq_length = k.seq;
  return s;
}

/// Workload with symbolic B (microbatch) and S (sequence, a multiple of `s_divisible_by`).
inline passes::Workload symbolic_workload(std::int64_t s_divisible_by = 8) {
  Symbol b;
  b.name = "B";
  b.axis = SymbolAxis::workload;
  Symbol s;
  s.name = "S";
  s.axis = SymbolAxis::workload;
  s.divisible_by = s_divisible_by;
  return passes::Workload{Expr::symbol("B"), Expr::symbol("S"), {b, s}};
}

inline passes::Workload concrete_workload(std::int64_t batch, std::int64_t seq) { return passes::Workload{Expr(batch), Expr(seq), {}}; }

/// Sets the memory room (CONFIG-8, passes/frontend/room.h) for a scope, and "none" after it
/// (the room is process-wide).
struct ScopedRoom {
  /// A room of `bytes`.
  explicit ScopedRoom(std::uintmax_t bytes) { frontend::set_memory_room(bytes); }
  ~ScopedRoom() { frontend::set_memory_room(0); }
  ScopedRoom(const ScopedRoom&) = delete;
  ScopedRoom& operator=(const ScopedRoom&) = delete;
};

/// The code of the InputError `f` throws (and its path into `*path`), or "" when it throws none.
template <class F>
std::string refusal(F&& f, std::string* path = nullptr) {
  try {
    f();
  } catch (const InputError& e) {
    if (path) *path = e.diag.path;
    return e.diag.code;
  }
  return "";
}

/// The bytes the fixed-size parts of a ModelIR's operations and values take (what CONFIG-8's
/// bound counts).
inline std::uintmax_t fixed_bytes(const ModelIR& m) { return m.operations.size() * sizeof(Operation) + m.values.size() * sizeof(ModelValue); }

/// The larger of the bytes a DistributedTaskIR's schedule steps take and those its tasks and
/// their rank lists take (the two CONFIG-8 bounds of the distribution).
inline std::uintmax_t fixed_bytes(const DistributedTaskIR& d) {
  std::uintmax_t steps = 0, ranks = 0;
  for (const auto& sc : d.schedule) steps += sc.steps.size();
  for (const auto& t : d.tasks) ranks += t.ranks.size();
  return std::max(steps * sizeof(Step), d.tasks.size() * sizeof(DistTask) + ranks * sizeof(Index));
}

/// Codes of a diagnostics collection, and its text for failure messages.
inline std::set<std::string> codes(const Diagnostics& d) {
  std::set<std::string> out;
  for (const auto& x : d.all()) out.insert(x.code);
  return out;
}
inline std::string text(const Diagnostics& d) {
  std::ostringstream os;
  for (const auto& x : d.all()) os << to_text(x) << "\n";
  return os.str();
}

/// The committed snapshots of one derivation (each present when its commit succeeded), and
/// the findings of the first refused commit.
struct Chain {
  std::optional<Committed<ModelIR>> model;
  std::optional<Committed<DistributedTaskIR>> distributed;
  std::optional<Committed<PortablePlanIR>> portable;
  std::string refused;  ///< "" when all three stages were committed
  Diagnostics findings;
  [[nodiscard]] bool ok() const { return portable.has_value(); }
};

template <class P>
std::optional<Committed<P>> take(CommitResult<P> r, const char* stage, Chain& c) {
  if (auto* p = std::get_if<Committed<P>>(&r)) return std::move(*p);
  c.refused = stage;
  c.findings = std::get<Rejection>(r).diagnostics;
  return std::nullopt;
}

/// BuildModelIR's output (the ModelIR root of every chain below).
inline ModelIR build_model(const ModelConfig& model, const passes::Workload& w, DType dtype) { return passes::build_model_ir(model, w, dtype); }

/// Runs BuildModelIR, DistributeTransformerTrainingPass and PlanTransformerTrainingPass,
/// committing each output through the gate with its parent's digest (as cli/certify_cmd.cpp).
inline Chain derive(const ModelConfig& model, const StrategyConfig& strategy, const passes::Workload& w) {
  Chain c;
  c.model = take(Gate::commit_root(make_snapshot(build_model(model, w, strategy.dtype), {})), "ModelIR", c);
  if (!c.model) return c;
  c.distributed = take(Gate::commit(*c.model, make_snapshot(passes::distribute_training(c.model->payload(), c.model->digest(), strategy), {c.model->digest()})),
                       "DistributedTaskIR", c);
  if (!c.distributed) return c;
  c.portable = take(Gate::commit(*c.distributed, make_snapshot(passes::plan_training(c.model->payload(), c.distributed->payload(), strategy), {c.distributed->digest()})),
                    "PortablePlanIR", c);
  return c;
}

/// Sum of the elements of the model's weight values.
inline Expr parameters(const ModelIR& m) {
  Expr n;
  for (const auto& v : m.values)
    if (v.role == ValueRole::weight) n += passes::elements(v);
  return n;
}

/// Sum over tasks of matrix_ops * repeat * |ranks| / replication (optionally of one phase
/// only): the work of every distinct instance once.
inline Expr matrix_total(const DistributedTaskIR& d, std::optional<Phase> phase = std::nullopt) {
  Expr n;
  for (const auto& t : d.tasks)
    if (!phase || t.phase == *phase) n += t.work.matrix_ops * Expr(make_rat(t.repeat * static_cast<std::int64_t>(t.ranks.size()), t.replication));
  return n;
}

/// The memory fact of a stage and category (chunk >= 0 for per-chunk activations).
inline const MemoryFact* fact(const PortablePlanIR& p, std::int64_t stage, MemoryCategory cat, std::int64_t chunk = -1) {
  for (const auto& f : p.memory)
    if (f.stage == stage && f.category == cat && (cat != MemoryCategory::activations || f.chunk == chunk)) return &f;
  return nullptr;
}

/// a * n as an Expr.
inline Expr times(const Expr& a, const Rat& n) { return a * Expr(n); }

}  // namespace plancert::testing
