// SPDX-License-Identifier: Apache-2.0
// RapidCheck: mutations of a committed DistributedTaskIR or PortablePlanIR (made by the
// training passes from a random valid model and strategy), each rejected by the verifiers
// and by the gate with exactly the obligation it breaks. Every mutant is re-enveloped with
// make_snapshot and the unchanged parents digest, so only the intended obligation can fail.
#include "passes/emit/emit.h"
#include "props/mutations.h"
#include "tests/passes/train_gen.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <functional>

namespace plancert::testing {
namespace {

using Codes = std::set<std::string>;

/// The committed chain of a generated case (the property fails if the gate refuses it).
Chain committed(const Case& c) {
  Chain chain = derive(c);
  if (!chain.ok()) RC_FAIL("the gate refused the " + chain.refused + ":\n" + text(chain.findings));
  return chain;
}

/// A copy of a committed payload, edited, in a new envelope with the same parents.
template <class P>
Snapshot<P> mutate(const Committed<P>& c, const std::function<void(P&)>& edit) {
  P payload = c.payload();
  edit(payload);
  return make_snapshot(std::move(payload), c.snapshot().parents);
}

/// What the trusted core finds: the snapshot's own obligations, then (when they hold) the
/// transition obligations against the parent; and what the gate finds when committing it.
template <class P, class Q>
std::pair<Codes, Codes> judge(const Committed<Q>& parent, const Snapshot<P>& child, std::string* findings) {
  Diagnostics d = verify_snapshot(AnySnapshot(child));
  if (d.ok()) d = verify_transition(AnySnapshot(parent.snapshot()), AnySnapshot(child));
  *findings = text(d);
  Codes gate;
  auto r = Gate::commit(parent, child);
  if (const auto* rej = std::get_if<Rejection>(&r)) gate = codes(rej->diagnostics);
  return {codes(d), gate};
}

#define RC_EXPECT_REJECTED(parent, child, code)                                     \
  do {                                                                              \
    std::string findings_;                                                          \
    auto [verified_, gated_] = judge(parent, child, &findings_);                    \
    RC_LOG() << "findings:\n" << findings_;                                         \
    RC_ASSERT(verified_ == Codes{code});                                            \
    RC_ASSERT(gated_ == Codes{code});                                               \
  } while (false)

std::size_t pick(std::size_t n) { return static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, n)); }

template <class Pred>
std::vector<std::size_t> tasks_where(const DistributedTaskIR& d, Pred pred) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < d.tasks.size(); ++i)
    if (pred(d.tasks[i])) out.push_back(i);
  return out;
}

bool training_phase(Phase p) { return p == Phase::forward || p == Phase::recompute || p == Phase::backward_activation || p == Phase::backward_weight; }

std::int64_t world(const DistributedTaskIR& d) {
  std::int64_t n = 1;
  for (const auto& a : d.mesh.axes) n *= a.size;
  return n;
}

using props::drop_task;

// ---- work ------------------------------------------------------------------------------------

RC_GTEST_PROP(TrainingMutations, PortableMatrixWorkPlusOneIsWork1, ()) {
  const Chain chain = committed(*cases());
  const auto& p = chain.portable->payload();
  const std::size_t i = pick(p.tasks.size());
  auto child = mutate<PortablePlanIR>(*chain.portable, [&](PortablePlanIR& x) { x.tasks[i].work.matrix_ops += Expr(1); });
  RC_EXPECT_REJECTED(*chain.distributed, child, "WORK-1");
}

RC_GTEST_PROP(TrainingMutations, PortableTaskPlannedTwiceIsWork1, ()) {
  // A second copy of a task (fresh id, no buffers, same dependencies): its distributed task
  // is planned twice.
  const Chain chain = committed(*cases());
  const auto& p = chain.portable->payload();
  const std::size_t i = pick(p.tasks.size());
  auto child = mutate<PortablePlanIR>(*chain.portable, [&](PortablePlanIR& x) {
    PortableTask copy = x.tasks[i];
    copy.id += ":copy";
    copy.inputs.clear();
    copy.outputs.clear();
    x.tasks.push_back(std::move(copy));
  });
  RC_EXPECT_REJECTED(*chain.distributed, child, "WORK-1");
}

