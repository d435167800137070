// SPDX-License-Identifier: Apache-2.0
// Model loaders: bundled files load with exact values; every bad input is
// rejected with its CONFIG code and a message naming file, field and reason.
#include "passes/frontend/loaders.h"
#include "tests/frontend/test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace plancert::frontend {
namespace {

using test::source_path;

// A valid Calculon model to mutate in the negative tests.
const char* const kCalculon = R"({
  "hidden": 12288, "feedforward": 49152, "seq_size": 2048,
  "attn_heads": 96, "attn_size": 128, "num_blocks": 96
})";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

ModelConfig calculon(const std::string& text) { return parse_model(text, "models/x.json"); }

// A valid HF llama config to mutate.
const char* const kLlama = R"({
  "architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "intermediate_size": 11008, "num_attention_heads": 32,
  "num_key_value_heads": 32, "num_hidden_layers": 32, "vocab_size": 32000,
  "max_position_embeddings": 4096, "hidden_act": "silu", "rms_norm_eps": 1e-05,
  "tie_word_embeddings": false, "torch_dtype": "float16"
})";

ModelConfig hf(const std::string& text) { return parse_model(text, "hf/x.config.json"); }

// A valid native model to mutate.
const char* const kNative = R"(
[model]
family = "gpt"
hidden = 768
ffn = 3072
heads = 12
layers = 12
vocab = 50257
max_positions = 1024
)";

ModelConfig native(const std::string& text) { return parse_model(text, "models/x.model.toml"); }

TEST(CalculonModel, Gpt3_175B) {
  const ModelConfig m = load_model(source_path("examples/calculon/models/gpt3-175B.json"));
  EXPECT_EQ(m.name, "gpt3-175B");
  EXPECT_EQ(m.family, ModelFamily::Gpt);
  EXPECT_EQ(m.hidden, 12288);
  EXPECT_EQ(m.ffn, 49152);
  EXPECT_EQ(m.heads, 96);
  EXPECT_EQ(m.kv_heads, 96);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.layers, 96);
  EXPECT_EQ(m.seq_length, 2048);
  EXPECT_FALSE(m.vocab.has_value());
  EXPECT_FALSE(m.max_positions.has_value());
  EXPECT_TRUE(m.learned_positions);
  EXPECT_TRUE(m.biases);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.dropout);
  EXPECT_FALSE(m.causal);
  EXPECT_EQ(m.norm, NormKind::LayerNorm);
  EXPECT_EQ(m.activation, Activation::Gelu);
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_EQ(m.source.format, SourceFormat::Calculon);
  EXPECT_EQ(m.source.fields.at("heads"), (FieldOrigin{"attn_heads", "/attn_heads"}));
  EXPECT_EQ(m.source.fields.at("layers"), (FieldOrigin{"num_blocks", "/num_blocks"}));
}

TEST(CalculonModel, HeadsTimesHeadSizeMayDifferFromHidden) {
  // gpt3-13B: 40 heads of 128 = 5120 != hidden 5140; Calculon says so explicitly.
  const ModelConfig m = load_model(source_path("examples/calculon/models/gpt3-13B.json"));
  EXPECT_EQ(m.hidden, 5140);
  EXPECT_EQ(m.heads, 40);
  EXPECT_EQ(m.head_dim, 128);
}

TEST(HfModel, Llama3_70B) {
  const ModelConfig m = load_model(source_path("examples/hf/llama-3-70b.config.json"));
  EXPECT_EQ(m.name, "llama-3-70b");
  EXPECT_EQ(m.family, ModelFamily::Llama);
  EXPECT_EQ(m.hidden, 8192);
  EXPECT_EQ(m.ffn, 28672);
  EXPECT_EQ(m.heads, 64);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.layers, 80);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.max_positions, 8192);
  EXPECT_FALSE(m.seq_length.has_value());
  EXPECT_EQ(m.norm, NormKind::RmsNorm);
  EXPECT_EQ(m.activation, Activation::SwiGlu);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_TRUE(m.rope);
  EXPECT_FALSE(m.learned_positions);
  EXPECT_FALSE(m.biases);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.dropout);
  EXPECT_EQ(m.dtype, "bfloat16");
  EXPECT_EQ(m.source.fields.at("kv_heads").label, "num_key_value_heads");
}

