// SPDX-License-Identifier: Apache-2.0
// Cross-checks between model, strategy and system; messages name both files.
#include "passes/frontend/loaders.h"
#include "tests/frontend/test_support.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>

namespace plancert::frontend {
namespace {

using test::source_path;

ModelConfig calculon_model(const std::string& name) {
  return load_model(source_path("examples/calculon/models/" + name + ".json"));
}
StrategyConfig calculon_strategy(const std::string& name) {
  return load_strategy(source_path("examples/calculon/strategies/" + name + ".json"));
}

TEST(FrontendValidate, KorthikantiConfigurationsAreConsistent) {
  const std::pair<const char*, const char*> pairs[] = {
      {"megatron-22B", "megatron-22B_full"}, {"megatron-22B", "megatron-22B_seqsel"},
      {"gpt3-175B", "gpt3-175B_full"},       {"gpt3-175B", "gpt3-175B_seqsel"},
      {"turing-530B", "turing-530B_full"},   {"turing-530B", "turing-530B_seqsel"},
      {"megatron-1T", "megatron-1T_full"},   {"megatron-1T", "megatron-1T_seqsel"},
      {"megatron-1T", "3072_t4_p64_d12_mbs4_full"},
  };
  const SystemConfig a100 = load_system(source_path("examples/calculon/systems/a100_80g.json"));
  for (const auto& [model, strategy] : pairs) {
    SCOPED_TRACE(std::string(model) + " + " + strategy);
    const ModelConfig m = calculon_model(model);
    const StrategyConfig s = calculon_strategy(strategy);
    EXPECT_NO_THROW(validate(m, s));
    EXPECT_NO_THROW(validate(s, a100));
    EXPECT_EQ(effective_seq_length(m, s), 2048);
  }
}

TEST(FrontendValidate, HfModelWithMegatronFlags) {
  const ModelConfig m = load_model(source_path("examples/hf/llama-3-70b.config.json"));
  // tp 16 > 8 KV heads: the KV heads are replicated (8 divides 16).
  const StrategyConfig s = parse_megatron_flags({"--tensor-model-parallel-size", "16", "--pipeline-model-parallel-size",
                                                 "4", "--world-size", "128", "--micro-batch-size", "1",
                                                 "--global-batch-size", "64", "--seq-length", "8192",
                                                 "--sequence-parallel", "--bf16"},
                                                m.layers);
  EXPECT_NO_THROW(validate(m, s));
}

TEST(FrontendValidate, TpMustDivideHeads) {
  const ModelConfig m = calculon_model("megatron-126M");  // 16 heads
  StrategyConfig s = calculon_strategy("megatron-22B_full");
  s.tp = 3;  // records are plain structs: cross-checks see whatever the caller built
  EXPECT_CONFIG_ERROR_AT(validate(m, s), "CONFIG-5",
                         "strategies/megatron-22B_full.json: field 'tensor_par': 3 does not divide ", "/tensor_par");
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5", "models/megatron-126M.json: field 'attn_heads' = 16");
}

TEST(FrontendValidate, KvHeadsAndTp) {
  const ModelConfig m = parse_model(R"({"model_type": "llama", "hidden_size": 3072, "intermediate_size": 8192,
    "num_attention_heads": 24, "num_key_value_heads": 6, "num_hidden_layers": 4, "vocab_size": 1000})",
                                    "hf/kv.json");
  const StrategyConfig s = parse_megatron_flags(
      {"--tensor-model-parallel-size", "4", "--data-parallel-size", "1", "--micro-batch-size", "1", "--seq-length", "128"});
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5",
                      "command line: field '--tensor-model-parallel-size': 4 and hf/kv.json: field "
                      "'num_key_value_heads' = 6: one must divide the other");
}

TEST(FrontendValidate, TpMustDivideFfn) {
  const ModelConfig m = parse_model(R"({"model_type": "llama", "hidden_size": 64, "intermediate_size": 100,
    "num_attention_heads": 8, "num_hidden_layers": 4, "vocab_size": 1000})", "hf/ffn.json");
  const StrategyConfig s = parse_megatron_flags(
      {"--tensor-model-parallel-size", "8", "--data-parallel-size", "1", "--micro-batch-size", "1", "--seq-length", "128"});
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5", "8 does not divide hf/ffn.json: field 'intermediate_size' = 100");
}

