// SPDX-License-Identifier: Apache-2.0
#include "passes/train/model_builder.h"

#include "passes/frontend/room.h"
#include "verifiers/gate.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace plancert::passes {
namespace {

using frontend::Activation;
using frontend::ModelConfig;
using frontend::NormKind;

constexpr const char* kRule = "frontend.lower";

// The training lowering's operations also record `saves` (the values their backward needs),
// and those of layout kv the model's KV heads (`kv_heads`, read by kv_groups).
class Builder : public ModelIrBuilder {
 public:
  Builder(std::string dtype, std::int64_t kv_heads) : ModelIrBuilder(kRule, std::move(dtype)), kv_heads_(kv_heads) {}
  void op(const std::string& id, const std::string& kind, Indices in, Indices out, Expr matrix, Expr vector, Attrs attrs, const Indices& saves) {
    std::string s;
    for (Index v : saves) s += (s.empty() ? "" : ",") + std::to_string(v);
    if (!s.empty()) attrs["saves"] = s;
    if (attrs.at("tp") == "kv") attrs["kv_heads"] = std::to_string(kv_heads_);
    ModelIrBuilder::op(id, kind, std::move(in), std::move(out), std::move(matrix), std::move(vector), std::move(attrs));
  }

 private:
  std::int64_t kv_heads_;
};

Attrs at(const std::string& layer, const char* tp, bool core = false) {
  Attrs a{{"layer", layer}, {"tp", tp}};
  if (core) a["region"] = "attention_core";
  return a;
}

}  // namespace

std::int64_t dtype_bytes(std::string_view dtype) {
  if (auto n = dtype_size(dtype)) return *n;
  throw std::invalid_argument("unknown dtype " + std::string(dtype));
}

