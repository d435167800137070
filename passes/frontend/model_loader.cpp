// SPDX-License-Identifier: Apache-2.0
// Model loaders: native TOML, Hugging Face config.json, Calculon model JSON.
#include "passes/frontend/document.h"
#include "passes/frontend/exact_number.h"
#include "passes/frontend/loaders.h"

#include <string>

namespace plancert::frontend {

using detail::Location;
using detail::Node;
using detail::note;
using detail::Object;
using detail::Value;
namespace code = detail::code;

namespace {

/// Architecture defaults of a family (everything except the dimensions).
void apply_family_preset(ModelConfig& m, ModelFamily f) {
  m.family = f;
  switch (f) {
    case ModelFamily::Gpt:
      m.learned_positions = true;
      m.biases = true;
      m.tied_embeddings = true;
      m.norm = NormKind::LayerNorm;
      m.activation = Activation::Gelu;
      m.gated_mlp = false;
      m.rope = false;
      m.dropout = true;
      break;
    case ModelFamily::Opt:
      m.learned_positions = true;
      m.biases = true;
      m.tied_embeddings = true;
      m.norm = NormKind::LayerNorm;
      m.activation = Activation::Relu;
      m.gated_mlp = false;
      m.rope = false;
      m.dropout = true;
      break;
    case ModelFamily::Llama:
    case ModelFamily::Generic:
      m.learned_positions = false;
      m.biases = false;
      m.tied_embeddings = false;
      m.norm = NormKind::RmsNorm;
      m.activation = Activation::SwiGlu;
      m.gated_mlp = true;
      m.rope = true;
      m.dropout = false;
      break;
  }
  m.causal = false;
}

/// head_dim = hidden / heads, which must divide exactly.
std::int64_t derived_head_dim(const ModelConfig& m) {
  if (m.hidden % m.heads != 0)
    detail::fail_field(m.source, "heads", code::kConsistency,
                       std::to_string(m.heads) + " heads do not divide " + detail::field_ref(m.source, "hidden") +
                           " = " + std::to_string(m.hidden) + " (give the head size explicitly if a*d != h)");
  return m.hidden / m.heads;
}

/// Checks shared by every model source.
void check_model(const ModelConfig& m) {
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0)
    detail::fail_field(m.source, "kv_heads", code::kConsistency,
                       std::to_string(m.kv_heads) + " KV heads must divide " + detail::field_ref(m.source, "heads") +
                           " = " + std::to_string(m.heads));
  if (m.activation == Activation::SwiGlu && !m.gated_mlp)
    detail::fail_field(m.source, "activation", code::kConsistency, "\"swiglu\" needs gated_mlp = true");
  if (m.activation == Activation::Silu && m.gated_mlp)
    detail::fail_field(m.source, "activation", code::kConsistency,
                       "a gated MLP with SiLU is written activation = \"swiglu\"");
  if (m.seq_length && m.max_positions && *m.seq_length > *m.max_positions)
    detail::fail_field(m.source, "seq_length", code::kConsistency,
                       std::to_string(*m.seq_length) + " exceeds " + detail::field_ref(m.source, "max_positions") +
                           " = " + std::to_string(*m.max_positions));
}

// ---------------------------------------------------------------------------
// Native TOML

ModelConfig read_native_model(const Node& root, const std::string& display, const std::filesystem::path& path) {
  const Object model = detail::native_section(root, display, "model");
  ModelConfig m;
  m.source.file = display;
  m.source.format = SourceFormat::NativeToml;
  const detail::Fields f(model, m.source);

  if (const auto v = f.optional("family")) apply_family_preset(m, static_cast<ModelFamily>(v->choice({"gpt", "llama", "opt", "generic"})));
  else apply_family_preset(m, ModelFamily::Generic);
  if (const auto v = f.optional("name")) m.name = v->nonempty_string();
  else m.name = detail::stem_without(path, {".toml", ".model"});

  for (auto [key, out] : {std::pair{"hidden", &m.hidden}, {"ffn", &m.ffn}, {"heads", &m.heads}, {"layers", &m.layers}}) f.req(key, *out, &Value::positive);
  if (const auto v = f.optional("kv_heads")) {
    m.kv_heads = v->positive();
  } else {
    m.kv_heads = m.heads;
    m.source.fields["kv_heads"] = detail::origin_of(m.source, "heads");
  }
  if (const auto v = f.optional("head_dim")) m.head_dim = v->positive();
  else m.head_dim = derived_head_dim(m);
  for (auto [key, out] : {std::pair{"vocab", &m.vocab}, {"max_positions", &m.max_positions}, {"seq_length", &m.seq_length}}) f.opt(key, *out, &Value::positive);
  for (auto [key, out] : {std::pair{"learned_positions", &m.learned_positions}, {"biases", &m.biases}, {"tied_embeddings", &m.tied_embeddings},
                          {"gated_mlp", &m.gated_mlp}, {"rope", &m.rope}, {"dropout", &m.dropout}, {"causal", &m.causal}})
    f.opt(key, *out, &Value::boolean);
  if (const auto v = f.optional("norm")) m.norm = static_cast<NormKind>(v->choice({"layernorm", "rmsnorm"}));
  if (const auto v = f.optional("activation")) m.activation = static_cast<Activation>(v->choice({"gelu", "relu", "silu", "swiglu"}));
  f.opt("dtype", m.dtype, &Value::nonempty_string);
  model.reject_unknown();
  check_model(m);
  return m;
}

// ---------------------------------------------------------------------------
// Calculon model JSON

ModelConfig read_calculon_model(const Node& root, const std::string& display, const std::filesystem::path& path) {
  const Object o(root, Location(display));
  ModelConfig m;
  m.source.file = display;
  m.source.format = SourceFormat::Calculon;
  m.name = detail::stem_without(path, {".json"});
  apply_family_preset(m, ModelFamily::Gpt);

  const detail::Fields f(o, m.source);
  constexpr auto positive = &Value::positive;
  f.req("hidden", m.hidden, positive);
  f.req("feedforward", m.ffn, positive, "ffn");
  m.seq_length = f.required("seq_size", "seq_length").positive();
  f.req("attn_heads", m.heads, positive, "heads");
  f.req("attn_size", m.head_dim, positive, "head_dim");
  f.req("num_blocks", m.layers, positive, "layers");
  m.kv_heads = m.heads;
  m.source.fields["kv_heads"] = detail::origin_of(m.source, "heads");
  o.reject_unknown();
  check_model(m);
  return m;
}

// ---------------------------------------------------------------------------
// Hugging Face config.json

/// Maps a Hugging Face activation name.
Activation hf_activation(const Value& v) {
  const std::size_t i = v.choice({"gelu", "gelu_new", "gelu_fast", "gelu_pytorch_tanh", "gelu_accurate",
                                  "quick_gelu", "relu", "silu", "swish"});
  if (i <= 5) return Activation::Gelu;
  if (i == 6) return Activation::Relu;
  return Activation::Silu;
}

/// The family named by `model_type`, or guessed from `architectures[0]`.
ModelFamily hf_family(const Object& o, std::string& model_type) {
  if (const auto v = o.optional("model_type")) {
    model_type = v->nonempty_string();
  }
  std::string arch;
  if (const auto v = o.optional("architectures", true)) {
    const auto items = v->array();
    for (const Value& item : items) {
      const std::string a = item.nonempty_string();
      if (arch.empty()) arch = a;
    }
  }
  if (model_type.empty()) {
    if (arch.rfind("GPT2", 0) == 0) model_type = "gpt2";
    else if (arch.rfind("Llama", 0) == 0) model_type = "llama";
    else if (arch.rfind("OPT", 0) == 0) model_type = "opt";
    else model_type = arch;
  }
  if (model_type == "gpt2") return ModelFamily::Gpt;
  if (model_type == "llama") return ModelFamily::Llama;
  if (model_type == "opt") return ModelFamily::Opt;
  return ModelFamily::Generic;
}

/// Overrides the dropout flag from any dropout probabilities present.
void hf_dropout(const Object& o, ModelConfig& m, std::initializer_list<const char*> keys) {
  bool seen = false;
  bool any = false;
  for (const char* k : keys) {
    if (const auto v = o.optional(k, true)) {
      const Rational p = v->rational(false);
      if (p < 0 || p > 1) v->fail(code::kRange, "must be a probability in [0, 1], got " + detail::describe(v->node()));
      seen = true;
      any = any || p > 0;
      note(m.source, "dropout", v->where());
    }
  }
  if (seen) m.dropout = any;
}

ModelConfig read_hf_model(const Node& root, const std::string& display, const std::filesystem::path& path) {
  const Object o(root, Location(display));
  ModelConfig m;
  m.source.file = display;
  m.source.format = SourceFormat::HuggingFace;
  std::string model_type;
  const ModelFamily family = hf_family(o, model_type);
  apply_family_preset(m, family);

  if (const auto v = o.optional("_name_or_path", true); v && !v->string().empty()) {
    m.name = v->string();
  } else {
    m.name = detail::stem_without(path, {".json", ".config"});
    // ".../Llama-3-8B/config.json": the directory names the model.
    if (m.name == "config" && path.has_parent_path() && !path.parent_path().filename().empty())
      m.name = path.parent_path().filename().string();
  }

  const detail::Fields f(o, m.source, true);  // Hugging Face writes null for "use the default"
  if (const auto v = f.optional("torch_dtype", "dtype")) m.dtype = v->nonempty_string();
  else f.opt("dtype", m.dtype, &Value::nonempty_string);

  // A generic model_type must carry the llama-style names; say so if not.
  auto dim = [&](const char* key, const char* field, auto& out) {
    if (family == ModelFamily::Generic && !o.has(key))
      Location(display).key(key).fail(code::kUnsupported,
                                      "missing: model_type \"" + model_type +
                                          "\" is not gpt2, llama or opt, so the llama-style field names are "
                                          "required and this one is absent");
    f.req(key, out, &Value::positive, field);
  };
  auto opt_dim = [&](const char* key, const char* field, std::optional<std::int64_t>& out) { f.opt(key, out, &Value::positive, field); };
  auto opt_flag = [&](const char* key, const char* field, bool& out) { f.opt(key, out, &Value::boolean, field); };

  if (family == ModelFamily::Gpt) {
    dim("n_embd", "hidden", m.hidden);
    dim("n_layer", "layers", m.layers);
    dim("n_head", "heads", m.heads);
    if (const auto v = f.optional("n_inner", "ffn")) {
      m.ffn = v->positive();
    } else {
      m.ffn = 4 * m.hidden;
      m.source.fields["ffn"] = detail::origin_of(m.source, "hidden");
    }
    dim("vocab_size", "vocab", m.vocab);
    opt_dim("n_positions", "max_positions", m.max_positions);
    if (const auto v = f.optional("activation_function", "activation")) m.activation = hf_activation(*v);
    hf_dropout(o, m, {"resid_pdrop", "embd_pdrop", "attn_pdrop"});
  } else {
    dim("hidden_size", "hidden", m.hidden);
    dim(family == ModelFamily::Opt ? "ffn_dim" : "intermediate_size", "ffn", m.ffn);
    dim("num_attention_heads", "heads", m.heads);
    dim("num_hidden_layers", "layers", m.layers);
    dim("vocab_size", "vocab", m.vocab);
    opt_dim("max_position_embeddings", "max_positions", m.max_positions);
  }

  if (family == ModelFamily::Opt) {
    if (const auto v = f.optional("activation_function", "activation")) m.activation = hf_activation(*v);
    if (const auto v = o.optional("word_embed_proj_dim", true)) {
      if (v->positive() != m.hidden)
        v->fail(code::kUnsupported, "embedding projection (word_embed_proj_dim " + detail::describe(v->node()) +
                                        " != hidden_size " + std::to_string(m.hidden) + ") is not supported");
    }
    if (const auto v = o.optional("do_layer_norm_before", true)) (void)v->boolean();  // placement only
    opt_flag("enable_bias", "biases", m.biases);
    hf_dropout(o, m, {"dropout", "attention_dropout"});
  }

  if (family == ModelFamily::Llama || family == ModelFamily::Generic) {
    if (const auto v = f.optional("hidden_act", "activation")) {
      const Activation a = hf_activation(*v);
      m.activation = a == Activation::Silu ? Activation::SwiGlu : a;  // llama-style MLPs are gated
    }
    bool attention_bias = false;
    bool mlp_bias = false;
    opt_flag("attention_bias", "biases", attention_bias);
    opt_flag("mlp_bias", "biases", mlp_bias);
    m.biases = attention_bias || mlp_bias;
    hf_dropout(o, m, {"attention_dropout"});
    for (const char* experts : {"num_local_experts", "num_experts"}) {
      if (const auto v = o.optional(experts, true); v && v->positive() != 1)
        v->fail(code::kUnsupported, "mixture-of-experts models are not supported");
    }
  }

  if (family == ModelFamily::Gpt) {
    m.kv_heads = m.heads;
    m.source.fields["kv_heads"] = detail::origin_of(m.source, "heads");
  } else {
    if (const auto v = f.optional("num_key_value_heads", "kv_heads")) {
      m.kv_heads = v->positive();
    } else {
      m.kv_heads = m.heads;
      m.source.fields["kv_heads"] = detail::origin_of(m.source, "heads");
    }
  }
  if (const auto v = o.optional("head_dim", true); v && family != ModelFamily::Gpt && family != ModelFamily::Opt) {
    m.head_dim = v->positive();
    note(m.source, "head_dim", v->where());
  } else {
    m.head_dim = derived_head_dim(m);
  }
  opt_flag("tie_word_embeddings", "tied_embeddings", m.tied_embeddings);
  check_model(m);
  return m;
}

bool looks_like_calculon_model(const Node& root) {
  for (const char* k : {"num_blocks", "feedforward", "attn_heads", "attn_size", "seq_size"})
    if (root.find(k) != nullptr) return true;
  return false;
}

}  // namespace

ModelConfig parse_model(std::string_view text, const std::string& file_name) {
  const std::filesystem::path path(file_name);
  if (detail::is_toml_path(path)) return read_native_model(detail::parse_toml(text, file_name), file_name, path);
  const Node root = detail::parse_json(text, file_name);
  if (root.kind != Node::Kind::Object)
    Location(file_name).fail(code::kType, "a model file must hold a JSON object, got " + detail::describe(root));
  if (root.find("model_type") != nullptr || root.find("architectures") != nullptr)
    return read_hf_model(root, file_name, path);
  if (looks_like_calculon_model(root)) return read_calculon_model(root, file_name, path);
  Location(file_name).fail(code::kUnsupported,
                           "unrecognised model format: expected 'model_type' or 'architectures' (Hugging Face "
                           "config.json), 'num_blocks' (Calculon model), or a .toml file with a [model] table");
}

ModelConfig load_model(const std::filesystem::path& path) {
  const std::string display = path.string();
  return parse_model(detail::read_text_file(path, display), display);
}

}  // namespace plancert::frontend