TEST(FrontendValidate, PpMustDivideLayers) {
  const ModelConfig m = calculon_model("megatron-22B");  // 48 layers
  const StrategyConfig s = calculon_strategy("turing-530B_full");  // pp 35
  EXPECT_CONFIG_ERROR_AT(validate(m, s), "CONFIG-5",
                         "strategies/turing-530B_full.json: field 'pipeline_par': 35 does not divide ",
                         "/pipeline_par");
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5", "models/megatron-22B.json: field 'num_blocks' = 48");
}

TEST(FrontendValidate, InterleavingMustDivideLayersPerStage) {
  const ModelConfig m = calculon_model("megatron-1T");  // 128 layers, pp 8 -> 16 per stage
  const StrategyConfig s = parse_megatron_flags({"--tensor-model-parallel-size", "8", "--pipeline-model-parallel-size",
                                                 "8", "--data-parallel-size", "1", "--micro-batch-size", "1",
                                                 "--global-batch-size", "8", "--virtual-pipeline-size", "3"});
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5",
                      "command line: field '--virtual-pipeline-size': 3 chunks per stage do not divide the 16 layers "
                      "per stage");
}

TEST(FrontendValidate, BatchMustBeDivisible) {
  const ModelConfig m = calculon_model("gpt3-175B");
  StrategyConfig s = calculon_strategy("gpt3-175B_full");
  s.global_batch = 63;
  s.microbatch = 2;
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5", "field 'batch_size': 63 is not divisible by microbatch * dp = 2 * 1");
}

TEST(FrontendValidate, SequenceLength) {
  const ModelConfig llama = load_model(source_path("examples/hf/llama-2-7b.config.json"));  // max 4096
  const StrategyConfig calc = calculon_strategy("megatron-22B_full");
  EXPECT_CONFIG_ERROR(validate(llama, calc), "CONFIG-2", "no sequence length: give seq_length in the strategy");
  const StrategyConfig long_seq = parse_megatron_flags(
      {"--tensor-model-parallel-size", "8", "--data-parallel-size", "1", "--micro-batch-size", "1", "--seq-length", "8192"});
  EXPECT_CONFIG_ERROR_AT(validate(llama, long_seq), "CONFIG-5",
                         "command line: field '--seq-length': 8192 exceeds ", "/6");
  EXPECT_CONFIG_ERROR(validate(llama, long_seq), "CONFIG-5", "field 'max_position_embeddings' = 4096");
  const StrategyConfig odd = parse_megatron_flags({"--tensor-model-parallel-size", "8", "--data-parallel-size", "1",
                                                   "--micro-batch-size", "1", "--seq-length", "1001",
                                                   "--sequence-parallel"});
  EXPECT_CONFIG_ERROR(validate(llama, odd), "CONFIG-5",
                      "field '--seq-length': 1001 is not divisible by command line: field '--tensor-model-parallel-size' = 8");
}

TEST(FrontendValidate, LayerCountAndMultiquery) {
  const ModelConfig m = calculon_model("gpt3-175B");
  StrategyConfig s = parse_megatron_flags({"--tensor-model-parallel-size", "8", "--data-parallel-size", "1",
                                           "--micro-batch-size", "1", "--num-layers", "80"});
  EXPECT_CONFIG_ERROR(validate(m, s), "CONFIG-5", "field '--num-layers': 80 != ");
  StrategyConfig q = calculon_strategy("gpt3-175B_full");
  q.attention_type = AttentionType::Multiquery;
  EXPECT_CONFIG_ERROR(validate(m, q), "CONFIG-5", "\"multiquery\" needs one KV head");
}

TEST(FrontendValidate, StrategyAgainstSystem) {
  const SystemConfig a100 = load_system(source_path("examples/calculon/systems/a100_80g.json"));
  StrategyConfig s = calculon_strategy("gpt3-175B_full");
  s.pp_net = 2;
  EXPECT_CONFIG_ERROR_AT(validate(s, a100), "CONFIG-5",
                         "field 'pipeline_par_net': network tier 2 does not exist", "/pipeline_par_net");
  const StrategyConfig bf16 = parse_megatron_flags({"--data-parallel-size", "1", "--micro-batch-size", "1", "--bf16"});
  EXPECT_CONFIG_ERROR(validate(bf16, a100), "CONFIG-5", "bf16 needs a 'bfloat16' peak in");
}

}  // namespace
}  // namespace plancert::frontend
