// SPDX-License-Identifier: Apache-2.0
// bench_bind: binding the default example (GPT-3 175B, seqsel strategy, A100 80 GB; the
// committed PortablePlanIR of `plancert certify`) with each binder, and the gate's check of
// the resulting ConcretePlanIR (verify_snapshot + verify_transition, which include RACE with
// its vector clocks and CAP-5):
//   bind/<target>    the binding pass alone
//   verify/<target>  verify_snapshot + verify_transition of its output
// Counters: commands, tokens, buffers, and the planner's peak over its lower bound (queue).
//   BM_SchedulePeak/<chunks>/<sizes>  MEM-2's reference peak (plancert::schedule_peak) of one
//                    stage that runs every chunk's forward, then every backward (one microbatch),
//                    with constant (0) or symbolic (1) chunk sizes: linear in the steps since
//                    session 39 (it was O(steps x chunks), about 10^11 operations at 2^18 chunks)
//   BM_Race2Neighbours/<n>  verify_snapshot of a queue plan whose buffer A, written once and
//                    read by n commands, shares its bytes with n one-byte buffers written after
//                    it: RACE-2 compares A with each of them in turn. Linear in n since session
//                    40 (A's trailing accesses were scanned again for every neighbour: n^2)
#include "passes/bind/bind.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#ifndef PLANCERT_SOURCE_DIR
#error "PLANCERT_SOURCE_DIR must name the repository root"
#endif

