// SPDX-License-Identifier: Apache-2.0
// The training derivation against the published closed forms (FORMULAS.md), exactly:
// Narayanan et al. 2021 (parameters, matrix FLOPs per iteration), Korthikanti et al. 2022
// (stored activations per layer, first-stage peak under 1F1B / interleaving) and Megatron-LM's
// bytes per parameter. Workloads are symbolic (B, S) wherever the gate can decide the plan,
// so each check is a polynomial identity, not a spot value. Every derivation is committed
// through the gate (all three stages) before its figures are read.
#include "passes/emit/emit.h"
#include "tests/passes/train_support.h"

#include <gtest/gtest.h>

#include <tuple>
#include <vector>

namespace plancert::testing {
namespace {

const Expr B = Expr::symbol("B");
const Expr S = Expr::symbol("S");

#define ASSERT_COMMITTED(chain) ASSERT_TRUE((chain).ok()) << "the gate refused the " << (chain).refused << ":\n" << text((chain).findings)

// ---- Narayanan et al. 2021 --------------------------------------------------------------------

/// P = 12lh^2 (1 + 13/(12h) + (V + s)/(12lh)), written as published.
Expr narayanan_parameters(std::int64_t l, std::int64_t h, const Expr& V, const Expr& s) {
  return Expr(12 * l * h * h) * (Expr(1) + Expr(make_rat(13, 12 * h)) + (V + s) * Expr(make_rat(1, 12 * l * h)));
}

/// F = 96 B_g s l h^2 (1 + s/(6h) + V/(16lh)) with full recomputation; 72 and V/(12lh) without.
Expr narayanan_flops(const Expr& Bg, const Expr& s, std::int64_t l, std::int64_t h, std::int64_t V, bool full_recompute) {
  const std::int64_t lead = full_recompute ? 96 : 72, vden = full_recompute ? 16 : 12;
  return Expr(lead) * Bg * s * Expr(l * h * h) * (Expr(1) + s * Expr(make_rat(1, 6 * h)) + Expr(make_rat(V, vden * l * h)));
}

struct ParamCase {
  std::int64_t l, h, a, V, s;
};

TEST(Narayanan, ParametersOfGptModelsEqualTheClosedFormPlusTheFinalLayerNorm) {
  for (const auto& c : std::vector<ParamCase>{{1, 8, 1, 16, 4},
                                              {2, 64, 4, 1000, 128},
                                              {3, 96, 8, 50304, 256},
                                              {4, 128, 16, 51200, 2048},
                                              {24, 1024, 16, 50257, 1024},
                                              {96, 12288, 96, 50257, 2048}}) {
    SCOPED_TRACE("l=" + std::to_string(c.l) + " h=" + std::to_string(c.h) + " a=" + std::to_string(c.a) + " V=" + std::to_string(c.V) + " s=" + std::to_string(c.s));
    const ModelConfig m = gpt(c.l, c.h, c.a, c.V);
    auto r = Gate::commit_root(make_snapshot(build_model(m, concrete_workload(1, c.s), DType::BF16), {}));
    ASSERT_TRUE(std::holds_alternative<Committed<ModelIR>>(r)) << text(std::get<Rejection>(r).diagnostics);
    const Expr got = parameters(std::get<Committed<ModelIR>>(r).payload());
    const Expr want = narayanan_parameters(c.l, c.h, Expr(c.V), Expr(c.s)) + Expr(2 * c.h);
    EXPECT_EQ(got, want) << got.str() << " != " << want.str();
    // The same number written out: 12lh^2 + 13lh + (V + s)h + 2h.
    EXPECT_EQ(got, Expr(12 * c.l * c.h * c.h + 13 * c.l * c.h + (c.V + c.s) * c.h + 2 * c.h));
  }
}

TEST(Narayanan, ParametersWithASymbolicSequenceAreThePolynomialInS) {
  // Positions = s: the position table is [S, h], so P is linear in S with slope h.
  const ModelConfig m = gpt(3, 96, 8, 50304);
  auto r = Gate::commit_root(make_snapshot(build_model(m, symbolic_workload(), DType::BF16), {}));
  ASSERT_TRUE(std::holds_alternative<Committed<ModelIR>>(r)) << text(std::get<Rejection>(r).diagnostics);
  const Expr got = parameters(std::get<Committed<ModelIR>>(r).payload());
  EXPECT_EQ(got, narayanan_parameters(3, 96, Expr(50304), S) + Expr(2 * 96)) << got.str();
  EXPECT_EQ(got.str(), "96*S+5164896");
}

// A causal model counts the lower triangle of each score matrix: per layer the two attention
// products drop from 4 B s^2 h to 2 B h s (s + 1), the softmax from 5 B a s^2 to 5 B a s(s+1)/2
// and the attention dropout likewise (symbolic B and S, exactly).
TEST(Narayanan, CausalAttentionCountsTheLowerTriangle) {
  ModelConfig full = gpt(3, 96, 8, 50304), causal = full;
  causal.causal = true;
  auto work = [](const ModelIR& m, Expr Work::*x) {
    Expr sum;
    for (const auto& op : m.operations) sum += op.work.*x;
    return sum;
  };
  const ModelIR a = build_model(full, symbolic_workload(), DType::BF16), b = build_model(causal, symbolic_workload(), DType::BF16);
  const Expr Bx = symbolic_workload().batch, Sx = symbolic_workload().seq, h(96), heads(8), l(3);
  EXPECT_EQ(work(a, &Work::matrix_ops) - work(b, &Work::matrix_ops), l * (Expr(4) * Bx * Sx * Sx * h - Expr(2) * Bx * h * Sx * (Sx + Expr(1))));
  const Expr half = heads * Bx * (Sx * Sx - Sx * (Sx + Expr(1)) / Rat(2));  // score entries saved per layer
  EXPECT_EQ(work(a, &Work::vector_ops) - work(b, &Work::vector_ops), l * Expr(6) * half);  // softmax 5 + dropout 1
  auto r = Gate::commit_root(make_snapshot(b, {}));
  EXPECT_TRUE(std::holds_alternative<Committed<ModelIR>>(r));
}

TEST(Narayanan, ParametersCountTheVocabularyAndPositionsOnlyWhenPresent) {
  // Without a vocabulary there is no embedding, position table, final norm or head: 12lh^2 + 13lh.
  const ModelConfig m = gpt(5, 64, 4, std::nullopt);
  auto r = Gate::commit_root(make_snapshot(build_model(m, symbolic_workload(), DType::BF16), {}));
  ASSERT_TRUE(std::holds_alternative<Committed<ModelIR>>(r)) << text(std::get<Rejection>(r).diagnostics);
  EXPECT_EQ(parameters(std::get<Committed<ModelIR>>(r).payload()), Expr(12 * 5 * 64 * 64 + 13 * 5 * 64));
}

struct FlopCase {
  Knobs k;
  std::int64_t layers;
};

std::string describe(const Knobs& k) {
  return "t=" + std::to_string(k.tp) + " p=" + std::to_string(k.pp) + " d=" + std::to_string(k.dp) + " m=" + std::to_string(k.microbatches) +
         " v=" + std::to_string(k.interleave) + (k.sequence_parallel ? " sp" : "") + " recompute=" + std::string(frontend::to_string(k.recompute));
}

const std::vector<FlopCase>& flop_cases() {
  static const std::vector<FlopCase> cases = [] {
    std::vector<FlopCase> out;
    const std::vector<Knobs> meshes = {
        {.tp = 1, .pp = 1, .dp = 1, .microbatches = 1},
        {.tp = 2, .pp = 1, .dp = 1, .microbatches = 3},
        {.tp = 1, .pp = 2, .dp = 1, .microbatches = 4},
        {.tp = 1, .pp = 1, .dp = 3, .microbatches = 2},
        {.tp = 2, .pp = 2, .dp = 2, .microbatches = 2},
        {.tp = 4, .pp = 2, .dp = 1, .microbatches = 4, .interleave = 2},
        {.tp = 2, .pp = 4, .dp = 2, .microbatches = 8, .interleave = 2, .sequence_parallel = true},
        {.tp = 8, .pp = 2, .dp = 1, .microbatches = 2, .sequence_parallel = true},
        {.tp = 1, .pp = 2, .dp = 2, .microbatches = 6, .interleave = 4},
        {.tp = 2, .pp = 2, .dp = 2, .microbatches = 2, .interleave = 2, .sequence_parallel = true},
    };
    for (const auto& mesh : meshes)
      for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) {
        Knobs k = mesh;
        k.recompute = r;
        out.push_back({k, 8});
      }
    return out;
  }();
  return cases;
}

class NarayananFlops : public ::testing::TestWithParam<std::size_t> {};

TEST_P(NarayananFlops, MatrixFlopsPerIterationEqualTheClosedForm) {
  const auto& c = flop_cases()[GetParam()];
  SCOPED_TRACE(describe(c.k));
  const std::int64_t h = 64, a = 8, V = 1024;
  const ModelConfig m = gpt(c.layers, h, a, V);
  const StrategyConfig s = strategy(c.k);
  const Chain chain = derive(m, s, symbolic_workload());
  ASSERT_TRUE(chain.distributed.has_value()) << "the gate refused the " << chain.refused << ":\n" << text(chain.findings);
  const auto& d = chain.distributed->payload();
  // The symbolic global batch: B sequences per microbatch, m microbatches, d data-parallel replicas.
  const Expr Bg = B * Expr(c.k.dp * c.k.microbatches);
  const Expr got = matrix_total(d);
  // Matrix work is never replicated, so |ranks| and |ranks| / replication give the same sum.
  for (const auto& t : d.tasks)
    if (!(t.work.matrix_ops == Expr())) {
      EXPECT_EQ(t.replication, 1) << t.id;
    }
  if (c.k.recompute == Recompute::Selective) {
    // Not a published closed form: selective recomputation adds one forward of the attention
    // core (QK^T and PV, 4Bs^2h per layer) to the no-recomputation count.
    const Expr want = narayanan_flops(Bg, S, c.layers, h, V, false) + Expr(4 * c.layers * h) * Bg * S * S;
    EXPECT_EQ(got, want) << got.str() << " != " << want.str();
  } else {
    const Expr want = narayanan_flops(Bg, S, c.layers, h, V, c.k.recompute == Recompute::Full);
    EXPECT_EQ(got, want) << got.str() << " != " << want.str();
  }
  // The split by phase: forward 24Bsh^2 + 4Bs^2h per layer and 2BshV for the head; backward twice that.
  const Expr fwd = Bg * (Expr(24 * c.layers * h * h) * S + Expr(4 * c.layers * h) * S * S + Expr(2 * h * V) * S);
  EXPECT_EQ(matrix_total(d, Phase::forward), fwd);
  EXPECT_EQ(matrix_total(d, Phase::backward_activation) + matrix_total(d, Phase::backward_weight), Expr(2) * fwd);
  // The whole plan is committed too, except for interleaved schedules with m >= 2p, whose
  // chunks of different symbolic sizes (embedding, head) MEM-2 cannot order (see
  // findings_test.cpp SymbolicInterleavedPlanWithAVocabularyIsRefusedByMem2WhenMIsAtLeast2P).
  if (c.k.interleave == 1 || c.k.microbatches == c.k.pp) {
    ASSERT_COMMITTED(chain);
  }
}

INSTANTIATE_TEST_SUITE_P(Meshes, NarayananFlops, ::testing::Range<std::size_t>(0, flop_cases().size()));

TEST(Narayanan, MatrixFlopsWithConcreteNumbersAndGpt3Dimensions) {
  // GPT-3 175B dimensions with fewer layers, concrete B and s, t=8, p=2, d=2, m=4.
  const std::int64_t l = 4, h = 12288, a = 96, V = 51200, s = 2048;
  for (Recompute r : {Recompute::None, Recompute::Full}) {
    Knobs k{.tp = 8, .pp = 2, .dp = 2, .microbatch = 2, .microbatches = 4, .recompute = r};
    const Chain chain = derive(gpt(l, h, a, V), strategy(k), concrete_workload(2, s));
    ASSERT_COMMITTED(chain);
    const Expr got = matrix_total(chain.distributed->payload());
    EXPECT_EQ(got, narayanan_flops(Expr(2 * 2 * 4), Expr(s), l, h, V, r == Recompute::Full)) << got.str();
  }
}

// ---- Korthikanti et al. 2022 ------------------------------------------------------------------

/// Stored activation bytes of one layer, 16-bit activations and 1-byte dropout masks.
Expr korthikanti_per_layer(std::int64_t h, std::int64_t a, std::int64_t t, bool sp, Recompute r) {
  const Expr sbh = S * B * Expr(h);
  const Expr attention = Expr(make_rat(5 * a, h * t)) * S;  // 5as/(ht)
  if (t == 1) sp = false;                                   // the t = 1 forms coincide
  switch (r) {
    case Recompute::Full: return sp ? sbh * Expr(make_rat(2, t)) : Expr(2) * sbh;
    case Recompute::Selective: return sp ? sbh * Expr(make_rat(34, t)) : sbh * (Expr(10) + Expr(make_rat(24, t)));
    default: return sp ? sbh * (Expr(make_rat(34, t)) + attention) : sbh * (Expr(10) + Expr(make_rat(24, t)) + attention);
  }
}

struct ActCase {
  std::int64_t t;
  bool sp;
  Recompute r;
};
std::vector<ActCase> act_cases() {
  std::vector<ActCase> out;
  for (std::int64_t t : {1, 2, 4, 8})
    for (bool sp : {false, true})
      for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full}) out.push_back({t, sp, r});
  return out;
}
std::string describe(const ActCase& c) { return "t=" + std::to_string(c.t) + (c.sp ? " sp" : "") + " recompute=" + std::string(frontend::to_string(c.r)); }

