// SPDX-License-Identifier: Apache-2.0
// RACE, DEADLOCK-through-tokens and CAP-5 on small hand-made ConcretePlanIRs: each bad plan
// sits beside the code it must be rejected with (snapshot obligations only).
#include <gtest/gtest.h>

#include <random>

#include "passes/emit/emit.h"
#include "tests/bind/support.h"
#include "verifiers/verify.h"


namespace plancert::bindtest {
namespace {

using Codes = std::set<std::string>;

// A one- or two-device plan built command by command.
struct Mini {
  ConcretePlanIR p;
  explicit Mini(TargetKind t = TargetKind::queue, std::size_t devices = 1) {
    p.target = t;
    p.rules = {"t"};
    for (std::size_t d = 0; d < devices; ++d) {
      p.devices.push_back(Device{"dev:" + std::to_string(d), "gpu", Int(1) << 20, {}});
      p.regions.push_back(Region{16, Int(1) << 20, static_cast<Index>(d), "r:" + std::to_string(d), Int(0), "hbm"});
    }
  }
  Index buffer(const std::string& id, std::int64_t off, std::int64_t size, Storage s = Storage::transient, Index region = 0) {
    p.buffers.push_back(ConcreteBuffer{16, id, Lineage{LineageKind::derived, "t", {"x"}}, Int(off), region, Int(size), s});
    return static_cast<Index>(p.buffers.size() - 1);
  }
  Index command(const std::string& id, CommandKind k, Indices reads, Indices writes, Indices deps = {}, Index device = 0) {
    Command c;
    c.id = id;
    c.kind = k;
    c.device = device;
    c.reads = std::move(reads);
    c.writes = std::move(writes);
    c.dependencies = std::move(deps);
    c.implementation = "i";
    c.lineage = Lineage{LineageKind::derived, "t", {"x"}};
    p.commands.push_back(std::move(c));
    return static_cast<Index>(p.commands.size() - 1);
  }
  void token(Index from, Index to) {
    p.tokens.push_back(Token{"k" + std::to_string(p.tokens.size())});
    p.commands[static_cast<std::size_t>(from)].signals.push_back(static_cast<Index>(p.tokens.size() - 1));
    p.commands[static_cast<std::size_t>(to)].waits.push_back(static_cast<Index>(p.tokens.size() - 1));
  }
  // Queue target: one queue per (device, kind) in index order; slot target: issue (2i, 0).
  ConcretePlanIR done() {
    ConcretePlanIR out = p;
    if (out.target == TargetKind::queue) {
      QueueSchedule qs;
      for (std::size_t v = 0; v < out.commands.size(); ++v) {
        const auto& c = out.commands[v];
        QueueKind k = c.kind == CommandKind::launch ? QueueKind::compute : c.kind == CommandKind::collective ? QueueKind::collective : QueueKind::transfer;
        std::string id = "q:" + std::to_string(c.device) + ":" + std::string(codec::enum_name(k));
        auto it = std::find_if(qs.queues.begin(), qs.queues.end(), [&](const Queue& q) { return q.id == id; });
        if (it == qs.queues.end()) { qs.queues.push_back(Queue{{}, c.device, id, k}); it = std::prev(qs.queues.end()); }
        it->commands.push_back(static_cast<Index>(v));
      }
      out.queue = qs;
    } else {
      out.slot.emplace();
      for (std::size_t v = 0; v < out.commands.size(); ++v) out.slot->issue.push_back(Issue{static_cast<std::int64_t>(2 * v), 0});
    }
    return out;
  }
};

Codes check(const ConcretePlanIR& p) {
  std::string text;
  Codes c = snapshot_verdict(p, &text);
  EXPECT_EQ(!c.empty(), brute_force_race(p) || c.count("DEADLOCK-1") || c.count("RACE-3") || c.count("CAP-5")) << text;
  return c;
}

TEST(Race, OrderedOnlyByATokenIsAccepted) {
  Mini m;
  Index b = m.buffer("b", 0, 64);
  Index w = m.command("w", CommandKind::launch, {}, {b});
  Index r = m.command("r", CommandKind::collective, {b}, {});
  m.token(w, r);
  EXPECT_EQ(check(m.done()), Codes{});
}

TEST(Race, DroppingTheOnlyTokenIsARace) {  // the race only the token edge prevented
  Mini m;
  Index b = m.buffer("b", 0, 64);
  m.command("w", CommandKind::launch, {}, {b});
  m.command("r", CommandKind::collective, {b}, {});
  EXPECT_EQ(check(m.done()), Codes{"RACE-1"});
}

TEST(Race, WritesOnTwoQueuesAreARace) {
  Mini m;
  Index b = m.buffer("b", 0, 64);
  m.command("w1", CommandKind::launch, {}, {b});
  m.command("w2", CommandKind::collective, {}, {b});
  EXPECT_EQ(check(m.done()), Codes{"RACE-1"});
}

TEST(Race, ReadsNeverConflict) {
  Mini m;
  Index b = m.buffer("b", 0, 64, Storage::state);
  m.command("r1", CommandKind::launch, {b}, {});
  m.command("r2", CommandKind::collective, {b}, {});
  EXPECT_EQ(check(m.done()), Codes{});
}

TEST(Race, OneQueueOrdersItsCommands) {
  Mini m;
  Index b = m.buffer("b", 0, 64);
  m.command("w1", CommandKind::launch, {}, {b});
  m.command("r", CommandKind::launch, {b}, {});
  m.command("w2", CommandKind::launch, {}, {b});
  EXPECT_EQ(check(m.done()), Codes{});
}

TEST(Race, WriteAfterReadNeedsOrderToo) {
  Mini m;
  Index b = m.buffer("b", 0, 64);
  Index w1 = m.command("w1", CommandKind::launch, {}, {b});
  Index r = m.command("r", CommandKind::collective, {b}, {}, {w1});
  m.command("w2", CommandKind::launch, {}, {b});  // after w1 on its queue, but not after r
  EXPECT_EQ(check(m.done()), Codes{"RACE-1"});
  Mini ok = m;
  ok.token(r, 2);
  EXPECT_EQ(check(ok.done()), Codes{});
}

TEST(Race, ACommandThatReadsWhatItWritesWritesIt) {  // its read is not a second access; its other reads still are
  for (std::size_t writes : {1U, 9U}) {
    Mini m;
    Indices w;
    for (std::size_t j = 0; j < writes; ++j) w.push_back(m.buffer("b" + std::to_string(j), static_cast<std::int64_t>(64 * j), 64));
    Index x = m.buffer("x", static_cast<std::int64_t>(64 * writes), 64, Storage::state);
    Index rw = m.command("rw", CommandKind::launch, {x, w.back()}, w);
    m.command("r", CommandKind::collective, {w.back()}, {}, {rw});
    EXPECT_EQ(check(m.done()), Codes{}) << writes;
    Mini late = m;
    late.command("late", CommandKind::send, {w.front()}, {});  // on a third queue, not after rw: a race with its write
    EXPECT_EQ(check(late.done()), Codes{"RACE-1"}) << writes;
    m.command("late", CommandKind::send, {}, {x});  // a race with its read of x
    EXPECT_EQ(check(m.done()), Codes{"RACE-1"}) << writes;
  }
}

TEST(Race, SlotIssueOrderIsNotHappensBefore) {
  Mini m(TargetKind::slot);
  Index b = m.buffer("b", 0, 64);
  Index w1 = m.command("w1", CommandKind::launch, {}, {b});
  m.command("w2", CommandKind::launch, {}, {b});
  EXPECT_EQ(check(m.done()), Codes{"RACE-1"});
  Mini ok(TargetKind::slot);
  ok.buffer("b", 0, 64);
  ok.command("w1", CommandKind::launch, {}, {b});
  ok.command("w2", CommandKind::launch, {}, {b}, {w1});
  EXPECT_EQ(check(ok.done()), Codes{});
}

TEST(Race, OverlappingBuffersNeedOrderedLifetimes) {
  Mini m;
  Index a = m.buffer("a", 0, 64), b = m.buffer("b", 32, 64);
  m.command("wa", CommandKind::launch, {}, {a});
  m.command("wb", CommandKind::collective, {}, {b});
  EXPECT_EQ(check(m.done()), Codes{"RACE-2"});
}

TEST(Race, ReuseOrderedByTokensIsAccepted) {
  Mini m;
  Index a = m.buffer("a", 0, 64), b = m.buffer("b", 0, 64), c = m.buffer("c", 32, 64);
  Index wa = m.command("wa", CommandKind::launch, {}, {a});
  Index ra = m.command("ra", CommandKind::collective, {a}, {}, {wa});
  Index wb = m.command("wb", CommandKind::launch, {}, {b});
  m.token(ra, wb);
  Index rb = m.command("rb", CommandKind::collective, {b}, {}, {wb});
  Index wc = m.command("wc", CommandKind::launch, {}, {c});
  m.token(rb, wc);
  EXPECT_EQ(check(m.done()), Codes{});
  // Without the last token the collective's read of b may see c's write: b and c overlap.
  m.p.commands[static_cast<std::size_t>(wc)].waits.clear();
  m.p.commands[static_cast<std::size_t>(rb)].signals.clear();
  m.p.tokens.pop_back();
  EXPECT_EQ(check(m.done()), Codes{"RACE-2"});
}

TEST(Race, ReadingAReusedBufferLateIsCaught) {
  // The read of a happens after b's write on the same queue: ordered, but b overwrote a first.
  Mini m;
  Index a = m.buffer("a", 0, 64), b = m.buffer("b", 0, 64);
  m.command("wa", CommandKind::launch, {}, {a});
  m.command("wb", CommandKind::launch, {}, {b});
  m.command("ra", CommandKind::launch, {a}, {});
  EXPECT_EQ(check(m.done()), Codes{"RACE-2"});
}

TEST(Race, PinnedBuffersShareWithNothing) {
  Mini m;
  Index w = m.buffer("w", 0, 64, Storage::state), t = m.buffer("t", 48, 64);
  m.command("u", CommandKind::launch, {}, {t});
  (void)w;
  EXPECT_EQ(check(m.done()), Codes{"RACE-2"});
}

TEST(Race, UnaccessedTransientBuffersAreFree) {
  Mini m;
  m.buffer("x", 0, 64);
  Index t = m.buffer("t", 0, 64);
  m.command("u", CommandKind::launch, {}, {t});
  EXPECT_EQ(check(m.done()), Codes{});
}

TEST(Race, BuffersOfTwoDevicesDoNotShareMemory) {
  Mini m(TargetKind::queue, 2);
  Index a = m.buffer("a", 0, 64, Storage::transient, 0), b = m.buffer("b", 0, 64, Storage::transient, 1);
  m.command("wa", CommandKind::launch, {}, {a}, {}, 0);
  m.command("wb", CommandKind::launch, {}, {b}, {}, 1);
  EXPECT_EQ(check(m.done()), Codes{});
}

// RACE-2 asks, per chain, only about the last access of the earlier buffer's tail and the first
// of the later buffer's head (session 38; before, every tail access against every head access).
// Random plans of two overlapping buffers, each accessed by several commands on two queues (or
// on a slot target's chains) with random dependencies: the verdict agrees with the brute-force
// oracle (check()), in plans where several accesses share a chain on both sides.
TEST(Race, OverlappingBuffersOfManyAccessesAgreeWithBruteForce) {
  std::mt19937 rng(38);
  int raced = 0, clean = 0;
  for (int round = 0; round < 600; ++round) {
    Mini m(round % 2 ? TargetKind::slot : TargetKind::queue);
    const Index a = m.buffer("a", 0, 64), b = m.buffer("b", 32, 64);
    const std::uint32_t dense = 1 + rng() % 4, first_b = 3 + rng() % 6;  // a dependency on one earlier command in `dense`
    for (std::uint32_t v = 0; v < 12; ++v) {
      Indices deps;
      for (std::uint32_t u = 0; u < v; ++u)
        if (rng() % dense == 0) deps.push_back(static_cast<Index>(u));
      const Index buf = v < first_b ? a : b;
      const bool writes = rng() % 3 == 0;
      m.command("c" + std::to_string(v), rng() % 2 ? CommandKind::launch : CommandKind::collective, writes ? Indices{} : Indices{buf}, writes ? Indices{buf} : Indices{}, deps);
    }
    const Codes got = check(m.done());
    ++(got.empty() ? clean : raced);
    for (const auto& code : got) EXPECT_TRUE(code == "RACE-1" || code == "RACE-2") << code;
  }
  EXPECT_GT(clean, 30);  // both verdicts are well represented
  EXPECT_GT(raced, 30);
}

TEST(Race, UndecidableIsRejected) {
  // A slot plan of 12000 independent commands and one that depends on them all needs 12000
  // chains, and every row is live until the last command: 144M 4-byte clock entries > 512 MiB.
  Mini m(TargetKind::slot);
  Indices all;
  for (Index i = 0; i < 12000; ++i) all.push_back(m.command("c" + std::to_string(i), CommandKind::launch, {}, {}));
  m.command("last", CommandKind::launch, {}, {}, all);
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"RACE-3"});
}