RC_GTEST_PROP(TrainingMutations, DistributedMatrixWorkPlusOneIsWork2, ()) {
  const Chain chain = committed(*cases());
  const auto& d = chain.distributed->payload();
  const auto candidates = tasks_where(d, [](const DistTask& t) { return t.kind == TaskKind::compute && training_phase(t.phase); });
  const std::size_t i = candidates[pick(candidates.size())];
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) { x.tasks[i].work.matrix_ops += Expr(1); });
  RC_EXPECT_REJECTED(*chain.model, child, "WORK-2");
}

// ---- rank sets -------------------------------------------------------------------------------

RC_GTEST_PROP(TrainingMutations, RankOutsideTheMeshIsMesh2, ()) {
  const Chain chain = committed(*cases());
  const auto& d = chain.distributed->payload();
  const std::size_t i = pick(d.tasks.size());
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) { x.tasks[i].ranks.back() = world(x); });
  RC_EXPECT_REJECTED(*chain.model, child, "MESH-2");
}

RC_GTEST_PROP(TrainingMutations, UnsortedRanksAreMesh2, ()) {
  const Chain chain = committed(*cases(Need{.tp = true}));
  const auto& d = chain.distributed->payload();
  const std::size_t i = pick(d.tasks.size());  // every task runs on a whole stage: t * d >= 2 ranks
  RC_ASSERT(d.tasks[i].ranks.size() >= 2u);
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) { std::swap(x.tasks[i].ranks[0], x.tasks[i].ranks[1]); });
  RC_EXPECT_REJECTED(*chain.model, child, "MESH-2");
}

RC_GTEST_PROP(TrainingMutations, CollectiveMissingARankIsColl1, ()) {
  // Dropping a rank from both the task's ranks and its collective group leaves one group of
  // the collective's axis incomplete. (A dp collective would also break COLL-4: the update
  // depends on a reduction over other ranks.)
  const Chain chain = committed(*cases(Need{.tp = true}));
  const auto& d = chain.distributed->payload();
  const auto candidates = tasks_where(d, [](const DistTask& t) { return t.collective && t.collective->axis == "tp"; });
  RC_ASSERT(!candidates.empty());
  const std::size_t i = candidates[pick(candidates.size())];
  const std::size_t j = pick(d.tasks[i].ranks.size());
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) {
    auto& t = x.tasks[i];
    t.ranks.erase(t.ranks.begin() + static_cast<std::ptrdiff_t>(j));
    t.collective->group = t.ranks;
  });
  RC_EXPECT_REJECTED(*chain.model, child, "COLL-1");
}

RC_GTEST_PROP(TrainingMutations, CollectiveGroupOtherThanItsRanksIsColl1, ()) {
  const Chain chain = committed(*cases(Need{.tp = true}));
  const auto& d = chain.distributed->payload();
  const auto candidates = tasks_where(d, [](const DistTask& t) { return t.collective.has_value(); });
  const std::size_t i = candidates[pick(candidates.size())];
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) { x.tasks[i].collective->group.pop_back(); });
  RC_EXPECT_REJECTED(*chain.model, child, "COLL-1");
}

// ---- point-to-point --------------------------------------------------------------------------

RC_GTEST_PROP(TrainingMutations, UnpairedSendIsP2p1, ()) {
  const Chain chain = committed(*cases(Need{.pp = true}));
  const auto& d = chain.distributed->payload();
  const auto sends = tasks_where(d, [](const DistTask& t) { return t.kind == TaskKind::send; });
  RC_ASSERT(!sends.empty());
  const std::size_t i = sends[pick(sends.size())];
  const int how = *rc::gen::inRange(0, 3);
  RC_TAG(how);
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) {
    auto& send = x.tasks[i];
    auto& recv = x.tasks[static_cast<std::size_t>(*send.peer)];
    if (how == 0) send.peer = static_cast<Index>(i);                // the send names itself
    else if (how == 1) recv.work.message_bytes += Expr(1);          // the two sides disagree on bytes
    else recv.repeat += 1;                                          // ... or on repetition
  });
  RC_EXPECT_REJECTED(*chain.model, child, "P2P-1");
}

