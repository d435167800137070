// SPDX-License-Identifier: Apache-2.0
// Strategy loaders (native TOML and Calculon execution JSON).
#include "passes/frontend/loaders.h"
#include "tests/frontend/test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace plancert::frontend {
namespace strategy_loader {  // its own namespace: the test target may be built as one unity file
namespace {

using test::source_path;

const char* const kCalculon = R"({
  "num_procs": 64, "tensor_par": 8, "pipeline_par": 8, "data_par": 1,
  "tensor_par_net": 0, "pipeline_par_net": 1, "data_par_net": 1,
  "batch_size": 64, "microbatch_size": 1, "datatype": "float16",
  "fused_activation": false, "attention_type": "multihead",
  "activation_recompute": "attn_only", "pipeline_interleaving": 3,
  "optimizer_sharding": false, "tensor_par_comm_type": "rs_ag",
  "tensor_par_overlap": "none", "seq_par_ag_redo": true, "data_par_overlap": false,
  "weight_offload": false, "activations_offload": false, "optimizer_offload": false,
  "training": true
})";

const char* const kNative = R"(
[strategy]
tp = 4
pp = 2
dp = 2
microbatch = 2
global_batch = 32
dtype = "bf16"
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

StrategyConfig calculon(const std::string& text) { return parse_strategy(text, "strategies/x.json"); }
StrategyConfig native(const std::string& text) { return parse_strategy(text, "strategies/x.strategy.toml"); }

TEST(CalculonStrategy, Gpt3SeqSel) {
  const StrategyConfig s = load_strategy(source_path("examples/calculon/strategies/gpt3-175B_seqsel.json"));
  EXPECT_EQ(s.name, "gpt3-175B_seqsel");
  EXPECT_EQ(s.num_procs, 64);
  EXPECT_EQ(s.tp, 8);
  EXPECT_EQ(s.pp, 8);
  EXPECT_EQ(s.dp, 1);
  EXPECT_EQ(s.microbatch, 1);
  EXPECT_EQ(s.global_batch, 64);
  EXPECT_EQ(s.num_microbatches(), 64);
  EXPECT_TRUE(s.sequence_parallel);
  EXPECT_EQ(s.tp_comm_type, TpCommType::RsAg);
  EXPECT_EQ(s.recompute, Recompute::Selective);
  EXPECT_EQ(s.schedule, Schedule::Interleaved);
  EXPECT_EQ(s.interleave, 3);
  EXPECT_FALSE(s.distributed_optimizer);
  EXPECT_EQ(s.dtype, DType::FP16);
  EXPECT_TRUE(s.training);
  EXPECT_EQ(s.tp_net, 0);
  EXPECT_EQ(s.pp_net, 1);
  EXPECT_EQ(s.dp_net, 1);
  EXPECT_TRUE(s.seq_par_ag_redo);
  EXPECT_FALSE(s.seq_length.has_value());
  EXPECT_EQ(s.source.fields.at("tp"), (FieldOrigin{"tensor_par", "/tensor_par"}));
}

TEST(CalculonStrategy, FullRecomputeAndSharding) {
  const StrategyConfig s = load_strategy(source_path("examples/calculon/strategies/3072_t4_p64_d12_mbs4_full.json"));
  EXPECT_EQ(s.num_procs, 3072);
  EXPECT_EQ(s.tp, 4);
  EXPECT_EQ(s.pp, 64);
  EXPECT_EQ(s.dp, 12);
  EXPECT_EQ(s.microbatch, 4);
  EXPECT_EQ(s.num_microbatches(), 64);
  EXPECT_EQ(s.recompute, Recompute::Full);
  EXPECT_EQ(s.schedule, Schedule::OneFOneB);
  EXPECT_EQ(s.interleave, 1);
  EXPECT_TRUE(s.distributed_optimizer);
  EXPECT_TRUE(s.fused_activation);
  EXPECT_TRUE(s.sequence_parallel);
  const StrategyConfig f = load_strategy(source_path("examples/calculon/strategies/turing-530B_full.json"));
  EXPECT_EQ(f.pp, 35);
  EXPECT_EQ(f.interleave, 3);
  EXPECT_FALSE(f.sequence_parallel);
  EXPECT_EQ(f.tp_comm_type, TpCommType::AllReduce);
  EXPECT_EQ(f.recompute, Recompute::Full);
}