TEST(Race, ManyChainsWithFewLiveClocksAreDecided) {
  // 16400 independent commands: 16400 chains, but no clock outlives its command (nothing depends
  // on it), so the table holds one row. Two of them write one buffer unordered: RACE-1, decided.
  Mini m(TargetKind::slot);
  Index b = m.buffer("b", 0, 64);
  for (int i = 0; i < 16400; ++i) m.command("c" + std::to_string(i), CommandKind::launch, {}, i % 8200 == 7 ? Indices{b} : Indices{});
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"RACE-1"});
}

TEST(Race, ChainsLongerThan16BitClocksAreDecidedExactly) {
  // 70,000 launches on one queue: positions past 2^16, so the clocks are 32-bit. Launch 65,990
  // writes b and a collective reads it after depending on launch 66,000 (ordered) or 65,980 (not).
  for (Index after : {Index{66000}, Index{65980}}) {
    Mini m;
    Index b = m.buffer("b", 0, 64);
    for (int i = 0; i < 70000; ++i) m.command("l" + std::to_string(i), CommandKind::launch, {}, i == 65990 ? Indices{b} : Indices{});
    m.command("x", CommandKind::collective, {b}, {}, {after});
    EXPECT_EQ(snapshot_verdict(m.done()), after == 66000 ? Codes{} : Codes{"RACE-1"}) << after;
  }
}

