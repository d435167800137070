// SPDX-License-Identifier: Apache-2.0
// The prototype decoder of the compact command table (bench/compact_table.h): it reproduces the
// commands the generic decoder reads, and it stops at anything that is not canonical.
#include "bench/compact_table.h"
#include "bench/gen_plan.h"
#include "core/codec.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace plancert::bench {
namespace {

struct Fixture {
  ConcretePlanIR plan;
  std::string text;  // the canonical payload
  std::size_t from = 0;
};

Fixture generated(TargetKind target) {
  GenOptions o;
  o.commands = 2000, o.edges = 6000, o.target = target;
  Fixture f;
  f.plan = generate_plan(o).payload;
  f.plan.commands[7].attrs = {{"layer", "3"}, {"phase", "fwd"}};  // annotations, a negative repeat and an empty source list are kept exactly
  f.plan.commands[8].repeat = -4;
  f.plan.commands[9].lineage.sources.clear();
  f.text = codec::to_canonical(f.plan);
  f.from = f.text.find("\"commands\":[") + 11;
  return f;
}

TEST(CompactTable, ReproducesEveryFieldOfEveryCommand) {
  for (TargetKind target : {TargetKind::queue, TargetKind::slot}) {
    const Fixture f = generated(target);
    CompactCommands t;
    std::string why;
    const std::size_t end = decode_compact_commands(f.text, f.from, t, why);
    ASSERT_NE(end, SIZE_MAX) << why;
    EXPECT_EQ(f.text.substr(end, 2), ",\"") << "the array ends where the next key starts";
    ASSERT_EQ(t.size(), f.plan.commands.size());
    EXPECT_TRUE(same_commands(t, f.text, f.plan, why)) << why;
    EXPECT_EQ(t.at.size(), 5 * t.size() + 1);
    std::set<const Work*> works;
    for (const auto& w : t.work) works.insert(&*w);
    EXPECT_LT(works.size(), 100U) << "works are shared, not one a command";
  }
}

TEST(CompactTable, ComparisonFindsADifferentCommand) {
  const Fixture f = generated(TargetKind::queue);
  CompactCommands t;
  std::string why;
  ASSERT_NE(decode_compact_commands(f.text, f.from, t, why), SIZE_MAX) << why;
  ConcretePlanIR other = f.plan;
  other.commands[1500].dependencies.push_back(Index{0});
  EXPECT_FALSE(same_commands(t, f.text, other, why));
  EXPECT_NE(why.find("command 1500"), std::string::npos) << why;
  other = f.plan;
  other.commands[3].work = Work{Expr(1), Expr(), Expr(), Expr(), Expr(), Expr(), Expr()};
  EXPECT_FALSE(same_commands(t, f.text, other, why));
}

TEST(CompactTable, StopsAtTextThatIsNotCanonical) {
  const Fixture f = generated(TargetKind::queue);
  auto stops = [&](std::string text) {
    CompactCommands t;
    std::string why;
    const bool stopped = decode_compact_commands(text, f.from, t, why) == SIZE_MAX;
    EXPECT_TRUE(stopped) << text.substr(f.from, 200);
    return why;
  };
  auto edit = [&](std::string_view find, std::string_view put) {
    std::string t = f.text;
    const std::size_t at = t.find(find, f.from);
    EXPECT_NE(at, std::string::npos) << find;
    return t.replace(at, find.size(), put);
  };
  EXPECT_NE(stops(edit("\"device\":", "\"device\": ")).find("a canonical integer"), std::string::npos);  // whitespace
  EXPECT_NE(stops(edit("\"device\":", "\"device\":0")).find("a canonical integer"), std::string::npos);  // a leading zero
  EXPECT_FALSE(stops(edit("\"repeat\":1", "\"repeat\":1.0")).empty());                                   // a float
  EXPECT_FALSE(stops(edit("\"repeat\":1", "\"repeat\":-0")).empty());                                   // negative zero
  EXPECT_FALSE(stops(edit("\"device\":", "\"device\":9999999999")).empty());                           // out of the 32-bit range
  EXPECT_FALSE(stops(edit("\"id\":\"c", "\"id\":\"\\u0063")).empty());                                 // an escape
  EXPECT_FALSE(stops(edit("\"kind\":\"launch\"", "\"kind\":\"lunch\"")).empty());                      // an unknown kind
  EXPECT_FALSE(stops(edit("\"attrs\":{}", "\"attrs\":{\"b\":\"1\",\"a\":\"2\"}")).empty());             // keys out of order
  EXPECT_FALSE(stops(edit("\"attrs\":{}", "\"attrs\":{\"\":\"1\",\"\":\"2\"}")).empty());               // an empty key twice
  EXPECT_FALSE(stops(edit("\"matrix_ops\":\"", "\"matrix_ops\":\"0")).empty());                        // a work the strict decoder refuses
  EXPECT_FALSE(stops(edit("{\"attrs\":", "{\"x\":0,\"attrs\":")).empty());                             // an unknown field
  EXPECT_FALSE(stops(f.text.substr(0, f.text.size() / 2)).empty());                                    // truncated
}

}  // namespace
}  // namespace plancert::bench