namespace {

using namespace plancert;

struct Default {
  frontend::StrategyConfig strategy;
  frontend::SystemConfig system;
  std::optional<Committed<DistributedTaskIR>> dist;
  std::optional<Committed<PortablePlanIR>> portable;
};

const Default& default_example() {
  static const Default d = [] {
    const std::string root = PLANCERT_SOURCE_DIR "/examples/calculon/";
    Default x;
    auto model = frontend::load_model(root + "models/gpt3-175B.json");
    x.strategy = frontend::load_strategy(root + "strategies/gpt3-175B_seqsel.json");
    x.system = frontend::load_system(root + "systems/a100_80g.json");
    const passes::Workload w{Expr(x.strategy.microbatch), Expr(*frontend::effective_seq_length(model, x.strategy)), {}};
    auto m = std::get<Committed<ModelIR>>(Gate::commit_root(make_snapshot(passes::build_model_ir(model, w, x.strategy.dtype), {})));
    x.dist.emplace(std::get<Committed<DistributedTaskIR>>(
        Gate::commit(m, make_snapshot(passes::distribute_training(m.payload(), m.digest(), x.strategy), {m.digest()}))));
    x.portable.emplace(std::get<Committed<PortablePlanIR>>(
        Gate::commit(*x.dist, make_snapshot(passes::plan_training(m.payload(), x.dist->payload(), x.strategy), {x.dist->digest()}))));
    return x;
  }();
  return d;
}

ConcretePlanIR bind_default(int target) {
  const Default& d = default_example();
  const auto tp = bind::target_profile(d.system);
  const auto dp = bind::deployment_profile(d.system, d.strategy);
  const PortablePlanIR& p = d.portable->payload();
  if (target == 0) return bind::bind_reference_queue(p, tp, dp);
  if (target == 1) return bind::bind_reference_slot(p, tp, dp);
  return bind::bind_queue(p, tp, dp, bind::QueueOptions{&d.dist->payload(), {}});
}

const char* kTargets[] = {"reference-queue", "reference-slot", "queue"};

void counters(benchmark::State& state, const ConcretePlanIR& c) {
  state.counters["commands"] = static_cast<double>(c.commands.size());
  state.counters["tokens"] = static_cast<double>(c.tokens.size());
  state.counters["buffers"] = static_cast<double>(c.buffers.size());
  state.SetLabel(kTargets[state.range(0)]);
}

void BM_Bind(benchmark::State& state) {
  (void)default_example();
  ConcretePlanIR c;
  for (auto _ : state) {
    c = bind_default(static_cast<int>(state.range(0)));
    benchmark::DoNotOptimize(c.commands.data());
  }
  counters(state, c);
  if (state.range(0) == 2) {
    double worst = 1;
    for (const auto& f : bind::figures(c))
      if (f.lower_bound > 0) worst = std::max(worst, static_cast<double>(f.peak_bytes) / static_cast<double>(f.lower_bound));
    state.counters["peak_over_lower_bound"] = worst;
  }
}

void BM_Verify(benchmark::State& state) {
  const auto& d = default_example();
  const AnySnapshot parent(d.portable->snapshot());
  const AnySnapshot child(make_snapshot(bind_default(static_cast<int>(state.range(0))), {d.portable->digest()}));
  for (auto _ : state) {
    Diagnostics s = verify_snapshot(child);
    if (s.ok()) s = verify_transition(parent, child);
    if (!s.ok()) {
      state.SkipWithError(to_text(s.all().front()).c_str());
      return;
    }
  }
  counters(state, std::get<Snapshot<ConcretePlanIR>>(child).payload);
}

void BM_SchedulePeak(benchmark::State& state) {
  const auto chunks = static_cast<std::int64_t>(state.range(0));
  StageSchedule s;
  s.chunks = chunks;
  std::vector<Expr> bytes;
  for (std::int64_t c = 0; c < chunks; ++c) {
    s.steps.push_back(Step{c, StepKind::forward, 0});
    bytes.push_back(state.range(1) ? Expr(c % 3 + 1) * Expr::symbol("B") : Expr(c % 7 + 1));
  }
  for (std::int64_t c = chunks; c-- > 0;) s.steps.push_back(Step{c, StepKind::backward, 0});
  for (auto _ : state) {
    auto peak = schedule_peak(s, bytes);
    if (!peak) {
      state.SkipWithError("not decided");
      return;
    }
    benchmark::DoNotOptimize(peak);
  }
  state.counters["steps"] = static_cast<double>(s.steps.size());
}

// One device, one region, one compute queue: A written by command 0 and read by commands
// 1..n; X_i at byte i of A, written by command n + 1 + i after them on the queue.
ConcretePlanIR shared_region_plan(std::int64_t n) {
  ConcretePlanIR p;
  p.rules = {"bench"};
  const Lineage lin{LineageKind::derived, "bench", {"t"}};  // (verify_snapshot does not look up sources)
  p.devices.push_back(Device{"d0", "gpu", Int(1) << 40, {}});
  p.regions.push_back(Region{1, Int(1) << 40, 0, "r0", Int(0), "hbm"});
  p.queue.emplace();
  p.queue->queues.push_back(Queue{{}, 0, "q0", QueueKind::compute});
  auto buffer = [&](std::string id, std::int64_t offset, std::int64_t size) {
    p.buffers.push_back(ConcreteBuffer{1, std::move(id), lin, Int(offset), 0, Int(size), Storage::transient});
    return static_cast<Index>(p.buffers.size() - 1);
  };
  auto command = [&](Indices reads, Indices writes) {
    Command c;
    c.id = "k" + std::to_string(p.commands.size());
    c.kind = CommandKind::launch;
    c.lineage = lin;
    c.reads = std::move(reads), c.writes = std::move(writes);
    c.work = Work{};
    p.queue->queues[0].commands.push_back(static_cast<Index>(p.commands.size()));
    p.commands.push_back(std::move(c));
  };
  const Index a = buffer("A", 0, n);
  command({}, {a});
  for (std::int64_t j = 0; j < n; ++j) command({a}, {});
  for (std::int64_t i = 0; i < n; ++i) command({}, {buffer("X" + std::to_string(i), i, 1)});
  return p;
}

void BM_Race2Neighbours(benchmark::State& state) {
  const AnySnapshot s(make_snapshot(shared_region_plan(state.range(0)), {std::string(64, 'a')}));
  for (auto _ : state) {
    Diagnostics d = verify_snapshot(s);
    if (!d.ok()) {
      state.SkipWithError(to_text(d.all().front()).c_str());
      return;
    }
  }
  state.counters["commands"] = static_cast<double>(std::get<Snapshot<ConcretePlanIR>>(s).payload.commands.size());
}

BENCHMARK(BM_Bind)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_Verify)->DenseRange(0, 2)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(BM_SchedulePeak)->ArgsProduct({{1 << 10, 1 << 14, 1 << 18}, {0, 1}})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Race2Neighbours)->RangeMultiplier(4)->Range(1 << 12, 1 << 18)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
