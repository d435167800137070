// SPDX-License-Identifier: Apache-2.0
// The default example (GPT-3 175B, seqsel strategy, A100 80 GB) bound by all three binders
// through the gate, via the CLI's binding step; the queue binder's memory plan is within 5% of
// its lower bound and below the layout without reuse.
#include <gtest/gtest.h>

#include "cli/bind_cmd.h"
#include "tests/bind/support.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace plancert::bindtest {
namespace {

struct Default {
  frontend::SystemConfig system;
  TrainChain chain = default_chain(&system);
};
const Default& example() {
  static const Default d;
  return d;
}

cli::BindOutcome run(const std::string& target, const std::string& out = {}) {
  const auto& d = example();
  std::ostringstream log;
  auto r = cli::bind_and_commit(*d.chain.portable, &d.chain.dist->payload(), d.system, d.chain.strategy, target, out, log);
  std::cout << log.str();
  return r;
}

double ratio(const std::string& a, const std::string& b) { return std::stod(a) / std::stod(b); }

TEST(DefaultExample, QueueBinderPlansMemoryNearItsLowerBound) {
  const auto dir = std::filesystem::temp_directory_path() / "plancert-bind-default";
  std::filesystem::remove_all(dir);
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run("queue", dir.string());
  ASSERT_EQ(r.exit, 0);
  std::printf("bind + commit: %.1f s\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  const auto& c = r.report.at("concrete");
  EXPECT_EQ(c.at("target"), "queue");
  EXPECT_GT(c.at("commands").get<std::size_t>(), 100000u);
  for (const auto& m : c.at("memory")) {
    const std::string peak = m.at("peak_bytes"), lb = m.at("lower_bound_bytes"), naive = m.at("naive_bytes"), cap = m.at("capacity_bytes");
    std::printf("  %s peak %s lower bound %s (peak/lb %.4f) no-reuse %s (no-reuse/peak %.3f) capacity %s\n", m.at("device").get<std::string>().c_str(), peak.c_str(),
                lb.c_str(), ratio(peak, lb), naive.c_str(), ratio(naive, peak), cap.c_str());
    EXPECT_LE(ratio(peak, lb), 1.05);
    EXPECT_LT(ratio(peak, naive), 1.0);
    EXPECT_LE(ratio(peak, cap), 1.0);
  }
  EXPECT_TRUE(std::filesystem::exists(dir / "concrete.json"));
  std::filesystem::remove_all(dir);
}

TEST(DefaultExample, ReferenceBindersCommit) {
  for (const char* t : {"reference-queue", "reference-slot"}) {
    auto r = run(t);
    ASSERT_EQ(r.exit, 0) << t;
    EXPECT_EQ(r.report.at("concrete").at("commands").get<std::size_t>(), example().chain.portable->payload().tasks.size());
  }
}

TEST(DefaultExample, UnknownTargetIsBadUsage) { EXPECT_THROW(run("slot"), InputError); }

}  // namespace
}  // namespace plancert::bindtest