TEST(HfModel, Llama2_7B_And_405B) {
  const ModelConfig a = load_model(source_path("examples/hf/llama-2-7b.config.json"));
  EXPECT_EQ(a.kv_heads, 32);
  EXPECT_EQ(a.ffn, 11008);
  EXPECT_EQ(a.dtype, "float16");
  const ModelConfig b = load_model(source_path("examples/hf/llama-3.1-405b.config.json"));
  EXPECT_EQ(b.layers, 126);
  EXPECT_EQ(b.hidden, 16384);
  EXPECT_EQ(b.ffn, 53248);
  EXPECT_EQ(b.max_positions, 131072);
}

TEST(HfModel, Opt13B) {
  const ModelConfig m = load_model(source_path("examples/hf/opt-13b.config.json"));
  EXPECT_EQ(m.family, ModelFamily::Opt);
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.ffn, 20480);
  EXPECT_EQ(m.heads, 40);
  EXPECT_EQ(m.kv_heads, 40);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.layers, 40);
  EXPECT_EQ(m.vocab, 50272);
  EXPECT_EQ(m.max_positions, 2048);
  EXPECT_EQ(m.activation, Activation::Relu);
  EXPECT_EQ(m.norm, NormKind::LayerNorm);
  EXPECT_TRUE(m.learned_positions);
  EXPECT_TRUE(m.biases);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_FALSE(m.rope);
}

TEST(HfModel, Gpt2Small) {
  const ModelConfig m = load_model(source_path("examples/hf/gpt2.config.json"));
  EXPECT_EQ(m.family, ModelFamily::Gpt);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.ffn, 3072);  // n_inner null -> 4 * n_embd
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.kv_heads, 12);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.layers, 12);
  EXPECT_EQ(m.vocab, 50257);
  EXPECT_EQ(m.max_positions, 1024);
  EXPECT_EQ(m.activation, Activation::Gelu);
  EXPECT_TRUE(m.learned_positions);
  EXPECT_TRUE(m.biases);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_TRUE(m.dropout);
  EXPECT_FALSE(m.dtype.has_value());
}

TEST(HfModel, Gpt2ExplicitInnerAndNoDropout) {
  const ModelConfig m = hf(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4,
    "n_inner": 100, "vocab_size": 10, "resid_pdrop": 0.0, "embd_pdrop": 0, "attn_pdrop": 0.0,
    "tie_word_embeddings": false})");
  EXPECT_EQ(m.ffn, 100);
  EXPECT_FALSE(m.dropout);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.max_positions.has_value());
}

TEST(HfModel, GenericModelTypeWithLlamaNames) {
  const ModelConfig m = hf(R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
    "num_attention_heads": 32, "num_key_value_heads": 8, "num_hidden_layers": 32, "vocab_size": 32000,
    "sliding_window": 4096, "rope_theta": 1000000.0, "unrelated": {"x": [1, 2.5, null]}})");
  EXPECT_EQ(m.family, ModelFamily::Generic);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.activation, Activation::SwiGlu);
  EXPECT_EQ(m.name, "x");
}

TEST(HfModel, ArchitecturesWithoutModelType) {
  const ModelConfig m = hf(R"({"architectures": ["OPTForCausalLM"], "hidden_size": 64, "ffn_dim": 256,
    "num_attention_heads": 4, "num_hidden_layers": 2, "vocab_size": 100})");
  EXPECT_EQ(m.family, ModelFamily::Opt);
  EXPECT_EQ(m.ffn, 256);
}

TEST(HfModel, ExplicitHeadDim) {
  std::string text = replace(kLlama, R"("num_attention_heads": 32)", R"("num_attention_heads": 24, "head_dim": 128)");
  text = replace(text, R"("num_key_value_heads": 32)", R"("num_key_value_heads": 8)");
  const ModelConfig m = hf(text);
  EXPECT_EQ(m.heads, 24);
  EXPECT_EQ(m.head_dim, 128);  // 24 * 128 = 3072 != 4096: the source says so
}