TEST(Deadlock, ThroughTokens) {
  Mini m;
  Index a = m.command("a", CommandKind::launch, {}, {});
  Index b = m.command("b", CommandKind::collective, {}, {});
  m.token(a, b);
  m.token(b, a);
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"DEADLOCK-1"});
}

TEST(Cap5, MemoryFiguresAreChecked) {
  Mini m;
  Index w = m.buffer("w", 0, 256, Storage::state), a = m.buffer("a", 256, 64), b = m.buffer("b", 320, 32);
  Index wa = m.command("wa", CommandKind::launch, {w}, {a});
  Index wb = m.command("wb", CommandKind::launch, {a}, {b}, {wa});
  m.command("rb", CommandKind::launch, {a, b}, {}, {wb});
  m.p.memory = {DeviceMemory{0, Int(256 + 64 + 32), Int(352), Index{1}}};  // at wb, a and b are live
  EXPECT_EQ(check(m.done()), Codes{});
  m.p.memory = {DeviceMemory{0, Int(256 + 64), Int(352), Index{0}}};  // at wa only a is live
  EXPECT_EQ(check(m.done()), Codes{});
  m.p.memory = {DeviceMemory{0, Int(256 + 64 + 32), Int(352), Index{0}}};
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"CAP-5"});
  m.p.memory = {DeviceMemory{0, Int(256), Int(351), std::nullopt}};
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"CAP-5"});
  m.p.memory = {DeviceMemory{0, Int(256), Int(352), std::nullopt}};  // no witness: pinned bytes only
  EXPECT_EQ(check(m.done()), Codes{});
}

