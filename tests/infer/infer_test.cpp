// SPDX-License-Identifier: Apache-2.0
// Inference derivation: published KV-cache figures, the seed's closed forms, memory against
// the H100 system, the exact max-batch / max-context solver, the CLI's bad inputs, and
// mutations rejected by KV, WS, EFFECT and CAPM.
#include "tests/infer/infer_support.h"

#include "cli/commands.h"
#include "cli/infer_cmd.h"
#include "passes/emit/emit.h"
#include "passes/infer/solve.h"
#include "passes/train/model_builder.h"
#include "spec/checked.h"
#include "verifiers/verify.h"

#include <gtest/gtest.h>

namespace plancert::test {
namespace {

using passes::InferPhase;
using passes::Unknown;

const Int kH100 = h100_capacity();

Expr sum_matrix(const ModelIR& m) {
  Expr s;
  for (const auto& op : m.operations) s += op.work.matrix_ops;
  return s;
}

// 2 x the weights of every matrix product a token passes through (no embedding lookup).
Int product_weights(const frontend::ModelConfig& c) {
  Int h = c.hidden, f = c.ffn, a = c.heads, k = c.kv_heads, d = c.head_dim;
  Int per_layer = h * (a + 2 * k) * d + a * d * h + (c.gated_mlp ? 3 : 2) * h * f;
  return per_layer * c.layers + (c.vocab ? h * *c.vocab : Int(0));
}

const passes::InferenceChain& certified(const passes::InferenceChain& c) {
  EXPECT_TRUE(c.certified()) << c.rejected_pass << "\n" << render(c.rejection);
  return c;
}

// ---- published figures ---------------------------------------------------------------------

TEST(KvCache, BytesPerTokenOfPublishedModels) {
  for (const auto& [name, bytes] : std::vector<std::pair<std::string, int>>{{"llama-2-7b", 524288}, {"llama-3-70b", 327680}, {"opt-13b", 819200}}) {
    SCOPED_TRACE(name);
    const auto c = certified(passes::derive_inference(request(hf(name), InferPhase::decode, 2, 16)));
    ASSERT_TRUE(c.certified());
    Expr state;
    for (const auto& v : c.model->payload().values)
      if (v.role == ValueRole::state) state += passes::elements(v) * Expr(passes::dtype_bytes(v.dtype));
    EXPECT_EQ(state, Expr(Int(bytes) * 2 * 16));
    EXPECT_EQ(fact(c.plan->payload(), 0, MemoryCategory::kv_cache)->bytes, Expr(Int(bytes) * 2 * 16));  // t = 1: the whole cache
  }
}

TEST(KvCache, ReplicatedHeadsWhenTExceedsKvHeads) {
  // Llama 3 8B: k = 8 KV heads over t = 16 ranks: one KV head (d = 128) per rank.
  const auto m = hf("llama-3-8b");
  const auto c = certified(passes::derive_inference(request(m, InferPhase::decode, 3, 100, 16)));
  ASSERT_TRUE(c.certified());
  EXPECT_EQ(fact(c.plan->payload(), 0, MemoryCategory::kv_cache)->bytes, Expr(Int(2) * 3 * 100 * m.layers * 1 * 128 * 2));
  // the KV projection is replicated over t/k = 2 ranks and its work summed over ranks is exact
  for (const auto& t : c.dist->payload().tasks)
    if (t.id == "op:L0.kv") {
      EXPECT_EQ(t.replication, 2);
      EXPECT_EQ(t.work.matrix_ops * Expr(make_rat(16, 2)), Expr(Int(2) * 3 * 4096 * 2 * 8 * 128));
    }
}

TEST(DecodeFlops, TwoTimesProductWeightsPlusAttentionPerToken) {
  for (const std::string name : {"llama-2-7b", "llama-3-70b", "opt-13b", "llama-3-8b"}) {
    SCOPED_TRACE(name);
    const auto cfg = hf(name);
    for (std::int64_t ctx : {1, 777, 4096}) {
      const auto m = passes::build_inference_model_ir(cfg, passes::InferenceWorkload{InferPhase::decode, Expr(1), Expr(ctx), {}}, frontend::DType::BF16);
      EXPECT_EQ(sum_matrix(m), Expr(Int(2) * product_weights(cfg) + Int(4) * ctx * cfg.hidden * cfg.layers));
    }
    // independent of the KV-head count: the attention term stays 4 c h per layer
    auto mqa = cfg;
    mqa.kv_heads = 1;
    const auto a = passes::build_inference_model_ir(cfg, passes::InferenceWorkload{InferPhase::decode, Expr(1), Expr(512), {}}, frontend::DType::BF16);
    const auto b = passes::build_inference_model_ir(mqa, passes::InferenceWorkload{InferPhase::decode, Expr(1), Expr(512), {}}, frontend::DType::BF16);
    EXPECT_EQ(sum_matrix(a) - Expr(Int(2) * product_weights(cfg)), sum_matrix(b) - Expr(Int(2) * product_weights(mqa)));
  }
}

// ---- the seed's per-rank closed forms --------------------------------------------------------

TEST(SeedFormulas, PerRankWorkOfOneBlock) {
  for (auto phase : {InferPhase::prefill, InferPhase::decode})
    for (const std::string name : {"opt-13b", "llama-3-70b"}) {
      SCOPED_TRACE(name + " " + std::string(passes::to_string(phase)));
      const auto cfg = hf(name);
      const std::int64_t b = 4, c = 64, t = 8, q = phase == InferPhase::prefill ? c : 1;
      const auto ch = certified(passes::derive_inference(request(cfg, phase, b, c, t)));
      ASSERT_TRUE(ch.certified());
      const Int H = cfg.hidden, F = cfg.ffn, a = cfg.heads, k = cfg.kv_heads, d = cfg.head_dim;
      std::map<std::string, const DistTask*> task;
      for (const auto& x : ch.dist->payload().tasks) task[x.id] = &x;
      auto W = [&](const char* id) { return task.at(std::string("op:L0.") + id)->work; };
      EXPECT_EQ(W("score").matrix_ops + W("context").matrix_ops, Expr(make_rat(Int(4) * b * q * c * H, t)));  // 4bqcH/t
      EXPECT_EQ(W("softmax").vector_ops, Expr(make_rat(Int(5) * b * a * q * c, t)));                        // 5b(a/t)qc
      EXPECT_EQ(W("proj").matrix_ops, Expr(make_rat(Int(2) * b * q * H * H, t)));                           // 2bqH^2/t
      if (k == a) {
        EXPECT_EQ(W("qkv").matrix_ops, Expr(make_rat(Int(6) * b * q * H * H, t)));  // 6bqH^2/t
      } else {  // 2bqH^2/t + 4bqH(kd)/t of logical work per rank
        const DistTask* kv = task.at("op:L0.kv");
        EXPECT_EQ(W("q").matrix_ops + kv->work.matrix_ops * Expr(make_rat(static_cast<std::int64_t>(kv->ranks.size()), kv->replication * t)),
                  Expr(make_rat(Int(2) * b * q * H * H + Int(4) * b * q * H * k * d, t)));
      }
      Expr mlp = cfg.gated_mlp ? W("gate").matrix_ops + W("up").matrix_ops + W("down").matrix_ops : W("fc1").matrix_ops + W("fc2").matrix_ops;
      EXPECT_EQ(mlp, Expr(make_rat(Int(cfg.gated_mlp ? 6 : 4) * b * q * H * F, t)));
      // the workspace is the seed's conservative unfused bound
      const Int e = 2, D = Int(b) * q * H * e;
      const Int widest = std::max({Int(3) * b * q * H / t, Int(b) * (a / t) * q * c, Int(b) * q * F / t});
      EXPECT_EQ(fact(ch.plan->payload(), 0, MemoryCategory::workspace)->bytes, Expr(Int(D + e * widest)));
    }
}

// ---- memory against the H100 system ----------------------------------------------------------

TEST(Capacity, Llama3_70bDecodeFitsOnEightH100) {
  const auto c = certified(passes::derive_inference(request(hf("llama-3-70b"), InferPhase::decode, 64, 8192, 8, 1, kH100)));
  ASSERT_TRUE(c.certified());
  const auto& p = c.plan->payload();
  EXPECT_EQ(fact(p, 0, MemoryCategory::kv_cache)->bytes, Expr(Int(2) * 64 * 8192 * 80 * 1 * 128 * 2));
  EXPECT_EQ(fact(p, 0, MemoryCategory::workspace)->bytes, Expr(Int(64) * 8192 * 2 + 2 * Int(64) * 8 * 8192));
  EXPECT_EQ(fact(p, 0, MemoryCategory::capacity)->bytes, Expr(kH100));
  for (auto id : {"KV-1", "KV-2", "WS-1", "WS-2", "EFFECT-1", "EFFECT-2", "EFFECT-3", "EFFECT-4", "CAPM-1", "CAPM-2", "WORK-1", "WORK-2", "VOL-1"}) {
    const auto& d = obligations_checked(1, true);
    const auto& q = obligations_checked(2, true);
    EXPECT_TRUE(std::find(d.begin(), d.end(), id) != d.end() || std::find(q.begin(), q.end(), id) != q.end()) << id;
  }
}

TEST(Capacity, Llama3_70bDecodeOnOneH100IsRejectedByCapmWithTheFigures) {
  const auto c = passes::derive_inference(request(hf("llama-3-70b"), InferPhase::decode, 64, 8192, 1, 1, kH100));
  ASSERT_FALSE(c.certified());
  EXPECT_EQ(c.rejected_pass, "PlanTransformerInferencePass");
  ASSERT_TRUE(c.rejection.has("CAPM-2")) << render(c.rejection);
  EXPECT_EQ(c.rejection.count(), 1u) << render(c.rejection);
  const std::string msg = c.rejection.all().front().message;
  EXPECT_NE(msg.find(to_string(kH100)), std::string::npos) << msg;                                   // the capacity
  EXPECT_NE(msg.find("kv_cache " + to_string(Int(2) * 64 * 8192 * 80 * 8 * 128 * 2)), std::string::npos) << msg;  // the KV cache
  EXPECT_NE(msg.find("weights "), std::string::npos) << msg;
}

TEST(Capacity, PipelineStagesSplitLayersAndCache) {
  const auto c = certified(passes::derive_inference(request(hf("llama-2-7b"), InferPhase::prefill, 2, 128, 2, 4, kH100)));
  ASSERT_TRUE(c.certified());
  for (std::int64_t s = 0; s < 4; ++s)  // 8 layers per stage, 32 heads over t = 2
    EXPECT_EQ(fact(c.plan->payload(), s, MemoryCategory::kv_cache)->bytes, Expr(Int(2) * 2 * 128 * 8 * 16 * 128 * 2)) << s;
}

// ---- the exact solver ------------------------------------------------------------------------

TEST(Solver, ClosedFormsMatchBruteForce) {
  const Expr x = Expr::symbol("x");
  const std::vector<Expr> fs = {Expr(7) * x + Expr(100), Expr(3) * x * x + Expr(5) * x + Expr(11), Expr(make_rat(1, 3)) * x * x,
                                Expr(9) + Expr(2) * Expr::max(Expr(40), Expr(3) * x), Expr(5) * x + Expr(2) * Expr::max(Expr::max(Expr(50), x * x), Expr(7) * x)};
  for (const auto& f : fs)
    for (int cap : {0, 10, 99, 100, 1000, 12345}) {
      Int want = -1;
      for (Int v = 0; v <= 20000; ++v)
        if (*f.eval([&](std::string_view) { return std::optional<Rat>(Rat(v)); }) <= cap) want = v;
        else break;
      EXPECT_EQ(*passes::largest_fitting(f, "x", cap, 20000), want) << f.str() << " <= " << cap;
    }
  EXPECT_FALSE(passes::largest_fitting(Expr::symbol("x") - Expr::symbol("y"), "x", 5, 10));  // not univariate
  EXPECT_FALSE(passes::max_branches(Expr(-1) * Expr::max(Expr::symbol("x"), Expr(3))));      // max with a negative coefficient
}

void expect_confirmed(passes::InferenceRequest r, Unknown u, const Int& limit) {
  const auto best = passes::largest_inference(r, u, limit);
  ASSERT_GE(best.value, 1);
  Int& x = u == Unknown::batch ? r.batch : r.context;
  x = best.value;
  EXPECT_TRUE(passes::derive_inference(r).certified()) << "the answer must fit";
  x = best.value + 1;
  if (x > limit) { EXPECT_TRUE(best.by_limit); return; }
  const auto next = passes::derive_inference(r);
  EXPECT_FALSE(next.certified()) << "the answer + 1 must not fit";
  EXPECT_TRUE(next.rejection.has("CAPM-2")) << render(next.rejection);
}

TEST(Solver, MaxBatchOfLlama3_70bDecodeIsExactAndConfirmed) {
  auto r = request(hf("llama-3-70b"), InferPhase::decode, 1, 8192, 8, 1, kH100);
  const auto best = passes::largest_inference(r, Unknown::batch, Int(1) << 30);
  // affine in b: weights W + b (KV 2 c l d e + workspace (H e + e max(3H/t, (a/t) c, F/t)))
  const auto c = certified(passes::derive_inference(r));
  const Expr W = fact(c.plan->payload(), 0, MemoryCategory::weights)->bytes;
  const Int slope = Int(2) * 8192 * 80 * 128 * 2 + (8192 * 2 + 2 * Int(8) * 8192);
  EXPECT_EQ(best.value, (kH100 - numerator(*W.constant())) / slope);
  expect_confirmed(r, Unknown::batch, Int(1) << 30);
}

TEST(Solver, MaxContextOfPrefillIsQuadraticAndConfirmed) {
  // Llama 2 7B prefill of 24 sequences on one H100: the score workspace grows with c^2.
  expect_confirmed(request(hf("llama-2-7b"), InferPhase::prefill, 24, 1, 1, 1, kH100), Unknown::context, 4096);
  // with 8 sequences everything fits up to the model's 4096 positions
  const auto small = passes::largest_inference(request(hf("llama-2-7b"), InferPhase::prefill, 8, 1, 1, 1, kH100), Unknown::context, 4096);
  EXPECT_EQ(small.value, 4096);
  EXPECT_TRUE(small.by_limit);
  expect_confirmed(request(hf("opt-13b"), InferPhase::decode, 200, 1, 2, 2, kH100), Unknown::context, 2048);
}

// ---- the CLI's bad inputs (exit 2, CONFIG codes) ---------------------------------------------

void expect_config(cli::InferOptions o, const std::string& code, const std::string& part) {
  try {
    cli::run_certify_inference(o);
    ADD_FAILURE() << "expected " << code;
  } catch (const InputError& e) {
    EXPECT_EQ(e.diag.code, code) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    EXPECT_EQ(cli::exit_for_code(e.diag.code), Exit::BadInput);
  }
}

TEST(Cli, BadInputsGiveConfigCodes) {
  cli::InferOptions o;
  o.model = source_path("examples/hf/llama-2-7b.config.json").string();
  o.phase = "decode";
  o.batch = "8";
  o.context = "1024";
  auto with = [&](auto f) { auto x = o; f(x); return x; };
  expect_config(with([](auto& x) { x.batch = "0"; }), "CONFIG-4", "--batch 0");
  expect_config(with([](auto& x) { x.batch = "many"; }), "CONFIG-3", "--batch");
  expect_config(with([](auto& x) { x.context = "4097"; }), "CONFIG-5", "maximum positions");
  expect_config(with([](auto& x) { x.tp = "3"; }), "CONFIG-5", "--tp");
  expect_config(with([](auto& x) { x.pp = "5"; }), "CONFIG-5", "--pp");
  expect_config(with([](auto& x) { x.tp = "65536", x.pp = "32768"; }), "CONFIG-4", "--tp x --pp must be at most 2^31 - 1");  // 2^31 ranks
  expect_config(with([](auto& x) { x.phase = "train"; }), "CONFIG-6", "prefill or decode");
  expect_config(with([](auto& x) { x.phase = ""; }), "CONFIG-2", "--phase");
  expect_config(with([](auto& x) { x.context = ""; }), "CONFIG-2", "--context");
  expect_config(with([](auto& x) { x.max_batch = true; }), "CONFIG-5", "--max-batch");
  expect_config(with([](auto& x) { x.strategy = "s.toml"; }), "CONFIG-6", "training strategy");
}

// ---- deterministic mutations -----------------------------------------------------------------

frontend::ModelConfig tiny(std::int64_t heads, std::int64_t kv_heads, bool gated) {
  frontend::ModelConfig m;
  m.name = "tiny";
  m.hidden = heads * 8;
  m.head_dim = 8;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn = 64;
  m.layers = 2;
  m.vocab = 32;
  m.norm = gated ? frontend::NormKind::RmsNorm : frontend::NormKind::LayerNorm;
  m.activation = gated ? frontend::Activation::SwiGlu : frontend::Activation::Gelu;
  m.gated_mlp = m.rope = gated;
  return m;
}

Diagnostics commit_portable(const passes::InferenceChain& c, PortablePlanIR p) {
  auto r = Gate::commit(*c.dist, make_snapshot(std::move(p), {c.dist->digest()}));
  return std::holds_alternative<Rejection>(r) ? std::get<Rejection>(r).diagnostics : Diagnostics{};
}
Diagnostics commit_dist(const passes::InferenceChain& c, DistributedTaskIR d) {
  auto r = Gate::commit(*c.model, make_snapshot(std::move(d), {c.model->digest()}));
  return std::holds_alternative<Rejection>(r) ? std::get<Rejection>(r).diagnostics : Diagnostics{};
}

TEST(Mutations, RejectedWithTheirCode) {
  const auto c = certified(passes::derive_inference(request(tiny(4, 2, true), InferPhase::decode, 2, 5, 4)));
  ASSERT_TRUE(c.certified());
  const auto& d0 = c.dist->payload();
  const auto& p0 = c.plan->payload();
  auto index = [](const auto& tasks, const std::string& id) {
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].id == id) return i;
    return SIZE_MAX;
  };
  {  // drop a KV write: the reads have no writer
    auto d = d0;
    d.tasks[index(d.tasks, "op:L1.cache")].effects.clear();
    auto diag = commit_dist(c, d);
    EXPECT_TRUE(diag.has("EFFECT-2")) << render(diag);
    auto p = p0;
    p.tasks[index(p.tasks, "p:op:L1.cache")].effects.clear();
    diag = commit_portable(c, p);
    EXPECT_TRUE(diag.has("EFFECT-2")) << render(diag);
  }
  {  // move a read before its write: the K read goes to the task before the cache write
    auto d = d0;
    auto w = index(d.tasks, "op:L0.cache"), r = index(d.tasks, "op:L0.score");
    auto before = static_cast<std::size_t>(d.tasks[w].dependencies.front());
    d.tasks[before].effects = d.tasks[r].effects;
    d.tasks[r].effects.clear();
    auto diag = commit_dist(c, d);
    EXPECT_TRUE(diag.has("EFFECT-2")) << render(diag);
  }
  {  // a read that does not depend directly on its writer
    auto p = p0;
    const auto r = index(p.tasks, "p:op:L0.context");
    const auto w = static_cast<Index>(index(p.tasks, "p:op:L0.cache"));
    auto& deps = p.tasks[r].dependencies;
    deps.erase(std::remove(deps.begin(), deps.end(), w), deps.end());
    auto diag = commit_portable(c, p);
    EXPECT_TRUE(diag.has("EFFECT-2")) << render(diag);
  }
  {  // shrink the workspace (facts kept consistent, so only WS fires)
    auto p = p0;
    std::size_t ws = 0;
    while (p.buffers[ws].role != BufferRole::workspace) ++ws;
    p.buffers[ws].size = p.buffers[ws].size - Expr(1);
    for (auto& f : p.memory)
      if (f.stage == 0 && (f.category == MemoryCategory::workspace || f.category == MemoryCategory::total)) f.bytes = f.bytes - Expr(1);
    auto diag = commit_portable(c, p);
    EXPECT_TRUE(diag.has("WS-2")) << render(diag);
    EXPECT_EQ(diag.count(), 1u) << render(diag);
  }
  {  // shrink one KV buffer
    auto p = p0;
    std::size_t kv = 0;
    while (p.buffers[kv].role != BufferRole::kv_cache) ++kv;
    p.buffers[kv].size = p.buffers[kv].size - Expr(2);
    for (auto& f : p.memory)
      if (f.stage == 0 && (f.category == MemoryCategory::kv_cache || f.category == MemoryCategory::total)) f.bytes = f.bytes - Expr(2);
    auto diag = commit_portable(c, p);
    EXPECT_TRUE(diag.has("KV-2")) << render(diag);
  }
  {  // drop the capacity fact: nothing would be compared
    auto p = p0;
    std::erase_if(p.memory, [](const MemoryFact& f) { return f.category == MemoryCategory::capacity; });
    auto diag = commit_portable(c, p);
    EXPECT_TRUE(diag.has("CAPM-1")) << render(diag);
  }
  {  // a state value of another shape than the declared inference shape
    auto d = d0;
    d.inference->context = Expr(6);
    auto diag = commit_dist(c, d);
    EXPECT_TRUE(diag.has("KV-1")) << render(diag);
  }
  {  // an inference shape whose bound does not cover the score matrix
    auto d = d0;
    d.inference->hidden = Expr(1);
    d.inference->ffn = Expr(1);
    d.inference->heads = Expr(1);
    auto diag = commit_dist(c, d);
    EXPECT_TRUE(diag.has("WS-1")) << render(diag);
  }
}

}  // namespace
}  // namespace plancert::test