TEST(Korthikanti, StoredActivationsPerLayerInAMiddleStage) {
  // p = 2 stages of 2 layers each, no vocabulary: stage 1 holds layers 2 and 3, whose input
  // arrives from stage 0, so every stored tensor is a block's own.
  const std::int64_t h = 64, a = 8, l = 4;
  for (const auto& c : act_cases()) {
    SCOPED_TRACE(describe(c));
    Knobs k{.tp = c.t, .pp = 2, .dp = 1, .microbatches = 2, .sequence_parallel = c.sp, .recompute = c.r};
    const Chain chain = derive(gpt(l, h, a, std::nullopt), strategy(k), symbolic_workload());
    ASSERT_COMMITTED(chain);
    const MemoryFact* f = fact(chain.portable->payload(), 1, MemoryCategory::activations, 0);
    ASSERT_NE(f, nullptr);
    const Expr want = Expr(2) * korthikanti_per_layer(h, a, c.t, c.sp, c.r);
    EXPECT_EQ(f->bytes, want) << f->bytes.str() << " != " << want.str();
  }
}

TEST(Korthikanti, StoredActivationsPerLayerInAMiddleStageOfAModelWithVocabulary) {
  // p = 3 stages of one layer each: stage 1 holds neither the embedding nor the head.
  const std::int64_t h = 64, a = 8;
  for (const auto& c : act_cases()) {
    SCOPED_TRACE(describe(c));
    Knobs k{.tp = c.t, .pp = 3, .dp = 1, .microbatches = 3, .sequence_parallel = c.sp, .recompute = c.r};
    const Chain chain = derive(gpt(3, h, a, 512), strategy(k), symbolic_workload());
    ASSERT_COMMITTED(chain);
    const MemoryFact* f = fact(chain.portable->payload(), 1, MemoryCategory::activations, 0);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->bytes, korthikanti_per_layer(h, a, c.t, c.sp, c.r)) << f->bytes.str();
  }
}