// ---- memory ----------------------------------------------------------------------------------

RC_GTEST_PROP(TrainingMutations, PeakActivationsOffTheScheduleIsMem2, ()) {
  // The total moves with the peak, so MEM-3 still holds and only the schedule replay fails.
  const Case c = *cases();
  const Chain chain = committed(c);
  const std::int64_t st = static_cast<std::int64_t>(pick(static_cast<std::size_t>(c.strategy.pp)));
  auto child = mutate<PortablePlanIR>(*chain.portable, [&](PortablePlanIR& x) {
    for (auto& f : x.memory)
      if (f.stage == st && (f.category == MemoryCategory::activations_peak || f.category == MemoryCategory::total)) f.bytes += Expr(1);
  });
  RC_EXPECT_REJECTED(*chain.distributed, child, "MEM-2");
}

RC_GTEST_PROP(TrainingMutations, MemoryFactOffItsBuffersIsMem1, ()) {
  const Case c = *cases();
  const Chain chain = committed(c);
  const std::int64_t st = static_cast<std::int64_t>(pick(static_cast<std::size_t>(c.strategy.pp)));
  const MemoryCategory cat = *rc::gen::element(MemoryCategory::weights, MemoryCategory::weight_gradients, MemoryCategory::optimizer_state);
  auto child = mutate<PortablePlanIR>(*chain.portable, [&](PortablePlanIR& x) {
    for (auto& f : x.memory)
      if (f.stage == st && (f.category == cat || f.category == MemoryCategory::total)) f.bytes += Expr(1);
  });
  RC_EXPECT_REJECTED(*chain.distributed, child, "MEM-1");
}

// ---- dropped communication: COLL-3, COLL-4, P2P-3 ------------------------------------------

/// Codes the trusted core reports for the distributed snapshot without task `r` (the
/// dependents of `r` inherit its dependencies, as a pass that forgot the task would emit).
Codes dropped(const Chain& chain, std::size_t r) {
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) { drop_task(x, r); });
  std::string findings;
  auto [verified, gated] = judge(*chain.model, child, &findings);
  RC_ASSERT(verified == gated);
  return verified;
}

// Without one of the tensor-parallel all-reduces (or reduce-scatters / all-gathers) the
// row-parallel partial sums are never added, or a sequence shard is never gathered. WORK-2
// conserves matrix work only and VOL-1 checks the payload of the collectives present; COLL-3
// requires them from the model's declared layouts.
RC_GTEST_PROP(TrainingMutations, DroppedTensorParallelCollectiveIsColl3, ()) {
  const Chain chain = committed(*cases(Need{.tp = true}));
  const auto& d = chain.distributed->payload();
  // (a tp collective of one operation: the sequence-parallel gradient sums are COLL-6's)
  const auto tp = tasks_where(d, [](const DistTask& t) { return t.collective && t.collective->axis == "tp" && t.lineage.sources.size() == 1; });
  RC_ASSERT(!tp.empty());
  const Codes got = dropped(chain, tp[pick(tp.size())]);
  RC_ASSERT(got == Codes{"COLL-3"});
}

// A tensor-parallel collective of an operation must move the operation's first input or its
// output; naming another value (here the operation's weight) is COLL-3 whatever VOL-1 says.
RC_GTEST_PROP(TrainingMutations, TensorParallelCollectiveOfAnotherValueIsColl3, ()) {
  const Chain chain = committed(*cases(Need{.tp = true}));
  const auto& d = chain.distributed->payload();
  const auto& m = chain.model->payload();
  const auto tp = tasks_where(d, [](const DistTask& t) { return t.collective && t.collective->axis == "tp" && t.lineage.sources.size() == 1; });
  RC_ASSERT(!tp.empty());
  const std::size_t i = tp[pick(tp.size())];
  const auto op = std::find_if(m.operations.begin(), m.operations.end(), [&](const Operation& o) { return o.id == d.tasks[i].lineage.sources[0]; });
  RC_ASSERT(op != m.operations.end() && op->inputs.size() >= 2);
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) { x.tasks[i].value = m.values[static_cast<std::size_t>(op->inputs[1])].id; });
  std::string findings;
  auto [verified, gated] = judge(*chain.model, child, &findings);
  RC_ASSERT(verified == gated);
  RC_ASSERT(verified.count("COLL-3") == 1u);
  RC_ASSERT(findings.find("must move the operation's first input or its output") != std::string::npos);
}

