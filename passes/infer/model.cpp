// SPDX-License-Identifier: Apache-2.0
#include "passes/infer/model.h"

#include "passes/train/model_builder.h"

#include <algorithm>
#include <cctype>
#include <optional>

namespace plancert::passes {
namespace {

using frontend::Activation;
using frontend::ModelConfig;
using frontend::NormKind;

constexpr const char* kRule = "infer.lower";

Attrs at(const std::string& layer, const char* tp) { return Attrs{{"layer", layer}, {"tp", tp}}; }

}  // namespace

std::string_view to_string(InferPhase p) { return p == InferPhase::prefill ? "prefill" : "decode"; }

frontend::DType inference_dtype(const ModelConfig& model) {
  std::string s = model.dtype.value_or("");
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (s == "float16" || s == "fp16" || s == "half") return frontend::DType::FP16;
  if (s == "float32" || s == "fp32" || s == "float") return frontend::DType::FP32;
  return frontend::DType::BF16;
}

ModelIR build_inference_model_ir(const ModelConfig& cfg, const InferenceWorkload& w, frontend::DType dtype) {
  ModelIrBuilder b(kRule, std::string(frontend::to_string(dtype)));
  b.m.name = cfg.name;
  b.m.symbols = w.symbols;
  const Expr Bt = w.batch, C = w.context, Q = w.query(), H(cfg.hidden), F(cfg.ffn), d(cfg.head_dim), A(cfg.heads), K(cfg.kv_heads);
  const Expr BQ = Bt * Q;
  const bool ln = cfg.norm == NormKind::LayerNorm, mha = cfg.kv_heads == cfg.heads;
  const Expr norm_ops(ln ? 9 : 7);

  auto norm = [&](const std::string& id, const std::string& layer, Index x) {
    Indices in{x, b.weight(id + ".w", {H})};
    if (ln) in.push_back(b.weight(id + ".b", {H}));
    Index y = b.value(id + ".out", b.m.values[static_cast<std::size_t>(x)].shape);
    b.op(id, ln ? "layernorm" : "rmsnorm", in, {y}, Expr(), norm_ops * b.elems(y), at(layer, "replicated"));
    return y;
  };
  // A linear layer over the rows of x ([b, rows, in_dim]); `outs` splits its output columns.
  auto linear = [&](const std::string& id, const std::string& layer, const char* tp, Index x, const Expr& rows, const Expr& in_dim,
                    std::vector<std::pair<std::string, Expr>> outs, bool bias, Index tied = -1, ValueRole role = ValueRole::activation) {
    Expr out_dim;
    for (auto& o : outs) out_dim += o.second;
    Indices in{x, tied >= 0 ? tied : b.weight(id + ".w", {in_dim, out_dim})};
    if (bias) in.push_back(b.weight(id + ".b", {out_dim}));
    Indices out;
    for (auto& o : outs) out.push_back(b.value(o.first, {Bt, rows, o.second}, role));
    b.op(id, "linear", in, out, Expr(2) * Bt * rows * in_dim * out_dim, Expr(), at(layer, tp));
    return out;
  };
  auto add = [&](const std::string& id, const std::string& layer, Index x, Index y, ValueRole role = ValueRole::activation) {
    Index z = b.value(id + ".out", {Bt, Q, H}, role);
    b.op(id, "add", {x, y}, {z}, Expr(), b.elems(z), at(layer, "replicated"));
    return z;
  };

  Index x, embedding = -1;
  const bool has_vocab = cfg.vocab.has_value();
  if (has_vocab) {
    Index tokens = b.value("tokens", {Bt, Q}, ValueRole::input, "i32");
    embedding = b.weight("embed.w", {Expr(*cfg.vocab), H});
    x = b.value("embed.out", {Bt, Q, H});
    b.op("embed", "embedding", {tokens, embedding}, {x}, Expr(), Expr(), at("embedding", "vocab"));
    if (cfg.learned_positions) {
      Index pw = b.weight("pos.w", {cfg.max_positions ? Expr(*cfg.max_positions) : C, H});
      Index pe = b.value("pos.out", {Bt, Q, H});
      b.op("pos", "embedding", {tokens, pw}, {pe}, Expr(), Expr(), at("embedding", "replicated"));
      x = add("embed.add", "embedding", x, pe);
    }
  } else {
    x = b.value("input", {Bt, Q, H}, ValueRole::input);
  }

  const std::size_t ops_before = b.m.operations.size(), values_before = b.m.values.size();
  for (std::int64_t l = 0; l < cfg.layers; ++l) {
    if (l == 1) require_layers_room(b.m, ops_before, values_before, cfg);
    const std::string L = std::to_string(l), p = "L" + L + ".";
    Index h1 = norm(p + "ln1", L, x);
    Index q, k, v;
    if (mha) {
      Indices o = linear(p + "qkv", L, "column", h1, Q, H, {{p + "q", A * d}, {p + "k", K * d}, {p + "v", K * d}}, cfg.biases);
      q = o[0], k = o[1], v = o[2];
    } else {  // GQA / MQA: the KV projection runs on max(k/t, 1) heads per rank
      q = linear(p + "q", L, "column", h1, Q, H, {{p + "q.out", A * d}}, cfg.biases)[0];
      Indices o = linear(p + "kv", L, "kv", h1, Q, H, {{p + "k", K * d}, {p + "v", K * d}}, cfg.biases);
      k = o[0], v = o[1];
    }
    if (cfg.rope) {
      Index qr = b.value(p + "rope_q.out", {Bt, Q, A * d}), kr = b.value(p + "rope_k.out", {Bt, Q, K * d});
      b.op(p + "rope_q", "rope", {q}, {qr}, Expr(), Expr(6) * b.elems(qr), at(L, "head"));
      b.op(p + "rope_k", "rope", {k}, {kr}, Expr(), Expr(6) * b.elems(kr), at(L, "kv"));
      q = qr, k = kr;
    }
    Index kc = b.value(p + "k_cache", {Bt, C, K, d}, ValueRole::state), vc = b.value(p + "v_cache", {Bt, C, K, d}, ValueRole::state);
    b.op(p + "cache", "cache_write", {k, v}, {}, Expr(), Expr(), at(L, "kv"), {Effect{EffectKind::write, kc}, Effect{EffectKind::write, vc}});
    Index sc = b.value(p + "score.out", {Bt, A, Q, C});
    b.op(p + "score", "matmul", {q, kc}, {sc}, Expr(2) * Bt * A * Q * C * d, Expr(), at(L, "head"), {Effect{EffectKind::read, kc}});
    Index pr = b.value(p + "softmax.out", {Bt, A, Q, C});
    b.op(p + "softmax", "softmax", {sc}, {pr}, Expr(), Expr(5) * b.elems(pr), at(L, "head"));
    Index ctx = b.value(p + "context.out", {Bt, Q, A * d});
    b.op(p + "context", "matmul", {pr, vc}, {ctx}, Expr(2) * Bt * A * Q * C * d, Expr(), at(L, "head"), {Effect{EffectKind::read, vc}});
    Index o = linear(p + "proj", L, "row", ctx, Q, A * d, {{p + "proj.out", H}}, cfg.biases)[0];
    Index r1 = add(p + "res1", L, x, o);
    Index h2 = norm(p + "ln2", L, r1);
    Index y;
    const bool gelu = cfg.activation == Activation::Gelu, relu = cfg.activation == Activation::Relu;
    if (cfg.gated_mlp) {
      Index g = linear(p + "gate", L, "column", h2, Q, H, {{p + "gate.out", F}}, cfg.biases)[0];
      Index u = linear(p + "up", L, "column", h2, Q, H, {{p + "up.out", F}}, cfg.biases)[0];
      Index sg = b.value(p + "act.out", {Bt, Q, F});
      b.op(p + "act", gelu ? "gelu" : "silu", {g}, {sg}, Expr(), Expr(gelu ? 8 : 5) * b.elems(sg), at(L, "head"));
      Index gu = b.value(p + "glu.out", {Bt, Q, F});
      b.op(p + "glu", "mul", {sg, u}, {gu}, Expr(), b.elems(gu), at(L, "head"));
      y = linear(p + "down", L, "row", gu, Q, F, {{p + "down.out", H}}, cfg.biases)[0];
    } else {
      Index f = linear(p + "fc1", L, "column", h2, Q, H, {{p + "fc1.out", F}}, cfg.biases)[0];
      Index g = b.value(p + "act.out", {Bt, Q, F});
      b.op(p + "act", relu ? "relu" : gelu ? "gelu" : "silu", {f}, {g}, Expr(), Expr(relu ? 1 : gelu ? 8 : 5) * b.elems(g), at(L, "head"));
      y = linear(p + "fc2", L, "row", g, Q, F, {{p + "fc2.out", H}}, cfg.biases)[0];
    }
    x = add(p + "res2", L, r1, y, !has_vocab && l + 1 == cfg.layers ? ValueRole::output : ValueRole::activation);
  }

  if (has_vocab) {
    if (w.phase == InferPhase::prefill) {  // only the last position generates a token
      Index last = b.value("last.out", {Bt, Expr(1), H});
      b.op("last", "slice", {x}, {last}, Expr(), Expr(), at("head", "replicated"), {}, b.bytes(last));
      x = last;
    }
    Index hf = norm("final_norm", "head", x);
    linear("lm_head", "head", "vocab", hf, Expr(1), H, {{"logits", Expr(*cfg.vocab)}}, false, cfg.tied_embeddings ? embedding : -1, ValueRole::output);
  }
  return std::move(b.m);
}

}  // namespace plancert::passes
