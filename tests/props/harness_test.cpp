// SPDX-License-Identifier: Apache-2.0
// The pass harness of props/harness.h: every registered pass holds its laws for 200 generated
// cases (pinned seed), and a deliberately broken pass, kept here and not in the public
// registry, is caught within 1,000 cases with a shrunk counterexample.
#include <gtest/gtest.h>

#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"
#include "props/harness.h"
#include "verifiers/gate.h"

#include <rapidcheck.h>

#include <cstdlib>

namespace plancert::props {
namespace {

constexpr std::uint64_t kSeed = 20240611;

// Cases per registered pass: 200, or PLANCERT_HARNESS_CASES (a sanitized build runs fewer).
int harness_cases() {
  const char* v = std::getenv("PLANCERT_HARNESS_CASES");
  return v && std::atoi(v) > 0 ? std::atoi(v) : 200;
}

class RegisteredPasses : public ::testing::TestWithParam<std::size_t> {};

TEST_P(RegisteredPasses, HoldTheirLawsFor200Cases) {
  const RegisteredPass& p = registry().at(GetParam());
  const int n = harness_cases();
  const FuzzResult r = fuzz(p, FuzzOptions{n, kSeed, 100, nullptr});
  EXPECT_TRUE(r.passed) << p.name << ": " << r.failure;
  EXPECT_GE(r.cases - r.discarded, n) << p.name;
}

INSTANTIATE_TEST_SUITE_P(Registry, RegisteredPasses, ::testing::Range<std::size_t>(0, registry().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) { return registry()[info.param].name; });

TEST(Registry, NamesTheSeedsPassesOnce) {
  std::set<std::string> names;
  for (const auto& p : registry()) EXPECT_TRUE(names.insert(p.name).second) << p.name;
  for (const char* n : {"BuildModelIR", "DistributeTransformerTrainingPass", "PlanTransformerTrainingPass", "BindReferenceQueueTargetPass",
                        "BindReferenceSlotTargetPass", "BindQueueTargetPass"})
    EXPECT_NE(find_pass(n), nullptr) << n;
  EXPECT_EQ(find_pass("NoSuchPass"), nullptr);
}

// PlanTransformerTrainingPass with a planted bug: under sequence parallelism it forgets one
// vector operation of the last compute task of the plan (WORK-3 must catch it).
CaseOutcome broken_case() {
  CaseOutcome out;
  const TrainKnobs k = *train_knobs();
  auto cfg = train_configs(k);
  if (!cfg) {
    out.discarded = true;
    return out;
  }
  const auto& [model, strategy] = *cfg;
  const passes::Workload w{Expr(strategy.microbatch), Expr(*frontend::effective_seq_length(model, strategy)), {}};
  auto m = std::get<Committed<ModelIR>>(Gate::commit_root(make_snapshot(passes::build_model_ir(model, w, strategy.dtype), {})));
  auto d = std::get<Committed<DistributedTaskIR>>(
      Gate::commit(m, make_snapshot(passes::distribute_training(m.payload(), m.digest(), strategy), {m.digest()})));
  PortablePlanIR plan = passes::plan_training(m.payload(), d.payload(), strategy);
  if (strategy.sequence_parallel)
    for (auto it = plan.tasks.rbegin(); it != plan.tasks.rend(); ++it)
      if (it->kind == TaskKind::compute && it->work.vector_ops != Expr()) {
        it->work.vector_ops = it->work.vector_ops - Expr(1);
        break;
      }
  auto snap = make_snapshot(std::move(plan), {d.digest()});
  out.files.emplace_back("portable.json", encode_snapshot(snap));
  auto r = Gate::commit(d, std::move(snap));
  if (const auto* rej = std::get_if<Rejection>(&r))
    for (const auto& x : rej->diagnostics.all()) out.failure += to_text(x) + "\n";
  return out;
}

TEST(BrokenPass, IsCaughtWithin1000Cases) {
  const RegisteredPass broken{"BrokenPlanPass", "DistributedTaskIR", "PortablePlanIR", "loses one vector op under SP", broken_case};
  const FuzzResult r = fuzz(broken, FuzzOptions{1000, kSeed, 100, nullptr});
  ASSERT_FALSE(r.passed);
  EXPECT_GT(r.first_failure, 0);
  EXPECT_LE(r.first_failure, 1000);
  EXPECT_NE(r.failure.find("WORK-"), std::string::npos) << r.failure;
  ASSERT_FALSE(r.counterexample.empty());
  EXPECT_EQ(r.counterexample.front().first, "portable.json");
}

TEST(MutationCampaign, EveryOperatorRejectsItsMutantsOrTheOracleAcceptsThem) {
  // A short campaign (the per-operator property suite runs the long one): the report covers
  // every operator and none accepts a mutant the oracle calls invalid.
  const auto reports = mutation_campaign(3, kSeed, nullptr);
  EXPECT_EQ(reports.size(), catalog().size());
  for (const auto& r : reports) {
    EXPECT_EQ(r.accepted, 0) << r.name << ": " << r.example;
    EXPECT_EQ(r.rejected_other, 0) << r.name << ": " << r.example;
  }
}

}  // namespace
}  // namespace plancert::props
