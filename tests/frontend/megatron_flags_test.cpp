// SPDX-License-Identifier: Apache-2.0
// Megatron-LM command-line flags -> StrategyConfig.
#include "passes/frontend/loaders.h"
#include "tests/frontend/test_support.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plancert::frontend {
namespace {

using Args = std::vector<std::string>;

TEST(MegatronFlags, FullSet) {
  const StrategyConfig s = parse_megatron_flags(
      {"--tensor-model-parallel-size", "8", "--pipeline-model-parallel-size=8", "--data-parallel-size", "2",
       "--micro-batch-size", "1", "--global-batch-size=64", "--seq-length", "2048", "--sequence-parallel",
       "--recompute-granularity", "selective", "--use-distributed-optimizer", "--bf16"});
  EXPECT_EQ(s.tp, 8);
  EXPECT_EQ(s.pp, 8);
  EXPECT_EQ(s.dp, 2);
  EXPECT_EQ(s.num_procs, 128);
  EXPECT_EQ(s.microbatch, 1);
  EXPECT_EQ(s.global_batch, 64);
  EXPECT_EQ(s.num_microbatches(), 32);
  EXPECT_EQ(s.seq_length, 2048);
  EXPECT_TRUE(s.sequence_parallel);
  EXPECT_EQ(s.tp_comm_type, TpCommType::RsAg);
  EXPECT_EQ(s.recompute, Recompute::Selective);
  EXPECT_TRUE(s.distributed_optimizer);
  EXPECT_EQ(s.dtype, DType::BF16);
  EXPECT_EQ(s.schedule, Schedule::OneFOneB);
  EXPECT_EQ(s.interleave, 1);
  EXPECT_TRUE(s.training);
  EXPECT_EQ(s.source.format, SourceFormat::MegatronFlags);
  EXPECT_EQ(s.source.fields.at("tp"), (FieldOrigin{"--tensor-model-parallel-size", "/0"}));
  EXPECT_EQ(s.source.fields.at("pp"), (FieldOrigin{"--pipeline-model-parallel-size", "/2"}));
}

TEST(MegatronFlags, WorldSizeAndDefaults) {
  const StrategyConfig s = parse_megatron_flags({"--tensor-model-parallel-size", "4", "--pipeline-model-parallel-size",
                                                 "2", "--world-size", "64", "--micro-batch-size", "2", "--fp16"});
  EXPECT_EQ(s.dp, 8);
  EXPECT_EQ(s.num_procs, 64);
  EXPECT_EQ(s.global_batch, 16);  // default: micro * dp
  EXPECT_EQ(s.dtype, DType::FP16);
  EXPECT_EQ(s.recompute, Recompute::None);
  const StrategyConfig t = parse_megatron_flags({"--data-parallel-size", "1", "--micro-batch-size", "1"});
  EXPECT_EQ(t.tp, 1);
  EXPECT_EQ(t.pp, 1);
  EXPECT_EQ(t.dtype, DType::FP32);
  const StrategyConfig u = parse_megatron_flags(
      {"--world-size", "16", "--data-parallel-size", "16", "--micro-batch-size", "1", "--recompute-activations"});
  EXPECT_EQ(u.dp, 16);
  EXPECT_EQ(u.recompute, Recompute::Selective);
}

TEST(MegatronFlags, VirtualPipeline) {
  const Args base = {"--pipeline-model-parallel-size", "8", "--data-parallel-size", "1", "--micro-batch-size", "1",
                     "--global-batch-size", "64"};
  Args a = base;
  a.insert(a.end(), {"--num-layers-per-virtual-pipeline-stage", "4"});
  const StrategyConfig s = parse_megatron_flags(a, 96);
  EXPECT_EQ(s.interleave, 3);  // 96 / 8 = 12 layers per stage, 4 per chunk
  EXPECT_EQ(s.schedule, Schedule::Interleaved);
  Args b = base;
  b.insert(b.end(), {"--num-layers=96", "--num-layers-per-virtual-pipeline-stage=12"});
  const StrategyConfig t = parse_megatron_flags(b);
  EXPECT_EQ(t.interleave, 1);
  EXPECT_EQ(t.schedule, Schedule::OneFOneB);
  EXPECT_EQ(t.num_layers, 96);
  Args c = base;
  c.insert(c.end(), {"--virtual-pipeline-size", "2"});
  EXPECT_EQ(parse_megatron_flags(c).interleave, 2);
}

// Leading zeros are decimal (Megatron's argparse `int`), never octal; "09" used to
// escape as boost's std::runtime_error (fuzz_megatron crash).
TEST(MegatronFlags, LeadingZerosAreDecimal) {
  const StrategyConfig s = parse_megatron_flags(
      {"--tensor-model-parallel-size", "08", "--data-parallel-size=010", "--micro-batch-size", "+09"});
  EXPECT_EQ(s.tp, 8);
  EXPECT_EQ(s.dp, 10);
  EXPECT_EQ(s.microbatch, 9);
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "00"}), "CONFIG-4",
                      "must be a positive integer, got 00");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "09", "--micro-batch-size", "0x8"}),
                      "CONFIG-7", "must be an integer, got '0x8'");
}

// ----------------------------------------------------------------------------
// Bad flags