TEST(Impl2, RanksOfTheDeployment) {
  Mini m(TargetKind::queue, 2);
  m.p.world_size = 4;
  m.p.devices[0].ranks = {0, 1};
  m.p.devices[1].ranks = {2, 3};
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{});
  m.p.world_size = 3;
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"IMPL-2"});
  m.p.world_size = 4;
  m.p.devices[1].ranks = {1, 3};
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"IMPL-2"});
  m.p.devices[1].ranks = {3};
  EXPECT_EQ(snapshot_verdict(m.done()), Codes{"IMPL-2"});
}

// A race-free queue plan of about a million commands: 8 devices x 3 queues, each command
// writing a fresh buffer in a ring of its queue's arena (so buffers reuse memory) and reading
// the previous one; every 16th compute command hands its buffer to the transfer queue through
// a token, and the next writer of those bytes waits for the transfer.
ConcretePlanIR million(std::size_t n) {
  ConcretePlanIR p;
  p.target = TargetKind::queue;
  p.rules = {"t"};
  constexpr std::size_t kDevices = 8, kRing = 64, kSize = 4096;
  constexpr QueueKind kKinds[] = {QueueKind::compute, QueueKind::collective, QueueKind::transfer};
  constexpr CommandKind kCmd[] = {CommandKind::launch, CommandKind::collective, CommandKind::send};
  QueueSchedule qs;
  for (std::size_t d = 0; d < kDevices; ++d) {
    p.devices.push_back(Device{"d" + std::to_string(d), "gpu", Int(1) << 30, {}});
    p.regions.push_back(Region{256, Int(1) << 30, static_cast<Index>(d), "r" + std::to_string(d), Int(0), "hbm"});
    for (std::size_t q = 0; q < 3; ++q) qs.queues.push_back(Queue{{}, static_cast<Index>(d), "q" + std::to_string(d * 3 + q), kKinds[q]});
  }
  std::vector<std::int64_t> last_buffer(qs.queues.size(), -1);
  std::vector<std::size_t> count(qs.queues.size(), 0);
  std::vector<std::vector<std::int64_t>> ring_reader(qs.queues.size(), std::vector<std::int64_t>(kRing, -1));  // a transfer that read the slot
  p.commands.reserve(n);
  p.buffers.reserve(n);
  Lineage lin{LineageKind::derived, "t", {"x"}};
  for (std::size_t v = 0; v < n; ++v) {
    const std::size_t d = (v / 1024) % kDevices, q = v % 16 == 15 ? 2 : (v % 7 == 3 ? 1 : 0), qi = d * 3 + q;
    const std::size_t slot = count[qi]++ % kRing;
    Command c;
    c.id = "c" + std::to_string(v);
    c.kind = kCmd[q];
    c.device = static_cast<Index>(d);
    c.implementation = "i";
    c.lineage = lin;
    p.buffers.push_back(ConcreteBuffer{256, "b" + std::to_string(v), lin, Int(qi % 3 * kRing * kSize + slot * kSize), static_cast<Index>(d), Int(kSize), Storage::transient});
    c.writes = {static_cast<Index>(v)};
    if (last_buffer[qi] >= 0) c.reads = {static_cast<Index>(last_buffer[qi])};
    if (std::int64_t r = ring_reader[qi][slot]; r >= 0) {  // a transfer read the old buffer of these bytes
      p.tokens.push_back(Token{"k" + std::to_string(p.tokens.size())});
      p.commands[static_cast<std::size_t>(r)].signals.push_back(static_cast<Index>(p.tokens.size() - 1));
      c.waits.push_back(static_cast<Index>(p.tokens.size() - 1));
      ring_reader[qi][slot] = -1;
    }
    if (q == 2 && last_buffer[d * 3] >= 0 && ring_reader[d * 3][static_cast<std::size_t>((count[d * 3] + kRing - 1) % kRing)] < 0) {
      // the transfer also reads the compute queue's newest buffer, after a token
      const auto src = static_cast<std::size_t>(last_buffer[d * 3]);
      p.tokens.push_back(Token{"k" + std::to_string(p.tokens.size())});
      p.commands[src].signals.push_back(static_cast<Index>(p.tokens.size() - 1));
      c.waits.push_back(static_cast<Index>(p.tokens.size() - 1));
      c.reads.push_back(static_cast<Index>(src));
      ring_reader[d * 3][(count[d * 3] + kRing - 1) % kRing] = static_cast<std::int64_t>(v);
    }
    last_buffer[qi] = static_cast<std::int64_t>(v);
    qs.queues[qi].commands.push_back(static_cast<Index>(v));
    p.commands.push_back(std::move(c));
  }
  p.queue = std::move(qs);
  return p;
}

