// SPDX-License-Identifier: Apache-2.0
// RapidCheck: for random valid (model, strategy) pairs, every output of the training passes
// commits through the gate, and the matrix work of the DistributedTaskIR equals the
// model's closed form per phase (forward, recomputation, backward).
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "tests/passes/train_gen.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace plancert::testing {
namespace {

/// Forward matrix work of one block for one microbatch of B sequences of s tokens:
/// QKV 2Bsh(a + 2k)d, scores and context 4Bs^2ad, output projection 2Bs(ad)h,
/// MLP 4BshF (gated: 6BshF).
Int block_forward(const ModelConfig& m, std::int64_t B, std::int64_t s) {
  const Int Bs = Int(B) * s, h = m.hidden, a = m.heads, k = m.kv_heads, d = m.head_dim, F = m.ffn;
  return 2 * Bs * h * (a + 2 * k) * d + 4 * Bs * s * a * d + 2 * Bs * a * d * h + (m.gated_mlp ? 6 : 4) * Bs * h * F;
}
/// The part of it that selective recomputation redoes: the attention core 4Bs^2ad.
Int attention_core(const ModelConfig& m, std::int64_t B, std::int64_t s) { return Int(4) * B * s * s * m.heads * m.head_dim; }

/// The case's chain commits, its matrix work per phase equals the closed form, and the plan
/// has every task and memory fact.
void commits_with_the_closed_forms(const Case& c) {
  try {
    frontend::validate(c.model, c.strategy);
  } catch (const InputError& e) {
    RC_FAIL("the generator made an invalid pair: " + to_text(e.diag));
  }
  const Chain chain = derive(c);
  if (!chain.ok()) RC_FAIL("the gate refused the " + chain.refused + ":\n" + text(chain.findings));
  const auto& d = chain.distributed->payload();
  const auto& p = chain.portable->payload();

  // WORK-2 totals, against the closed form of the generated architecture.
  const ModelConfig& m = c.model;
  const std::int64_t B = c.strategy.microbatch, md = c.strategy.num_microbatches() * c.strategy.dp;
  const Int head = m.vocab ? Int(2) * B * c.seq * m.hidden * *m.vocab : Int(0);
  const Int forward = (Int(m.layers) * block_forward(m, B, c.seq) + head) * md;
  Int recompute = 0;
  if (c.strategy.recompute == Recompute::Full) recompute = Int(m.layers) * block_forward(m, B, c.seq) * md;
  if (c.strategy.recompute == Recompute::Selective) recompute = Int(m.layers) * attention_core(m, B, c.seq) * md;
  RC_ASSERT(matrix_total(d, Phase::forward) == Expr(forward));
  RC_ASSERT(matrix_total(d, Phase::recompute) == Expr(recompute));
  RC_ASSERT(matrix_total(d, Phase::backward_activation) + matrix_total(d, Phase::backward_weight) == Expr(Int(2) * forward));
  RC_ASSERT(matrix_total(d) == Expr(Int(3) * forward + recompute));

  // The plan copies every task once, and every stage has its memory facts.
  RC_ASSERT(p.tasks.size() == d.tasks.size());
  for (std::int64_t st = 0; st < c.strategy.pp; ++st)
    for (MemoryCategory cat : {MemoryCategory::weights, MemoryCategory::weight_gradients, MemoryCategory::optimizer_state, MemoryCategory::activations_peak,
                               MemoryCategory::total})
      RC_ASSERT(fact(p, st, cat) != nullptr);
}

RC_GTEST_PROP(TrainingPasses, EveryOutputCommitsThroughTheGate, ()) { commits_with_the_closed_forms(*cases()); }

// CONFIG-8 (passes/frontend/room.h): with the room set to what the ModelIR and the
// DistributedTaskIR really hold (their entities' fixed-size parts and rank lists), no random
// valid pair is refused, as every bound counts less than that; with the room shrunk to one
// byte every pair's distribution is refused with CONFIG-8, and so is the ModelIR of every model
// of two or more layers (the bound is taken once the first layer is built).
RC_GTEST_PROP(TrainingPasses, MemoryRoomBoundsNeverExceedWhatTheOutputHolds, ()) {
  const Case c = *cases();
  const auto w = concrete_workload(c.strategy.microbatch, c.seq);
  const ModelIR m = passes::build_model_ir(c.model, w, c.strategy.dtype);
  const DistributedTaskIR d = passes::distribute_training(m, "", c.strategy);
  {
    ScopedRoom room(std::max(fixed_bytes(m), fixed_bytes(d)));
    RC_ASSERT(refusal([&] { (void)passes::build_model_ir(c.model, w, c.strategy.dtype); }).empty());
    RC_ASSERT(refusal([&] { (void)passes::distribute_training(m, "", c.strategy); }).empty());
  }
  ScopedRoom room(1);
  RC_ASSERT(refusal([&] { (void)passes::build_model_ir(c.model, w, c.strategy.dtype); }) == (c.model.layers >= 2 ? "CONFIG-8" : ""));
  RC_ASSERT(refusal([&] { (void)passes::distribute_training(m, "", c.strategy); }) == "CONFIG-8");
}

// Fewer KV heads than t (k | t): the KV projection is held whole on every rank, each rank
// computes its own KV head (replication t/k), and the work still equals the closed form.
RC_GTEST_PROP(TrainingPasses, ReplicatedKvHeadsCommitThroughTheGate, ()) {
  const Case c = *cases(Need{.replicated_kv = true});
  RC_ASSERT(c.model.kv_heads < c.strategy.tp);
  commits_with_the_closed_forms(c);
}

}  // namespace
}  // namespace plancert::testing
