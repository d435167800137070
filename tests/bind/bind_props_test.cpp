// SPDX-License-Identifier: Apache-2.0
// Properties of the binding passes: for random portable plans (small training plans from the
// real passes, and the props library's arbitrary valid plans) all three binders' outputs pass
// the gate; the memory planner never produces a race or an overlap (the RACE verifier and an
// all-pairs checker agree); mutants are rejected with their code.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "passes/emit/emit.h"
#include "props/generators.h"
#include "tests/bind/support.h"

#include <algorithm>

namespace plancert::bindtest {
namespace {


std::string text_of(const Rejection& r) {
  std::string t;
  for (const auto& d : r.diagnostics.all()) t += to_text(d) + "\n";
  return t;
}

std::vector<ConcretePlanIR> all_binders(const PortablePlanIR& p, const bind::TargetProfile& t, const bind::DeploymentProfile& d, const bind::SymbolValues& v,
                                        const DistributedTaskIR* dist) {
  return {bind::bind_reference_queue(p, t, d, v), bind::bind_reference_slot(p, t, d, v), bind::bind_queue(p, t, d, bind::QueueOptions{dist, v})};
}

RC_GTEST_PROP(BindProps, TrainingPlansBindThroughTheGate, ()) {
  const TrainKnobs k = *props::train_knobs();
  auto c = train_chain(k);
  RC_PRE(c.has_value());
  const auto plans = all_binders(c->portable->payload(), permissive_target(), deployment(k.tp * k.pp * k.dp), {}, &c->dist->payload());
  for (const auto& plan : plans) {
    auto r = Gate::commit(*c->portable, make_snapshot(plan, {c->portable->digest()}));
    if (const auto* rej = std::get_if<Rejection>(&r)) RC_FAIL(text_of(*rej));
  }
  std::string why;
  RC_ASSERT_FALSE(brute_force_race(plans[2], &why));
  for (const auto& f : bind::figures(plans[2])) RC_ASSERT(f.lower_bound <= f.peak_bytes && f.peak_bytes <= f.naive_bytes);
}

RC_GTEST_PROP(BindProps, ArbitraryPortablePlansBind, ()) {
  const props::Chain ch = *props::chain(props::Layer::portable);
  const PortablePlanIR& p = ch.portable->payload;
  Index world = 1;
  for (const auto& t : p.tasks)
    for (Index r : t.ranks) world = std::max(world, r + 1);
  const auto values = bind::default_bindings(p, 2);
  std::vector<ConcretePlanIR> plans;
  for (int b = 0; b < 3; ++b) {
    try {
      const auto t = permissive_target();
      const auto d = deployment(world);
      plans.push_back(b == 0 ? bind::bind_reference_queue(p, t, d, values) : b == 1 ? bind::bind_reference_slot(p, t, d, values) : bind::bind_queue(p, t, d, {nullptr, values}));
    } catch (const bind::BindError& e) {
      RC_TAG(std::string("unbindable: ") + (b < 2 ? "reference" : "queue"));
      continue;
    }
    std::string text;
    const auto codes = verdict(p, plans.back(), &text);
    if (!codes.empty()) RC_FAIL(text);
    std::string why;
    if (brute_force_race(plans.back(), &why)) RC_FAIL(why);
  }
}

RC_GTEST_PROP(BindProps, MutantsAreRejectedWithTheirCode, ()) {
  TrainKnobs k;
  k.tp = 2;
  k.pp = 2;
  k.microbatches = *rc::gen::inRange(1, 4);
  k.sequence_parallel = *rc::gen::arbitrary<bool>();
  static std::map<std::int64_t, TrainChain> cache;
  if (!cache.count(k.microbatches * 2 + k.sequence_parallel)) cache.emplace(k.microbatches * 2 + k.sequence_parallel, *train_chain(k));
  const TrainChain& c = cache.at(k.microbatches * 2 + k.sequence_parallel);
  const auto plans = all_binders(c.portable->payload(), permissive_target(), deployment(4), {}, &c.dist->payload());
  const int kind = *rc::gen::inRange(0, 4);
  ConcretePlanIR m = plans[kind == 3 ? 1 : static_cast<std::size_t>(*rc::gen::inRange(0, 3))];
  auto pick = [](std::size_t n) { return static_cast<std::size_t>(*rc::gen::inRange<std::size_t>(0, n)); };
  if (kind == 0) {  // shift an offset by one byte
    std::vector<std::size_t> sized;
    for (std::size_t i = 0; i < m.buffers.size(); ++i)
      if (m.buffers[i].size > 0) sized.push_back(i);
    m.buffers[sized[pick(sized.size())]].offset += 1;
    RC_ASSERT(snapshot_verdict(m).count("ALIGN-1") == 1u);
  } else if (kind == 1) {  // drop a token wait: rejected exactly when it was the only order of a conflict
    std::vector<std::size_t> waiting;
    for (std::size_t v = 0; v < m.commands.size(); ++v)
      if (!m.commands[v].waits.empty()) waiting.push_back(v);
    RC_PRE(!waiting.empty());
    auto& w = m.commands[waiting[pick(waiting.size())]].waits;
    w.erase(w.begin() + static_cast<std::ptrdiff_t>(pick(w.size())));
    const auto codes = snapshot_verdict(m);
    const bool race = codes.count("RACE-1") || codes.count("RACE-2");
    RC_TAG(race ? "race" : "redundant wait");
    RC_ASSERT(race == brute_force_race(m));
    for (const auto& code : codes) RC_ASSERT(code == "RACE-1" || code == "RACE-2" || code == "CAP-5");
  } else if (kind == 2) {  // swap two neighbours of a queue
    RC_PRE(m.queue.has_value());
    auto& q = m.queue->queues[pick(m.queue->queues.size())].commands;
    RC_PRE(q.size() >= 2);
    const std::size_t k2 = 1 + pick(q.size() - 1);
    std::swap(q[k2], q[k2 - 1]);
    const auto codes = snapshot_verdict(m);
    for (const auto& code : codes) RC_ASSERT(code == "QUEUE-4" || code == "RACE-1" || code == "RACE-2" || code == "DEADLOCK-1" || code == "CAP-5" || code == "REFBIND-1");
    if (!codes.count("QUEUE-4") && !codes.count("DEADLOCK-1")) RC_ASSERT((codes.count("RACE-1") || codes.count("RACE-2")) == brute_force_race(m));
    RC_TAG(codes.empty() ? "independent neighbours" : *codes.begin());
  } else {  // give a transfer no route
    RC_PRE(!m.slot->routes.empty());
    m.slot->routes.erase(m.slot->routes.begin() + static_cast<std::ptrdiff_t>(pick(m.slot->routes.size())));
    RC_ASSERT(snapshot_verdict(m) == std::set<std::string>{"ROUTE-1"});
  }
}

}  // namespace
}  // namespace plancert::bindtest
