// SPDX-License-Identifier: Apache-2.0
// Declared closed forms of the training passes (BuildModelIR,
// DistributeTransformerTrainingPass, PlanTransformerTrainingPass) and the hooks that derive
// each one from the passes themselves, run with a symbolic workload (B, s).
#include "passes/formulas/registry.h"

#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>

namespace plancert::formulas::detail {
namespace training {  // a named namespace of its own: the library may be built as one unity file
namespace {

using frontend::DType;
using frontend::ModelConfig;
using frontend::Recompute;
using frontend::StrategyConfig;

Expr sym(const char* name) { return Expr::symbol(name); }


// ---- inputs built from the bindings ---------------------------------------------------------

// A GPT-style model (Megatron-LM GPT: LayerNorm, biases, GeLU, dropout) from the bindings:
// h (required); a (default 1); F (default 4h); k (default a); d (default h / a); l (default
// 1); V (optional: with it the model has token and learned position embeddings, tied to the
// LM head, and no max_positions, so the position table has s rows). `gated` gives a
// Llama-style block instead: RMSNorm, no biases, SwiGLU, no dropout.
ModelConfig model(const Bindings& b, bool gated = false) {
  ModelConfig c;
  c.name = "formula-check";
  c.family = gated ? frontend::ModelFamily::Llama : frontend::ModelFamily::Gpt;
  c.hidden = need(b, "h");
  c.heads = value_or(b, "a", 1);
  c.ffn = value_or(b, "F", 4 * c.hidden);
  c.kv_heads = value_or(b, "k", c.heads);
  c.head_dim = value_or(b, "d", c.hidden / c.heads);
  c.layers = value_or(b, "l", 1);
  if (auto it = b.find("V"); it != b.end()) {
    c.vocab = it->second;
    c.learned_positions = !gated;
    c.tied_embeddings = true;
  }
  c.biases = !gated;
  c.norm = gated ? frontend::NormKind::RmsNorm : frontend::NormKind::LayerNorm;
  c.activation = gated ? frontend::Activation::SwiGlu : frontend::Activation::Gelu;
  c.gated_mlp = gated;
  c.dropout = !gated;
  return c;
}

// Strategy options that are not symbols of a formula.
struct Knobs {
  bool sp = false;                        // sequence parallelism
  Recompute recompute = Recompute::None;  // activation recomputation
  std::optional<DType> dtype;             // else from e: 2 -> bf16, 4 -> fp32
  bool distributed_optimizer = false;     // optimizer state sharded over d_p
};

// A training strategy from the bindings t, p, d_p, m, v, e (defaults 1, 1, 1, 1, 1, 2).
StrategyConfig strategy(const Bindings& b, const Knobs& k = {}) {
  StrategyConfig s;
  s.name = "formula-check";
  s.tp = value_or(b, "t", 1);
  s.pp = value_or(b, "p", 1);
  s.dp = value_or(b, "d_p", 1);
  s.num_procs = s.tp * s.pp * s.dp;
  s.microbatch = 1;  // B is symbolic; the configured microbatch only fixes m = B_g / (B d_p)
  s.global_batch = value_or(b, "m", 1) * s.dp;
  s.interleave = value_or(b, "v", 1);
  s.schedule = s.interleave > 1 ? frontend::Schedule::Interleaved : frontend::Schedule::OneFOneB;
  s.sequence_parallel = k.sp;
  s.tp_comm_type = k.sp ? frontend::TpCommType::RsAg : frontend::TpCommType::AllReduce;
  s.recompute = k.recompute;
  s.distributed_optimizer = k.distributed_optimizer;
  if (k.dtype) s.dtype = *k.dtype;
  else {
    const std::int64_t e = value_or(b, "e", 2);
    if (e != 2 && e != 4) throw std::invalid_argument("e must be 2 (bf16) or 4 (fp32)");
    s.dtype = e == 2 ? DType::BF16 : DType::FP32;
  }
  s.training = true;
  return s;
}

// The symbolic workload: B and s are workload symbols; with sequence parallelism t | s.
passes::Workload workload(const StrategyConfig& s) {
  Symbol batch, seq;
  batch.name = "B";
  seq.name = "s";
  if (s.sequence_parallel) seq.divisible_by = s.tp;
  return passes::Workload{sym("B"), sym("s"), {batch, seq}};
}

// ---- running the passes ---------------------------------------------------------------------

struct Run {
  ModelIR model;
  DistributedTaskIR dist;
  PortablePlanIR plan;
};

ModelIR lower(const ModelConfig& c, const StrategyConfig& s) { return passes::build_model_ir(c, workload(s), s.dtype); }

Run run(const ModelConfig& c, const StrategyConfig& s, bool with_plan) {
  Run r;
  r.model = lower(c, s);
  r.dist = passes::distribute_training(r.model, "", s);
  if (with_plan) r.plan = passes::plan_training(r.model, r.dist, s);
  return r;
}

// ---- extracting quantities ------------------------------------------------------------------

const Operation& operation(const ModelIR& m, std::string_view id) {
  for (const auto& o : m.operations)
    if (o.id == id) return o;
  throw std::runtime_error("ModelIR has no operation " + std::string(id));
}

const DistTask& task(const DistributedTaskIR& d, std::string_view id) {
  for (const auto& t : d.tasks)
    if (t.id == id) return t;
  throw std::runtime_error("DistributedTaskIR has no task " + std::string(id));
}

// Per-rank matrix work of the compute tasks of layer `layer` in the given phases.
Expr layer_matrix(const DistributedTaskIR& d, const std::string& layer, std::initializer_list<Phase> phases) {
  Expr sum;
  for (const auto& t : d.tasks) {
    auto it = t.attrs.find("layer");
    if (t.kind == TaskKind::compute && it != t.attrs.end() && it->second == layer && std::find(phases.begin(), phases.end(), t.phase) != phases.end())
      sum += t.work.matrix_ops;
  }
  return sum;
}

// Matrix work of one iteration: every task's per-rank work on each of its ranks, per instance.
Expr iteration_matrix(const DistributedTaskIR& d) {
  Expr sum;
  for (const auto& t : d.tasks) sum += t.work.matrix_ops * Expr(t.repeat * static_cast<std::int64_t>(t.ranks.size()));
  return sum;
}

// Stored activation bytes of one layer: the activation buffers that a task of `layer` reads.
Expr layer_activations(const PortablePlanIR& p, const std::string& layer) {
  Expr sum;
  for (const auto& b : p.buffers) {
    if (b.role != BufferRole::activation) continue;
    bool used = std::any_of(b.consumers.begin(), b.consumers.end(), [&](Index c) {
      const auto& a = p.tasks[static_cast<std::size_t>(c)].attrs;
      auto it = a.find("layer");
      return it != a.end() && it->second == layer;
    });
    if (used) sum += b.size;
  }
  return sum;
}

Expr memory(const PortablePlanIR& p, std::int64_t stage, MemoryCategory cat, std::int64_t chunk = -1) {
  for (const auto& f : p.memory)
    if (f.stage == stage && f.category == cat && f.chunk == chunk) return f.bytes;
  throw std::runtime_error("PortablePlanIR has no such memory fact for stage " + std::to_string(stage));
}

// (weights + weight gradients + optimizer state) / parameters, per rank of stage 0.
Expr bytes_per_parameter(const Run& r) {
  Expr state = memory(r.plan, 0, MemoryCategory::weights) + memory(r.plan, 0, MemoryCategory::weight_gradients) +
               memory(r.plan, 0, MemoryCategory::optimizer_state);
  Expr params;
  for (const auto& sh : r.dist.shards) {
    if (sh.stage != 0) continue;
    for (const auto& v : r.model.values)
      if (v.id == sh.value) params += passes::elements(v) / Rat(sh.pieces);
  }
  auto s = state.constant();
  auto n = params.constant();
  if (!s || !n || *n == 0) throw std::runtime_error("state bytes and parameters must be non-zero constants");
  return Expr(*s / *n);
}

// (need, value_or, via and formula: registry.h.)

// ---- BuildModelIR ---------------------------------------------------------------------------

PassDoc build_model_ir_doc() {
  const Expr B = sym("B"), s = sym("s"), h = sym("h"), F = sym("F"), a = sym("a"), k = sym("k"), d = sym("d"), l = sym("l"), V = sym("V");
  const Expr m = sym("m"), n = sym("n");
  auto op_hook = [](std::initializer_list<const char*> ids, bool gated = false) {
    std::vector<std::string> keep(ids.begin(), ids.end());
    return [keep, gated](const Bindings& b) {
      StrategyConfig st = strategy(b);
      ModelIR ir = lower(model(b, gated), st);
      Expr sum;
      for (const auto& id : keep) sum += operation(ir, id).work.matrix_ops;
      return sum;
    };
  };
  // A [m,n] x [n,k] product, realised by an operation of a model built for given n and k.
  auto gemm_hook = [](const char* op, std::function<Bindings(std::int64_t, std::int64_t)> shape) {
    return [op, shape](const Bindings& b) {
      Bindings mb = shape(need(b, "n"), need(b, "k"));
      return operation(lower(model(mb), strategy(mb)), op).work.matrix_ops;
    };
  };
  const std::vector<Bindings> nk = {{{"n", 64}, {"k", 256}}, {{"n", 48}, {"k", 20}}, {{"n", 3}, {"k", 1}}};

  PassDoc p;
  p.name = "BuildModelIR";
  p.title = "Model lowering";
  p.boundary = "ModelConfig -> ModelIR";
  p.provenance = "Transformer (Vaswani et al.); Megatron-LM (Shoeybi et al.); Narayanan et al. 2021";
  p.evidence = "ModelIR obligations at the root commit; the no-drift test";
  p.output_ir = "ModelIR";
  p.root = true;
  p.cpp_symbol = "plancert::passes::build_model_ir";
  p.header = "passes/train/model_builder.h";
  p.references = {"Vaswani et al. 2017, *Attention Is All You Need*.",
                  "Shoeybi et al. 2019, *Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism*.",
                  "Narayanan et al. 2021, *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*."};

  DeclaredFormula gemm = formula(
      "W_gemm", R"(W_{\mathrm{gemm}})",
      R"(Matrix operations of a product :math:`[m,n] \times [n,k]` of the activations of one microbatch (:math:`m = Bs` rows) with a weight; unsharded forward work.)",
      Expr(2) * m * n * k, Expr(1),
      {via(R"(``work.matrix_ops`` of operation ``L0.fc1``, the MLP up-projection :math:`[Bs,h] \times [h,F]`, built with :math:`h = n`, :math:`F = k`)",
           gemm_hook("L0.fc1", [](std::int64_t nn, std::int64_t kk) { return Bindings{{"h", nn}, {"F", kk}}; }), nk),
       via(R"(``work.matrix_ops`` of operation ``L0.fc2``, the MLP down-projection :math:`[Bs,F] \times [F,h]`, built with :math:`F = n`, :math:`h = k`)",
           gemm_hook("L0.fc2", [](std::int64_t nn, std::int64_t kk) { return Bindings{{"h", kk}, {"F", nn}}; }), nk),
       via(R"(``work.matrix_ops`` of operation ``L0.proj``, the output projection :math:`[Bs,ad] \times [ad,h]`, built with :math:`a = 1`, :math:`d = n`, :math:`h = k`)",
           gemm_hook("L0.proj", [](std::int64_t nn, std::int64_t kk) { return Bindings{{"h", kk}, {"a", 1}, {"d", nn}}; }), nk)});
  gemm.where = {{"m", B * s}};
  p.formulas.push_back(std::move(gemm));

  p.formulas.push_back(formula(
      "W_QKV", R"(W_{\mathrm{QKV}})",
      R"(Query, key and value projections with :math:`a` query heads and :math:`k` key/value heads of size :math:`d` (grouped-query attention; multi-head attention when :math:`k = a`).)",
      Expr(2) * B * s * h * (a + Expr(2) * k) * d, Expr(1),
      {via("``work.matrix_ops`` of operation ``L0.qkv`` (the fused projection, :math:`k = a`)", op_hook({"L0.qkv"}), {{{"h", 64}, {"a", 8}, {"k", 8}, {"d", 8}}}),
       via("``work.matrix_ops`` of operations ``L0.q_proj`` and ``L0.kv`` (:math:`k < a`)", op_hook({"L0.q_proj", "L0.kv"}),
           {{{"h", 64}, {"a", 8}, {"k", 2}, {"d", 8}}, {{"h", 96}, {"a", 4}, {"k", 1}, {"d", 32}}})}));
  p.formulas.push_back(formula(
      "W_QKV_MHA", R"(W_{\mathrm{QKV}}^{\mathrm{MHA}})", R"(The same for multi-head attention, :math:`k = a` and :math:`ad = h`.)",
      Expr(6) * B * s * h * h, Expr(1),
      {via("``work.matrix_ops`` of operation ``L0.qkv``", op_hook({"L0.qkv"}), {{{"h", 64}, {"a", 8}}, {{"h", 96}, {"a", 3}}, {{"h", 2}, {"a", 1}}})}));
  p.formulas.push_back(formula(
      "W_core", R"(W_{\mathrm{score}} + W_{\mathrm{context}})",
      R"(The attention score product :math:`QK^\top` and the context product (probabilities times :math:`V`), counted over the full :math:`s \times s` square.)",
      Expr(4) * B * s * s * a * d, Expr(1),
      {via("``work.matrix_ops`` of operations ``L0.score`` and ``L0.context``", op_hook({"L0.score", "L0.context"}),
           {{{"h", 64}, {"a", 8}, {"d", 8}}, {{"h", 64}, {"a", 4}, {"k", 1}, {"d", 16}}, {{"h", 40}, {"a", 2}, {"d", 32}}})}));
  p.formulas.push_back(formula(
      "W_proj", R"(W_{\mathrm{proj}})", R"(The attention output projection :math:`[Bs, ad] \times [ad, h]`.)", Expr(2) * B * s * a * d * h, Expr(1),
      {via("``work.matrix_ops`` of operation ``L0.proj``", op_hook({"L0.proj"}), {{{"h", 64}, {"a", 8}, {"d", 8}}, {{"h", 48}, {"a", 2}, {"d", 32}}})}));
  p.formulas.push_back(formula(
      "W_MLP", R"(W_{\mathrm{MLP}})", R"(The two projections of a plain MLP of width :math:`F`.)", Expr(4) * B * s * h * F, Expr(1),
      {via("``work.matrix_ops`` of operations ``L0.fc1`` and ``L0.fc2``", op_hook({"L0.fc1", "L0.fc2"}),
           {{{"h", 64}, {"F", 256}}, {{"h", 32}, {"F", 100}}, {{"h", 8}, {"F", 8}}})}));
  p.formulas.push_back(formula(
      "W_MLP_gated", R"(W_{\mathrm{MLP}}^{\mathrm{gated}})", R"(The three projections (gate, up, down) of a gated MLP such as SwiGLU.)",
      Expr(6) * B * s * h * F, Expr(1),
      {via("``work.matrix_ops`` of operations ``L0.gate``, ``L0.up`` and ``L0.down`` (Llama-style block)", op_hook({"L0.gate", "L0.up", "L0.down"}, true),
           {{{"h", 64}, {"F", 172}}, {{"h", 32}, {"F", 100}}, {{"h", 8}, {"F", 8}}})}));
  p.formulas.push_back(formula(
      "W_head", R"(W_{\mathrm{head}})", R"(The LM head :math:`[Bs, h] \times [h, V]`.)", Expr(2) * B * s * h * V, Expr(1),
      {via("``work.matrix_ops`` of operation ``lm_head``", op_hook({"lm_head"}), {{{"h", 64}, {"V", 1000}}, {{"h", 32}, {"V", 50257}}})}));
  p.formulas.push_back(formula(
      "P", "P",
      R"(Parameters of a GPT model (:math:`F = 4h`, biases, LayerNorm, learned positions for :math:`s` tokens, input and output embedding tied). This is Narayanan et al.'s :math:`12lh^2\left(1 + \frac{13}{12h} + \frac{V + s}{12lh}\right)` plus the :math:`2h` of the final layer norm, which their count leaves out.)",
      Expr(12) * l * h * h + Expr(13) * l * h + V * h + s * h + Expr(2) * h, Expr(1),
      {via("the sum of the element counts of the ModelIR values with role ``weight``",
           [](const Bindings& b) {
             ModelIR ir = lower(model(b), strategy(b));
             Expr sum;
             for (const auto& v : ir.values)
               if (v.role == ValueRole::weight) sum += passes::elements(v);
             return sum;
           },
           {{{"l", 1}, {"h", 64}, {"a", 4}, {"V", 1000}}, {{"l", 3}, {"h", 32}, {"a", 2}, {"V", 50}}, {{"l", 2}, {"h", 8}, {"a", 1}, {"V", 7}}})}));
  return p;
}

// ---- DistributeTransformerTrainingPass ------------------------------------------------------

PassDoc distribute_doc() {
  const Expr B = sym("B"), s = sym("s"), h = sym("h"), F = sym("F"), a = sym("a"), l = sym("l"), V = sym("V"), t = sym("t"), e = sym("e");
  const Expr Bg = sym("B_g");
  auto task_hook = [](std::initializer_list<const char*> ids, Knobs k = {}) {
    std::vector<std::string> keep(ids.begin(), ids.end());
    return [keep, k](const Bindings& b) {
      DistributedTaskIR d = run(model(b), strategy(b, k), false).dist;
      Expr sum;
      for (const auto& id : keep) sum += task(d, id).work.matrix_ops;
      return sum;
    };
  };
  // A field of one task of a run with the given knobs.
  auto field_hook = [](const char* id, Knobs k, std::function<Expr(const DistTask&)> get) {
    return [id, k, get](const Bindings& b) { return get(task(run(model(b), strategy(b, k), false).dist, id)); };
  };
  const Knobs sp{true, Recompute::None, std::nullopt, false};
  const std::vector<Bindings> tp = {{{"h", 64}, {"a", 4}, {"t", 1}}, {{"h", 64}, {"a", 4}, {"t", 2}}, {{"h", 96}, {"a", 6}, {"t", 3}}, {{"h", 128}, {"a", 8}, {"t", 8}}};
  const std::vector<Bindings> tpf = {{{"h", 64}, {"F", 256}, {"a", 4}, {"t", 2}}, {{"h", 32}, {"F", 96}, {"a", 2}, {"t", 2}}, {{"h", 48}, {"F", 120}, {"a", 3}, {"t", 3}},
                                     {{"h", 16}, {"F", 16}, {"a", 1}, {"t", 1}}};
  const std::vector<Bindings> tpe = {{{"h", 64}, {"a", 4}, {"t", 2}, {"e", 2}}, {{"h", 96}, {"a", 6}, {"t", 3}, {"e", 4}}, {{"h", 32}, {"a", 8}, {"t", 8}, {"e", 2}}};
  const Expr layer_fwd = Expr(8) * B * s * h * h + Expr(4) * B * s * s * h + Expr(4) * B * s * h * F;

  PassDoc p;
  p.name = "DistributeTransformerTrainingPass";
  p.title = "Training distribution";
  p.boundary = "ModelIR -> DistributedTaskIR";
  p.provenance = "Megatron-LM tensor and pipeline parallelism; Narayanan et al. 2021; selective recomputation (Korthikanti et al.)";
  p.evidence = "transition obligations at the gate (work and message-byte conservation, lineage); the no-drift test";
  p.output_ir = "DistributedTaskIR";
  p.cpp_symbol = "plancert::passes::distribute_training";
  p.header = "passes/train/distribute.h";
  p.references = {"Shoeybi et al. 2019, *Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism*.",
                  "Narayanan et al. 2021, *Efficient Large-Scale Language Model Training on GPU Clusters Using Megatron-LM*.",
                  "Korthikanti et al. 2022, *Reducing Activation Recomputation in Large Transformer Models*.",
                  "Rajbhandari et al. 2020, *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*."};
  auto tp_desc = [](const char* what) {
    return std::string(what) + " Per rank and microbatch, multi-head attention (:math:`ad = h`), tensor-parallel degree :math:`t`.";
  };

  p.formulas.push_back(formula("W_QKV", R"(W_{\mathrm{QKV}})", tp_desc("Forward query, key and value projections (column-parallel)."), Expr(6) * B * s * h * h, t,
                               {via("``work.matrix_ops`` of task ``fwd:L0.qkv``", task_hook({"fwd:L0.qkv"}), tp)}));
  p.formulas.push_back(formula("W_attn", R"(W_{\mathrm{attn}})", tp_desc("Forward attention score and context products (split by heads)."), Expr(4) * B * s * s * h, t,
                               {via("``work.matrix_ops`` of tasks ``fwd:L0.score`` and ``fwd:L0.context``", task_hook({"fwd:L0.score", "fwd:L0.context"}), tp)}));
  p.formulas.push_back(formula("W_MLP", R"(W_{\mathrm{MLP}})", tp_desc("Forward MLP projections (column- then row-parallel)."), Expr(4) * B * s * h * F, t,
                               {via("``work.matrix_ops`` of tasks ``fwd:L0.fc1`` and ``fwd:L0.fc2``", task_hook({"fwd:L0.fc1", "fwd:L0.fc2"}), tpf)}));
  p.formulas.push_back(formula("W_out", R"(W_{\mathrm{out}})", tp_desc("Forward output projection (row-parallel)."), Expr(2) * B * s * h * h, t,
                               {via("``work.matrix_ops`` of task ``fwd:L0.proj``", task_hook({"fwd:L0.proj"}), tp)}));
  p.formulas.push_back(formula(
      "W_QKV_bwd", R"(W_{\mathrm{QKV}}^{\mathrm{act}} = W_{\mathrm{QKV}}^{\mathrm{wgt}})",
      tp_desc(R"(Backward of the QKV projection: the activation gradient and the weight gradient each cost :math:`2mnk` for a :math:`[m,n] \times [n,k]` product.)"),
      Expr(6) * B * s * h * h, t,
      {via("``work.matrix_ops`` of task ``bwa:L0.qkv`` (activation gradient)", task_hook({"bwa:L0.qkv"}), tp),
       via("``work.matrix_ops`` of task ``bww:L0.qkv`` (weight gradient)", task_hook({"bww:L0.qkv"}), tp)}));
  p.formulas.push_back(formula(
      "W_layer_bwd", R"(W_{\mathrm{layer}}^{\mathrm{bwd}} = 2\,W_{\mathrm{layer}}^{\mathrm{fwd}})",
      tp_desc(R"(Backward matrix work of a whole block is twice its forward: two gradients per linear layer, and both operand gradients (:math:`2 \cdot 2mnk`) for each product of two activations.)"),
      Expr(2) * layer_fwd, t,
      {via("the sum of ``work.matrix_ops`` over the ``backward_activation`` and ``backward_weight`` tasks of layer 0",
           [](const Bindings& b) { return layer_matrix(run(model(b), strategy(b), false).dist, "0", {Phase::backward_activation, Phase::backward_weight}); }, tpf),
       via("twice the sum of ``work.matrix_ops`` over the ``forward`` tasks of layer 0",
           [](const Bindings& b) { return Expr(2) * layer_matrix(run(model(b), strategy(b), false).dist, "0", {Phase::forward}); }, tpf)}));
  p.formulas.push_back(formula(
      "W_rec_full", R"(W_{\mathrm{rec}}^{\mathrm{full}})", tp_desc("Full recomputation repeats the forward of every block operation before the backward."), layer_fwd, t,
      {via("the sum of ``work.matrix_ops`` over the ``recompute`` tasks of layer 0, full recomputation",
           [](const Bindings& b) { return layer_matrix(run(model(b), strategy(b, {false, Recompute::Full, std::nullopt, false}), false).dist, "0", {Phase::recompute}); },
           tpf)}));
  p.formulas.push_back(formula(
      "W_rec_sel", R"(W_{\mathrm{rec}}^{\mathrm{sel}})", tp_desc("Selective recomputation repeats only the attention core (score, softmax, dropout, context)."),
      Expr(4) * B * s * s * h, t,
      {via("the sum of ``work.matrix_ops`` over the ``recompute`` tasks of layer 0, selective recomputation",
           [](const Bindings& b) { return layer_matrix(run(model(b), strategy(b, {false, Recompute::Selective, std::nullopt, false}), false).dist, "0", {Phase::recompute}); },
           tpf)}));
  p.formulas.push_back(formula(
      "M_TP", R"(M_{\mathrm{TP}})", R"(Logical payload of a tensor-parallel collective at a block boundary: the activation :math:`[B, s, h]` with :math:`e` bytes per element.)",
      B * s * h * e, Expr(1),
      {via("``collective.message_bytes`` of task ``tp.fwd.all_reduce:L0.proj``",
           field_hook("tp.fwd.all_reduce:L0.proj", {}, [](const DistTask& x) { return x.collective.value().message_bytes; }), tpe),
       via("``collective.message_bytes`` of task ``tp.fwd.reduce_scatter:L0.proj`` (sequence parallelism)",
           field_hook("tp.fwd.reduce_scatter:L0.proj", sp, [](const DistTask& x) { return x.collective.value().message_bytes; }), tpe)}));
  p.formulas.push_back(formula(
      "M_AR", R"(M_{\mathrm{all\text{-}reduce}}^{\mathrm{sent}})", R"(Bytes a rank sends in a ring all-reduce of :math:`M_{\mathrm{TP}}`: :math:`2 M_{\mathrm{TP}} (t-1)/t`.)",
      Expr(2) * B * s * h * e * (t - Expr(1)), t,
      {via("``work.message_bytes`` of task ``tp.fwd.all_reduce:L0.proj``",
           field_hook("tp.fwd.all_reduce:L0.proj", {}, [](const DistTask& x) { return x.work.message_bytes; }), tpe)}));
  p.formulas.push_back(formula(
      "M_AG_RS", R"(M_{\mathrm{all\text{-}gather}}^{\mathrm{sent}} = M_{\mathrm{reduce\text{-}scatter}}^{\mathrm{sent}})",
      R"(With sequence parallelism the all-reduce becomes an all-gather / reduce-scatter pair; each sends :math:`M_{\mathrm{TP}} (t-1)/t` per rank.)",
      B * s * h * e * (t - Expr(1)), t,
      {via("``work.message_bytes`` of task ``tp.fwd.all_gather:L0.qkv``", field_hook("tp.fwd.all_gather:L0.qkv", sp, [](const DistTask& x) { return x.work.message_bytes; }), tpe),
       via("``work.message_bytes`` of task ``tp.fwd.reduce_scatter:L0.proj``",
           field_hook("tp.fwd.reduce_scatter:L0.proj", sp, [](const DistTask& x) { return x.work.message_bytes; }), tpe)}));
  p.formulas.push_back(formula(
      "W_reduce", R"(W_{\mathrm{reduce}})", R"(Local reduction work (vector operations) per rank of a summing tensor-parallel collective.)", B * s * h * (t - Expr(1)), t,
      {via("``work.vector_ops`` of task ``tp.fwd.all_reduce:L0.proj``", field_hook("tp.fwd.all_reduce:L0.proj", {}, [](const DistTask& x) { return x.work.vector_ops; }), tpe),
       via("``work.vector_ops`` of task ``tp.fwd.reduce_scatter:L0.proj`` (sequence parallelism)",
           field_hook("tp.fwd.reduce_scatter:L0.proj", sp, [](const DistTask& x) { return x.work.vector_ops; }), tpe)}));
  const std::vector<Bindings> pp = {{{"h", 64}, {"a", 4}, {"t", 2}, {"e", 2}, {"l", 2}, {"p", 2}}, {{"h", 32}, {"a", 2}, {"t", 1}, {"e", 4}, {"l", 4}, {"p", 4}},
                                    {{"h", 48}, {"a", 4}, {"t", 4}, {"e", 2}, {"l", 6}, {"p", 3}}};
  p.formulas.push_back(formula(
      "M_PP", R"(M_{\mathrm{PP}})", R"(Bytes of one pipeline send between stages (the boundary activation of one microbatch).)", B * s * h * e, Expr(1),
      {via("``work.message_bytes`` of task ``send:fwd.g0``", field_hook("send:fwd.g0", {}, [](const DistTask& x) { return x.work.message_bytes; }), pp)}));
  p.formulas.push_back(formula(
      "M_PP_SP", R"(M_{\mathrm{PP}}^{\mathrm{SP}})", R"(The same with sequence parallelism: each rank sends its :math:`1/t` slice of the sequence.)", B * s * h * e, t,
      {via("``work.message_bytes`` of task ``send:fwd.g0``", field_hook("send:fwd.g0", sp, [](const DistTask& x) { return x.work.message_bytes; }), pp)}));

  // Narayanan et al.: matrix operations of one iteration.
  const std::vector<Bindings> it = {
      {{"l", 2}, {"h", 64}, {"a", 4}, {"V", 1000}, {"t", 2}, {"p", 2}, {"d_p", 2}, {"m", 4}},
      {{"l", 4}, {"h", 32}, {"a", 2}, {"V", 50}, {"t", 1}, {"p", 1}, {"d_p", 1}, {"m", 1}},
      {{"l", 4}, {"h", 64}, {"a", 8}, {"V", 512}, {"t", 4}, {"p", 2}, {"d_p", 3}, {"m", 2}},
      {{"l", 8}, {"h", 32}, {"a", 4}, {"V", 96}, {"t", 2}, {"p", 2}, {"v", 2}, {"d_p", 1}, {"m", 4}}};
  auto iter_hook = [](Recompute r) {
    return [r](const Bindings& b) { return iteration_matrix(run(model(b), strategy(b, {false, r, std::nullopt, false}), false).dist); };
  };
  const char* iter_what = "the sum over all tasks of ``work.matrix_ops`` :math:`\\times` ``repeat`` :math:`\\times` the number of ranks";
  const Expr gb = sym("B") * sym("m") * sym("d_p");
  auto iteration = [&](const char* name, const char* lhs, const char* desc, long long c1, long long c2, Recompute r) {
    DeclaredFormula f = formula(name, lhs, desc, Expr(c1) * Bg * s * l * h * h + Expr(c2) * Bg * s * s * l * h + Expr(6) * Bg * s * h * V, Expr(1),
                                {via(iter_what, iter_hook(r), it)});
    f.where = {{"B_g", gb}};
    p.formulas.push_back(std::move(f));
  };
  iteration("F_iter", R"(F_{\mathrm{iter}})",
            R"(Matrix operations of one training iteration of a GPT model (:math:`F = 4h`, vocabulary :math:`V`, tied embedding) over the global batch :math:`B_g`, without recomputation: Narayanan et al.'s :math:`72 B_g s l h^2 \left(1 + \frac{s}{6h} + \frac{V}{12lh}\right)`. Independent of :math:`t`, :math:`p` and the schedule.)",
            72, 12, Recompute::None);
  iteration("F_iter_full", R"(F_{\mathrm{iter}}^{\mathrm{full}})",
            R"(The same with full activation recomputation: Narayanan et al.'s :math:`96 B_g s l h^2 \left(1 + \frac{s}{6h} + \frac{V}{16lh}\right)`.)", 96, 16, Recompute::Full);
  iteration("F_iter_sel", R"(F_{\mathrm{iter}}^{\mathrm{sel}})", R"(The same with selective recomputation (the attention core only).)", 72, 16, Recompute::Selective);
  return p;
}

// ---- PlanTransformerTrainingPass ------------------------------------------------------------

PassDoc plan_doc() {
  const Expr B = sym("B"), s = sym("s"), h = sym("h"), a = sym("a"), l = sym("l"), t = sym("t"), p_ = sym("p"), v = sym("v"), dp = sym("d_p");
  // Activation bytes stored for layer 1 of a two-layer model (layer 0's output is layer 1's
  // input; a one-layer model would count the model input instead).
  auto layer_hook = [](Knobs k) {
    return [k](const Bindings& b) {
      Bindings two = b;
      two["l"] = 2;
      return layer_activations(run(model(two), strategy(two, k), true).plan, "1");
    };
  };
  // The stage-0 `activations` memory fact of a one-layer model (one chunk, one microbatch).
  auto chunk_hook = [](Knobs k) {
    return [k](const Bindings& b) {
      Bindings one = b;
      one["l"] = 1;
      return memory(run(model(one), strategy(one, k), true).plan, 0, MemoryCategory::activations, 0);
    };
  };
  const char* layer_what = "the sum of ``size`` over the activation buffers read by tasks of layer 1 of a two-layer model";
  const char* chunk_what = "``bytes`` of the stage-0 ``activations`` memory fact of a one-layer model";
  const std::vector<Bindings> one = {{{"h", 64}, {"a", 4}, {"t", 1}}, {{"h", 96}, {"a", 12}, {"t", 1}}, {{"h", 32}, {"a", 1}, {"t", 1}}};
  const std::vector<Bindings> tp = {{{"h", 64}, {"a", 4}, {"t", 1}}, {{"h", 64}, {"a", 4}, {"t", 2}}, {{"h", 96}, {"a", 12}, {"t", 4}}, {{"h", 64}, {"a", 8}, {"t", 8}}};
  const Knobs none{}, spk{true, Recompute::None, std::nullopt, false}, sel{false, Recompute::Selective, std::nullopt, false},
      spsel{true, Recompute::Selective, std::nullopt, false}, full{false, Recompute::Full, std::nullopt, false};
  const Expr bsh = B * s * h, core = Expr(5) * a * B * s * s;

  PassDoc p;
  p.name = "PlanTransformerTrainingPass";
  p.title = "Training portable planning";
  p.boundary = "DistributedTaskIR -> PortablePlanIR";
  p.provenance = "conservation of the distributed work vector; Korthikanti et al. activation memory; Megatron-LM mixed precision and ZeRO";
  p.evidence = "transition obligations at the gate (WORK-1 work equality, MEM-2 schedule peak); the no-drift test";
  p.output_ir = "PortablePlanIR";
  p.cpp_symbol = "plancert::passes::plan_training";
  p.header = "passes/train/plan.h";
  p.references = {"Korthikanti et al. 2022, *Reducing Activation Recomputation in Large Transformer Models*.",
                  "Shoeybi et al. 2019, *Megatron-LM: Training Multi-Billion Parameter Language Models Using Model Parallelism*.",
                  "Rajbhandari et al. 2020, *ZeRO: Memory Optimizations Toward Training Trillion Parameter Models*."};
  const char* gpt = " GPT block (LayerNorm, GeLU, :math:`F = 4h`), 16-bit activations, 1-byte dropout masks; per rank.";
  auto act = [&](const char* name, const char* lhs, std::string desc, Expr rhs, Expr den, Knobs k, const std::vector<Bindings>& inst, bool with_chunk) {
    std::vector<Derivation> ds{via(layer_what, layer_hook(k), inst)};
    if (with_chunk) ds.push_back(via(chunk_what, chunk_hook(k), inst));
    p.formulas.push_back(formula(name, lhs, desc + gpt, std::move(rhs), std::move(den), std::move(ds)));
  };
  act("A_layer", R"(A_{\mathrm{layer}})", R"(Stored activation bytes of one layer without parallelism: Korthikanti et al.'s :math:`sbh\left(34 + \frac{5as}{h}\right)`.)",
      Expr(34) * bsh + core, Expr(1), none, one, true);
  act("A_layer_TP", R"(A_{\mathrm{layer}}^{\mathrm{TP}})",
      R"(The same with tensor parallelism: :math:`sbh\left(10 + \frac{24}{t} + \frac{5as}{ht}\right)`.)", Expr(10) * bsh * t + Expr(24) * bsh + core, t, none, tp, true);
  act("A_layer_TP_SP", R"(A_{\mathrm{layer}}^{\mathrm{TP+SP}})",
      R"(Tensor and sequence parallelism: :math:`sbh\left(\frac{34}{t} + \frac{5as}{ht}\right)`.)", Expr(34) * bsh + core, t, spk, tp, false);
  act("A_layer_TP_sel", R"(A_{\mathrm{layer}}^{\mathrm{TP+sel}})",
      R"(Tensor parallelism with selective recomputation: :math:`sbh\left(10 + \frac{24}{t}\right)`.)", Expr(10) * bsh * t + Expr(24) * bsh, t, sel, tp, true);
  act("A_layer_TP_SP_sel", R"(A_{\mathrm{layer}}^{\mathrm{TP+SP+sel}})",
      R"(Tensor and sequence parallelism with selective recomputation: :math:`\frac{34sbh}{t}`.)", Expr(34) * bsh, t, spsel, tp, false);
  act("A_layer_full", R"(A_{\mathrm{layer}}^{\mathrm{full}})", R"(Full recomputation stores the layer input only: :math:`2sbh`.)", Expr(2) * bsh, Expr(1), full, tp, true);

  const Expr a_tp = Expr(10) * bsh * t + Expr(24) * bsh + core;  // t * A_layer^TP
  auto peak_hook = [](const Bindings& b) { return memory(run(model(b), strategy(b), true).plan, 0, MemoryCategory::activations_peak); };
  const char* peak_what = "``bytes`` of the stage-0 ``activations_peak`` memory fact";
  p.formulas.push_back(formula(
      "C_peak_1F1B", R"(C_{\mathrm{act}}^{\mathrm{1F1B}})",
      R"(Peak stored activations of the first pipeline stage under 1F1B with :math:`m \ge p` microbatches: :math:`p` microbatches in flight, each holding the activations of :math:`l/p` layers, i.e. :math:`l \cdot A_{\mathrm{layer}}^{\mathrm{TP}}`.)",
      l * a_tp, t,
      {via(peak_what, peak_hook,
           {{{"l", 4}, {"h", 64}, {"a", 4}, {"t", 2}, {"p", 2}, {"m", 4}}, {{"l", 6}, {"h", 32}, {"a", 2}, {"t", 1}, {"p", 3}, {"m", 3}},
            {{"l", 8}, {"h", 64}, {"a", 8}, {"t", 4}, {"p", 4}, {"m", 8}}, {{"l", 2}, {"h", 16}, {"a", 1}, {"t", 1}, {"p", 1}, {"m", 1}}})}));
  p.formulas.push_back(formula(
      "C_peak_interleaved", R"(C_{\mathrm{act}}^{\mathrm{interleaved}})",
      R"(The same under the interleaved schedule with :math:`v` chunks per stage and :math:`mv \ge pv + p - 1`: Korthikanti et al.'s factor :math:`1 + \frac{p-1}{pv}`.)",
      l * a_tp * (p_ * v + p_ - Expr(1)), t * p_ * v,
      {via(peak_what, peak_hook,
           {{{"l", 8}, {"h", 64}, {"a", 4}, {"t", 2}, {"p", 2}, {"v", 2}, {"m", 4}}, {{"l", 12}, {"h", 32}, {"a", 2}, {"t", 1}, {"p", 3}, {"v", 2}, {"m", 6}},
            {{"l", 16}, {"h", 64}, {"a", 8}, {"t", 4}, {"p", 4}, {"v", 2}, {"m", 8}}, {{"l", 12}, {"h", 32}, {"a", 2}, {"t", 2}, {"p", 2}, {"v", 3}, {"m", 4}}})}));

  // Megatron-LM mixed precision: bytes per parameter of weights + gradients + Adam state.
  const std::vector<Bindings> dps = {{{"h", 32}, {"a", 2}, {"t", 1}, {"d_p", 1}}, {{"h", 32}, {"a", 2}, {"t", 2}, {"d_p", 4}}, {{"h", 32}, {"a", 2}, {"t", 1}, {"d_p", 2}}};
  const char* bpp_what =
      "the ``weights``, ``weight_gradients`` and ``optimizer_state`` memory facts of stage 0 over the parameters of its shards (per rank)";
  auto bpp = [&](const char* name, const char* lhs, const char* desc, DType dt, bool dist, Expr rhs, Expr den) {
    Knobs k{false, Recompute::None, dt, dist};
    p.formulas.push_back(formula(name, lhs, desc, std::move(rhs), std::move(den),
                                 {via(bpp_what, [k](const Bindings& b) { return bytes_per_parameter(run(model(b), strategy(b, k), true)); }, dps)}));
  };
  bpp("beta_bf16", R"(\beta_{\mathrm{bf16}})", "Bytes per parameter (weights, gradients, optimizer state): bf16 parameters, fp32 gradients, Adam.", DType::BF16, false, Expr(18),
      Expr(1));
  bpp("beta_bf16_dist", R"(\beta_{\mathrm{bf16}}^{\mathrm{dist}})", "The same with the optimizer state sharded over the :math:`d_p` data-parallel ranks (exact when :math:`d_p` divides the stage's parameter count :math:`P`; otherwise the flat state buffer is padded to :math:`\\lceil P/d_p \\rceil` parameters per rank).", DType::BF16,
      true, Expr(6) * dp + Expr(12), dp);
  bpp("beta_fp16", R"(\beta_{\mathrm{fp16}})", "fp16 parameters and gradients, Adam.", DType::FP16, false, Expr(20), Expr(1));
  bpp("beta_fp16_dist", R"(\beta_{\mathrm{fp16}}^{\mathrm{dist}})", "The same with a distributed optimizer.", DType::FP16, true, Expr(4) * dp + Expr(16), dp);
  bpp("beta_fp32", R"(\beta_{\mathrm{fp32}})", "fp32 throughout, Adam.", DType::FP32, false, Expr(16), Expr(1));
  bpp("beta_fp32_dist", R"(\beta_{\mathrm{fp32}}^{\mathrm{dist}})", "The same with a distributed optimizer.", DType::FP32, true, Expr(8) * dp + Expr(8), dp);
  return p;
}

}  // namespace
}  // namespace training

void add_training_docs(std::vector<PassDoc>& out) {
  out.push_back(training::build_model_ir_doc());
  out.push_back(training::distribute_doc());
  out.push_back(training::plan_doc());
}

}  // namespace plancert::formulas::detail