TEST(MegatronErrors, UnknownFlag) {
  EXPECT_CONFIG_ERROR_AT(parse_megatron_flags({"--micro-batch-size", "1", "--hidden-size", "4096"}), "CONFIG-7",
                         "command line: flag '--hidden-size': unknown Megatron flag", "/2");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--foo=3"}), "CONFIG-7", "flag '--foo': unknown Megatron flag");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"8"}), "CONFIG-7", "unexpected argument '8'");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"-t", "8"}), "CONFIG-7", "unexpected argument '-t'");
}

TEST(MegatronErrors, MissingValue) {
  EXPECT_CONFIG_ERROR_AT(parse_megatron_flags({"--data-parallel-size", "1", "--micro-batch-size"}), "CONFIG-7",
                         "flag '--micro-batch-size': missing its value", "/2");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "--bf16"}), "CONFIG-7",
                      "flag '--tensor-model-parallel-size': missing its value");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--seq-length="}), "CONFIG-7", "flag '--seq-length': missing its value");
}

TEST(MegatronErrors, NonIntegerValue) {
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "eight"}), "CONFIG-7",
                      "flag '--tensor-model-parallel-size': must be an integer, got 'eight'");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--micro-batch-size=1.5"}), "CONFIG-7", "must be an integer, got '1.5'");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--micro-batch-size", "1e3"}), "CONFIG-7", "got '1e3'");
}

TEST(MegatronErrors, SwitchWithValueAndRepeats) {
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--bf16=true"}), "CONFIG-7", "flag '--bf16': takes no value");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--micro-batch-size", "1", "--micro-batch-size", "2"}), "CONFIG-7",
                      "flag '--micro-batch-size': given twice");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--virtual-pipeline-size", "2", "--num-layers-per-virtual-pipeline-stage",
                                            "2", "--data-parallel-size", "1", "--micro-batch-size", "1"}),
                      "CONFIG-7", "conflicts with --num-layers-per-virtual-pipeline-stage");
}

TEST(MegatronErrors, NonPositiveValues) {
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "0"}), "CONFIG-4",
                      "flag '--tensor-model-parallel-size': must be a positive integer, got 0");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--micro-batch-size", "-5"}), "CONFIG-4", "got -5");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--micro-batch-size", "99999999999999999999999"}), "CONFIG-4",
                      "below 2^40");
}

TEST(MegatronErrors, TooManyRanks) {  // ranks are 32-bit indices in every IR
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "8", "--data-parallel-size", "300000000",
                                            "--micro-batch-size", "1"}),
                      "CONFIG-4", "tp * pp * dp = 2400000000 ranks, more than 2^31 - 1");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "8", "--world-size", "4294967296",
                                            "--micro-batch-size", "1"}),
                      "CONFIG-4", "ranks, more than 2^31 - 1");
}

TEST(MegatronErrors, UnknownRecomputeGranularity) {
  EXPECT_CONFIG_ERROR(
      parse_megatron_flags({"--data-parallel-size", "1", "--micro-batch-size", "1", "--recompute-granularity", "foo"}),
      "CONFIG-6", "flag '--recompute-granularity': unknown value 'foo'");
}

TEST(MegatronErrors, MissingRequired) {
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--data-parallel-size", "1"}), "CONFIG-2", "missing --micro-batch-size");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--micro-batch-size", "1"}), "CONFIG-2",
                      "missing --data-parallel-size or --world-size");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--pipeline-model-parallel-size", "4", "--data-parallel-size", "1",
                                            "--micro-batch-size", "1", "--num-layers-per-virtual-pipeline-stage", "2"}),
                      "CONFIG-2", "needs the model's layer count");
}

TEST(MegatronErrors, Inconsistent) {
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "8", "--world-size", "12",
                                            "--micro-batch-size", "1"}),
                      "CONFIG-5", "flag '--world-size': 12 is not divisible by tp * pp = 8 * 1");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--tensor-model-parallel-size", "2", "--world-size", "8",
                                            "--data-parallel-size", "2", "--micro-batch-size", "1"}),
                      "CONFIG-5", "flag '--data-parallel-size': 2 != --world-size / (tp * pp) = 4");
  EXPECT_CONFIG_ERROR_AT(parse_megatron_flags({"--data-parallel-size", "4", "--micro-batch-size", "2",
                                               "--global-batch-size", "12"}),
                         "CONFIG-5",
                         "command line: field '--global-batch-size': 12 is not divisible by microbatch * dp = 2 * 4",
                         "/4");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--data-parallel-size", "1", "--micro-batch-size", "1", "--bf16", "--fp16"}),
                      "CONFIG-5", "flag '--fp16': conflicts with --bf16");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--pipeline-model-parallel-size", "8", "--data-parallel-size", "1",
                                            "--micro-batch-size", "1", "--num-layers-per-virtual-pipeline-stage", "5"},
                                           96),
                      "CONFIG-5", "5 does not divide the 12 layers per pipeline stage");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--pipeline-model-parallel-size", "8", "--data-parallel-size", "1",
                                            "--micro-batch-size", "1", "--num-layers", "90"},
                                           96),
                      "CONFIG-5", "90 != the model's layer count 96");
  EXPECT_CONFIG_ERROR(parse_megatron_flags({"--data-parallel-size", "1", "--micro-batch-size", "1",
                                            "--virtual-pipeline-size", "2"}),
                      "CONFIG-5", "needs pipeline parallelism");
}

}  // namespace
}  // namespace plancert::frontend
