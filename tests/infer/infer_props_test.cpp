// SPDX-License-Identifier: Apache-2.0
// Properties of the inference derivation over random models (MHA / GQA / MQA, gated or not,
// RoPE or learned positions), phases, batches, contexts and degrees: the outputs pass the
// gate, work and memory are conserved, the capacity boundary is exact, the max-batch solver
// agrees with the gate, and mutations are rejected with the code of the law they break.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "tests/infer/infer_support.h"

#include "passes/emit/emit.h"
#include "passes/infer/solve.h"
#include "passes/train/model_builder.h"
#include "verifiers/verify.h"

namespace plancert::test {
namespace {

using passes::InferPhase;

struct Case {
  frontend::ModelConfig model;
  InferPhase phase = InferPhase::decode;
  std::int64_t batch = 1, context = 1, tp = 1, pp = 1;
};

std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t up_to) {
  std::vector<std::int64_t> out;
  for (std::int64_t k = 1; k <= std::min(n, up_to); ++k)
    if (n % k == 0) out.push_back(k);
  return out;
}

rc::Gen<Case> cases() {
  return rc::gen::exec([] {
    Case k;
    auto& m = k.model;
    m.name = "random";
    m.heads = *rc::gen::element<std::int64_t>(1, 2, 4, 8);
    m.kv_heads = *rc::gen::elementOf(divisors(m.heads, m.heads));  // MHA (k = a), GQA, MQA (k = 1)
    m.head_dim = *rc::gen::element<std::int64_t>(4, 8, 16);
    m.hidden = m.heads * m.head_dim;
    m.ffn = 8 * *rc::gen::inRange<std::int64_t>(1, 9);
    m.layers = *rc::gen::inRange<std::int64_t>(1, 5);
    m.gated_mlp = *rc::gen::arbitrary<bool>();
    m.activation = m.gated_mlp ? frontend::Activation::SwiGlu : *rc::gen::element(frontend::Activation::Gelu, frontend::Activation::Relu);
    m.norm = *rc::gen::element(frontend::NormKind::LayerNorm, frontend::NormKind::RmsNorm);
    m.biases = *rc::gen::arbitrary<bool>();
    if (*rc::gen::arbitrary<bool>()) {
      m.vocab = 8 * *rc::gen::inRange<std::int64_t>(1, 9);
      m.tied_embeddings = *rc::gen::arbitrary<bool>();
      m.learned_positions = *rc::gen::arbitrary<bool>();
      if (m.learned_positions) m.max_positions = 16;
    }
    m.rope = !m.learned_positions && *rc::gen::arbitrary<bool>();
    std::vector<std::int64_t> tps;
    for (std::int64_t t : {1, 2, 4, 8})
      if (m.heads % t == 0 && (m.kv_heads % t == 0 || t % m.kv_heads == 0)) tps.push_back(t);
    k.tp = *rc::gen::elementOf(tps);
    k.pp = *rc::gen::elementOf(divisors(m.layers, m.layers));
    k.phase = *rc::gen::element(InferPhase::prefill, InferPhase::decode);
    k.batch = *rc::gen::inRange<std::int64_t>(1, 5);
    k.context = *rc::gen::inRange<std::int64_t>(1, 13);
    return k;
  });
}

passes::InferenceRequest req(const Case& k, Int capacity = Int(1) << 50) { return request(k.model, k.phase, k.batch, k.context, k.tp, k.pp, capacity); }

passes::InferenceChain must_certify(const passes::InferenceRequest& r) {
  auto c = passes::derive_inference(r);
  if (!c.certified()) RC_FAIL("the gate refused " + c.rejected_pass + ":\n" + render(c.rejection));
  return c;
}

Diagnostics commit(const passes::InferenceChain& c, const DistributedTaskIR& d) {
  auto r = Gate::commit(*c.model, make_snapshot(d, {c.model->digest()}));
  return std::holds_alternative<Rejection>(r) ? std::get<Rejection>(r).diagnostics : Diagnostics{};
}
Diagnostics commit(const passes::InferenceChain& c, const PortablePlanIR& p) {
  auto r = Gate::commit(*c.dist, make_snapshot(p, {c.dist->digest()}));
  return std::holds_alternative<Rejection>(r) ? std::get<Rejection>(r).diagnostics : Diagnostics{};
}

template <class T>
std::size_t index_of(const std::vector<T>& tasks, const std::string& id) {
  for (std::size_t i = 0; i < tasks.size(); ++i)
    if (tasks[i].id == id) return i;
  RC_FAIL("no task " + id);
}

RC_GTEST_PROP(InferDerivation, PassesTheGate, ()) {
  const Case k = *cases();
  RC_CLASSIFY(k.model.kv_heads == k.model.heads, "MHA");
  RC_CLASSIFY(k.model.kv_heads == 1 && k.model.heads > 1, "MQA");
  RC_CLASSIFY(k.tp > k.model.kv_heads, "KV heads replicated (t > k)");
  RC_CLASSIFY(k.pp > 1, "pipeline");
  RC_CLASSIFY(k.model.gated_mlp, "gated MLP");
  RC_CLASSIFY(k.phase == InferPhase::prefill, "prefill");
  must_certify(req(k));
}

RC_GTEST_PROP(InferDerivation, ConservesWorkAndStatesExactMemory, ()) {
  const Case k = *cases();
  const auto c = must_certify(req(k));
  const auto& m = c.model->payload();
  Expr model_matrix, model_vector, dist_matrix, dist_vector;
  for (const auto& op : m.operations) model_matrix += op.work.matrix_ops, model_vector += op.work.vector_ops;
  for (const auto& t : c.dist->payload().tasks)
    if (t.kind == TaskKind::compute) {
      const Expr share(make_rat(static_cast<std::int64_t>(t.ranks.size()) * t.repeat, t.replication));
      dist_matrix += t.work.matrix_ops * share, dist_vector += t.work.vector_ops * share;
    }
  RC_ASSERT(dist_matrix == model_matrix);
  RC_ASSERT(dist_vector == model_vector);
  // portable tasks copy the work vectors
  for (std::size_t i = 0; i < c.plan->payload().tasks.size(); ++i) RC_ASSERT(c.plan->payload().tasks[i].work.matrix_ops == c.dist->payload().tasks[i].work.matrix_ops);
  // per stage: 2 b c l_s max(k/t, 1) d e of KV cache, the seed's workspace, total = sum
  const auto& a = k.model;
  const std::int64_t e = passes::dtype_bytes(frontend::to_string(passes::inference_dtype(a))), q = k.phase == InferPhase::prefill ? k.context : 1;
  const Int kv_per_rank = a.kv_heads >= k.tp ? a.kv_heads / k.tp : 1;
  const Rat widest = std::max({Rat(3 * k.batch * q * a.hidden) / k.tp, Rat(k.batch * a.heads * q * k.context) / k.tp, Rat(k.batch * q * a.ffn) / k.tp});
  for (std::int64_t s = 0; s < k.pp; ++s) {
    const auto& p = c.plan->payload();
    RC_ASSERT(fact(p, s, MemoryCategory::kv_cache)->bytes == Expr(Int(2) * k.batch * k.context * (a.layers / k.pp) * kv_per_rank * a.head_dim * e));
    RC_ASSERT(fact(p, s, MemoryCategory::workspace)->bytes == Expr(Rat(k.batch * q * a.hidden * e) + Rat(e) * widest));
    RC_ASSERT(fact(p, s, MemoryCategory::total)->bytes ==
              fact(p, s, MemoryCategory::weights)->bytes + fact(p, s, MemoryCategory::kv_cache)->bytes + fact(p, s, MemoryCategory::workspace)->bytes);
  }
  // every weight of the model is held by some stage (over its t ranks at least once)
  Expr held, weights;
  for (const auto& v : m.values)
    if (v.role == ValueRole::weight) weights += passes::elements(v) * Expr(e);
  for (std::int64_t s = 0; s < k.pp; ++s) held += fact(c.plan->payload(), s, MemoryCategory::weights)->bytes * Expr(k.tp);
  RC_ASSERT(*(held - weights).constant() >= 0);
}

RC_GTEST_PROP(InferDerivation, CapacityBoundaryIsExact, ()) {
  const Case k = *cases();
  const auto c = must_certify(req(k));
  Int peak = 0;
  for (const auto& f : c.plan->payload().memory)
    if (f.category == MemoryCategory::total) peak = std::max(peak, numerator(*f.bytes.constant()));
  must_certify(req(k, peak));  // exactly full fits
  const auto over = passes::derive_inference(req(k, peak - 1));
  RC_ASSERT(!over.certified());
  for (const auto& d : over.rejection.all()) RC_ASSERT(d.code == std::string("CAPM-2"));  // one per fullest stage
  RC_ASSERT(over.rejection.count() >= 1u);
}

RC_GTEST_PROP(InferDerivation, MaxBatchAgreesWithTheGate, ()) {
  Case k = *cases();
  const auto c = must_certify(req(k));
  Int peak = 0;
  for (const auto& f : c.plan->payload().memory)
    if (f.category == MemoryCategory::total) peak = std::max(peak, numerator(*f.bytes.constant()));
  const Int capacity = peak + *rc::gen::inRange<std::int64_t>(0, 1 << 16);
  auto r = req(k, capacity);
  const auto best = passes::largest_inference(r, passes::Unknown::batch, Int(1) << 20);
  RC_ASSERT(best.value >= k.batch);  // the batch we derived fits
  r.batch = best.value;
  must_certify(r);
  r.batch = best.value + 1;
  const auto next = passes::derive_inference(r);
  RC_ASSERT(!next.certified());
  RC_ASSERT(next.rejection.has("CAPM-2"));
}

RC_GTEST_PROP(InferMutations, DroppedKvWriteIsRejectedByEffect, ()) {
  const Case k = *cases();
  const auto c = must_certify(req(k));
  const std::string layer = "L" + std::to_string(*rc::gen::inRange<std::int64_t>(0, k.model.layers));
  auto d = c.dist->payload();
  d.tasks[index_of(d.tasks, "op:" + layer + ".cache")].effects.clear();
  RC_ASSERT(commit(c, d).has("EFFECT-2"));
  auto p = c.plan->payload();
  p.tasks[index_of(p.tasks, "p:op:" + layer + ".cache")].effects.clear();
  RC_ASSERT(commit(c, p).has("EFFECT-2"));
  // dropping the reads too is still caught by the transition (the effects are the model's)
  for (auto& t : d.tasks) t.effects.clear();
  const auto diag = commit(c, d);
  RC_ASSERT(diag.has("EFFECT-1"));
}

RC_GTEST_PROP(InferMutations, ReadMovedBeforeItsWriteIsRejectedByEffect, ()) {
  const Case k = *cases();
  const auto c = must_certify(req(k));
  const std::string layer = "L" + std::to_string(*rc::gen::inRange<std::int64_t>(0, k.model.layers));
  const std::string reader = *rc::gen::element<std::string>("score", "context");
  auto move = [&](auto tasks, const std::string& prefix) {
    auto w = index_of(tasks, prefix + layer + ".cache"), r = index_of(tasks, prefix + layer + "." + reader);
    RC_ASSERT(!tasks[w].dependencies.empty());
    auto before = static_cast<std::size_t>(tasks[w].dependencies.front());
    tasks[before].effects.insert(tasks[before].effects.end(), tasks[r].effects.begin(), tasks[r].effects.end());
    tasks[r].effects.clear();
    return tasks;
  };
  auto d = c.dist->payload();
  d.tasks = move(d.tasks, "op:");
  RC_ASSERT(commit(c, d).has("EFFECT-2"));
  auto p = c.plan->payload();
  p.tasks = move(p.tasks, "p:op:");
  RC_ASSERT(commit(c, p).has("EFFECT-2"));
}

RC_GTEST_PROP(InferMutations, ShrunkWorkspaceIsRejectedByWs, ()) {
  const Case k = *cases();
  const auto c = must_certify(req(k));
  auto p = c.plan->payload();
  const std::int64_t stage = *rc::gen::inRange<std::int64_t>(0, k.pp);
  const auto ws = static_cast<std::size_t>(fact(p, stage, MemoryCategory::workspace)->buffers.front());
  const Int size = numerator(*p.buffers[ws].size.constant());
  const Int delta = *rc::gen::inRange<std::int64_t>(1, static_cast<std::int64_t>(std::min(size, Int(1) << 20)) + 1);
  p.buffers[ws].size = p.buffers[ws].size - Expr(delta);
  for (auto& f : p.memory)  // keep the facts consistent: only the bound is broken
    if (f.stage == stage && (f.category == MemoryCategory::workspace || f.category == MemoryCategory::total)) f.bytes = f.bytes - Expr(delta);
  const auto diag = commit(c, p);
  RC_ASSERT(diag.has("WS-2"));
  RC_ASSERT(diag.count() == 1u);
}

RC_GTEST_PROP(Solver, LargestFittingMatchesBruteForce, ()) {
  const Expr x = Expr::symbol("x");
  const auto coef = [] { return Expr(make_rat(*rc::gen::inRange<std::int64_t>(0, 50), *rc::gen::inRange<std::int64_t>(1, 9))); };
  Expr f = coef() + coef() * x + coef() * x * x;
  if (*rc::gen::arbitrary<bool>()) f += Expr(*rc::gen::inRange<std::int64_t>(1, 4)) * Expr::max(coef() * x, Expr::max(coef(), coef() * x * x));
  const Int cap = *rc::gen::inRange<std::int64_t>(0, 5000), limit = 3000;
  Int want = -1;
  for (Int v = 0; v <= limit; ++v) {
    if (*f.eval([&](std::string_view) { return std::optional<Rat>(Rat(v)); }) > Rat(cap)) break;
    want = v;
  }
  const auto got = passes::largest_fitting(f, "x", cap, limit);
  RC_ASSERT(got.has_value());
  RC_ASSERT(*got == want);
}

}  // namespace
}  // namespace plancert::test