TEST(RaceScale, SmallVersionAgreesWithBruteForce) {
  ConcretePlanIR p = million(3000);
  std::string why;
  EXPECT_FALSE(brute_force_race(p, &why)) << why;
  EXPECT_EQ(snapshot_verdict(p), Codes{});
  // Drop one hand-off token: the transfer's read is no longer ordered after the write.
  for (auto& c : p.commands)
    if (c.kind == CommandKind::send && c.reads.size() == 2 && !c.waits.empty()) { c.waits.pop_back(); break; }
  EXPECT_TRUE(brute_force_race(p));
  EXPECT_TRUE(snapshot_verdict(p).count("RACE-1"));
}

// The same plans with the commands listed in reverse (index order no longer topological, so
// happens-before takes its order from the cycle search): the same verdicts.
ConcretePlanIR reversed(ConcretePlanIR p) {
  const auto n = static_cast<Index>(p.commands.size());
  auto flip = [&](Indices& xs) { for (auto& x : xs) x = static_cast<Index>(n - 1 - x); };
  std::reverse(p.commands.begin(), p.commands.end());
  for (auto& c : p.commands) flip(c.dependencies);
  for (auto& q : p.queue->queues) flip(q.commands);
  for (auto& m : p.memory)
    if (m.witness) *m.witness = n - 1 - *m.witness;
  return p;
}

TEST(RaceScale, ReversedIndexOrderAgreesWithBruteForce) {
  ConcretePlanIR p = reversed(million(3000));
  EXPECT_FALSE(brute_force_race(p));
  EXPECT_EQ(snapshot_verdict(p), Codes{});
  for (auto& c : p.commands)
    if (c.kind == CommandKind::send && c.reads.size() == 2 && !c.waits.empty()) { c.waits.pop_back(); break; }
  EXPECT_TRUE(brute_force_race(p));
  EXPECT_TRUE(snapshot_verdict(p).count("RACE-1"));
}

// Scale without a time limit (timings live in bench/bench_race): a 100,000-command plan on 8
// devices is accepted.
TEST(RaceScale, AHundredThousandCommands) {
  ConcretePlanIR p = million(100'000);
  auto s = make_snapshot(std::move(p), {std::string(64, '0')});
  Diagnostics d = verify_snapshot(AnySnapshot(std::move(s)));
  EXPECT_TRUE(d.ok()) << (d.all().empty() ? std::string() : to_text(d.all().front()));
}

}  // namespace
}  // namespace plancert::bindtest