TEST(Korthikanti, StoredActivationsPerLayerIncludingTheFirstLayer) {
  // One stage holding all layers; layer 0 reads the model input (sequence-sharded under
  // sequence parallelism, like every other block input).
  const std::int64_t h = 64, a = 8, l = 3;
  for (const auto& c : act_cases()) {
    SCOPED_TRACE(describe(c));
    Knobs k{.tp = c.t, .microbatches = 1, .sequence_parallel = c.sp, .recompute = c.r};
    const Chain chain = derive(gpt(l, h, a, std::nullopt), strategy(k), symbolic_workload());
    ASSERT_COMMITTED(chain);
    const MemoryFact* f = fact(chain.portable->payload(), 0, MemoryCategory::activations, 0);
    ASSERT_NE(f, nullptr);
    const Expr want = Expr(l) * korthikanti_per_layer(h, a, c.t, c.sp, c.r);
    EXPECT_EQ(f->bytes, want) << f->bytes.str() << " != " << want.str();
  }
}

// ---- first-stage peak --------------------------------------------------------------------------

struct PeakCase {
  std::int64_t p, v, m;
};

TEST(Korthikanti, FirstStagePeakActivations) {
  const std::int64_t h = 64, a = 8, t = 2;
  for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
    for (const auto& c : std::vector<PeakCase>{{2, 1, 2}, {2, 1, 5}, {4, 1, 4}, {4, 1, 9}, {4, 1, 1}, {4, 1, 3}, {3, 1, 2},  // 1F1B
                                               {2, 2, 4}, {2, 2, 8}, {4, 2, 8}, {4, 2, 12}, {2, 4, 4}, {3, 2, 6}, {2, 3, 6}}) {  // interleaved
      const std::int64_t l = c.p * c.v * 2;  // two layers per chunk
      SCOPED_TRACE("p=" + std::to_string(c.p) + " v=" + std::to_string(c.v) + " m=" + std::to_string(c.m) + " l=" + std::to_string(l) + " recompute=" +
                   std::string(frontend::to_string(r)));
      Knobs k{.tp = t, .pp = c.p, .dp = 1, .microbatches = c.m, .interleave = c.v, .recompute = r};
      const Chain chain = derive(gpt(l, h, a, std::nullopt), strategy(k), symbolic_workload());
      ASSERT_COMMITTED(chain);
      const Expr layer = korthikanti_per_layer(h, a, t, false, r);
      Expr want;
      if (c.v == 1) want = c.m >= c.p ? Expr(l) * layer : Expr(c.m) * Expr(make_rat(l, c.p)) * layer;  // min(m, p) microbatches of l/p layers
      else want = Expr(l) * (Expr(1) + Expr(make_rat(c.p - 1, c.p * c.v))) * layer;                   // l (1 + (p-1)/(pv))
      const MemoryFact* peak = fact(chain.portable->payload(), 0, MemoryCategory::activations_peak);
      ASSERT_NE(peak, nullptr);
      EXPECT_EQ(peak->bytes, want) << peak->bytes.str() << " != " << want.str();
    }
}

