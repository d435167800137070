// SPDX-License-Identifier: Apache-2.0
// Every bundled example loads; native TOML examples equal their Calculon twins.
#include "passes/frontend/loaders.h"
#include "tests/frontend/test_support.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace plancert::frontend {
namespace {

using test::source_path;

std::vector<std::filesystem::path> files_in(const std::string& dir, const std::string& suffix) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(source_path(dir))) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void expect_all_load(const std::string& dir, const std::string& suffix, std::size_t expected_count,
                     void (*load)(const std::filesystem::path&)) {
  const auto files = files_in(dir, suffix);
  EXPECT_EQ(files.size(), expected_count) << dir;
  for (const auto& f : files) {
    SCOPED_TRACE(f.string());
    try {
      load(f);
    } catch (const InputError& e) {
      ADD_FAILURE() << e.diag.code << " " << e.what();
    }
  }
}

TEST(FrontendExamples, EveryCalculonModelLoads) {
  expect_all_load("examples/calculon/models", ".json", 13, [](const std::filesystem::path& p) { (void)load_model(p); });
}

TEST(FrontendExamples, EveryCalculonStrategyLoads) {
  expect_all_load("examples/calculon/strategies", ".json", 9,
                  [](const std::filesystem::path& p) { (void)load_strategy(p); });
}

TEST(FrontendExamples, EveryCalculonSystemLoads) {
  expect_all_load("examples/calculon/systems", ".json", 3, [](const std::filesystem::path& p) { (void)load_system(p); });
}

TEST(FrontendExamples, EveryHfConfigLoads) {
  expect_all_load("examples/hf", ".json", 6, [](const std::filesystem::path& p) { (void)load_model(p); });
}

TEST(FrontendExamples, EveryNativeFileLoads) {
  expect_all_load("examples/native", ".model.toml", 1, [](const std::filesystem::path& p) { (void)load_model(p); });
  expect_all_load("examples/native", ".strategy.toml", 1,
                  [](const std::filesystem::path& p) { (void)load_strategy(p); });
  expect_all_load("examples/native", ".system.toml", 1, [](const std::filesystem::path& p) { (void)load_system(p); });
}

// Provenance differs by construction (file, format, field spellings); the
// content must not.
template <class T>
T without_provenance(T t) {
  t.source = Provenance{};
  return t;
}

TEST(FrontendExamples, NativeModelEqualsCalculon) {
  const ModelConfig toml = load_model(source_path("examples/native/gpt3-175b.model.toml"));
  const ModelConfig json = load_model(source_path("examples/calculon/models/gpt3-175B.json"));
  EXPECT_EQ(toml.source.format, SourceFormat::NativeToml);
  EXPECT_EQ(json.source.format, SourceFormat::Calculon);
  EXPECT_EQ(without_provenance(toml), without_provenance(json));
  EXPECT_EQ(toml.hidden, 12288);
}

TEST(FrontendExamples, NativeStrategyEqualsCalculon) {
  const StrategyConfig toml = load_strategy(source_path("examples/native/seqsel.strategy.toml"));
  const StrategyConfig json = load_strategy(source_path("examples/calculon/strategies/gpt3-175B_seqsel.json"));
  EXPECT_EQ(without_provenance(toml), without_provenance(json));
  EXPECT_EQ(toml.interleave, 3);
  // A different Calculon strategy must not compare equal (the test can fail).
  const StrategyConfig full = load_strategy(source_path("examples/calculon/strategies/gpt3-175B_full.json"));
  EXPECT_NE(without_provenance(toml), without_provenance(full));
}

TEST(FrontendExamples, NativeSystemEqualsCalculon) {
  const SystemConfig toml = load_system(source_path("examples/native/a100.system.toml"));
  const SystemConfig json = load_system(source_path("examples/calculon/systems/a100_80g.json"));
  EXPECT_EQ(without_provenance(toml), without_provenance(json));
  const SystemConfig other = load_system(source_path("examples/calculon/systems/a100_80e.json"));
  EXPECT_NE(without_provenance(toml), without_provenance(other));
}

TEST(FrontendExamples, OneNativeFileCanHoldAWholePlan) {
  const std::string plan = R"(
[model]
family = "gpt"
hidden = 1024
ffn = 4096
heads = 16
layers = 24
seq_length = 1024
[strategy]
tp = 2
pp = 2
dp = 2
microbatch = 1
global_batch = 8
dtype = "fp16"
)";
  const ModelConfig m = parse_model(plan, "plan.toml");
  const StrategyConfig s = parse_strategy(plan, "plan.toml");
  EXPECT_EQ(m.layers, 24);
  EXPECT_EQ(s.num_procs, 8);
  EXPECT_NO_THROW(validate(m, s));
  EXPECT_CONFIG_ERROR(parse_system(plan, "plan.toml"), "CONFIG-2", "plan.toml: field 'system': missing required field");
}

}  // namespace
}  // namespace plancert::frontend
