// SPDX-License-Identifier: Apache-2.0
// Every bundled Calculon strategy with its model and the A100 80 GB system commits through
// the gate (all three stages), with the closed forms holding on the real dimensions.
#include "passes/frontend/loaders.h"
#include "tests/passes/train_support.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>

namespace plancert::testing {
namespace {

const std::filesystem::path kRoot = PLANCERT_SOURCE_DIR;

struct Example {
  const char* strategy;
  const char* model;
};

// The model of `<model>_full.json` / `<model>_seqsel.json` is its file-name prefix.
// 3072_t4_p64_d12_mbs4_full.json names no model: its p = 64 needs a multiple of 64 layers
// and its t = 4 a multiple of 4 heads (and of 4 FFN columns), which megatron-1T (128 layers,
// 160 heads), anthropic-52B (64, 64) and lamda (64, 128) all satisfy; megatron-1T is the
// configuration Calculon's 3072-GPU example studies (m = 3072 / (4 * 12) = 64 >= p).
const Example kExamples[] = {
    {"gpt3-175B_full", "gpt3-175B"},       {"gpt3-175B_seqsel", "gpt3-175B"},     {"megatron-1T_full", "megatron-1T"},
    {"megatron-1T_seqsel", "megatron-1T"}, {"megatron-22B_full", "megatron-22B"}, {"megatron-22B_seqsel", "megatron-22B"},
    {"turing-530B_full", "turing-530B"},   {"turing-530B_seqsel", "turing-530B"},
    // distributed optimizer over d_p = 12, which does not divide the parameters' state bytes
    {"3072_t4_p64_d12_mbs4_full", "megatron-1T"},
};

class CalculonExample : public ::testing::TestWithParam<Example> {};

TEST_P(CalculonExample, CommitsThroughTheGateAndReproducesTheClosedForms) {
  const Example& e = GetParam();
  const auto model = frontend::load_model(kRoot / "examples/calculon/models" / (std::string(e.model) + ".json"));
  const auto strat = frontend::load_strategy(kRoot / "examples/calculon/strategies" / (std::string(e.strategy) + ".json"));
  const auto system = frontend::load_system(kRoot / "examples/calculon/systems/a100_80g.json");
  ASSERT_NO_THROW(frontend::validate(model, strat));
  ASSERT_NO_THROW(frontend::validate(strat, system));
  ASSERT_EQ(model.heads * model.head_dim, model.hidden);  // the closed forms assume a d = h
  const std::int64_t m = strat.num_microbatches();
  const std::int64_t v = strat.schedule == Schedule::Interleaved ? strat.interleave : 1;
  if (v > 1) {
    ASSERT_EQ(m % strat.pp, 0);
  }
  const std::int64_t s = *frontend::effective_seq_length(model, strat);
  const Chain chain = derive(model, strat, concrete_workload(strat.microbatch, s));
  ASSERT_TRUE(chain.ok()) << "the gate refused the " << chain.refused << ":\n" << text(chain.findings);
  EXPECT_EQ(chain.portable->snapshot().parents, std::vector<std::string>{chain.distributed->digest()});
  EXPECT_EQ(chain.distributed->snapshot().parents, std::vector<std::string>{chain.model->digest()});

  const std::int64_t l = model.layers, h = model.hidden, a = model.heads, t = strat.tp, b = strat.microbatch;
  const Int Bg = strat.global_batch;
  // Narayanan (no vocabulary in Calculon models, V = 0); selective adds the attention core's forward.
  const Int base = Int(72) * Bg * s * l * h * h + Int(12) * Bg * s * s * l * h;
  Int want = base;
  if (strat.recompute == Recompute::Full) want = Int(96) * Bg * s * l * h * h + Int(16) * Bg * s * s * l * h;
  if (strat.recompute == Recompute::Selective) want = base + Int(4) * Bg * s * s * l * h;
  EXPECT_EQ(matrix_total(chain.distributed->payload()), Expr(want));

  // Korthikanti per layer, on every chunk of every stage.
  const bool sp = strat.sequence_parallel && t > 1;
  Rat per_layer;
  const Rat sbh = Rat(Int(s) * b * h);
  if (strat.recompute == Recompute::Full) per_layer = sp ? sbh * make_rat(2, t) : sbh * 2;
  else if (strat.recompute == Recompute::Selective) per_layer = sp ? sbh * make_rat(34, t) : sbh * (Rat(10) + make_rat(24, t));
  else per_layer = sbh * ((sp ? make_rat(34, t) : Rat(10) + make_rat(24, t)) + make_rat(5 * a * s, h * t));
  const std::int64_t layers_per_chunk = l / (strat.pp * v);
  for (std::int64_t st = 0; st < strat.pp; ++st)
    for (std::int64_t c = 0; c < v; ++c) {
      const MemoryFact* f = fact(chain.portable->payload(), st, MemoryCategory::activations, c);
      ASSERT_NE(f, nullptr);
      EXPECT_EQ(f->bytes, Expr(per_layer * layers_per_chunk)) << "stage " << st << " chunk " << c;
    }
  // Bytes per parameter of every stage (no embedding or head: blocks only, with biases).
  const Rat params = Rat(l / strat.pp) * (make_rat(Int(12) * h * h + 7 * h, t) + Rat(6 * h));
  for (std::int64_t st = 0; st < strat.pp; ++st) {
    const MemoryFact *w = fact(chain.portable->payload(), st, MemoryCategory::weights),
                     *g = fact(chain.portable->payload(), st, MemoryCategory::weight_gradients),
                     *o = fact(chain.portable->payload(), st, MemoryCategory::optimizer_state);
    ASSERT_TRUE(w && g && o);
    // float16: 2 + 2 bytes of weight and gradient, 16 of optimizer state per parameter; a
    // distributed optimizer holds ceil(P / d_p) parameters' state on each replica.
    const Rat opt = strat.distributed_optimizer ? Rat(16) * Rat(ceil(params / Rat(strat.dp))) : Rat(16) * params;
    EXPECT_EQ(*(w->bytes + g->bytes + o->bytes).constant(), Rat(4) * params + opt) << "stage " << st;
  }
}

std::string param_name(const ::testing::TestParamInfo<Example>& info) {
  std::string n = info.param.strategy;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Strategies, CalculonExample, ::testing::ValuesIn(kExamples), param_name);

TEST(CalculonExamples, EveryBundledStrategyIsCovered) {
  std::size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kRoot / "examples/calculon/strategies")) {
    const std::string stem = entry.path().stem().string();
    bool covered = false;
    for (const auto& e : kExamples) covered = covered || stem == e.strategy;
    EXPECT_TRUE(covered) << stem;
    ++n;
  }
  EXPECT_EQ(n, std::size(kExamples));
}

}  // namespace
}  // namespace plancert::testing