TEST(HfModel, AbsentKvHeadsMeansMha) {
  const ModelConfig m = hf(replace(kLlama, R"("num_key_value_heads": 32,)", ""));
  EXPECT_EQ(m.kv_heads, 32);
}

TEST(NativeModel, DefaultsFromFamilyAndOverrides) {
  const ModelConfig m = native(kNative);
  EXPECT_EQ(m.name, "x");
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.kv_heads, 12);
  EXPECT_TRUE(m.tied_embeddings);
  const ModelConfig c = native(std::string(kNative) + "causal = true\ndropout = false\ndtype = \"bfloat16\"\n");
  EXPECT_TRUE(c.causal);
  EXPECT_FALSE(c.dropout);
  EXPECT_EQ(c.dtype, "bfloat16");
  EXPECT_EQ(c.source.fields.at("causal"), (FieldOrigin{"model.causal", "/model/causal"}));
}

// Every field read records where it came from (detail::Fields), under its canonical name;
// a default derived from another field names that field, and a null HF value counts as absent.
TEST(ModelProvenance, EveryFieldReadIsNotedUnderItsCanonicalName) {
  const ModelConfig n = native(std::string(kNative) + "dtype = \"bf16\"\nrope = false\n");
  for (const char* f : {"family", "hidden", "ffn", "heads", "layers", "vocab", "max_positions", "dtype", "rope"})
    EXPECT_EQ(n.source.fields.at(f), (FieldOrigin{std::string("model.") + f, std::string("/model/") + f})) << f;
  EXPECT_EQ(n.source.fields.at("kv_heads").label, "model.heads");  // derived from it
  const ModelConfig h = hf(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": 100,
    "vocab_size": 10, "n_positions": null, "activation_function": "gelu_new", "torch_dtype": "float32"})");
  EXPECT_EQ(h.source.fields.at("ffn"), (FieldOrigin{"n_inner", "/n_inner"}));
  EXPECT_EQ(h.source.fields.at("vocab"), (FieldOrigin{"vocab_size", "/vocab_size"}));
  EXPECT_EQ(h.source.fields.at("activation"), (FieldOrigin{"activation_function", "/activation_function"}));
  EXPECT_EQ(h.source.fields.at("dtype"), (FieldOrigin{"torch_dtype", "/torch_dtype"}));
  EXPECT_EQ(h.source.fields.count("max_positions"), 0U);
  const ModelConfig l = hf(kLlama);
  EXPECT_EQ(l.source.fields.at("activation"), (FieldOrigin{"hidden_act", "/hidden_act"}));
  EXPECT_EQ(l.source.fields.at("tied_embeddings"), (FieldOrigin{"tie_word_embeddings", "/tie_word_embeddings"}));
  EXPECT_EQ(l.source.fields.at("max_positions"), (FieldOrigin{"max_position_embeddings", "/max_position_embeddings"}));
}

TEST(NativeModel, LlamaFamily) {
  const ModelConfig m = native(R"(
[model]
family = "llama"
hidden = 4096
ffn = 14336
heads = 32
kv_heads = 8
layers = 32
vocab = 128256
)");
  EXPECT_EQ(m.norm, NormKind::RmsNorm);
  EXPECT_EQ(m.activation, Activation::SwiGlu);
  EXPECT_TRUE(m.rope);
  EXPECT_EQ(m.head_dim, 128);
}

// ----------------------------------------------------------------------------
// Bad inputs: each case beside its expected code and message.

TEST(ModelErrors, MissingFile) {
  EXPECT_CONFIG_ERROR(load_model(source_path("examples/does-not-exist.json")), "CONFIG-1",
                      "does-not-exist.json: cannot read file: no such file");
}

TEST(ModelErrors, Directory) {
  EXPECT_CONFIG_ERROR(load_model(source_path("examples")), "CONFIG-1", "it is a directory");
}

