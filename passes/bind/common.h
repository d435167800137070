// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Internal helpers shared by the binding passes: devices from rank sets, engines and
/// implementations by capability, buffer sizes under bindings, and the memory figures.
#pragma once

#include "passes/bind/bind.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace plancert::bind::detail {

/// The devices of a binding and, per task, the devices that run it (ascending).
struct Placement {
  std::vector<Device> devices;              ///< devices (with ranks, or one without)
  std::vector<std::vector<Index>> of_task;  ///< devices of each task
};

/// Reference placement: one device per rank set of the tasks when all are non-empty and
/// pairwise equal or disjoint (ordered by their ranks), else one device without ranks.
Placement reference_devices(const PortablePlanIR& p, const TargetProfile& t);

/// Production placement: one device per class of ranks that run exactly the same tasks when
/// all classes have the same size, else one device per rank. Throws BindError for a task
/// without ranks.
Placement class_devices(const PortablePlanIR& p, const TargetProfile& t);

/// Adds one region per device on space 0 of the target (id "r:" + device id).
void add_regions(ConcretePlanIR& plan, const TargetProfile& t, std::int64_t alignment);

/// Adds the engines of every device and the implementations the tasks need; returns the
/// implementation name of every task. A requirement with no catalog implementation is left
/// unprovided (the gate rejects it with IMPL-1, naming it).
std::vector<std::string> add_engines_and_implementations(ConcretePlanIR& plan, const PortablePlanIR& p, const TargetProfile& t);

/// Sizes of the portable buffers under `values` (throws BindError when one is not a
/// non-negative integer), and the bindings to record.
std::vector<Int> buffer_sizes(const PortablePlanIR& p, const SymbolValues& values);
/// The bindings to record in the plan (the symbols of the portable plan that have a value).
std::vector<SymbolBinding> binding_list(const PortablePlanIR& p, const SymbolValues& values);

/// The task a buffer lives with: its producer, else its first consumer, else the first task
/// planned from the buffer's first lineage source; -1 when none.
std::int64_t home_task(const PortablePlanIR& p, std::size_t buffer, const std::unordered_map<std::string, std::size_t>& task_of_source);
/// Map from a task's first lineage source to the first task with it.
std::unordered_map<std::string, std::size_t> tasks_by_source(const PortablePlanIR& p);

/// The work of each task of `p` as the value its commands share (`Command::work`). Tasks whose
/// quantities are the same representations (copies of one work, as the passes make them) get
/// one value, so a bound plan stores each distinct work once, not once per command (a pointer
/// comparison: equal works built apart may still get two values, which costs memory only).
std::vector<codec::Shared<Work>> shared_works(const PortablePlanIR& p);

/// Command kind and queue kind of a task kind.
CommandKind command_kind(TaskKind k);
/// Queue kind of a command kind.
QueueKind queue_kind(CommandKind k);

/// True for storage classes that stay live for the whole plan (RACE-2 pins them).
inline bool pinned(Storage s) { return s != Storage::transient && s != Storage::workspace; }

/// Fills plan.memory: per device the peak (highest buffer end) and the largest live total
/// over candidate witnesses, computed with happens-before. Requires that the command index
/// order is a topological order of dependencies, queue order and tokens.
void fill_memory(ConcretePlanIR& plan);

}  // namespace plancert::bind::detail
