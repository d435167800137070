// SPDX-License-Identifier: Apache-2.0
#include "verifiers/gate.h"

#include "verifiers/verify.h"

namespace plancert {
namespace {

const std::vector<std::string_view> kCommon = {"DIGEST-1", "DIGEST-2", "DIGEST-4", "ID-1", "ID-2", "LINEAGE-1", "SYM-1", "SYM-2"};
const std::vector<std::string_view> kTransition = {"DIGEST-3", "DIGEST-5", "LINEAGE-2"};

std::vector<std::string_view> join(std::vector<std::string_view> a, std::initializer_list<std::string_view> b, bool transition) {
  a.insert(a.end(), b);
  if (transition) a.insert(a.end(), kTransition.begin(), kTransition.end());
  return a;
}

template <class P>
const std::vector<Indices>* no_deps(const P&) { return nullptr; }

template <class T>
std::vector<const Indices*> deps_of(const std::vector<T>& xs) {
  std::vector<const Indices*> out;
  out.reserve(xs.size());
  for (const auto& x : xs) out.push_back(&x.dependencies);
  return out;
}
std::vector<const Indices*> witness_deps(const DistributedTaskIR& p) { return deps_of(p.tasks); }
std::vector<const Indices*> witness_deps(const PortablePlanIR& p) { return deps_of(p.tasks); }
std::vector<const Indices*> witness_deps(const ConcretePlanIR& p) { return deps_of(p.commands); }
std::vector<const Indices*> witness_deps(const MachineIR& p) { return deps_of(p.instructions); }
template <class P>
std::vector<const Indices*> witness_deps(const P&) { return {}; }

template <class P>
std::string_view witness_array(const P&) {
  if constexpr (std::is_same_v<P, ConcretePlanIR>) return "commands";
  else if constexpr (std::is_same_v<P, MachineIR>) return "instructions";
  else return "tasks";
}

template <class P>
void witness(Diagnostics& d, const P& payload, const Witnesses& w) {
  if (w.topological_order) check_topological_witness(d, *w.topological_order, witness_deps(payload), witness_array(payload));
}

}  // namespace

const std::vector<std::string_view>& obligations_checked(std::size_t layer, bool transition) {
  static const std::vector<std::vector<std::string_view>> table[2] = {
      {join(kCommon, {"ATTR-1", "REF-1", "REF-2", "FLOW-1", "FLOW-2", "FLOW-3"}, false),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "MESH-1", "MESH-2", "MESH-3", "WORK-3", "COLL-1", "COLL-2", "COLL-4", "COLL-5", "P2P-1", "P2P-2", "P2P-3", "SCHED-1", "EFFECT-2",
                      "EFFECT-3"}, false),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "BUF-1", "BUF-2", "BUF-3", "BUF-4", "MEM-1", "MEM-3", "WORK-3", "EFFECT-2", "EFFECT-3", "CAPM-1", "CAPM-2"}, false),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "ALIGN-1", "ALIGN-2", "CAP-1", "CAP-2", "CAP-3", "QUEUE-1", "QUEUE-2", "QUEUE-3", "QUEUE-4",
                      "SLOT-1", "SLOT-2", "SLOT-3", "ROUTE-1", "ROUTE-2", "TOKEN-1", "TOKEN-2", "DEADLOCK-1"}, false),
       join(kCommon, {"TIME-2"}, false),
       join(kCommon, {"REF-1", "REF-2", "DAG-1", "DAG-2", "MACHINE-2", "MACHINE-3", "MACHINE-4"}, false),
       join(kCommon, {"OBS-2", "OBS-3"}, false)},
      {join(kCommon, {"ATTR-1", "REF-1", "REF-2", "FLOW-1", "FLOW-2", "FLOW-3"}, true),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "MESH-1", "MESH-2", "MESH-3", "WORK-3", "COLL-1", "COLL-2", "COLL-4", "COLL-5", "P2P-1", "P2P-2", "P2P-3",
                      "SCHED-1", "WORK-2", "COLL-3", "COLL-6", "VOL-1", "SHARD-1", "SHARD-2", "SHARD-3", "SHARD-4", "EFFECT-2", "EFFECT-3", "EFFECT-1", "KV-1", "WS-1"}, true),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "BUF-1", "BUF-2", "BUF-3", "BUF-4", "MEM-1", "MEM-3", "WORK-3", "EFFECT-2", "EFFECT-3", "CAPM-1", "CAPM-2", "WORK-1", "MEM-2", "EFFECT-4", "KV-2", "WS-2"}, true),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "ALIGN-1", "ALIGN-2", "CAP-1", "CAP-2", "CAP-3", "QUEUE-1", "QUEUE-2", "QUEUE-3", "QUEUE-4",
                      "SLOT-1", "SLOT-2", "SLOT-3", "ROUTE-1", "ROUTE-2", "TOKEN-1", "TOKEN-2", "DEADLOCK-1"}, true),
       join(kCommon, {"TIME-1", "TIME-2", "TIME-3", "TIME-4", "TIME-5"}, true),
       join(kCommon, {"REF-1", "REF-2", "DAG-1", "DAG-2", "MACHINE-1", "MACHINE-2", "MACHINE-3", "MACHINE-4"}, true),
       join(kCommon, {"OBS-1", "OBS-2", "OBS-3"}, true)}};
  return table[transition ? 1 : 0].at(layer);
}