TEST(ModelErrors, JsonSyntax) {
  EXPECT_CONFIG_ERROR(calculon(R"({"hidden": 12288,)"), "CONFIG-1", "models/x.json: syntax error");
  EXPECT_CONFIG_ERROR(calculon(R"({"hidden": 12288, // comment
  })"), "CONFIG-1", "syntax error");
  EXPECT_CONFIG_ERROR(calculon(R"({"hidden": 12288,})"), "CONFIG-1", "line 1");
}

TEST(ModelErrors, DuplicateJsonKey) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, R"("hidden": 12288)", R"("hidden": 12288, "hidden": 1)")),
                         "CONFIG-1", "models/x.json: duplicate key 'hidden'", "/hidden");
  EXPECT_CONFIG_ERROR(hf(R"({"model_type": "gpt2", "a": {"b": 1, "b": 2}})"), "CONFIG-1", "duplicate key 'b' at /a/b");
}

TEST(ModelErrors, TomlSyntaxAndDuplicate) {
  EXPECT_CONFIG_ERROR(native("[model\nhidden = 1\n"), "CONFIG-1", "models/x.model.toml: syntax error at line 1");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "hidden = 1024\n"), "CONFIG-1", "syntax error at line");
}

TEST(ModelErrors, TooDeep) {
  EXPECT_CONFIG_ERROR(hf(R"({"model_type": "gpt2", "x": )" + std::string(100, '[') + std::string(100, ']') + "}"),
                      "CONFIG-1", "nesting deeper than 64");
}

TEST(ModelErrors, MissingField) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, R"("attn_heads": 96,)", "")), "CONFIG-2",
                         "models/x.json: field 'attn_heads': missing required field", "/attn_heads");
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("vocab_size": 32000,)", "")), "CONFIG-2",
                      "field 'vocab_size': missing required field");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "layers = 12\n", "")), "CONFIG-2",
                      "models/x.model.toml: field 'model.layers': missing required field");
  EXPECT_CONFIG_ERROR(native("[strategy]\ntp = 1\n"), "CONFIG-2", "field 'model': missing required field");
}

TEST(ModelErrors, WrongType) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, "12288", "\"12288\"")), "CONFIG-3",
                         "models/x.json: field 'hidden': must be a positive integer, got \"12288\"", "/hidden");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "12288", "12288.5")), "CONFIG-3",
                      "field 'hidden': must be a positive integer, got 12288.5");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "12288", "1.2288e4")), "CONFIG-3", "got 1.2288e4");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "12288", "null")), "CONFIG-3", "got null");
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("tie_word_embeddings": false)", R"("tie_word_embeddings": "no")")),
                      "CONFIG-3", "field 'tie_word_embeddings': must be a boolean, got \"no\"");
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("torch_dtype": "float16")", R"("torch_dtype": 16)")), "CONFIG-3",
                      "field 'torch_dtype': must be a string, got 16");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "hidden = 768", "hidden = 1979-05-27")), "CONFIG-3",
                      "field 'model.hidden': must be a positive integer, got a date");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "biases = 1\n"), "CONFIG-3",
                      "field 'model.biases': must be a boolean, got 1");
  EXPECT_CONFIG_ERROR(parse_model("[1, 2]", "models/x.json"), "CONFIG-3", "must hold a JSON object");
}

TEST(ModelErrors, NonPositiveOrOutOfRange) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, "12288", "-5")), "CONFIG-4",
                         "models/x.json: field 'hidden': must be a positive integer, got -5", "/hidden");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("num_blocks": 96)", R"("num_blocks": 0)")), "CONFIG-4",
                      "field 'num_blocks': must be a positive integer, got 0");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "12288", "1099511627776")), "CONFIG-4", "below 2^40");
  // Beyond 64 bits: never wraps around silently.
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "12288", "36893488147419103232")), "CONFIG-4",
                      "got 36893488147419103232");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "12288", "-36893488147419103232")), "CONFIG-4",
                      "must be a positive integer");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "heads = 12", "heads = -12")), "CONFIG-4",
                      "field 'model.heads': must be a positive integer, got -12");
  EXPECT_CONFIG_ERROR(hf(R"({"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 10,
    "resid_pdrop": 1.5})"), "CONFIG-4", "field 'resid_pdrop': must be a probability in [0, 1], got 1.5");
}

