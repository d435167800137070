// SPDX-License-Identifier: Apache-2.0
// Declared closed forms of the inference passes (DistributeTransformerInferencePass,
// PlanTransformerInferencePass) and the hooks that derive each one from the passes
// themselves: run with a symbolic workload (batch b, context c), as largest_inference() runs
// them, or at concrete b and c through the gate (derive_inference(), committed snapshots).
#include "passes/formulas/registry.h"

#include "passes/infer/distribute.h"
#include "passes/infer/model.h"
#include "passes/infer/pipeline.h"
#include "passes/infer/plan.h"

#include <initializer_list>
#include <stdexcept>

namespace plancert::formulas::detail {
namespace inference {  // a named namespace of its own: the library may be built as one unity file
namespace {

using frontend::DType;
using frontend::ModelConfig;
using passes::InferPhase;

Expr sym(const char* name) { return Expr::symbol(name); }

// ---- inputs built from the bindings ---------------------------------------------------------

// A GPT-style model (LayerNorm, biases, GeLU MLP) from the bindings: H (required); a (default
// 1); k (default a: MHA; fewer is GQA, 1 is MQA); d (default H / a); F (default 4H); l
// (default 1); V (optional: with it the model has a token embedding and an untied LM head).
ModelConfig model(const Bindings& b) {
  ModelConfig c;
  c.name = "formula-check";
  c.family = frontend::ModelFamily::Gpt;
  c.hidden = need(b, "H");
  c.heads = value_or(b, "a", 1);
  c.kv_heads = value_or(b, "k", c.heads);
  c.head_dim = value_or(b, "d", c.hidden / c.heads);
  c.ffn = value_or(b, "F", 4 * c.hidden);
  c.layers = value_or(b, "l", 1);
  if (auto it = b.find("V"); it != b.end()) c.vocab = it->second;
  c.biases = true;
  c.norm = frontend::NormKind::LayerNorm;
  c.activation = frontend::Activation::Gelu;
  return c;
}

// The instances with the model's defaults written out (a = 1, k = a, d = H / a, F = 4H,
// l = 1, t = 1, p = 1, e = 2), so that every symbol of a formula has a value; b and c stay
// unbound unless given.
std::vector<Bindings> complete(std::vector<Bindings> instances) {
  for (auto& b : instances) {
    const std::int64_t H = need(b, "H");
    b.try_emplace("a", 1);
    b.try_emplace("k", b.at("a"));
    b.try_emplace("d", H / b.at("a"));
    b.try_emplace("F", 4 * H);
    for (const char* one : {"l", "t", "p"}) b.try_emplace(one, 1);
    b.try_emplace("e", 2);
  }
  return instances;
}

// The serving dtype from e (default 2): 2 -> bf16, 4 -> fp32.
DType dtype(const Bindings& b) {
  const std::int64_t e = value_or(b, "e", 2);
  if (e != 2 && e != 4) throw std::invalid_argument("e must be 2 (bf16) or 4 (fp32)");
  return e == 2 ? DType::BF16 : DType::FP32;
}

// t and p (defaults 1).
passes::InferenceParallelism parallelism(const Bindings& b) { return {value_or(b, "t", 1), value_or(b, "p", 1)}; }

// The symbolic workload of one phase: b sequences of c tokens, both workload symbols.
passes::InferenceWorkload workload(InferPhase phase) {
  passes::InferenceWorkload w;
  w.phase = phase;
  w.batch = sym("b");
  w.context = sym("c");
  for (const char* n : {"b", "c"}) {
    Symbol s;
    s.name = n;
    s.axis = SymbolAxis::workload;
    w.symbols.push_back(s);
  }
  return w;
}

// Device memory per rank of the planned target: large enough for every instance.
const Int& capacity() {
  static const Int c = Int(1) << 40;
  return c;
}

// ---- running the passes ---------------------------------------------------------------------

struct Run {
  ModelIR model;
  DistributedTaskIR dist;
  PortablePlanIR plan;
};

// BuildInferenceModelIR, DistributeTransformerInferencePass and (with_plan)
// PlanTransformerInferencePass with symbolic b and c.
Run run(const Bindings& b, InferPhase phase, bool with_plan) {
  const ModelConfig cfg = model(b);
  const passes::InferenceWorkload w = workload(phase);
  Run r;
  r.model = passes::build_inference_model_ir(cfg, w, dtype(b));
  r.dist = passes::distribute_inference(r.model, cfg, w, parallelism(b));
  if (with_plan) r.plan = passes::plan_inference(r.model, r.dist, capacity());
  return r;
}

// The same passes at the bound b and c, each output committed through the gate.
passes::InferenceChain certified(const Bindings& b, InferPhase phase) {
  passes::InferenceRequest r;
  r.model = model(b);
  r.dtype = dtype(b);
  r.phase = phase;
  r.batch = need(b, "b");
  r.context = need(b, "c");
  r.par = parallelism(b);
  r.capacity = capacity();
  passes::InferenceChain c = passes::derive_inference(r);
  if (!c.certified()) {
    std::string why;
    for (const auto& d : c.rejection.all()) why += " " + d.code;
    throw std::runtime_error("the gate refused the output of " + c.rejected_pass + ":" + why);
  }
  return c;
}

// ---- extracting quantities ------------------------------------------------------------------

const DistTask& task(const DistributedTaskIR& d, std::string_view id) {
  for (const auto& t : d.tasks)
    if (t.id == id) return t;
  throw std::runtime_error("DistributedTaskIR has no task " + std::string(id));
}

Expr memory(const PortablePlanIR& p, std::int64_t stage, MemoryCategory cat) {
  for (const auto& f : p.memory)
    if (f.stage == stage && f.category == cat) return f.bytes;
  throw std::runtime_error("PortablePlanIR has no such memory fact for stage " + std::to_string(stage));
}

// The model's matrix work of the phase from the distributed tasks: each task's per-rank work
// on each of its ranks, divided by its replication (ranks that compute the same values).
Expr phase_matrix(const DistributedTaskIR& d) {
  Expr sum;
  for (const auto& t : d.tasks)
    sum += t.work.matrix_ops * Expr(make_rat(static_cast<std::int64_t>(t.ranks.size()), t.replication));
  return sum;
}

// ---- building the records -------------------------------------------------------------------

// An inference formula: workload symbols b and c, `q` (query tokens per sequence) fixed by
// the phase through `where` when the formula uses it.
DeclaredFormula inference_formula(std::string name, std::string lhs, std::string description, Expr rhs, Expr den, std::vector<Derivation> derivations,
                                  std::optional<InferPhase> phase = std::nullopt) {
  DeclaredFormula f = formula(std::move(name), std::move(lhs), std::move(description), std::move(rhs), std::move(den), std::move(derivations));
  f.workload = {"b", "c"};
  if (phase) f.where = {{"q", *phase == InferPhase::prefill ? sym("c") : Expr(1)}};
  return f;
}

const char* phase_name(InferPhase p) { return p == InferPhase::prefill ? "prefill" : "decode"; }

// ---- DistributeTransformerInferencePass -----------------------------------------------------

PassDoc distribute_doc() {
  const Expr b = sym("b"), c = sym("c"), q = sym("q"), H = sym("H"), a = sym("a"), k = sym("k"), d = sym("d"), F = sym("F"), V = sym("V"), l = sym("l"),
             t = sym("t"), e = sym("e");
  // Per-rank instances: MHA, GQA with k < t (replicated KV heads), GQA with k > t, MQA, one rank.
  const std::vector<Bindings> ranks = complete({{{"H", 64}, {"a", 4}, {"t", 2}, {"e", 2}},
                                       {{"H", 64}, {"a", 8}, {"k", 2}, {"t", 4}, {"e", 2}},
                                       {{"H", 96}, {"a", 8}, {"k", 4}, {"t", 2}, {"e", 4}},
                                       {{"H", 64}, {"a", 8}, {"k", 1}, {"t", 8}, {"e", 2}},
                                       {{"H", 32}, {"a", 4}, {"k", 2}, {"t", 1}, {"e", 4}}});
  auto field_hook = [](const char* id, InferPhase phase, std::function<Expr(const DistTask&)> get) {
    return [id, phase, get](const Bindings& x) { return get(task(run(x, phase, false).dist, id)); };
  };
  auto matrix_hook = [](std::initializer_list<const char*> ids, InferPhase phase) {
    std::vector<std::string> keep(ids.begin(), ids.end());
    return [keep, phase](const Bindings& x) {
      DistributedTaskIR dist = run(x, phase, false).dist;
      Expr sum;
      for (const auto& id : keep) sum += task(dist, id).work.matrix_ops;
      return sum;
    };
  };

  PassDoc p;
  p.name = "DistributeTransformerInferencePass";
  p.title = "Inference distribution";
  p.boundary = "ModelIR -> DistributedTaskIR";
  p.provenance = "Megatron-LM tensor parallelism; Pope et al. 2022 (KV cache, decode cost); Ainslie et al. 2023 (grouped-query attention)";
  p.evidence = "transition obligations at the gate (WORK-2 matrix work conserved from the model, KV-2 KV cache per rank, EFFECT-2 reads after the write); the no-drift test";
  p.output_ir = "DistributedTaskIR";
  p.cpp_symbol = "plancert::passes::distribute_inference";
  p.header = "passes/infer/distribute.h";
  p.references = {"Vaswani et al. 2017, *Attention Is All You Need*.",
                  "Shoeybi et al. 2019, *Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism*.",
                  "Pope et al. 2022, *Efficiently Scaling Transformer Inference*.",
                  "Shazeer 2019, *Fast Transformer Decoding: One Write-Head is All You Need*.",
                  "Ainslie et al. 2023, *GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints*."};
  const char* per_rank = " Per rank of a tensor-parallel group of :math:`t`, for :math:`b` sequences with :math:`c` tokens in the cache.";

  // The KV cache: what the cache-write task of one layer stores on each rank.
  const Expr kv_write = Expr(2) * b * q * d * e * Expr::max(k, t);
  {
    std::vector<Derivation> ds{via("``work.write_bytes`` of task ``op:L0.cache`` (the KV-cache write) of the prefill", field_hook("op:L0.cache", InferPhase::prefill, [](const DistTask& x) { return x.work.write_bytes; }), ranks),
                               via("the same in the committed DistributedTaskIR of ``derive_inference`` (through the gate) at concrete :math:`b` and :math:`c`",
                                   [](const Bindings& x) { return task(certified(x, InferPhase::prefill).dist->payload(), "op:L0.cache").work.write_bytes; },
                                   complete({{{"H", 64}, {"a", 8}, {"k", 2}, {"t", 4}, {"e", 2}, {"b", 3}, {"c", 40}},
                                             {{"H", 64}, {"a", 4}, {"t", 2}, {"e", 4}, {"b", 1}, {"c", 7}}}))};
    p.formulas.push_back(inference_formula(
        "C_KV", R"(C_{\mathrm{KV}})",
        std::string(R"(KV-cache bytes of one layer on each rank, written by the prefill: the keys and values of the rank's KV heads, :math:`2bc\max(k/t, 1)de` (Pope et al.). With :math:`k < t` key/value heads (grouped-query or multi-query attention) each rank holds one head, replicated on :math:`t/k` ranks; with multi-head attention (:math:`k = a`, :math:`ad = H`) it is :math:`2bcHe/t`.)") + per_rank,
        kv_write, t, std::move(ds), InferPhase::prefill));
  }
  p.formulas.push_back(inference_formula(
      "C_KV_token", R"(C_{\mathrm{KV}}^{\mathrm{token}})",
      std::string(R"(Bytes the cache of one layer grows by in a decode step: the new token's keys and values, :math:`2b\max(k/t, 1)de`.)") + per_rank, kv_write, t,
      {via("``work.write_bytes`` of task ``op:L0.cache`` of the decode step", field_hook("op:L0.cache", InferPhase::decode, [](const DistTask& x) { return x.work.write_bytes; }), ranks)},
      InferPhase::decode));

  // Attention core per rank, both phases.
  for (InferPhase ph : {InferPhase::decode, InferPhase::prefill}) {
    const bool pre = ph == InferPhase::prefill;
    p.formulas.push_back(inference_formula(
        pre ? "W_attn_prefill" : "W_attn_decode", pre ? R"(W_{\mathrm{attn}}^{\mathrm{prefill}})" : R"(W_{\mathrm{attn}}^{\mathrm{decode}})",
        std::string(pre ? "Matrix operations of the attention score and context products of one layer in the prefill (:math:`q = c` query tokens over the full :math:`c \\times c` square), split by query heads."
                        : "Matrix operations of the attention score and context products of one layer in a decode step (one query token against the :math:`c` cached ones), split by query heads.") +
            per_rank,
        Expr(4) * b * q * c * a * d, t,
        {via(std::string("the sum of ``work.matrix_ops`` of tasks ``op:L0.score`` and ``op:L0.context`` of the ") + phase_name(ph), matrix_hook({"op:L0.score", "op:L0.context"}, ph), ranks)}, ph));
  }

  p.formulas.push_back(inference_formula(
      "M_AR", R"(M_{\mathrm{all\text{-}reduce}}^{\mathrm{sent}})",
      R"(Bytes a rank sends in the ring all-reduce after a row-parallel projection of a decode step: payload :math:`M = bqHe`, :math:`2M(t-1)/t` per rank.)",
      Expr(2) * b * q * H * e * (t - Expr(1)), t,
      {via("``work.message_bytes`` of task ``tp.all_reduce:L0.proj`` of the decode step",
           field_hook("tp.all_reduce:L0.proj", InferPhase::decode, [](const DistTask& x) { return x.work.message_bytes; }),
           complete({{{"H", 64}, {"a", 4}, {"t", 2}, {"e", 2}}, {{"H", 96}, {"a", 8}, {"k", 4}, {"t", 4}, {"e", 4}}, {{"H", 64}, {"a", 8}, {"k", 1}, {"t", 8}, {"e", 2}}}))},
      InferPhase::decode));

  // Matrix work of a whole phase, summed over the ranks (Pope et al.: 2 FLOPs per weight per token, plus attention).
  const std::vector<Bindings> whole = complete({{{"l", 2}, {"H", 64}, {"a", 4}, {"F", 256}, {"V", 1000}, {"t", 2}, {"p", 2}},
                                       {{"l", 4}, {"H", 64}, {"a", 8}, {"k", 2}, {"F", 172}, {"V", 512}, {"t", 4}, {"p", 2}},
                                       {{"l", 2}, {"H", 32}, {"a", 2}, {"k", 1}, {"d", 24}, {"F", 128}, {"V", 50}, {"t", 1}, {"p", 1}},
                                       {{"l", 3}, {"H", 96}, {"a", 6}, {"k", 3}, {"V", 96}, {"t", 3}, {"p", 3}}});
  const Expr phase_work = b * (l * q * (Expr(2) * H * (a + Expr(2) * k) * d + Expr(4) * c * a * d + Expr(2) * a * d * H + Expr(4) * H * F) + Expr(2) * H * V);
  for (InferPhase ph : {InferPhase::decode, InferPhase::prefill}) {
    const bool pre = ph == InferPhase::prefill;
    p.formulas.push_back(inference_formula(
        pre ? "F_prefill" : "F_decode", pre ? R"(F_{\mathrm{prefill}})" : R"(F_{\mathrm{decode}})",
        pre ? R"(Matrix operations of the prefill of :math:`b` prompts of :math:`c` tokens over all ranks: per layer the QKV projections with :math:`k` KV heads, the attention square, the output projection and the plain MLP of width :math:`F`, and the LM head on the last position only. Independent of :math:`t`, :math:`p` and :math:`k \le t` replication.)"
            : R"(Matrix operations of one decode step of :math:`b` sequences over all ranks; per generated token :math:`2` per weight of every matrix product plus :math:`4cad` per layer for attention over the cache (Pope et al.). Independent of :math:`t`, :math:`p` and :math:`k \le t` replication.)",
        phase_work, Expr(1),
        {via(std::string("the sum over the tasks of the ") + phase_name(ph) + " of ``work.matrix_ops`` :math:`\\times` the number of ranks / ``replication``",
             [ph](const Bindings& x) { return phase_matrix(run(x, ph, false).dist); }, whole)},
        ph));
  }
  return p;
}

// ---- PlanTransformerInferencePass -----------------------------------------------------------

PassDoc plan_doc() {
  const Expr b = sym("b"), c = sym("c"), q = sym("q"), H = sym("H"), a = sym("a"), k = sym("k"), d = sym("d"), F = sym("F"), l = sym("l"), t = sym("t"),
             p_ = sym("p"), e = sym("e");
  auto fact_hook = [](InferPhase phase, MemoryCategory cat, std::int64_t stage) {
    return [phase, cat, stage](const Bindings& x) { return memory(run(x, phase, true).plan, stage, cat); };
  };

  PassDoc p;
  p.name = "PlanTransformerInferencePass";
  p.title = "Inference portable planning";
  p.boundary = "DistributedTaskIR -> PortablePlanIR";
  p.provenance = "KV cache per rank (Pope et al. 2022; Ainslie et al. 2023 for grouped-query attention); conservative unfused workspace (internal contract)";
  p.evidence = "transition obligations at the gate (KV-2 KV cache per rank, WS-1/WS-2 workspace bound, CAPM-1/CAPM-2 memory within capacity); the no-drift test";
  p.output_ir = "PortablePlanIR";
  p.cpp_symbol = "plancert::passes::plan_inference";
  p.header = "passes/infer/plan.h";
  p.references = {"Pope et al. 2022, *Efficiently Scaling Transformer Inference*.",
                  "Ainslie et al. 2023, *GQA: Training Generalized Multi-Query Transformer Models from Multi-Head Checkpoints*.",
                  "Dao et al. 2022, *FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness*."};

  const std::vector<Bindings> stages = complete({{{"l", 2}, {"H", 64}, {"a", 4}, {"t", 2}, {"p", 1}, {"e", 2}},
                                        {{"l", 4}, {"H", 64}, {"a", 8}, {"k", 2}, {"t", 4}, {"p", 2}, {"e", 2}},
                                        {{"l", 4}, {"H", 96}, {"a", 8}, {"k", 4}, {"t", 2}, {"p", 4}, {"e", 4}},
                                        {{"l", 2}, {"H", 32}, {"a", 4}, {"k", 1}, {"t", 1}, {"p", 2}, {"e", 2}}});
  const char* kv_what = "``bytes`` of the stage-0 ``kv_cache`` memory fact";
  p.formulas.push_back(inference_formula(
      "C_KV_stage", R"(C_{\mathrm{KV}}^{\mathrm{stage}})",
      R"(KV-cache bytes per rank of a pipeline stage of :math:`l/p` layers: one state buffer per key and value cache of each layer, :math:`bc\max(k/t, 1)de` bytes each, so :math:`2bc\,\frac{l}{p}\max(k/t, 1)de`; the same in both phases (the cache holds :math:`c` tokens after the phase).)",
      Expr(2) * b * c * l * d * e * Expr::max(k, t), t * p_,
      {via(std::string(kv_what) + " of the decode step", fact_hook(InferPhase::decode, MemoryCategory::kv_cache, 0), stages),
       via(std::string(kv_what) + " of the prefill", fact_hook(InferPhase::prefill, MemoryCategory::kv_cache, 0), stages),
       via(std::string(kv_what) + " in the committed PortablePlanIR of ``derive_inference`` (through the gate) at concrete :math:`b` and :math:`c`",
           [](const Bindings& x) { return memory(certified(x, InferPhase::decode).plan->payload(), 0, MemoryCategory::kv_cache); },
           complete({{{"l", 4}, {"H", 64}, {"a", 8}, {"k", 2}, {"t", 4}, {"p", 2}, {"e", 2}, {"b", 4}, {"c", 100}},
                     {{"l", 2}, {"H", 32}, {"a", 4}, {"t", 2}, {"p", 1}, {"e", 4}, {"b", 1}, {"c", 9}}}))}));

  const std::vector<Bindings> ws = complete({{{"H", 64}, {"a", 4}, {"t", 1}, {"e", 2}},
                                    {{"H", 64}, {"a", 8}, {"k", 2}, {"t", 4}, {"e", 2}},
                                    {{"H", 96}, {"a", 6}, {"F", 200}, {"t", 2}, {"e", 4}},
                                    {{"H", 64}, {"a", 16}, {"F", 96}, {"t", 8}, {"e", 2}}});
  // t C_ws = t D + e max(max(3bqH, baqc), bqF), D = bqHe (plan.h workspace_bound).
  const Expr ws_num = b * q * H * e * t + e * Expr::max(Expr::max(Expr(3) * b * q * H, b * a * q * c), b * q * F);
  for (InferPhase ph : {InferPhase::decode, InferPhase::prefill}) {
    const bool pre = ph == InferPhase::prefill;
    p.formulas.push_back(inference_formula(
        pre ? "C_ws_prefill" : "C_ws_decode", pre ? R"(C_{\mathrm{ws}}^{\mathrm{prefill}})" : R"(C_{\mathrm{ws}}^{\mathrm{decode}})",
        std::string(R"(The conservative unfused workspace bound per rank, :math:`D + e\max\left(3bq\frac{H}{t}, b\frac{a}{t}qc, bq\frac{F}{t}\right)` with :math:`D = bqHe`: the layer's boundary activation plus the largest local intermediate (the QKV outputs, the score matrix, the MLP hidden activation) when every intermediate is materialised; )") +
            (pre ? "in the prefill the score matrix is :math:`c \\times c` per head." : "in a decode step the score matrix has one row per head."),
        ws_num, t,
        {via(std::string("``bytes`` of the stage-0 ``workspace`` memory fact of the ") + phase_name(ph), fact_hook(ph, MemoryCategory::workspace, 0), ws)}, ph));
  }
  return p;
}

}  // namespace
}  // namespace inference

void add_inference_docs(std::vector<PassDoc>& out) {
  out.push_back(inference::distribute_doc());
  out.push_back(inference::plan_doc());
}

}  // namespace plancert::formulas::detail
