// SPDX-License-Identifier: Apache-2.0
// CONFIG-8 (passes/frontend/room.h): the derivation passes refuse, before their large loops, a
// configuration whose derived plan certainly cannot fit the memory room, and never refuse one
// that fits: each bound is at most what the pass's output really holds.
#include "passes/frontend/room.h"
#include "passes/train/distribute.h"
#include "tests/passes/train_support.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace plancert::testing {
namespace room {  // its own namespace: the test target may be built as one unity file
namespace {

constexpr std::uintmax_t kMax = std::numeric_limits<std::uintmax_t>::max();

using Room = ScopedRoom;

TEST(Room, SaturatingArithmetic) {
  EXPECT_EQ(frontend::saturating_product({3, 5, 7}), 105U);
  EXPECT_EQ(frontend::saturating_product({std::uintmax_t{1} << 40, std::uintmax_t{1} << 30}), kMax);
  EXPECT_EQ(frontend::saturating_product({std::uintmax_t{1} << 32, std::uintmax_t{1} << 32, 0}), 0U);  // wraps to 0 first, then a real 0
  EXPECT_EQ(frontend::saturating_product({std::uintmax_t{1} << 32, std::uintmax_t{1} << 32, 1}), kMax);  // wraps to 0: still saturated
  EXPECT_EQ(frontend::saturating_sum({kMax - 1, 1}), kMax);
  EXPECT_EQ(frontend::saturating_sum({kMax, 1, 0}), kMax);
  EXPECT_EQ(frontend::saturating_sum({2, 3}), 5U);
  EXPECT_EQ(frontend::gib(std::uintmax_t{3} << 29), "1.5 GiB");
  EXPECT_EQ(frontend::gib((std::uintmax_t{1} << 30) - 1), "0.9 GiB");
  EXPECT_EQ(frontend::gib(kMax), "more than 16 EiB");
}

TEST(Room, NoRoomChecksNothingAndABoundWithinTheRoomPasses) {
  EXPECT_EQ(refusal([] { frontend::require_room(kMax, "/x", "anything"); }), "");
  Room r(1000);
  EXPECT_EQ(refusal([] { frontend::require_room(1000, "/x", "as much as the room"); }), "");
  std::string path;
  EXPECT_EQ(refusal([] { frontend::require_room(1001, "/x", "one byte more"); }, &path), "CONFIG-8");
  EXPECT_EQ(path, "/x");
}

// The ModelIR bound is layers x (the first layer's operations and values x their sizes): the
// room of exactly what the built model's vectors take admits it, a byte less than the bound of
// its layers refuses it at the model's `layers`, before a second layer is built.
TEST(Room, ModelBoundIsWhatTheLayersHoldAndRefusesBelowIt) {
  const ModelConfig one = gpt(1, 64, 8, 512), eight = gpt(8, 64, 8, 512);
  const auto w = concrete_workload(1, 16);
  const ModelIR m1 = passes::build_model_ir(one, w, DType::BF16), m8 = passes::build_model_ir(eight, w, DType::BF16);
  const std::uintmax_t seven = fixed_bytes(m8) - fixed_bytes(m1);  // every layer adds as much as the first
  ASSERT_EQ(seven % 7, 0U);
  const std::uintmax_t bound = seven / 7 * 8;
  EXPECT_LE(bound, fixed_bytes(m8));
  {
    Room r(fixed_bytes(m8));
    EXPECT_EQ(refusal([&] { (void)passes::build_model_ir(eight, w, DType::BF16); }), "");
  }
  Room r(bound - 1);
  std::string path;
  ASSERT_EQ(refusal([&] { (void)passes::build_model_ir(eight, w, DType::BF16); }, &path), "CONFIG-8");
  EXPECT_EQ(path, "");  // a record built in code has no source pointer
  ModelConfig huge = eight;
  huge.layers = std::int64_t{1} << 39;  // refused at once, not after 2^39 layers (asked only once the 8 are refused)
  EXPECT_EQ(refusal([&] { (void)passes::build_model_ir(huge, w, DType::BF16); }), "CONFIG-8");
}

// The distribution's bounds: 2 m v steps of each of p stages, and a rank list of t dp ranks
// for at least one task per operation. Both at most what the DistributedTaskIR holds.
TEST(Room, DistributionBoundsAreAtMostWhatItHolds) {
  const ModelConfig model = gpt(4, 64, 8, 512);
  const StrategyConfig s = strategy({.tp = 2, .pp = 2, .dp = 4, .microbatches = 8});
  const ModelIR m = passes::build_model_ir(model, concrete_workload(1, 16), DType::BF16);
  const DistributedTaskIR d = passes::distribute_training(m, "", s);
  const std::uintmax_t schedule_bound = 2 * 2 * 8 * 1 * sizeof(Step), task_bound = m.operations.size() * (sizeof(DistTask) + 2 * 4 * sizeof(Index));
  EXPECT_LE(std::max(schedule_bound, task_bound), fixed_bytes(d));
  {
    Room r(std::max(schedule_bound, task_bound));
    EXPECT_EQ(refusal([&] { (void)passes::distribute_training(m, "", s); }), "");
  }
  {
    Room r(task_bound - 1);
    EXPECT_EQ(refusal([&] { (void)passes::distribute_training(m, "", s); }), "CONFIG-8");
  }
  Room r(schedule_bound - 1);
  EXPECT_EQ(refusal([&] { (void)passes::distribute_training(m, "", s); }), "CONFIG-8");
}

}  // namespace
}  // namespace room
}  // namespace plancert::testing