TEST(NativeStrategy, Defaults) {
  const StrategyConfig s = native(kNative);
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.num_procs, 16);
  EXPECT_EQ(s.num_microbatches(), 8);
  EXPECT_EQ(s.schedule, Schedule::OneFOneB);
  EXPECT_EQ(s.recompute, Recompute::None);
  EXPECT_FALSE(s.sequence_parallel);
  EXPECT_EQ(s.tp_comm_type, TpCommType::AllReduce);
  EXPECT_EQ(s.dtype, DType::BF16);
  EXPECT_TRUE(s.training);
  EXPECT_FALSE(s.tp_net.has_value());
}

TEST(NativeStrategy, DerivedScheduleAndCommType) {
  const StrategyConfig s = native(std::string(kNative) + "interleave = 2\nsequence_parallel = true\nseq_length = 4096\n");
  EXPECT_EQ(s.schedule, Schedule::Interleaved);
  EXPECT_EQ(s.tp_comm_type, TpCommType::RsAg);
  EXPECT_EQ(s.seq_length, 4096);
  const StrategyConfig t = native(std::string(kNative) + "tp_comm_type = \"rs_ag\"\n");
  EXPECT_TRUE(t.sequence_parallel);
}

// Every field read records where it came from (detail::Fields), under its canonical name,
// and a derived field names the field it was derived from.
TEST(NativeStrategy, ProvenanceOfEveryFieldRead) {
  const StrategyConfig s = native(std::string(kNative) + "interleave = 2\ntp_net = 0\nsequence_parallel = true\nweight_offload = false\n");
  for (const char* f : {"tp", "pp", "dp", "microbatch", "global_batch", "dtype", "interleave", "tp_net", "sequence_parallel", "weight_offload"})
    EXPECT_EQ(s.source.fields.at(f), (FieldOrigin{std::string("strategy.") + f, std::string("/strategy/") + f})) << f;
  EXPECT_EQ(s.source.fields.at("tp_comm_type").label, "strategy.sequence_parallel");  // derived from it
  EXPECT_EQ(s.source.fields.count("pp_net"), 0U);                                     // absent: not noted
  const StrategyConfig c = calculon(kCalculon);
  EXPECT_EQ(c.source.fields.at("dtype"), (FieldOrigin{"datatype", "/datatype"}));
  EXPECT_EQ(c.source.fields.at("tp_net"), (FieldOrigin{"tensor_par_net", "/tensor_par_net"}));
  EXPECT_EQ(c.source.fields.at("distributed_optimizer"), (FieldOrigin{"optimizer_sharding", "/optimizer_sharding"}));
}

// ----------------------------------------------------------------------------
// Bad inputs

TEST(StrategyErrors, Syntax) {
  EXPECT_CONFIG_ERROR(calculon("{\"num_procs\": 64"), "CONFIG-1", "strategies/x.json: syntax error");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("training": true)", R"("training": true, "training": false)")),
                      "CONFIG-1", "duplicate key 'training'");
  EXPECT_CONFIG_ERROR(native("[strategy]\ntp = \n"), "CONFIG-1", "syntax error at line 2");
}

TEST(StrategyErrors, MissingField) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, R"("microbatch_size": 1,)", "")), "CONFIG-2",
                         "strategies/x.json: field 'microbatch_size': missing required field", "/microbatch_size");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "dtype = \"bf16\"\n", "")), "CONFIG-2",
                      "field 'strategy.dtype': missing required field");
}

TEST(StrategyErrors, WrongType) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("training": true)", R"("training": "yes")")), "CONFIG-3",
                      "field 'training': must be a boolean, got \"yes\"");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("tensor_par": 8)", R"("tensor_par": 8.0)")), "CONFIG-3",
                      "field 'tensor_par': must be a positive integer, got 8.0");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("datatype": "float16")", R"("datatype": 16)")), "CONFIG-3",
                      "field 'datatype': must be a string, got 16");
}

TEST(StrategyErrors, NonPositive) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("tensor_par": 8)", R"("tensor_par": 0)")), "CONFIG-4",
                      "field 'tensor_par': must be a positive integer, got 0");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("tensor_par_net": 0)", R"("tensor_par_net": -1)")), "CONFIG-4",
                      "field 'tensor_par_net': must be a non-negative integer, got -1");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "pp = 2", "pp = -2")), "CONFIG-4",
                      "field 'strategy.pp': must be a positive integer, got -2");
}

TEST(StrategyErrors, RanksMismatch) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, R"("num_procs": 64)", R"("num_procs": 65)")), "CONFIG-5",
                         "strategies/x.json: field 'num_procs': 65 != tp * pp * dp = 8 * 8 * 1 = 64",
                         "/num_procs");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "num_procs = 8\n"), "CONFIG-5",
                      "field 'strategy.num_procs': 8 != tp * pp * dp = 4 * 2 * 2 = 16");
}