TEST(Korthikanti, InterleavedPeakWithAsManyMicrobatchesAsStagesIsAllForwardFirst) {
  // With m = p the interleaved warm-up min(2(p-1) + (v-1)p, mv) = mv runs every forward
  // before any backward, so stage 0 holds all m*v = p*v chunk-microbatches: l layers, below
  // l (1 + (p-1)/(pv)) (which needs m*v >= p*v + p - 1).
  const std::int64_t h = 64, a = 8, t = 1;
  for (const auto& c : std::vector<PeakCase>{{2, 2, 2}, {4, 2, 4}, {3, 3, 3}}) {
    const std::int64_t l = c.p * c.v;
    Knobs k{.tp = t, .pp = c.p, .microbatches = c.m, .interleave = c.v};
    const Chain chain = derive(gpt(l, h, a, std::nullopt), strategy(k), symbolic_workload());
    ASSERT_COMMITTED(chain);
    const MemoryFact* peak = fact(chain.portable->payload(), 0, MemoryCategory::activations_peak);
    ASSERT_NE(peak, nullptr);
    EXPECT_EQ(peak->bytes, Expr(l) * korthikanti_per_layer(h, a, t, false, Recompute::None)) << peak->bytes.str();
  }
}

TEST(Korthikanti, PipelineScheduleInFlightCounts) {
  // The largest number of in-flight chunk-microbatches of stage 0: min(m, p) for 1F1B and
  // min(pv + p - 1, mv) interleaved; stage s of 1F1B holds min(m, p - s).
  auto peak_of = [](const StageSchedule& sc) {
    std::int64_t n = 0, best = 0;
    for (const auto& st : sc.steps) best = std::max(best, n += st.kind == StepKind::forward ? 1 : -1);
    return best;
  };
  for (std::int64_t p : {1, 2, 3, 4, 8})
    for (std::int64_t m : {1, 2, 3, 4, 8, 16}) {
      auto sched = passes::pipeline_schedule(p, 1, m);
      ASSERT_EQ(sched.size(), static_cast<std::size_t>(p));
      for (std::int64_t s = 0; s < p; ++s) EXPECT_EQ(peak_of(sched[static_cast<std::size_t>(s)]), std::min(m, p - s)) << "p=" << p << " m=" << m << " s=" << s;
    }
  for (std::int64_t p : {2, 3, 4})
    for (std::int64_t v : {2, 3, 4})
      for (std::int64_t m : {p, 2 * p, 3 * p, 5 * p})
        EXPECT_EQ(peak_of(passes::pipeline_schedule(p, v, m).front()), std::min(p * v + p - 1, m * v)) << "p=" << p << " v=" << v << " m=" << m;
}