// Same for the data-parallel gradient reduction (replicas then diverge) or the all-gather
// after a distributed-optimizer update (replicas keep a shard of the update): COLL-4.
RC_GTEST_PROP(TrainingMutations, DroppedDataParallelCollectiveIsColl4, ()) {
  const Chain chain = committed(*cases(Need{.dp = true}));
  const auto& d = chain.distributed->payload();
  const auto dp = tasks_where(d, [](const DistTask& t) { return t.collective && t.collective->axis == "dp"; });
  RC_ASSERT(!dp.empty());
  const Codes got = dropped(chain, dp[pick(dp.size())]);
  RC_ASSERT(got == Codes{"COLL-4"});
}

/// Codes the trusted core reports for the distributed snapshot without the transfer pair of
/// task `t` (a send or a receive); the pair goes together, with no dangling peer in between.
Codes dropped_pair(const Chain& chain, std::size_t t) {
  const std::size_t peer = static_cast<std::size_t>(*chain.distributed->payload().tasks[t].peer);
  auto child = mutate<DistributedTaskIR>(*chain.distributed, [&](DistributedTaskIR& x) {
    x.tasks[t].peer.reset();
    x.tasks[peer].peer.reset();
    drop_task(x, std::max(t, peer));
    drop_task(x, std::min(t, peer));
  });
  std::string findings;
  auto [verified, gated] = judge(*chain.model, child, &findings);
  RC_ASSERT(verified == gated);
  return verified;
}

// Same for a pipeline transfer: without a send/receive pair (the receive's dependents now
// depend on the send's dependencies directly) activations never reach the next stage; the
// dependency now joins disjoint rank ranges without a transfer: P2P-3.
RC_GTEST_PROP(TrainingMutations, DroppedPipelineTransferIsP2p3, ()) {
  const Chain chain = committed(*cases(Need{.pp = true}));
  const auto sends = tasks_where(chain.distributed->payload(), [](const DistTask& t) { return t.kind == TaskKind::send; });
  RC_ASSERT(!sends.empty());
  RC_ASSERT(dropped_pair(chain, sends[pick(sends.size())]).count("P2P-3") == 1u);
}

// Tied embeddings on the first and last stage: each stage's update must first receive the
// other stage's gradient (Megatron's embedding group), or the two copies diverge: COLL-5.
RC_GTEST_PROP(TrainingMutations, DroppedTiedGradientExchangeIsColl5, ()) {
  const Chain chain = committed(*cases(Need{.pp = true}));
  const auto recvs = tasks_where(chain.distributed->payload(), [](const DistTask& t) { return t.kind == TaskKind::recv && t.lineage.rule == "train.tied_gradient"; });
  RC_PRE(!recvs.empty());
  RC_ASSERT(dropped_pair(chain, recvs[pick(recvs.size())]).count("COLL-5") == 1u);
}

// Under sequence parallelism each tp rank computes the gradients of the weights it holds whole
// (layer norms, biases of row-parallel layers) from its sequence shard only; without their sum
// over tp the tp ranks' copies diverge: COLL-6.
RC_GTEST_PROP(TrainingMutations, DroppedSequenceParallelGradientSumIsColl6, ()) {
  const Chain chain = committed(*cases(Need{.tp = true}));
  const auto sums = tasks_where(chain.distributed->payload(), [](const DistTask& t) { return t.collective && t.collective->axis == "tp" && t.lineage.sources.size() > 1; });
  RC_PRE(!sums.empty());  // sequence-parallel cases only
  RC_ASSERT(dropped(chain, sums[pick(sums.size())]) == Codes{"COLL-6"});
}

}  // namespace
}  // namespace plancert::testing