// Ranks are 32-bit indices in every IR: tp * pp * dp = 2^31 is one too many, 2^31 - 1 is not.
TEST(StrategyErrors, TooManyRanks) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(replace(kCalculon, R"("num_procs": 64)", R"("num_procs": 2147483648)"),
                                          R"("data_par": 1)", R"("data_par": 33554432)")),
                         "CONFIG-4", "field 'num_procs': tp * pp * dp = 2147483648 ranks, more than 2^31 - 1", "/num_procs");
  EXPECT_CONFIG_ERROR(native(replace(replace(kNative, "dp = 2", "dp = 268435456"), "global_batch = 32", "global_batch = 536870912")),
                      "CONFIG-4", "field 'num_procs': tp * pp * dp = 2147483648 ranks, more than 2^31 - 1");
  const StrategyConfig most = native(replace(replace(replace(replace(kNative, "tp = 4", "tp = 1"), "pp = 2", "pp = 1"), "dp = 2", "dp = 2147483647"),
                                             "global_batch = 32", "global_batch = 4294967294"));
  EXPECT_EQ(most.num_procs, 2147483647);
}

TEST(StrategyErrors, BatchNotDivisible) {
  EXPECT_CONFIG_ERROR(calculon(replace(replace(kCalculon, R"("batch_size": 64)", R"("batch_size": 63)"),
                                      R"("microbatch_size": 1)", R"("microbatch_size": 2)")),
                      "CONFIG-5", "field 'batch_size': 63 is not divisible by microbatch * dp = 2 * 1 = 2");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "global_batch = 32", "global_batch = 30")), "CONFIG-5",
                      "field 'strategy.global_batch': 30 is not divisible by microbatch * dp = 2 * 2 = 4");
}

TEST(StrategyErrors, ScheduleConsistency) {
  std::string one_stage = replace(kCalculon, R"("pipeline_par": 8)", R"("pipeline_par": 1)");
  one_stage = replace(one_stage, R"("num_procs": 64)", R"("num_procs": 8)");
  EXPECT_CONFIG_ERROR(calculon(one_stage), "CONFIG-5", "field 'pipeline_interleaving': pipeline interleaving 3 needs");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "schedule = \"interleaved\"\n"), "CONFIG-5",
                      "field 'strategy.schedule': the interleaved schedule needs at least 2 chunks");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "schedule = \"1f1b\"\ninterleave = 2\n"), "CONFIG-5",
                      "field 'strategy.interleave': 2 chunks per stage need the interleaved schedule");
}

TEST(StrategyErrors, CalculonOptionConstraints) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("tensor_par_comm_type": "rs_ag")", R"("tensor_par_comm_type": "ar")")),
                      "CONFIG-5", "field 'seq_par_ag_redo': redoing the all-gather needs sequence parallelism");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("data_par_overlap": false)", R"("data_par_overlap": true)")),
                      "CONFIG-5", "field 'data_par_overlap': DP communication overlap needs training and dp > 1");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("training": true)", R"("training": false)")), "CONFIG-5",
                      "field 'activation_recompute': recomputation needs training");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "sequence_parallel = true\ntp_comm_type = \"ar\"\n"), "CONFIG-5",
                      "field 'strategy.sequence_parallel': sequence parallelism is on but");
}

TEST(StrategyErrors, UnknownValues) {
  EXPECT_CONFIG_ERROR_AT(
      calculon(replace(kCalculon, R"("activation_recompute": "attn_only")", R"("activation_recompute": "foo")")),
      "CONFIG-6",
      "strategies/x.json: field 'activation_recompute': unknown value \"foo\" (expected one of \"none\", "
      "\"attn_only\", \"full\")",
      "/activation_recompute");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "recompute = \"foo\"\n"), "CONFIG-6",
                      "field 'strategy.recompute': unknown value \"foo\"");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("datatype": "float16")", R"("datatype": "float8")")), "CONFIG-6",
                      "field 'datatype': unknown value \"float8\"");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("training": true)", R"("training": true, "inference": 1)")),
                      "CONFIG-6", "field 'inference': unknown field");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "zero_stage = 1\n"), "CONFIG-6",
                      "field 'strategy.zero_stage': unknown field");
}

}  // namespace
}  // namespace strategy_loader
}  // namespace plancert::frontend
