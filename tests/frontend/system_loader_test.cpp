// SPDX-License-Identifier: Apache-2.0
// System loaders (native TOML and Calculon system JSON): exact numbers.
#include "passes/frontend/exact_number.h"
#include "passes/frontend/loaders.h"
#include "tests/frontend/test_support.h"

#include <gtest/gtest.h>

#include <string>

namespace plancert::frontend {
namespace system_loader {  // its own namespace: the test target may be built as one unity file
namespace {

using test::source_path;

Rational q(long long n, long long d) { return make_rational(Int(n), Int(d)); }

const char* const kCalculon = R"({
  "matrix": {"float16": {"tflops": 312, "gflops_efficiency": [[128, 0.95], [0, 0.1]]}},
  "vector": {"float16": {"tflops": 78, "gflops_efficiency": [[16, 0.95], [0, 0.1]]}},
  "mem1": {"GiB": 80, "GBps": 2048, "MB_efficiency": [[100, 0.90], [0, 0.3]]},
  "mem2": {"GiB": 512, "GBps": 32, "MB_efficiency": [[0, 0.3]]},
  "processing_mode": "no_overlap",
  "networks": [{
    "bandwidth": 300, "efficiency": 0.65, "size": 8, "latency": 0.00001,
    "ops": {"p2p": [1.0, null], "reduce_scatter": [1.5, -1], "all_gather": [1.5, -1], "all_reduce": [2.0, -1]},
    "must_be_filled": true, "processor_usage": 0.15
  }]
})";

const char* const kNative = R"(
[system]
processing_mode = "roofline"
[system.matrix.bfloat16]
tflops = "989/2"
gflops_efficiency = [{ min_gflop = 0, efficiency = "19/20" }]
[system.vector.bfloat16]
tflops = 60
gflops_efficiency = [{ min_gflop = 0, efficiency = 1 }]
[system.mem1]
capacity_gib = 0.5
bandwidth_gbps = 1_000.5
mb_efficiency = [{ min_mb = 0, efficiency = 0.5 }]
[system.mem2]
capacity_gib = 1
bandwidth_gbps = 10
mb_efficiency = [{ min_mb = 0, efficiency = 0.5 }]
[[system.networks]]
bandwidth_gbps = 100
efficiency = 0.5
size = 4
latency_s = 5e-6
must_be_filled = false
processor_usage = 0
ops.p2p = { multiplier = 1 }
ops.reduce_scatter = { multiplier = 1, offset = 0 }
ops.all_gather = { multiplier = 1, offset = 0 }
ops.all_reduce = { multiplier = 2, offset = -1 }
)";

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos != std::string::npos) text.replace(pos, from.size(), to);
  return text;
}

SystemConfig calculon(const std::string& text) { return parse_system(text, "systems/x.json"); }
SystemConfig native(const std::string& text) { return parse_system(text, "systems/x.system.toml"); }

TEST(CalculonSystem, A100_80G) {
  const SystemConfig s = load_system(source_path("examples/calculon/systems/a100_80g.json"));
  EXPECT_EQ(s.name, "a100_80g");
  ASSERT_EQ(s.matrix.count("float16"), 1U);
  const EnginePeak& m = s.matrix.at("float16");
  EXPECT_EQ(m.tflops, Rational(312));
  ASSERT_EQ(m.gflops_efficiency.size(), 4U);
  EXPECT_EQ(m.gflops_efficiency[0].threshold, Rational(128));
  EXPECT_EQ(m.gflops_efficiency[0].efficiency, q(19, 20));
  EXPECT_EQ(m.gflops_efficiency[2].efficiency, q(3, 5));
  EXPECT_EQ(m.gflops_efficiency[3].threshold, Rational(0));
  EXPECT_EQ(m.gflops_efficiency[3].efficiency, q(1, 10));
  EXPECT_EQ(s.vector.at("float16").tflops, Rational(78));
  EXPECT_EQ(s.mem1.capacity_bytes, Int("85899345920"));  // 80 GiB = 80 * 2^30 bytes
  EXPECT_EQ(s.mem1.bandwidth_gbps, Rational(2048));
  EXPECT_EQ(s.mem1.mb_efficiency[0].efficiency, q(9, 10));
  EXPECT_EQ(s.mem1.mb_efficiency[1].efficiency, q(3, 4));
  EXPECT_EQ(s.mem2.capacity_bytes, Int(512) << 30);
  EXPECT_EQ(s.processing_mode, ProcessingMode::NoOverlap);
  ASSERT_EQ(s.networks.size(), 2U);
  const NetworkTier& n0 = s.networks[0];
  EXPECT_EQ(n0.bandwidth_gbps, Rational(300));
  EXPECT_EQ(n0.efficiency, q(13, 20));
  EXPECT_EQ(n0.size, 8);
  EXPECT_EQ(n0.latency_s, q(1, 100000));
  EXPECT_TRUE(n0.must_be_filled);
  EXPECT_EQ(n0.processor_usage, q(3, 20));
  EXPECT_EQ(n0.ops.at("p2p").multiplier, Rational(1));
  EXPECT_FALSE(n0.ops.at("p2p").offset.has_value());
  EXPECT_EQ(n0.ops.at("reduce_scatter").multiplier, q(3, 2));
  EXPECT_EQ(n0.ops.at("all_reduce").multiplier, Rational(2));
  EXPECT_EQ(n0.ops.at("all_reduce").offset, -1);
  EXPECT_EQ(s.networks[1].latency_s, q(1, 50000));
  EXPECT_EQ(s.networks[1].size, 65536);
  EXPECT_FALSE(s.networks[1].must_be_filled);
  EXPECT_EQ(s.networks[1].ops.at("all_gather").offset, 0);
}