Indices saved_values(const Operation& op, std::size_t values) {
  Indices out;
  const auto it = op.attrs.find("saves");
  for (std::size_t pos = 0; it != op.attrs.end() && pos < it->second.size();) {
    const std::size_t comma = std::min(it->second.find(',', pos), it->second.size());
    const std::string text = it->second.substr(pos, comma - pos);
    if (text.empty() || !std::all_of(text.begin(), text.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) throw std::invalid_argument("saves: \"" + text + "\"");
    const long long v = std::stoll(text);  // digits only: std::out_of_range past long long
    if (static_cast<unsigned long long>(v) >= values || v > std::numeric_limits<Index>::max()) throw std::out_of_range("saves: " + text);
    out.push_back(static_cast<Index>(v));
    pos = comma + 1;
  }
  return out;
}

std::int64_t kv_groups(const Operation& op, std::int64_t t) {
  const auto it = op.attrs.find("kv_heads");
  if (op.attrs.at("tp") != "kv" || it == op.attrs.end()) return t;
  return std::min<std::int64_t>(std::stoll(it->second), t);
}

ModelIrBuilder::ModelIrBuilder(std::string rule, std::string dtype) : rule_(std::move(rule)), dt_(std::move(dtype)) { m.rules = {rule_}; }

Index ModelIrBuilder::value(const std::string& id, std::vector<Expr> shape, ValueRole role, std::string dtype) {
  ModelValue v;
  v.id = id;
  v.shape = std::move(shape);
  v.role = role;
  v.dtype = dtype.empty() ? dt_ : std::move(dtype);
  v.lineage = Lineage{LineageKind::introduced, rule_, {}};
  m.values.push_back(std::move(v));
  return static_cast<Index>(m.values.size() - 1);
}

Index ModelIrBuilder::weight(const std::string& id, std::vector<Expr> shape) { return value(id, std::move(shape), ValueRole::weight); }

Expr ModelIrBuilder::bytes(Index v) const {
  const ModelValue& x = m.values[static_cast<std::size_t>(v)];
  return elements(x) * Expr(dtype_bytes(x.dtype));
}

Expr ModelIrBuilder::elems(Index v) const { return elements(m.values[static_cast<std::size_t>(v)]); }

Operation& ModelIrBuilder::op(const std::string& id, const std::string& kind, Indices in, Indices out, Expr matrix, Expr vector, Attrs attrs,
                              std::vector<Effect> effects, std::optional<Expr> read) {
  Operation o;
  o.id = id;
  o.kind = kind;
  o.work.matrix_ops = std::move(matrix);
  o.work.vector_ops = std::move(vector);
  for (Index v : in) {
    o.work.read_bytes += bytes(v);
    if (m.values[static_cast<std::size_t>(v)].role == ValueRole::weight) o.work.persistent_bytes += bytes(v);
  }
  if (read) o.work.read_bytes = *read;
  for (Index v : out) o.work.write_bytes += bytes(v);
  if (std::any_of(effects.begin(), effects.end(), [](const Effect& e) { return e.kind == EffectKind::write; })) o.work.write_bytes += o.work.read_bytes;
  o.attrs = std::move(attrs);
  o.effects = std::move(effects);
  o.inputs = std::move(in);
  o.outputs = std::move(out);
  o.lineage = Lineage{LineageKind::introduced, rule_, {}};
  m.operations.push_back(std::move(o));
  return m.operations.back();
}

Expr elements(const ModelValue& v) {
  Expr n(1);
  for (const auto& d : v.shape) n = n * d;
  return n;
}

void require_layers_room(const ModelIR& model, std::size_t operations_before, std::size_t values_before, const frontend::ModelConfig& config) {
  const std::uintmax_t ops = model.operations.size() - operations_before, values = model.values.size() - values_before;
  const std::uintmax_t layer = frontend::saturating_sum({ops * sizeof(Operation), values * sizeof(ModelValue)});
  frontend::require_room(frontend::saturating_product({static_cast<std::uintmax_t>(config.layers), layer}), config.source, "layers",
                         "a ModelIR of " + std::to_string(config.layers) + " layers of " + std::to_string(ops) + " operations and " + std::to_string(values) + " values each");
}

std::uintmax_t rank_list_bytes(std::uintmax_t tasks, std::uintmax_t ranks) {
  return frontend::saturating_product({tasks, frontend::saturating_sum({sizeof(DistTask), frontend::saturating_product({ranks, sizeof(Index)})})});
}

ModelIR build_model_ir(const ModelConfig& cfg, const Workload& w, frontend::DType dtype) {
  const std::string dt(frontend::to_string(dtype));
  Builder b(dt, cfg.kv_heads);
  b.m.name = cfg.name;
  b.m.symbols = w.symbols;
  const Expr B = w.batch, S = w.seq, H(cfg.hidden), F(cfg.ffn), d(cfg.head_dim);
  const Expr A(cfg.heads), K(cfg.kv_heads);
  const Expr BS = B * S;
  const bool ln = cfg.norm == NormKind::LayerNorm, mha = cfg.kv_heads == cfg.heads;
  const Expr norm_ops(ln ? 9 : 7);

  auto norm = [&](const std::string& id, const std::string& layer, Index x) {
    Indices in{x, b.weight(id + ".w", {H})};
    if (ln) in.push_back(b.weight(id + ".b", {H}));
    Index y = b.value(id + ".out", {B, S, H});
    b.op(id, ln ? "layernorm" : "rmsnorm", in, {y}, Expr(), norm_ops * b.elems(y), at(layer, "replicated"), {x});
    return y;
  };
  auto linear = [&](const std::string& id, const std::string& layer, const char* tp, Index x, Expr in_dim, std::vector<std::pair<std::string, Expr>> outs,
                    bool bias, Index tied_weight = -1) {
    Expr out_dim;
    for (auto& o : outs) out_dim += o.second;
    Indices in{x};
    in.push_back(tied_weight >= 0 ? tied_weight : b.weight(id + ".w", {in_dim, out_dim}));
    if (bias) in.push_back(b.weight(id + ".b", {out_dim}));
    Indices out;
    for (auto& o : outs) out.push_back(b.value(o.first, {B, S, o.second}));
    b.op(id, "linear", in, out, Expr(2) * BS * in_dim * out_dim, Expr(), at(layer, tp), {x});
    return out;
  };
  // Score-matrix entries the attention computes per (sequence, head): s^2, or the causal
  // lower triangle s(s+1)/2 when the model says causal (the stored tensors stay s x s).
  const Expr scores = cfg.causal ? S * (S + Expr(1)) / Rat(2) : S * S;
  auto dropout = [&](const std::string& id, const std::string& layer, const char* tp, Index x, bool core) {
    if (!cfg.dropout) return x;
    auto shape = b.m.values[static_cast<std::size_t>(x)].shape;
    Index y = b.value(id + ".out", shape), mask = b.value(id + ".mask", shape, ValueRole::activation, "u8");
    b.op(id, "dropout", {x}, {y, mask}, Expr(), core ? B * A * scores : b.elems(y), at(layer, tp, core), {mask});
    return y;
  };
  auto add = [&](const std::string& id, const std::string& layer, Index x, Index y, ValueRole role = ValueRole::activation) {
    Index z = b.value(id + ".out", {B, S, H}, role);
    b.op(id, "add", {x, y}, {z}, Expr(), b.elems(z), at(layer, "replicated"), {});
    return z;
  };

  // Embeddings (only when the model states its vocabulary).
  Index x;
  Index embedding = -1;
  const bool has_vocab = cfg.vocab.has_value();
  if (has_vocab) {
    const Expr V(*cfg.vocab);
    Index tokens = b.value("tokens", {B, S}, ValueRole::input, "i32");
    embedding = b.weight("embed.w", {V, H});
    Index te = b.value("embed.out", {B, S, H});
    b.op("embed", "embedding", {tokens, embedding}, {te}, Expr(), Expr(), at("embedding", "vocab"), {tokens});
    x = te;
    if (cfg.learned_positions) {
      Expr P = cfg.max_positions ? Expr(*cfg.max_positions) : S;
      Index pw = b.weight("pos.w", {P, H});
      Index pe = b.value("pos.out", {B, S, H});
      b.op("pos", "embedding", {tokens, pw}, {pe}, Expr(), Expr(), at("embedding", "replicated"), {});
      x = add("embed.add", "embedding", te, pe);
    }
    x = dropout("embed.drop", "embedding", "replicated", x, false);
  } else {
    x = b.value("input", {B, S, H}, ValueRole::input);
  }

  const std::size_t ops_before = b.m.operations.size(), values_before = b.m.values.size();
  for (std::int64_t l = 0; l < cfg.layers; ++l) {
    if (l == 1) require_layers_room(b.m, ops_before, values_before, cfg);
    const std::string L = std::to_string(l), p = "L" + L + ".";
    Index h1 = norm(p + "ln1", L, x);
    Index q, k, v;
    if (mha) {  // MHA: one fused column-parallel QKV projection
      std::vector<std::pair<std::string, Expr>> qkv{{p + "q", A * d}, {p + "k", K * d}, {p + "v", K * d}};
      Indices qkv_out = linear(p + "qkv", L, "column", h1, H, qkv, cfg.biases);
      q = qkv_out[0], k = qkv_out[1], v = qkv_out[2];
    } else {  // GQA / MQA: the KV projection follows the KV heads (layout "kv")
      q = linear(p + "q_proj", L, "column", h1, H, {{p + "q", A * d}}, cfg.biases)[0];
      Indices kv = linear(p + "kv", L, "kv", h1, H, {{p + "k", K * d}, {p + "v", K * d}}, cfg.biases);
      k = kv[0], v = kv[1];
    }
    if (cfg.rope) {
      Index qr = b.value(p + "rope.q", {B, S, A * d}), kr = b.value(p + "rope.k", {B, S, K * d});
      if (mha) {
        b.op(p + "rope", "rope", {q, k}, {qr, kr}, Expr(), Expr(6) * (b.elems(qr) + b.elems(kr)), at(L, "head"), {});
      } else {
        b.op(p + "rope_q", "rope", {q}, {qr}, Expr(), Expr(6) * b.elems(qr), at(L, "head"), {});
        b.op(p + "rope_k", "rope", {k}, {kr}, Expr(), Expr(6) * b.elems(kr), at(L, "kv"), {});
      }
      q = qr;
      k = kr;
    }
    // Attention core (selective recomputation redoes exactly these operations).
    Index sc = b.value(p + "score.out", {B, A, S, S});
    b.op(p + "score", "matmul", {q, k}, {sc}, Expr(2) * B * A * scores * d, Expr(), at(L, "head", true), {q, k});
    Index pr = b.value(p + "softmax.out", {B, A, S, S});
    b.op(p + "softmax", "softmax", {sc}, {pr}, Expr(), Expr(5) * B * A * scores, at(L, "head", true), {pr});
    Index pd = dropout(p + "attn_drop", L, "head", pr, true);
    Index ctx = b.value(p + "context.out", {B, S, A * d});
    b.op(p + "context", "matmul", {pd, v}, {ctx}, Expr(2) * B * A * scores * d, Expr(), at(L, "head", true), {pd, v});
    Index o = linear(p + "proj", L, "row", ctx, A * d, {{p + "proj.out", H}}, cfg.biases)[0];
    o = dropout(p + "proj_drop", L, "replicated", o, false);
    Index r1 = add(p + "res1", L, x, o);
    Index h2 = norm(p + "ln2", L, r1);
    Index y;
    if (cfg.gated_mlp) {
      Index g = linear(p + "gate", L, "column", h2, H, {{p + "gate.out", F}}, cfg.biases)[0];
      Index u = linear(p + "up", L, "column", h2, H, {{p + "up.out", F}}, cfg.biases)[0];
      Index sg = b.value(p + "act.out", {B, S, F});
      b.op(p + "act", cfg.activation == Activation::Gelu ? "gelu" : "silu", {g}, {sg}, Expr(),
           Expr(cfg.activation == Activation::Gelu ? 8 : 5) * b.elems(sg), at(L, "head"), {g});
      Index gu = b.value(p + "glu.out", {B, S, F});
      b.op(p + "glu", "mul", {sg, u}, {gu}, Expr(), b.elems(gu), at(L, "head"), {sg, u});
      y = linear(p + "down", L, "row", gu, F, {{p + "down.out", H}}, cfg.biases)[0];
    } else {
      Index f = linear(p + "fc1", L, "column", h2, H, {{p + "fc1.out", F}}, cfg.biases)[0];
      Index g = b.value(p + "act.out", {B, S, F});
      const char* kind = cfg.activation == Activation::Relu ? "relu" : cfg.activation == Activation::Gelu ? "gelu" : "silu";
      Expr per = Expr(cfg.activation == Activation::Relu ? 1 : cfg.activation == Activation::Gelu ? 8 : 5);
      b.op(p + "act", kind, {f}, {g}, Expr(), per * b.elems(g), at(L, "head"), {f});
      y = linear(p + "fc2", L, "row", g, F, {{p + "fc2.out", H}}, cfg.biases)[0];
    }
    y = dropout(p + "mlp_drop", L, "replicated", y, false);
    x = add(p + "res2", L, r1, y, !has_vocab && l + 1 == cfg.layers ? ValueRole::output : ValueRole::activation);
  }

  if (has_vocab) {
    const Expr V(*cfg.vocab);
    Index hf = norm("final_norm", "head", x);
    Index logits = linear("lm_head", "head", "vocab", hf, H, {{"logits", V}}, false, cfg.tied_embeddings ? embedding : -1)[0];
    Index loss = b.value("loss.out", {B, S}, ValueRole::output, "fp32");
    b.op("loss", "cross_entropy", {logits}, {loss}, Expr(), Expr(6) * b.elems(logits), at("head", "vocab"), {logits});
  }
  return std::move(b.m);
}

}  // namespace plancert::passes