TEST(ModelErrors, HeadsNotDividingHidden) {
  EXPECT_CONFIG_ERROR_AT(hf(replace(kLlama, R"("num_attention_heads": 32)", R"("num_attention_heads": 24)")),
                         "CONFIG-5",
                         "hf/x.config.json: field 'num_attention_heads': 24 heads do not divide "
                         "hf/x.config.json: field 'hidden_size' = 4096",
                         "/num_attention_heads");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "heads = 12", "heads = 7")), "CONFIG-5",
                      "field 'model.heads': 7 heads do not divide");
  EXPECT_CONFIG_ERROR(hf(R"({"model_type": "gpt2", "n_embd": 100, "n_layer": 2, "n_head": 3, "vocab_size": 10})"),
                      "CONFIG-5", "field 'n_head': 3 heads do not divide");
}

TEST(ModelErrors, KvHeadsNotDividingHeads) {
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("num_key_value_heads": 32)", R"("num_key_value_heads": 5)")),
                      "CONFIG-5", "field 'num_key_value_heads': 5 KV heads must divide");
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("num_key_value_heads": 32)", R"("num_key_value_heads": 64)")),
                      "CONFIG-5", "64 KV heads must divide");
}

TEST(ModelErrors, InconsistentNativeFlags) {
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "activation = \"swiglu\"\n"), "CONFIG-5",
                      "field 'model.activation': \"swiglu\" needs gated_mlp = true");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "activation = \"silu\"\ngated_mlp = true\n"), "CONFIG-5",
                      "written activation = \"swiglu\"");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "seq_length = 2048\n"), "CONFIG-5",
                      "field 'model.seq_length': 2048 exceeds models/x.model.toml: field 'model.max_positions' = 1024");
}

TEST(ModelErrors, UnknownValuesAndFields) {
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "hiden = 3\n"), "CONFIG-6",
                      "models/x.model.toml: field 'model.hiden': unknown field");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "family = \"gpt\"", "family = \"bert\"")), "CONFIG-6",
                      "field 'model.family': unknown value \"bert\"");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "norm = \"batchnorm\"\n"), "CONFIG-6", "unknown value \"batchnorm\"");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "[extra]\nx = 1\n"), "CONFIG-6",
                      "field 'extra': unknown top-level field");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("num_blocks": 96)", R"("num_blocks": 96, "vocab": 5)")),
                      "CONFIG-6", "field 'vocab': unknown field");
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("hidden_act": "silu")", R"("hidden_act": "foo")")), "CONFIG-6",
                      "field 'hidden_act': unknown value \"foo\"");
  EXPECT_CONFIG_ERROR(hf(R"({"model_type": "falcon", "hidden_size": 4544, "num_attention_heads": 71})"), "CONFIG-6",
                      "model_type \"falcon\" is not gpt2, llama or opt");
  EXPECT_CONFIG_ERROR(hf(replace(kLlama, R"("model_type": "llama")", R"("model_type": "mixtral", "num_local_experts": 8)")),
                      "CONFIG-6", "field 'num_local_experts': mixture-of-experts models are not supported");
  EXPECT_CONFIG_ERROR(hf(R"({"model_type": "opt", "hidden_size": 1024, "ffn_dim": 4096, "num_attention_heads": 16,
    "num_hidden_layers": 24, "vocab_size": 50272, "word_embed_proj_dim": 512})"),
                      "CONFIG-6", "field 'word_embed_proj_dim': embedding projection");
  EXPECT_CONFIG_ERROR(parse_model(R"({"foo": 1})", "models/x.json"), "CONFIG-6", "unrecognised model format");
}

}  // namespace
}  // namespace plancert::frontend