TEST(CalculonSystem, CapacityBeyond64Bits) {
  // a100_80e writes "GiB": 80000000000: 80e9 * 2^30 bytes > 2^64, kept exactly.
  const SystemConfig s = load_system(source_path("examples/calculon/systems/a100_80e.json"));
  EXPECT_EQ(s.mem1.capacity_bytes, Int("85899345920000000000"));
  EXPECT_GT(s.mem1.capacity_bytes, Int(1) << 64);
  EXPECT_EQ(s.matrix.at("float16").gflops_efficiency[0].efficiency, q(99, 100));
}

TEST(CalculonSystem, H100Float8) {
  const SystemConfig s = load_system(source_path("examples/calculon/systems/h100_80g_nvl8.json"));
  EXPECT_EQ(s.matrix.at("float8").tflops, Rational(2000));
  EXPECT_EQ(s.matrix.at("float16").tflops, Rational(1000));
  EXPECT_EQ(s.networks[0].ops.at("all_reduce").offset, 1);
}

TEST(NativeSystem, ExactStringsAndDecimals) {
  const SystemConfig s = native(kNative);
  EXPECT_EQ(s.name, "x");
  EXPECT_EQ(s.processing_mode, ProcessingMode::Roofline);
  EXPECT_EQ(s.matrix.at("bfloat16").tflops, q(989, 2));
  EXPECT_EQ(s.matrix.at("bfloat16").gflops_efficiency[0].efficiency, q(19, 20));
  EXPECT_EQ(s.mem1.capacity_bytes, Int(1) << 29);  // 0.5 GiB
  EXPECT_EQ(s.mem1.bandwidth_gbps, q(2001, 2));    // TOML 1_000.5
  EXPECT_EQ(s.networks[0].latency_s, q(1, 200000));
  EXPECT_EQ(s.networks[0].processor_usage, Rational(0));
  EXPECT_EQ(s.networks[0].ops.at("all_reduce").offset, -1);
}

// ----------------------------------------------------------------------------
// Bad inputs

TEST(SystemErrors, Syntax) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("GiB": 80,)", R"("GiB": 80, "GiB": 40,)")), "CONFIG-1",
                      "duplicate key 'GiB' at /mem1/GiB");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "tflops = 60", "tflops = 60.")), "CONFIG-1", "syntax error");
}

TEST(SystemErrors, Missing) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, R"("all_gather": [1.5, -1], )", "")), "CONFIG-2",
                         "systems/x.json: field 'networks[0].ops.all_gather': missing required field",
                         "/networks/0/ops/all_gather");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "ops.all_reduce = { multiplier = 2, offset = -1 }",
                                     "ops.all_reduce = { multiplier = 2 }")),
                      "CONFIG-2", "field 'system.networks[0].ops.all_reduce.offset': missing required field");
}

