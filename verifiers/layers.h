// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Internal: the per-layer obligation families, called by verify.cpp after the
/// structural checks (REF, ID, DAG) have passed for the arrays they index through.
#pragma once

#include "verifiers/check.h"

namespace plancert::layers {

/// The size of mesh axis `axis` (-1 without one) and its `stride`: the product of the sizes
/// of the axes listed after it.
inline std::int64_t axis_size(const Mesh& m, std::string_view axis, std::int64_t& stride) {
  stride = 1;
  for (auto it = m.axes.rbegin(); it != m.axes.rend(); ++it) {
    if (it->name == axis) return it->size;
    stride *= it->size;
  }
  return -1;
}

/// The size of mesh axis `axis`, 1 without one (the degree of that parallelism).
inline std::int64_t degree(const Mesh& m, std::string_view axis) { std::int64_t stride = 1; return std::max<std::int64_t>(axis_size(m, axis, stride), 1); }

/// The pipeline stage of rank `r`: its coordinate on the pp axis (0 without one). Stages
/// interleave when pp is not the first axis.
inline std::int64_t stage_of(const Mesh& m, std::int64_t r) {
  std::int64_t stride = 1, n = axis_size(m, "pp", stride);
  return n > 0 && stride > 0 ? r / stride % n : 0;
}

/// FLOW-1..3 on a ModelIR.
void flow(check::Ctx& c, const ModelIR& m);
/// MESH-1..3 on a DistributedTaskIR.
void mesh(check::Ctx& c, const DistributedTaskIR& d);
/// BUF-1..4 on a PortablePlanIR.
void buffers(check::Ctx& c, const PortablePlanIR& p);
/// ALIGN, CAP, QUEUE, SLOT, ROUTE, TOKEN, DEADLOCK on a ConcretePlanIR.
void concrete(check::Ctx& c, const ConcretePlanIR& p);
/// TIME-1..5 of a TimelineBundle against its ConcretePlanIR.
void timeline(check::Ctx& c, const ConcretePlanIR& plan, const TimelineBundle& t);
/// MACHINE-2..3 on a MachineIR alone.
void machine(check::Ctx& c, const MachineIR& m);
/// MACHINE-1 and MACHINE-4 of a MachineIR against its ConcretePlanIR.
void machine_trace(check::Ctx& c, const ConcretePlanIR& plan, const MachineIR& m);
/// OBS-2..3 on an ObservationSet alone.
void observations(check::Ctx& c, const ObservationSet& o);
/// WORK-3, COLL-1..2, P2P-1..2, SCHED-1 on a DistributedTaskIR.
void distributed(check::Ctx& c, const DistributedTaskIR& d);
/// WORK-2, VOL-1, SHARD-1..3 of a DistributedTaskIR against its ModelIR.
void model_to_distributed(check::Ctx& c, const ModelIR& m, const DistributedTaskIR& d);
/// MEM-1, MEM-3, WORK-3 on a PortablePlanIR.
void portable(check::Ctx& c, const PortablePlanIR& p);
/// WORK-1, DAG-4 (every parent dependency kept), MEM-2 of a PortablePlanIR against its DistributedTaskIR.
void distributed_to_portable(check::Ctx& c, const DistributedTaskIR& d, const PortablePlanIR& p);
/// EFFECT-2..3 (reads after writes, ordered writes) on a DistributedTaskIR.
void effects(check::Ctx& c, const DistributedTaskIR& d);
/// EFFECT-2..3 on a PortablePlanIR.
void effects(check::Ctx& c, const PortablePlanIR& p);
/// CAPM-1..2 (inference memory facts complete; totals fit the capacity) on a PortablePlanIR.
void capacity(check::Ctx& c, const PortablePlanIR& p);
/// EFFECT-1, KV-1, WS-1 of a DistributedTaskIR against its ModelIR.
void model_to_distributed_infer(check::Ctx& c, const ModelIR& m, const DistributedTaskIR& d);
/// EFFECT-4, KV-2, WS-2 of a PortablePlanIR against its DistributedTaskIR.
void distributed_to_portable_infer(check::Ctx& c, const DistributedTaskIR& d, const PortablePlanIR& p);
/// OBS-1 against the ConcretePlanIR.
void observations_trace(check::Ctx& c, const ConcretePlanIR& plan, const ObservationSet& o);
/// What the concrete families derive and bind() reuses: each token's signalling command (-1:
/// none); on a queue target also each command's queue predecessor (-1: first on its queue) and
/// a topological order of dependencies, queue order and token waits (DEADLOCK-1's graph, which
/// is happens-before's). Empty vectors where not derived.
struct Flow {
  std::vector<Index> signaller;      ///< by token
  std::vector<Index> prev;           ///< by command
  std::vector<std::uint32_t> order;  ///< empty, or every command once, each after its predecessors
};
/// IMPL-2 (device ranks), and when `families_ok` (no finding of the plan's other families)
/// RACE-1..3 and CAP-5 under the happens-before order of dependencies, queue order and tokens.
void bind(check::Ctx& c, const ConcretePlanIR& p, bool families_ok, Flow&& flow);
/// Transition PortablePlanIR -> ConcretePlanIR: CAP-4, WORK-4, IMPL-1, RACE-4, DAG-5, and ALIGN-3 and
/// REFBIND-1 for a plan that declares the reference binding.
void portable_to_concrete(check::Ctx& c, const PortablePlanIR& pp, const ConcretePlanIR& p);

}  // namespace plancert::layers