// ---- Megatron-LM bytes per parameter -------------------------------------------------------------

/// Megatron's table: bf16 18 / 6 + 12/d, fp16 20 / 4 + 16/d, fp32 16 / 8 + 8/d.
Rat megatron_bytes_per_parameter(DType dt, bool distributed, std::int64_t d) {
  switch (dt) {
    case DType::BF16: return distributed ? Rat(6) + make_rat(12, d) : Rat(18);
    case DType::FP16: return distributed ? Rat(4) + make_rat(16, d) : Rat(20);
    default: return distributed ? Rat(8) + make_rat(8, d) : Rat(16);
  }
}

TEST(Megatron, BytesPerParameterTable) {
  for (DType dt : {DType::BF16, DType::FP16, DType::FP32})
    for (bool dist : {false, true})
      for (std::int64_t d : {1, 2, 3, 8}) {
        auto b = passes::bytes_per_parameter(dt, dist, d);
        EXPECT_EQ(b[0] + b[1] + b[2], megatron_bytes_per_parameter(dt, dist, d)) << frontend::to_string(dt) << " dist=" << dist << " d=" << d;
      }
}

TEST(Megatron, BytesPerParameterOfEveryStageFromTheMemoryFacts) {
  // Block parameters per rank (biases, LayerNorm, F = 4h): column-parallel QKV and fc1 with
  // their biases split over t, row-parallel proj and fc2 split with replicated biases, and
  // the two LayerNorms replicated: 12h^2/t + 7h/t + 6h per layer.
  const std::int64_t h = 64, a = 8, l = 4;
  for (DType dt : {DType::BF16, DType::FP16, DType::FP32})
    for (bool dist : {false, true})
      for (std::int64_t d : {1, 2, 4})
        for (std::int64_t t : {1, 2}) {
          SCOPED_TRACE(std::string(frontend::to_string(dt)) + " dist=" + std::to_string(dist) + " d=" + std::to_string(d) + " t=" + std::to_string(t));
          Knobs k{.tp = t, .pp = 2, .dp = d, .microbatches = 2, .dtype = dt, .distributed_optimizer = dist};
          const Chain chain = derive(gpt(l, h, a, std::nullopt), strategy(k), symbolic_workload());
          ASSERT_COMMITTED(chain);
          const Expr per_rank = Expr(l / 2) * Expr(make_rat(12 * h * h + 7 * h, t) + Rat(6 * h));
          const auto bpp = passes::bytes_per_parameter(dt, dist, d);
          for (std::int64_t st = 0; st < 2; ++st) {
            const auto& p = chain.portable->payload();
            const MemoryFact *w = fact(p, st, MemoryCategory::weights), *g = fact(p, st, MemoryCategory::weight_gradients),
                             *o = fact(p, st, MemoryCategory::optimizer_state);
            ASSERT_TRUE(w && g && o);
            const Expr sum = w->bytes + g->bytes + o->bytes;
            const auto ratio = sum.constant();
            ASSERT_TRUE(ratio && per_rank.constant());
            EXPECT_EQ(*ratio / *per_rank.constant(), megatron_bytes_per_parameter(dt, dist, d)) << sum.str() << " / " << per_rank.str();
            EXPECT_EQ(w->bytes, per_rank * Expr(bpp[0]));
            EXPECT_EQ(g->bytes, per_rank * Expr(bpp[1]));
            EXPECT_EQ(o->bytes, per_rank * Expr(bpp[2]));
          }
        }
}

