// Unit tests of verifier witnesses and the gate's one way in.
#include "passes/emit/emit.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <gtest/gtest.h>

namespace plancert {
namespace {

Lineage derived(std::string src) { return Lineage{LineageKind::derived, "bind", {std::move(src)}}; }

// A 3-command queue plan on one device: c0 -> c1 -> c2 on one compute queue.
ConcretePlanIR plan3() {
  ConcretePlanIR p;
  p.rules = {"bind"};
  p.devices = {Device{"gpu0", "gpu", Int(1) << 30, {}}};
  p.regions = {Region{256, Int(1) << 20, 0, "hbm0", 0, "hbm"}};
  for (int i = 0; i < 3; ++i) {
    Command c;
    c.id = "c" + std::to_string(i);
    c.lineage = derived("t" + std::to_string(i));
    if (i) c.dependencies = {i - 1};
    p.commands.push_back(c);
  }
  p.queue = QueueSchedule{{Queue{{0, 1, 2}, 0, "q0", QueueKind::compute}}};
  return p;
}

Diagnostics check(const ConcretePlanIR& p) { return verify_snapshot(AnySnapshot(make_snapshot(p, {std::string(64, 'a')}))); }

TEST(Verifier, ValidPlanIsAccepted) {
  auto d = check(plan3());
  EXPECT_TRUE(d.ok()) << (d.all().empty() ? "" : to_text(d.all()[0]));
}

TEST(Verifier, CycleIsReportedWithTheCycleAsWitness) {
  auto p = plan3();
  p.commands[0].dependencies = {2};
  auto d = check(p);
  ASSERT_TRUE(d.has("DAG-2"));
  for (const auto& x : d.all())
    if (x.code == "DAG-2") {
      ASSERT_EQ(x.notes.size(), 1u);
      EXPECT_NE(x.notes[0].find("c0 -> c1 -> c2 -> c0"), std::string::npos) << x.notes[0];
      EXPECT_EQ(x.path.rfind("/payload/commands/", 0), 0u) << x.path;
    }
}

// ID-1 over many ids (the table probes past occupied slots): each repeat is reported once, at
// the repeat, with the entity that used the id first as its witness, in entity order.
TEST(Verifier, RepeatedIdsAreReportedWithTheirFirstUse) {
  auto p = plan3();
  for (int i = 3; i < 5000; ++i) {
    Command c = p.commands[2];
    c.id = "c" + std::to_string(i);
    c.lineage = derived("t" + std::to_string(i));
    c.dependencies = {i - 1};
    p.commands.push_back(c);
    p.queue->queues[0].commands.push_back(i);
  }
  ASSERT_TRUE(check(p).ok());
  p.commands[4000].id = "c17";
  p.commands[4999].id = "c17";
  p.commands[2500].id = "q0";  // the queue's id: queues come after commands
  std::vector<std::string> got;
  const Diagnostics diags = check(p);
  for (const auto& d : diags.all()) got.push_back(d.code + " " + d.path + " " + (d.notes.empty() ? "" : d.notes[0]));
  EXPECT_EQ(got, (std::vector<std::string>{"ID-1 /payload/commands/4000/id first used at /payload/commands/17",
                                           "ID-1 /payload/commands/4999/id first used at /payload/commands/17",
                                           "ID-1 /payload/queue/queues/0/id first used at /payload/commands/2500"}));
}

// ID-2's character set, byte by byte: exactly [A-Za-z0-9_.:/#@+-[]=,] is allowed (ASCII, so
// the check does not depend on a locale; UTF-8 bytes and controls are refused), and 1 to 256 bytes.
TEST(Verifier, IdSyntaxAllowsExactlyItsCharacterSet) {
  const std::string allowed = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.:/#@+-[]=,";
  auto p = plan3();
  // Accepted whole, or rejected with ID-2 at the id and nothing else.
  auto verdict = [&](const std::string& id) {
    p.commands[1].id = id;
    const Diagnostics d = check(p);
    if (d.ok()) return std::string("accepted");
    std::string got;
    for (const auto& x : d.all()) got += x.code + " " + x.path + ";";
    return got;
  };
  const std::string refused = "ID-2 /payload/commands/1/id;";
  for (int b = 0; b < 256; ++b) {
    const char ch = static_cast<char>(b);
    EXPECT_EQ(verdict(std::string("c1") + ch), allowed.find(ch) != std::string::npos ? "accepted" : refused) << "byte " << b;
  }
  EXPECT_EQ(verdict("c1" + std::string(254, 'x')), "accepted");  // 256 bytes
  EXPECT_EQ(verdict("c1" + std::string(255, 'x')), refused);     // 257 bytes
  EXPECT_EQ(verdict(""), refused);
}

TEST(Verifier, DeadlockThroughTokensOnly) {
  // c1 on a second queue signals a token c0 waits for, but c1 depends on c2 which queues after c0.
  auto p = plan3();
  p.commands[1].dependencies = {};
  p.commands[2].dependencies = {};
  p.commands[1].kind = CommandKind::collective;
  p.commands[1].dependencies = {2};
  p.tokens = {Token{"k0"}};
  p.commands[1].signals = {0};
  p.commands[0].waits = {0};
  p.queue = QueueSchedule{{Queue{{0, 2}, 0, "q0", QueueKind::compute}, Queue{{1}, 0, "q1", QueueKind::collective}}};
  auto d = check(p);
  EXPECT_TRUE(d.has("DEADLOCK-1"));
  EXPECT_FALSE(d.has("DAG-2"));  // the dependency graph alone is acyclic
}

TEST(Verifier, AlignmentAndCapacity) {
  auto p = plan3();
  p.buffers = {ConcreteBuffer{64, "b0", derived("pb0"), 0, 0, 100}, ConcreteBuffer{64, "b1", derived("pb1"), 256, 0, 100}};
  EXPECT_TRUE(check(p).ok());
  p.buffers[1].offset = 320;  // a multiple of 64 but not of the region alignment 256
  EXPECT_TRUE(check(p).has("ALIGN-1"));
  p.buffers[1].offset = Int(1) << 20;  // aligned, but [2^20, 2^20 + 100) is past the region
  EXPECT_TRUE(check(p).has("CAP-1"));
  p.buffers[1].offset = 512;
  p.buffers[1].size = Int("1000000000000000000000000000000");  // a huge claimed size allocates nothing
  EXPECT_TRUE(check(p).has("CAP-1"));
}

TEST(Gate, CommitsOnlyVerifiedSnapshots) {
  ModelIR m;
  m.name = "m";
  auto ok = Gate::commit_root(make_snapshot(m, {}));
  ASSERT_TRUE(std::holds_alternative<Committed<ModelIR>>(ok));
  auto bad = make_snapshot(m, {});
  bad.digest[0] = bad.digest[0] == 'a' ? 'b' : 'a';
  auto r = Gate::commit_root(bad);
  ASSERT_TRUE(std::holds_alternative<Rejection>(r));
  EXPECT_TRUE(std::get<Rejection>(r).diagnostics.has("DIGEST-1"));
  // A child must list its committed parent's digest.
  DistributedTaskIR dist;
  dist.mesh.axes = {MeshAxis{"tp", 1}};
  auto child = make_snapshot(dist, {std::string(64, '0')});
  auto rc = Gate::commit(std::get<Committed<ModelIR>>(ok), child);
  ASSERT_TRUE(std::holds_alternative<Rejection>(rc));
  EXPECT_TRUE(std::get<Rejection>(rc).diagnostics.has("DIGEST-3"));
}

}  // namespace
}  // namespace plancert
