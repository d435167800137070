// SPDX-License-Identifier: Apache-2.0
#include "verifiers/gate.h"

#include "verifiers/verify.h"

namespace plancert {
namespace {

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

CommitResult<ModelIR> Gate::commit_root(Snapshot<ModelIR> s, const Witnesses& /*unused: a ModelIR has no dependency lists to order*/) {
  const std::string sealed = s.digest.empty() ? (s.digest = digest_of(s.payload)) : std::string();  // (gate.h: unsealed snapshots)
  AnySnapshot any(std::move(s));
  Diagnostics d = verify_snapshot(any, sealed);
  if (!d.ok()) return Rejection{std::move(d)};
  return Committed<ModelIR>(std::move(std::get<0>(any)));
}

template <class P, class Q>
CommitResult<P> Gate::commit(const Committed<Q>& parent, Snapshot<P> s, const Witnesses& w) {
  const std::string sealed = s.digest.empty() ? (s.digest = digest_of(s.payload)) : std::string();  // (gate.h: unsealed snapshots)
  AnySnapshot child(std::move(s));
  Diagnostics d = verify_snapshot(child, sealed);
  witness(d, std::get<Snapshot<P>>(child).payload, w);
  if (d.ok()) d.merge(verify_transition(AnySnapshot(parent.snapshot()), child));
  if (!d.ok()) return Rejection{std::move(d)};
  return Committed<P>(std::move(std::get<Snapshot<P>>(child)));
}

template CommitResult<DistributedTaskIR> Gate::commit(const Committed<ModelIR>&, Snapshot<DistributedTaskIR>, const Witnesses&);
template CommitResult<PortablePlanIR> Gate::commit(const Committed<DistributedTaskIR>&, Snapshot<PortablePlanIR>, const Witnesses&);
template CommitResult<ConcretePlanIR> Gate::commit(const Committed<PortablePlanIR>&, Snapshot<ConcretePlanIR>, const Witnesses&);
template CommitResult<TimelineBundle> Gate::commit(const Committed<ConcretePlanIR>&, Snapshot<TimelineBundle>, const Witnesses&);
template CommitResult<MachineIR> Gate::commit(const Committed<ConcretePlanIR>&, Snapshot<MachineIR>, const Witnesses&);
template CommitResult<ObservationSet> Gate::commit(const Committed<ConcretePlanIR>&, Snapshot<ObservationSet>, const Witnesses&);

}  // namespace plancert
