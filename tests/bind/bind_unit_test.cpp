// SPDX-License-Identifier: Apache-2.0
// The binding passes on small training plans through the gate, and each transition obligation
// (IMPL-1, WORK-4, CAP-4, RACE-4, ALIGN-3, REFBIND-1) with a bad plan beside its code.
#include <gtest/gtest.h>

#include "passes/emit/emit.h"
#include "tests/bind/support.h"
#include "verifiers/verify.h"

#include <algorithm>

namespace plancert::bindtest {
namespace {

using Codes = std::set<std::string>;

const TrainChain& chain() {
  static const TrainChain c = [] {
    TrainKnobs k;
    k.tp = 2;
    k.pp = 2;
    k.layers = 2;
    k.microbatches = 4;
    k.sequence_parallel = true;
    k.recompute = frontend::Recompute::Selective;
    return *train_chain(k);
  }();
  return c;
}
const PortablePlanIR& portable() { return chain().portable->payload(); }

ConcretePlanIR ref_queue() { return bind::bind_reference_queue(portable(), permissive_target(), deployment(4)); }
ConcretePlanIR ref_slot() { return bind::bind_reference_slot(portable(), permissive_target(), deployment(4)); }
ConcretePlanIR queue() { return bind::bind_queue(portable(), permissive_target(), deployment(4), bind::QueueOptions{&chain().dist->payload(), {}}); }

template <class P>
std::string commit_text(const CommitResult<P>& r) {
  if (std::holds_alternative<Committed<P>>(r)) return "committed";
  std::string t;
  for (const auto& d : std::get<Rejection>(r).diagnostics.all()) t += to_text(d) + "\n";
  return t;
}

Codes transition(const ConcretePlanIR& c) {
  auto ps = make_snapshot(portable(), {std::string(64, '0')});
  Diagnostics d = verify_transition(AnySnapshot(ps), AnySnapshot(make_snapshot(c, {ps.digest})));
  Codes out;
  for (const auto& x : d.all()) out.insert(x.code);
  return out;
}

TEST(Profiles, FromTheCalculonSystem) {
  frontend::SystemConfig sys;
  default_chain(&sys);
  const auto t = bind::target_profile(sys);
  ASSERT_EQ(t.engines.size(), 6u);
  EXPECT_EQ(t.engines[0].capabilities.size(), 1u);  // matrix fp16
  EXPECT_EQ(t.engines[0].capabilities[0].dtype, "fp16");
  EXPECT_EQ(t.engines[1].capabilities.size(), 2u);  // vector fp16, fp32
  EXPECT_EQ(t.engines[2].capabilities.size(), 3u);  // all_gather, reduce_scatter, all_reduce
  EXPECT_EQ(t.spaces[0].capacity_bytes, Int(80) << 30);
  frontend::StrategyConfig s;
  s.tp = 16;
  s.pp = 4;
  s.dp = 1;
  s.tp_net = 0;
  const auto d = bind::deployment_profile(sys, s);
  EXPECT_EQ(d.devices, 64);
  ASSERT_EQ(bind::deployment_problems(d, s).size(), 1u);  // tp = 16 does not fit tier 0 of 8
}

TEST(ReferenceQueue, CommitsAndFollowsTheRecurrence) {
  ConcretePlanIR c = ref_queue();
  const auto& p = portable();
  ASSERT_EQ(c.commands.size(), p.tasks.size());
  ASSERT_EQ(c.buffers.size(), p.buffers.size());
  // o_i = ceil((o_{i-1} + s_{i-1}) / a_i) a_i per device, a_i = max(16, r_i)
  std::map<Index, Int> end;
  for (std::size_t i = 0; i < c.buffers.size(); ++i) {
    const auto& b = c.buffers[i];
    const Int a = std::max<std::int64_t>(16, p.buffers[i].alignment);
    EXPECT_EQ(b.offset, (end[b.region] + a - 1) / a * a) << b.id;
    EXPECT_EQ(b.offset % a, 0);
    end[b.region] = b.offset + b.size;
  }
  // queues: stable subsequences of the task order, one kind per queue
  for (const auto& q : c.queue->queues) EXPECT_TRUE(std::is_sorted(q.commands.begin(), q.commands.end()));
  EXPECT_EQ(c.devices.size(), 2u);  // one per pipeline stage
  EXPECT_EQ(c.devices[0].ranks, (Indices{0, 1}));
  auto r = Gate::commit(*chain().portable, make_snapshot(c, {chain().portable->digest()}));
  EXPECT_EQ(commit_text(r), "committed");
}

TEST(ReferenceSlot, IssueOrderAndRoutes) {
  ConcretePlanIR c = ref_slot();
  for (std::size_t i = 0; i < c.commands.size(); ++i) EXPECT_EQ(c.slot->issue[i].cycle, static_cast<std::int64_t>(i));
  std::size_t transfers = 0;
  for (const auto& cmd : c.commands) transfers += cmd.kind == CommandKind::send || cmd.kind == CommandKind::recv;
  EXPECT_GT(transfers, 0u);
  EXPECT_EQ(c.slot->routes.size(), transfers);
  for (const auto& r : c.slot->routes) EXPECT_NE(r.source, r.destination);
  auto res = Gate::commit(*chain().portable, make_snapshot(c, {chain().portable->digest()}));
  EXPECT_EQ(commit_text(res), "committed");
}

TEST(Queue, BindsEveryInstanceAndPlansMemory) {
  ConcretePlanIR c = queue();
  std::size_t want = 0;
  for (const auto& t : portable().tasks) want += static_cast<std::size_t>(t.repeat);  // one device per stage
  EXPECT_EQ(c.commands.size(), want);
  auto r = Gate::commit(*chain().portable, make_snapshot(c, {chain().portable->digest()}));
  ASSERT_EQ(commit_text(r), "committed");
  std::string why;
  EXPECT_FALSE(brute_force_race(c, &why)) << why;
  for (const auto& f : bind::figures(c)) {
    EXPECT_LE(f.lower_bound, f.peak_bytes);
    EXPECT_LE(f.peak_bytes, f.naive_bytes);
  }
}

// ---- mutations of bound plans, each with its code ---------------------------------------

TEST(Mutation, OffsetShiftedByOneByteIsAlign1) {
  for (ConcretePlanIR c : {ref_queue(), queue()}) {
    auto it = std::find_if(c.buffers.begin(), c.buffers.end(), [](const ConcreteBuffer& b) { return b.size > 0; });
    it->offset += 1;
    EXPECT_TRUE(snapshot_verdict(c).count("ALIGN-1"));
  }
}

TEST(Mutation, OffsetOffTheRecurrenceIsAlign3) {
  ConcretePlanIR c = ref_queue();
  // Move the last buffer of device 0 up by 256: still aligned, still disjoint, off the recurrence.
  std::int64_t last = -1;
  for (std::size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].region == 0) last = static_cast<std::int64_t>(i);
  c.buffers[static_cast<std::size_t>(last)].offset += 256;
  EXPECT_EQ(transition(c), Codes{"ALIGN-3"});
}

TEST(Mutation, DroppedTokenWaitsAgreeWithBruteForce) {
  // Each single dropped wait: the RACE verifier and the all-pairs checker agree. On this plan
  // every wait mirrors a dependency or is implied by other edges, so no drop is a race; the
  // race that only a token prevents is race_test.cpp Race.DroppingTheOnlyTokenIsARace.
  ConcretePlanIR c = queue();
  for (std::size_t v = 0; v < c.commands.size(); ++v)
    for (std::size_t k = 0; k < c.commands[v].waits.size(); ++k) {
      ConcretePlanIR m = c;
      m.commands[v].waits.erase(m.commands[v].waits.begin() + static_cast<std::ptrdiff_t>(k));
      Codes got = snapshot_verdict(m);
      EXPECT_EQ(got.count("RACE-1") || got.count("RACE-2"), brute_force_race(m)) << "wait " << k << " of " << m.commands[v].id;
      for (const auto& code : got) EXPECT_TRUE(code == "RACE-1" || code == "RACE-2" || code == "CAP-5") << code;
    }
}

TEST(Mutation, SwappingDependentCommandsInAQueueIsQueue4) {
  ConcretePlanIR c = ref_queue();
  for (auto& q : c.queue->queues)
    for (std::size_t k = 1; k < q.commands.size(); ++k) {
      const auto& deps = c.commands[static_cast<std::size_t>(q.commands[k])].dependencies;
      if (std::find(deps.begin(), deps.end(), q.commands[k - 1]) == deps.end()) continue;
      std::swap(q.commands[k], q.commands[k - 1]);
      EXPECT_TRUE(snapshot_verdict(c).count("QUEUE-4"));
      return;
    }
  FAIL() << "no dependent neighbours";
}

TEST(Mutation, SwappingNeighboursInAQueueAgreesWithBruteForce) {
  // Swap every pair of queue neighbours in turn: a swap against a dependency is QUEUE-4 (or a
  // DEADLOCK-1 through tokens); any other is a race exactly when the all-pairs checker finds one.
  ConcretePlanIR c = queue();
  std::size_t rejected = 0;
  for (std::size_t qi = 0; qi < c.queue->queues.size(); ++qi)
    for (std::size_t k = 1; k < c.queue->queues[qi].commands.size(); ++k) {
      ConcretePlanIR m = c;
      auto& mq = m.queue->queues[qi].commands;
      std::swap(mq[k], mq[k - 1]);
      Codes got = snapshot_verdict(m);
      if (got.count("QUEUE-4") || got.count("DEADLOCK-1")) { ++rejected; continue; }
      EXPECT_EQ(got.count("RACE-1") || got.count("RACE-2"), brute_force_race(m)) << "queue " << qi << " position " << k;
    }
  EXPECT_GT(rejected, 0u);
}

TEST(Mutation, TransferWithoutRouteIsRoute1) {
  ConcretePlanIR c = ref_slot();
  c.slot->routes.pop_back();
  EXPECT_EQ(snapshot_verdict(c), Codes{"ROUTE-1"});
}

// ---- transition obligations ---------------------------------------------------------------

TEST(Work4, CommandWorkEqualsItsTask) {
  ConcretePlanIR c = queue();
  Work w = *c.commands[0].work;
  w.read_bytes += Expr(1LL);
  c.commands[0].work = w;
  EXPECT_EQ(transition(c), Codes{"WORK-4"});
  c = ref_queue();
  c.commands[0].repeat += 1;
  EXPECT_EQ(transition(c), (Codes{"WORK-4", "REFBIND-1"}));
  c = queue();
  ASSERT_EQ(c.devices.size(), 2u);  // one device per pipeline stage, standing for its t = 2 ranks
  ASSERT_EQ(c.devices[0].ranks, (Indices{0, 1}));
  std::swap(c.devices[0].ranks, c.devices[1].ranks);  // stage 0's commands now run for the ranks of stage 1
  EXPECT_EQ(transition(c), Codes{"WORK-4"});
  c = queue();
  c.commands[0].lineage.sources = {"nothing"};  // not an entity of the parent: LINEAGE-2 (WORK-4 is not checked then)
  EXPECT_EQ(transition(c), Codes{"LINEAGE-2"});
  c = queue();
  c.commands[0].lineage.sources = {portable().buffers[0].id};  // a launch derived from a buffer, not a task
  EXPECT_TRUE(transition(c).count("WORK-4"));
}

TEST(Cap4, BuffersKeepTheirPlannedSize) {
  ConcretePlanIR c = ref_queue();
  c.buffers.back().size += 1;
  EXPECT_TRUE(transition(c).count("CAP-4"));
  c = queue();
  c.buffers.back().storage = c.buffers.back().storage == Storage::state ? Storage::transient : Storage::state;
  EXPECT_TRUE(transition(c).count("CAP-4"));
  c = queue();
  c.bindings = {SymbolBinding{"B", Int(2)}};  // the plan has no symbol B
  EXPECT_EQ(transition(c), Codes{"CAP-4"});
}

TEST(Race4, CommandsAccessWhatTheirTasksAccess) {
  ConcretePlanIR c = queue();
  auto it = std::find_if(c.commands.begin(), c.commands.end(), [](const Command& x) { return !x.reads.empty(); });
  it->reads.clear();
  EXPECT_EQ(transition(c), Codes{"RACE-4"});
}

TEST(Impl1, MissingFp32VectorEngineIsNamed) {
  auto t = permissive_target();
  auto drop = [](std::vector<Capability>& v) { v.erase(std::remove_if(v.begin(), v.end(), [](const Capability& c) { return c.kind == CapabilityKind::vector && c.dtype == "fp32"; }), v.end()); };
  drop(t.engines[1].capabilities);
  t.implementations.erase(std::remove_if(t.implementations.begin(), t.implementations.end(), [](const bind::ImplementationProfile& i) { return i.provides.kind == CapabilityKind::vector && i.provides.dtype == "fp32"; }),
                          t.implementations.end());
  ConcretePlanIR c = bind::bind_queue(portable(), t, deployment(4));
  auto r = Gate::commit(*chain().portable, make_snapshot(c, {chain().portable->digest()}));
  const std::string text = commit_text(r);
  EXPECT_NE(text.find("error[IMPL-1]"), std::string::npos) << text;
  EXPECT_NE(text.find("\"dtype\":\"fp32\""), std::string::npos) << text;
}

TEST(Impl1, MissingCollectiveIsNamed) {
  auto t = permissive_target();
  for (auto& e : t.engines) e.capabilities.erase(std::remove_if(e.capabilities.begin(), e.capabilities.end(), [](const Capability& c) { return c.collective == CollectiveKind::reduce_scatter; }), e.capabilities.end());
  ConcretePlanIR c = bind::bind_reference_queue(portable(), t, deployment(4));  // the catalog still lists it: the engine is what is missing
  std::string text;
  EXPECT_TRUE(verdict(portable(), c, &text).count("IMPL-1"));
  EXPECT_NE(text.find("reduce_scatter"), std::string::npos) << text;
}

TEST(Impl2, TooFewDevicesInTheDeployment) {
  ConcretePlanIR c = bind::bind_queue(portable(), permissive_target(), deployment(2));
  EXPECT_EQ(snapshot_verdict(c), Codes{"IMPL-2"});
}

TEST(Cap1, TooLittleMemory) {
  ConcretePlanIR c = bind::bind_queue(portable(), permissive_target(Int(1) << 16), deployment(4));
  EXPECT_TRUE(snapshot_verdict(c).count("CAP-1"));
}

TEST(Refbind1, AnyOtherDifferenceFromTheNormalForm) {
  ConcretePlanIR c = ref_queue();
  c.regions[0].space = "ddr";
  std::string text;
  EXPECT_EQ(verdict(portable(), c, &text), Codes{"REFBIND-1"});
  EXPECT_NE(text.find("/payload/regions/0"), std::string::npos) << text;
  c = ref_slot();
  c.slot->slots_per_cycle = 2;
  EXPECT_EQ(verdict(portable(), c), Codes{"REFBIND-1"});
  c = ref_queue();  // a production-style token is not in the contract either
  c.tokens.push_back(Token{"k"});
  c.commands[0].signals = {0};
  EXPECT_EQ(verdict(portable(), c), Codes{"REFBIND-1"});
}

TEST(Refbind1, TheGateAcceptsOnlyTheNormalForm) {
  // The queue binder's output does not claim the reference rules, so it is not compared.
  EXPECT_EQ(verdict(portable(), queue()), Codes{});
  ConcretePlanIR c = queue();
  c.rules = {"bind.reference.buffer", "bind.reference.task"};
  for (auto& x : c.commands) x.lineage.rule = "bind.reference.task";
  for (auto& x : c.buffers) x.lineage.rule = "bind.reference.buffer";
  EXPECT_TRUE(verdict(portable(), c).count("REFBIND-1"));
}

TEST(Bindings, SymbolicSizesAreBoundAndChecked) {
  // A plan with a symbolic buffer size: the bindings give it a value.
  PortablePlanIR p = portable();
  Symbol b;
  b.name = "B";
  b.divisible_by = 2;
  p.symbols.push_back(b);
  p.buffers.back().size = p.buffers.back().size * Expr::symbol("B");
  auto values = bind::default_bindings(p, 3);
  EXPECT_EQ(values.at("B"), 4);
  ConcretePlanIR c = bind::bind_reference_queue(p, permissive_target(), deployment(4), values);
  auto ps = make_snapshot(p, {std::string(64, '0')});
  AnySnapshot child(make_snapshot(c, {ps.digest}));
  EXPECT_TRUE(verify_transition(AnySnapshot(ps), child).ok());
  c.bindings[0].value = 3;  // not a multiple of 2
  EXPECT_TRUE(verify_transition(AnySnapshot(ps), AnySnapshot(make_snapshot(c, {ps.digest}))).has("CAP-4"));
  EXPECT_THROW(bind::bind_queue(p, permissive_target(), deployment(4)), bind::BindError);  // no value for B
}

}  // namespace
}  // namespace plancert::bindtest
