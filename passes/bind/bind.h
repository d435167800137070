// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Target binding (stage 4): PortablePlanIR to ConcretePlanIR. The two reference
/// binders are deterministic contracts whose output the gate re-derives (REFBIND-1, ALIGN-3);
/// BindQueueTargetPass is the production binder with a memory planner.
///
/// Conventions shared by the three passes (and checked by the gate):
/// - **Ranks and devices (IMPL-2, WORK-4).** A concrete device stands for a set of ranks of
///   the deployment: its `ranks` run its commands, each on its own memory, and a token or a
///   buffer access between two devices relates their j-th ranks. Every device stands for the
///   same number of ranks, the devices that run a task partition the task's ranks, and each
///   of them runs the task's `repeat` instances. The reference binders make one device per
///   rank set of the tasks (when the rank sets are pairwise equal or disjoint, as in the
///   training plans: one device per pipeline stage), else one device without ranks (one
///   rank's view). The production binder makes one device per class of ranks that run the
///   same tasks (again one per stage for the training plans) when the classes have equal
///   sizes, else one device per rank.
/// - **Instances (WORK-4).** A command runs `repeat` instances of its task's work vector. The
///   reference binders bind each task once with all its instances (and one buffer per
///   portable buffer: they certify the contract, not a reuse plan across microbatches); the
///   production binder binds every instance separately and gives per-instance buffers to the
///   transient buffers of repeated tasks.
/// - **Sizes (CAP-4).** Symbolic portable sizes are evaluated under `bindings` (one value per
///   symbol, recorded in the plan).
#pragma once

#include "passes/bind/profiles.h"

#include <map>
#include <optional>
#include <string>

namespace plancert::bind {

/// Values of the portable plan's symbols (empty when every size is constant).
using SymbolValues = std::map<std::string, Int>;

/// Binds a plan with the deterministic queue-reference contract (BindReferenceQueueTargetPass).
///
/// Buffers are laid out in canonical order on their home device (that of their producer, else
/// of their first consumer, else of the task planned from the same source). For buffer
/// \f$i\f$ with size \f$s_i\f$ and required alignment \f$r_i\f$, \f$a_i = \max(16, r_i)\f$ and
/// \f[ o_0 = 0,\qquad o_i = \left\lceil \frac{o_{i-1} + s_{i-1}}{a_i} \right\rceil a_i, \f]
/// so \f$o_i \bmod a_i = 0\f$ and \f$o_i \ge o_{i-1} + s_{i-1}\f$ (per device). Tasks keep their
/// topological (index) order and are partitioned into compute, collective, transfer and host
/// queues per device; each queue's issue order is the stable subsequence of the task order.
/// The gate re-evaluates this construction from the parent and requires exact equality.
/// Internal deterministic contract; no paper-derived scheduling algorithm is claimed.
/// Throws BindError when a portable size has no integer value or the task order is not
/// topological.
ConcretePlanIR bind_reference_queue(const PortablePlanIR& plan, const TargetProfile& target, const DeploymentProfile& deployment, const SymbolValues& bindings = {});

/// Binds a plan with the deterministic slot/dataflow reference contract
/// (BindReferenceSlotTargetPass). It shares the buffer recurrence of bind_reference_queue();
/// given the portable topological task order \f$T = (t_0, \dots, t_{n-1})\f$,
/// \f[ \operatorname{issue}(t_i) = (\mathrm{cycle} = i,\ \mathrm{slot} = 0), \f]
/// so every dependency \f$t_j \to t_i\f$ has \f$j < i\f$ and \f$\mathrm{cycle}(t_j) < \mathrm{cycle}(t_i)\f$.
/// Each transfer gets a route between its device and its peer's (the first send a receive
/// depends on; the first receive that depends on a send). Throws BindError as
/// bind_reference_queue(), and when a transfer has no peer on another device (a route joins two
/// devices, ROUTE-2).
ConcretePlanIR bind_reference_slot(const PortablePlanIR& plan, const TargetProfile& target, const DeploymentProfile& deployment, const SymbolValues& bindings = {});

/// Options of bind_queue().
struct QueueOptions {
  /// The parent's parent, when known: its per-stage pipeline schedule orders the instances of
  /// each device (tasks carry `attrs["chunk"]`; forward tasks run in the forward step of their
  /// chunk and microbatch, recompute and backward tasks in the backward step). Without it,
  /// instances run microbatch by microbatch.
  const DistributedTaskIR* distributed = nullptr;
  SymbolValues bindings;  ///< symbol values
};

/// BindQueueTargetPass, the production queue binder.
///
/// Every instance of every task becomes a command on each device of the task (see the rank
/// convention above), on that device's compute, collective, transfer or host queue. The issue
/// order is a linear extension of the instance graph: instance \f$i\f$ of a task depends on
/// instance \f$i\f$ of each dependency with the same repeat and on the last instance of one
/// with another repeat, and instances of one task run in order; with a pipeline schedule each
/// device follows its stage's steps. Commands keep these dependencies, and a dependency
/// between two queues is also a token (signalled by the earlier command, waited by the later).
///
/// Implementations by capability: a task's requirements are met by the catalog
/// implementation that provides each one (several fuse into one implementation); a
/// requirement the target lacks is bound to nothing and rejected by the gate (IMPL-1).
///
/// Memory planner: pinned buffers (every storage but transient and workspace) are placed
/// first; every other buffer is placed, in issue order, when its first access is issued and
/// freed after its last, best fit among the free blocks (at the buffer's alignment
/// \f$\max(r_b, a_{\mathrm{space}})\f$). A block keeps the last access on each queue of the
/// buffers that used it; a new buffer's leading accesses wait for tokens of those on other
/// queues, so any two buffers that share memory have ordered lifetimes (RACE-2), and the
/// conflicting accesses of one buffer are ordered the same way (RACE-1). The plan records, per
/// device, the peak \f$P = \max_b (o_b + s_b)\f$ and the lower bound
/// \f$L = \max_w \sum_{b\ \mathrm{live\ at}\ w} s_b\f$ over candidate commands \f$w\f$ (a buffer
/// is live at \f$w\f$ when one of its accesses happens before or at \f$w\f$ and one after it;
/// pinned buffers always are), with its witness (CAP-5).
ConcretePlanIR bind_queue(const PortablePlanIR& plan, const TargetProfile& target, const DeploymentProfile& deployment, const QueueOptions& options = {});

/// Per-device memory figures of a bound plan.
struct DeviceFigures {
  Index device = 0;    ///< device index
  Int peak_bytes;      ///< the plan's peak
  Int lower_bound;     ///< the plan's lower bound
  Int capacity_bytes;  ///< device memory
  Int naive_bytes;     ///< every buffer of the device at its own aligned address (no reuse)
};

/// The figures of every device of `plan` (from its memory entries and buffers).
std::vector<DeviceFigures> figures(const ConcretePlanIR& plan);

/// Symbol values for a portable plan: each symbol's smallest allowed value at least `at_least`
/// (rounded up to its divisibility, capped by its maximum).
SymbolValues default_bindings(const PortablePlanIR& plan, std::int64_t at_least = 1);

}  // namespace plancert::bind