TEST(SystemErrors, WrongType) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("tflops": 312)", R"("tflops": "312")")), "CONFIG-3",
                      "field 'matrix.float16.tflops': must be a number, got \"312\"");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("p2p": [1.0, null])", R"("p2p": [1.0, 0])")), "CONFIG-3",
                      "field 'networks[0].ops.p2p[1]': must be null (p2p has no participant offset)");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("all_reduce": [2.0, -1])", R"("all_reduce": [2.0, null])")),
                      "CONFIG-3", "a collective needs an integer participant offset, got null");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("all_reduce": [2.0, -1])", R"("all_reduce": [2.0, -1.5])")),
                      "CONFIG-3", "field 'networks[0].ops.all_reduce[1]': must be an integer, got -1.5");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "[[128, 0.95], [0, 0.1]]", "[[128, 0.95, 1], [0, 0.1]]")),
                      "CONFIG-3", "must be a [threshold, efficiency] pair, got 3 items");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "tflops = 60", "tflops = \"sixty\"")), "CONFIG-3",
                      "must be an exact number such as \"0.35\" or \"7/20\", got \"sixty\"");
}

TEST(SystemErrors, OutOfRange) {
  EXPECT_CONFIG_ERROR_AT(calculon(replace(kCalculon, "[[128, 0.95]", "[[128, 1.5]")), "CONFIG-4",
                         "systems/x.json: field 'matrix.float16.gflops_efficiency[0][1]': must be in (0, 1], got 1.5",
                         "/matrix/float16/gflops_efficiency/0/1");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("GiB": 80)", R"("GiB": 0.1)")), "CONFIG-4",
                      "field 'mem1.GiB': must be a whole number of bytes (GiB * 2^30), got 0.1");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("GiB": 80)", R"("GiB": 0)")), "CONFIG-4",
                      "field 'mem1.GiB': must be positive, got 0");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("tflops": 312)", R"("tflops": -312)")), "CONFIG-4",
                      "must be positive, got -312");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("processor_usage": 0.15)", R"("processor_usage": 1)")),
                      "CONFIG-4", "field 'networks[0].processor_usage': must be in [0, 1), got 1");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("latency": 0.00001)", R"("latency": -1e-5)")), "CONFIG-4",
                      "field 'networks[0].latency': must be non-negative, got -1e-5");
  // Far below the binary range: exact conversion refuses instead of building a huge number.
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("latency": 0.00001)", R"("latency": 1e-999999)")), "CONFIG-4",
                      "number out of range");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("latency": 0.00001)", R"("latency": 1e999)")), "CONFIG-4",
                      "number out of range");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "latency_s = 5e-6", "latency_s = inf")), "CONFIG-4",
                      "field 'system.networks[0].latency_s': must be a finite number, got inf");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "tflops = \"989/2\"", "tflops = \"989/0\"")), "CONFIG-4",
                      "zero denominator");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("networks": [{)", R"("networks": [], "x": [{)")), "CONFIG-4",
                      "field 'networks': must list at least one network tier");
}

TEST(SystemErrors, TableConsistency) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "[[128, 0.95], [0, 0.1]]", "[[0, 0.1], [128, 0.95]]")), "CONFIG-5",
                      "thresholds must decrease strictly from row to row, got 128 after 0");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, "[[128, 0.95], [0, 0.1]]", "[[128, 0.95], [1, 0.1]]")), "CONFIG-5",
                      "field 'matrix.float16.gflops_efficiency': the last row must have threshold 0");
  EXPECT_CONFIG_ERROR(native(replace(kNative, "ops.p2p = { multiplier = 1 }", "ops.p2p = { multiplier = 1, offset = 0 }")),
                      "CONFIG-5", "p2p has no participant offset");
}

TEST(SystemErrors, Unknown) {
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("matrix": {"float16")", R"("matrix": {"float64")")), "CONFIG-6",
                      "field 'matrix.float64': unknown dtype 'float64'");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("no_overlap")", R"("overlap")")), "CONFIG-6",
                      "field 'processing_mode': unknown value \"overlap\"");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("must_be_filled": true)", R"("must_be_filled": true, "topology": "ring")")),
                      "CONFIG-6", "field 'networks[0].topology': unknown field");
  EXPECT_CONFIG_ERROR(calculon(replace(kCalculon, R"("p2p": [1.0, null])", R"("p2p": [1.0, null], "broadcast": [1, 0])")),
                      "CONFIG-6", "field 'networks[0].ops.broadcast': unknown field");
  EXPECT_CONFIG_ERROR(native(std::string(kNative) + "foo = 1\n"), "CONFIG-6",
                      "field 'system.networks[0].foo': unknown field");
}

}  // namespace
}  // namespace system_loader
}  // namespace plancert::frontend