TEST(Megatron, BytesPerParameterOfTheEmbeddingAndHeadStages) {
  // With a vocabulary (tied, vocabulary-parallel) and symbolic positions: stage 0 holds the
  // embedding Vh/t and the position table Sh; the last stage the final norm 2h and its own
  // copy of the tied embedding Vh/t (Megatron-LM keeps one on each end of the pipeline).
  const std::int64_t h = 64, a = 8, l = 4, V = 512;
  for (DType dt : {DType::BF16, DType::FP16, DType::FP32})
    for (bool dist : {false, true})
      for (std::int64_t t : {1, 4}) {
        const std::int64_t d = 2;
        SCOPED_TRACE(std::string(frontend::to_string(dt)) + " dist=" + std::to_string(dist) + " t=" + std::to_string(t));
        Knobs k{.tp = t, .pp = 2, .dp = d, .microbatches = 2, .dtype = dt, .distributed_optimizer = dist};
        const Chain chain = derive(gpt(l, h, a, V), strategy(k), symbolic_workload());
        ASSERT_COMMITTED(chain);
        const Expr block = Expr(l / 2) * Expr(make_rat(12 * h * h + 7 * h, t) + Rat(6 * h));
        const Expr first = block + Expr(make_rat(V * h, t)) + S * Expr(h);
        const Expr last = block + Expr(2 * h) + Expr(make_rat(V * h, t));
        const auto& p = chain.portable->payload();
        const Rat bpp = megatron_bytes_per_parameter(dt, dist, d);
        for (auto [st, params] : {std::pair<std::int64_t, Expr>{0, first}, {1, last}}) {
          const Expr sum = fact(p, st, MemoryCategory::weights)->bytes + fact(p, st, MemoryCategory::weight_gradients)->bytes +
                           fact(p, st, MemoryCategory::optimizer_state)->bytes;
          EXPECT_EQ(sum, params * Expr(bpp)) << "stage " << st << ": " << sum.str();
        }
      }
}

}  // namespace
}  // namespace plancert::testing