void check_topological_witness(Diagnostics& d, const Indices& order, const std::vector<const Indices*>& deps, std::string_view array) {
  const std::size_t n = deps.size();
  if (order.size() != n) { d.error("DAG-3", "/payload/" + std::string(array), "the topological-order witness has " + std::to_string(order.size()) + " entries for " + std::to_string(n) + " entities"); return; }
  std::vector<std::int64_t> pos(n, -1);
  for (std::size_t k = 0; k < n; ++k) {
    Index v = order[k];
    if (v < 0 || static_cast<std::size_t>(v) >= n || pos[static_cast<std::size_t>(v)] >= 0) { d.error("DAG-3", "/payload/" + std::string(array), "the topological-order witness is not a permutation"); return; }
    pos[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(k);
  }
  for (std::size_t v = 0; v < n; ++v)
    for (Index u : *deps[v])
      if (u >= 0 && static_cast<std::size_t>(u) < n && pos[static_cast<std::size_t>(u)] >= pos[v]) {
        d.error("DAG-3", "/payload/" + std::string(array) + "/" + std::to_string(v) + "/dependencies", "the topological-order witness puts a dependency after its dependent");
        return;
      }
}

CommitResult<ModelIR> Gate::commit_root(Snapshot<ModelIR> s, const Witnesses& w) {
  AnySnapshot any(std::move(s));
  Diagnostics d = verify_snapshot(any);
  if (!d.ok()) return Rejection{std::move(d)};
  (void)w;
  return Committed<ModelIR>(std::move(std::get<0>(any)), &obligations_checked(0, false));
}

template <class P, class Q>
CommitResult<P> Gate::commit(const Committed<Q>& parent, Snapshot<P> s, const Witnesses& w) {
  AnySnapshot child(std::move(s));
  Diagnostics d = verify_snapshot(child);
  witness(d, std::get<Snapshot<P>>(child).payload, w);
  if (d.ok()) d.merge(verify_transition(AnySnapshot(parent.snapshot()), child));
  if (!d.ok()) return Rejection{std::move(d)};
  return Committed<P>(std::move(std::get<Snapshot<P>>(child)), &obligations_checked(child.index(), true));
}

template CommitResult<DistributedTaskIR> Gate::commit(const Committed<ModelIR>&, Snapshot<DistributedTaskIR>, const Witnesses&);
template CommitResult<PortablePlanIR> Gate::commit(const Committed<DistributedTaskIR>&, Snapshot<PortablePlanIR>, const Witnesses&);
template CommitResult<ConcretePlanIR> Gate::commit(const Committed<PortablePlanIR>&, Snapshot<ConcretePlanIR>, const Witnesses&);
template CommitResult<TimelineBundle> Gate::commit(const Committed<ConcretePlanIR>&, Snapshot<TimelineBundle>, const Witnesses&);
template CommitResult<MachineIR> Gate::commit(const Committed<ConcretePlanIR>&, Snapshot<MachineIR>, const Witnesses&);
template CommitResult<ObservationSet> Gate::commit(const Committed<ConcretePlanIR>&, Snapshot<ObservationSet>, const Witnesses&);

}  // namespace plancert
