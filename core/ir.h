// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Value types of every IR layer (ARCHITECTURE.md, "The pipeline").
///
/// Conventions shared by all layers:
/// - every entity has a stable string `id` and a `lineage` naming the rule that made it and
///   the parent-snapshot entities it came from;
/// - references inside one snapshot are array indices (JSON integers), references to another
///   snapshot are ids; the parent snapshot is named by digest in the envelope;
/// - exact quantities are Int / Rat / Expr and are encoded as JSON strings;
/// - free-form `attrs` (string to string) exist for pass annotations; each layer reserves
///   the names of what later layers own (obligation family ATTR).
#pragma once

#include "core/codec.h"
#include "core/expr.h"
#include "core/numbers.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace plancert {

using codec::field, codec::Attrs;  // Attrs: annotations (core/codec.h)
/// An index into an array of the same snapshot: 32 bits (SCHEMA-8 outside -2^31 .. 2^31-1).
using Index = std::int32_t;
/// A list of indices (a List: 16 bytes, five in every command; 4 bytes an index).
using Indices = codec::List<Index>;
/// An interned name (8 bytes): rules and implementations.
using Name = codec::Name;

/// How an entity came to be.
enum class LineageKind { derived, introduced };
/// Role of a ModelIR value.
enum class ValueRole { activation, constant, gradient, input, output, state, weight };
/// A read or a write of a state value.
enum class EffectKind { read, write };
/// Axis a symbol belongs to.
enum class SymbolAxis { strategy, target, workload };
/// Kind of a distributed or portable task.
enum class TaskKind { collective, compute, host, recv, send };
/// Collective operation kinds.
enum class CollectiveKind { all_gather, all_reduce, all_to_all, broadcast, reduce_scatter };
/// Reduction of a collective (`none` for data movement only).
enum class Reduction { max, min, none, sum };
/// Capability kinds a portable task may require.
enum class CapabilityKind { collective, host, matrix, memory, transfer, vector };
/// What a portable buffer holds.
enum class BufferRole { activation, gradient, input, kv_cache, message, optimizer_state, output, weight, workspace };
/// Storage class of a portable buffer: constant, input, state and workspace buffers may have
/// no producer (BUF-2); constant and input buffers never have one.
enum class Storage { constant, input, output, persistent, state, transient, workspace };
/// Kind of a concrete command.
enum class CommandKind { collective, copy, host, launch, recv, send };
/// Kind of an in-order queue.
enum class QueueKind { collective, compute, host, transfer };
/// Typed target extension of a ConcretePlanIR.
enum class TargetKind { queue, slot };
/// MachineIR instruction operations.
enum class MachineOp { call, copy, signal, wait };
/// Phase of a training or inference task (WORK-2 counts matrix work per phase).
enum class Phase { backward_activation, backward_weight, forward, none, optimizer, recompute };
/// Direction of one pipeline-schedule step.
enum class StepKind { backward, forward };
/// Memory category of a per-stage memory fact.
/// `capacity` is the target's device memory per rank (CAPM), not a buffer sum.
enum class MemoryCategory { activations, activations_peak, capacity, kv_cache, optimizer_state, total, weight_gradients, weights, workspace };

/// Provenance of an entity: the rule that produced it and the parent entities it came from.
struct Lineage {
  LineageKind kind = LineageKind::introduced;  ///< derived from sources, or introduced by the rule
  Name rule;                                   ///< declared rule name
  codec::List<std::string> sources;            ///< ids of parent-snapshot entities
  /// Reflected fields.
  PLANCERT_FIELDS(Lineage, kind, rule, sources)
};

/// Exact workload facts of one operation or task.
struct Work {
  Expr matrix_ops;        ///< matrix-engine operations (2mnk per product)
  Expr message_bytes;     ///< bytes sent over the network
  Expr persistent_bytes;  ///< bytes that outlive the task (weights, state)
  Expr read_bytes;        ///< bytes read from memory
  Expr temporary_bytes;   ///< workspace bytes live only during the task
  Expr vector_ops;        ///< vector-engine operations
  Expr write_bytes;       ///< bytes written to memory
  /// Reflected fields.
  PLANCERT_FIELDS(Work, matrix_ops, message_bytes, persistent_bytes, read_bytes, temporary_bytes, vector_ops, write_bytes)
  /// Equal quantities, field by field (Expr equality: canonical identity).
  friend bool operator==(const Work&, const Work&) = default;
};

/// A symbolic dimension with its facts.
struct Symbol {
  SymbolAxis axis = SymbolAxis::workload;  ///< which input owns it
  Int divisible_by = 1;                    ///< every allowed value is a multiple of this
  bool integer = true;                     ///< integrality
  std::optional<Int> max;                  ///< inclusive upper bound, if any
  Int min = 1;                             ///< inclusive lower bound (>= 1 means positive)
  std::string name;                        ///< the symbol as it appears in expressions
  /// Reflected fields.
  PLANCERT_FIELDS(Symbol, axis, divisible_by, integer, max, min, name)
};

// ---- ModelIR ---------------------------------------------------------------------------

/// A tensor value of the model.
struct ModelValue {
  std::string dtype;        ///< element type, e.g. "bf16"
  std::string id;           ///< stable id
  Lineage lineage;          ///< provenance
  ValueRole role = ValueRole::activation;  ///< semantic role
  std::vector<Expr> shape;  ///< dimensions (concrete or symbolic)
  /// Reflected fields.
  PLANCERT_FIELDS(ModelValue, dtype, id, lineage, role, shape)
};

/// A read or write effect on a state value.
struct Effect {
  EffectKind kind = EffectKind::read;  ///< read or write
  Index value = 0;                     ///< index into values
  /// Reflected fields.
  PLANCERT_FIELDS(Effect, kind, value)
};

/// An operation of the model (in definition order).
struct Operation {
  Attrs attrs;                  ///< annotations (ATTR reserves names)
  std::vector<Effect> effects;  ///< state effects
  std::string id;               ///< stable id
  Indices inputs;               ///< value indices read
  std::string kind;             ///< operation kind, e.g. "matmul"
  Lineage lineage;              ///< provenance
  Indices outputs;              ///< value indices defined
  Work work;                    ///< exact unsharded work
  /// Reflected fields.
  PLANCERT_FIELDS(Operation, attrs, effects, id, inputs, kind, lineage, outputs, work)
};

/// Payload of a ModelIR snapshot.
struct ModelIR {
  static constexpr std::string_view kSchema = "ModelIR";  ///< schema name
  std::string name;                   ///< model name
  std::vector<Operation> operations;  ///< operations in definition order
  std::vector<std::string> rules;     ///< declared lineage rules
  std::vector<Symbol> symbols;        ///< symbolic dimensions
  std::vector<ModelValue> values;     ///< values
  /// Reflected fields.
  PLANCERT_FIELDS(ModelIR, name, operations, rules, symbols, values)
};

// ---- DistributedTaskIR -----------------------------------------------------------------

/// One axis of the device mesh.
struct MeshAxis {
  std::string name;   ///< "tp", "pp" or "dp"
  std::int64_t size = 1;  ///< degree
  /// Reflected fields.
  PLANCERT_FIELDS(MeshAxis, name, size)
};

/// The logical device mesh; ranks are 0 .. product(sizes) - 1.
struct Mesh {
  std::vector<MeshAxis> axes;  ///< axes, outermost first
  /// Reflected fields.
  PLANCERT_FIELDS(Mesh, axes)
};

/// A collective operation over a group of ranks.
struct Collective {
  Indices group;              ///< participating ranks (sorted)
  CollectiveKind kind = CollectiveKind::all_reduce;  ///< operation
  Expr message_bytes;         ///< logical payload S
  Reduction reduction = Reduction::none;  ///< reduction operator
  std::string axis;           ///< mesh axis whose groups run it independently ("" = one group)
  /// Reflected fields.
  PLANCERT_FIELDS(Collective, axis, group, kind, message_bytes, reduction)
};

/// A read or write effect of a task on a state value of the ModelIR (EFFECT).
struct TaskEffect {
  EffectKind kind = EffectKind::read;  ///< read or write
  std::string value;                   ///< ModelIR value id of the state
  /// Reflected fields.
  PLANCERT_FIELDS(TaskEffect, kind, value)
};

/// A logical task run by a set of ranks.
struct DistTask {
  Attrs attrs;                            ///< annotations
  std::optional<Collective> collective;   ///< the collective, for collective tasks
  Indices dependencies;                   ///< tasks that must complete first
  std::string id;                         ///< stable id
  TaskKind kind = TaskKind::compute;      ///< task kind
  Lineage lineage;                        ///< provenance
  std::optional<Index> peer;              ///< the matching send/recv task
  Indices ranks;                          ///< ranks that run the task (sorted)
  Work work;                              ///< exact work per rank and per instance
  Phase phase = Phase::none;              ///< training / inference phase
  std::int64_t repeat = 1;                ///< identical sequential instances (one per microbatch)
  std::int64_t replication = 1;           ///< ranks of the set that compute the same values
  std::string value;                      ///< ModelIR value a collective / transfer moves ("" = none)
  std::vector<TaskEffect> effects;        ///< state effects, those of the model operation it derives from
  /// Reflected fields.
  PLANCERT_FIELDS(DistTask, attrs, collective, dependencies, effects, id, kind, lineage, peer, phase, ranks, repeat, replication, value, work)
};

/// How one ModelIR value is split over a pipeline stage's ranks.
struct Shard {
  std::string axis;        ///< mesh axis it is split along ("" = replicated)
  std::int64_t dim = -1;   ///< split dimension (-1 = replicated)
  std::int64_t pieces = 1; ///< number of pieces (the axis size)
  std::int64_t stage = 0;  ///< owning pipeline stage
  std::string value;       ///< ModelIR value id
  /// Reflected fields.
  PLANCERT_FIELDS(Shard, axis, dim, pieces, stage, value)
};

/// One step of a pipeline stage's schedule: the forward or backward pass of one model chunk
/// for one microbatch.
struct Step {
  std::int64_t chunk = 0;       ///< model chunk (interleaved schedules have several per stage)
  StepKind kind = StepKind::forward;  ///< forward or backward
  std::int64_t microbatch = 0;  ///< microbatch
  /// Reflected fields.
  PLANCERT_FIELDS(Step, chunk, kind, microbatch)
};

/// The execution order of one pipeline stage.
struct StageSchedule {
  std::int64_t chunks = 1;   ///< chunks on this stage
  std::int64_t stage = 0;    ///< pipeline stage
  std::vector<Step> steps;   ///< steps in issue order
  /// Reflected fields.
  PLANCERT_FIELDS(StageSchedule, chunks, stage, steps)
};

/// Workload dimensions of one inference phase (KV, WS): b sequences, q query tokens each
/// (prefill q = c, decode q = 1), c visible context tokens, and the model's widths.
struct InferenceShape {
  Expr batch;         ///< b
  Expr context;       ///< c: tokens the KV cache holds
  std::string dtype;  ///< element type of activations and KV cache
  Expr ffn;           ///< F
  Expr head_dim;      ///< d
  Expr heads;         ///< a: query heads
  Expr hidden;        ///< H
  Expr kv_heads;      ///< k: key/value heads (a constant)
  Expr query;         ///< q
  /// Reflected fields.
  PLANCERT_FIELDS(InferenceShape, batch, context, dtype, ffn, head_dim, heads, hidden, kv_heads, query)
};

/// Payload of a DistributedTaskIR snapshot.
struct DistributedTaskIR {
  static constexpr std::string_view kSchema = "DistributedTaskIR";  ///< schema name
  Mesh mesh;                       ///< device mesh
  std::vector<std::string> rules;  ///< declared lineage rules
  std::vector<Symbol> symbols;     ///< symbolic dimensions
  std::vector<DistTask> tasks;     ///< tasks
  std::int64_t microbatches = 1;   ///< microbatches per iteration per data-parallel replica
  std::vector<StageSchedule> schedule;  ///< per-stage pipeline schedule (empty: no pipeline)
  std::vector<Shard> shards;       ///< how model values are split over stages and ranks
  std::optional<InferenceShape> inference;  ///< the inference phase (null for training)
  /// Reflected fields.
  PLANCERT_FIELDS(DistributedTaskIR, inference, mesh, microbatches, rules, schedule, shards, symbols, tasks)
};

// ---- PortablePlanIR --------------------------------------------------------------------

/// A capability a portable task needs from a target.
struct Capability {
  std::optional<CollectiveKind> collective;  ///< collective kind, for collective capabilities
  std::string dtype;                         ///< element type ("" when irrelevant)
  CapabilityKind kind = CapabilityKind::vector;  ///< engine kind
  std::optional<Reduction> reduction;        ///< reduction, for collective capabilities
  /// Reflected fields.
  PLANCERT_FIELDS(Capability, collective, dtype, kind, reduction)
};

/// A target-neutral task with its exact work vector.
struct PortableTask {
  Attrs attrs;                        ///< annotations
  Indices dependencies;               ///< tasks that must complete first
  std::string group;                  ///< concurrency group
  std::string id;                     ///< stable id
  Indices inputs;                     ///< buffers read
  TaskKind kind = TaskKind::compute;  ///< task kind
  Lineage lineage;                    ///< provenance
  Indices outputs;                    ///< buffers written
  Indices ranks;                      ///< ranks that run the task
  std::vector<Capability> requires_;  ///< required capabilities (JSON "requires")
  Work work;                          ///< exact work per rank and per instance
  Phase phase = Phase::none;          ///< phase (copied from the distributed task)
  std::int64_t repeat = 1;            ///< identical sequential instances
  std::int64_t replication = 1;       ///< ranks of the set that compute the same values
  std::vector<TaskEffect> effects;    ///< state effects (copied from the distributed task)
  /// Reflected fields.
  static constexpr auto fields() {
    return std::tuple{field("attrs", &PortableTask::attrs), field("dependencies", &PortableTask::dependencies), field("effects", &PortableTask::effects),
                      field("group", &PortableTask::group),
                      field("id", &PortableTask::id), field("inputs", &PortableTask::inputs), field("kind", &PortableTask::kind),
                      field("lineage", &PortableTask::lineage), field("outputs", &PortableTask::outputs), field("phase", &PortableTask::phase),
                      field("ranks", &PortableTask::ranks), field("repeat", &PortableTask::repeat), field("replication", &PortableTask::replication),
                      field("requires", &PortableTask::requires_), field("work", &PortableTask::work)};
  }
};

/// An abstract buffer: size, alignment, role and lifetime (producer to consumers).
struct PortableBuffer {
  std::int64_t alignment = 1;      ///< required alignment in bytes (a power of two)
  Indices consumers;               ///< tasks that read it (sorted)
  std::string id;                  ///< stable id
  Lineage lineage;                 ///< provenance
  std::optional<Index> producer;   ///< the task that writes it, if any
  BufferRole role = BufferRole::activation;  ///< what it holds
  Expr size;                       ///< bytes
  Storage storage = Storage::transient;  ///< storage class
  /// Reflected fields.
  PLANCERT_FIELDS(PortableBuffer, alignment, consumers, id, lineage, producer, role, size, storage)
};

/// A per-stage memory fact (bytes per rank of the stage).
struct MemoryFact {
  Indices buffers;                 ///< buffers it claims (their sizes must add up to `bytes`)
  Expr bytes;                      ///< bytes per rank
  MemoryCategory category = MemoryCategory::weights;  ///< what is counted
  std::int64_t chunk = -1;         ///< model chunk, for per-microbatch activations
  std::int64_t stage = 0;          ///< pipeline stage
  /// Reflected fields.
  PLANCERT_FIELDS(MemoryFact, buffers, bytes, category, chunk, stage)
};

/// Payload of a PortablePlanIR snapshot.
struct PortablePlanIR {
  static constexpr std::string_view kSchema = "PortablePlanIR";  ///< schema name
  std::vector<PortableBuffer> buffers;  ///< abstract buffers
  std::vector<std::string> rules;       ///< declared lineage rules
  std::vector<Symbol> symbols;          ///< symbolic dimensions
  std::vector<PortableTask> tasks;      ///< tasks
  std::vector<MemoryFact> memory;       ///< per-stage memory facts (MEM)
  /// Reflected fields.
  PLANCERT_FIELDS(PortablePlanIR, buffers, memory, rules, symbols, tasks)
};

// ---- ConcretePlanIR --------------------------------------------------------------------

/// A physical device.
struct Device {
  std::string id;     ///< stable id
  std::string kind;   ///< device kind, e.g. "gpu"
  Int memory_bytes;   ///< device memory
  Indices ranks;      ///< deployment ranks that run this device's commands (sorted; empty: one abstract rank view)
  /// Reflected fields.
  PLANCERT_FIELDS(Device, id, kind, memory_bytes, ranks)
};

/// A memory region of a device: [offset, offset + capacity) of its memory.
struct Region {
  std::int64_t alignment = 1;  ///< alignment every buffer offset in it must respect
  Int capacity;                ///< bytes
  Index device = 0;            ///< owning device
  std::string id;              ///< stable id
  Int offset;                  ///< start within the device memory
  std::string space;           ///< memory space, e.g. "hbm"
  /// Reflected fields.
  PLANCERT_FIELDS(Region, alignment, capacity, device, id, offset, space)
};

/// A buffer bound to a region at an offset.
struct ConcreteBuffer {
  std::int64_t alignment = 1;  ///< required alignment
  std::string id;              ///< stable id
  Lineage lineage;             ///< provenance (the portable buffer)
  Int offset;                  ///< byte offset within the region
  Index region = 0;            ///< region
  Int size;                    ///< bytes
  Storage storage = Storage::transient;  ///< storage class (that of the portable buffer; RACE-2 pins all but transient and workspace)
  /// Reflected fields.
  PLANCERT_FIELDS(ConcreteBuffer, alignment, id, lineage, offset, region, size, storage)
};

/// A command of the authoritative plan.
struct Command {
  // Members are declared in the order the verifiers' passes read them, the index lists first, so
  // a pass touches fewer cache lines of each command; the JSON order is fields()'s.
  Indices dependencies;        ///< commands that must complete first
  Indices waits;               ///< tokens waited for before start
  Indices reads;               ///< buffers read
  Indices writes;              ///< buffers written
  Indices signals;             ///< tokens signalled on completion
  Index device = 0;            ///< device that executes it
  CommandKind kind = CommandKind::launch;  ///< command kind
  std::string id;              ///< stable id
  Name implementation;         ///< chosen implementation
  Lineage lineage;             ///< provenance (the portable task)
  Attrs attrs;                 ///< annotations
  std::int64_t repeat = 1;     ///< identical sequential instances of its portable task it runs (WORK-4)
  codec::Shared<Work> work;    ///< exact work of one instance: that of its portable task (WORK-4); shared, as plans repeat few distinct works
  /// Reflected fields.
  PLANCERT_FIELDS(Command, attrs, dependencies, device, id, implementation, kind, lineage, reads, repeat, signals, waits, work, writes)
};

/// A synchronisation token.
struct Token {
  std::string id;  ///< stable id
  /// Reflected fields.
  PLANCERT_FIELDS(Token, id)
};

/// An in-order queue of one device.
struct Queue {
  Indices commands;  ///< issue order
  Index device = 0;  ///< device
  std::string id;    ///< stable id
  QueueKind kind = QueueKind::compute;  ///< queue kind
  /// Reflected fields.
  PLANCERT_FIELDS(Queue, commands, device, id, kind)
};

/// Typed target extension for queue targets.
struct QueueSchedule {
  std::vector<Queue> queues;  ///< all queues
  /// Reflected fields.
  PLANCERT_FIELDS(QueueSchedule, queues)
};

/// Issue position of one command on a slot target.
struct Issue {
  std::int64_t cycle = 0;  ///< cycle
  std::int64_t slot = 0;   ///< slot within the cycle
  /// Reflected fields.
  PLANCERT_FIELDS(Issue, cycle, slot)
};

/// Route constraint of a transfer command.
struct Route {
  Index command = 0;      ///< the transfer command
  Index destination = 0;  ///< destination device
  Index source = 0;       ///< source device
  /// Reflected fields.
  PLANCERT_FIELDS(Route, command, destination, source)
};

/// Typed target extension for slot / dataflow targets.
struct SlotDataflow {
  std::vector<Issue> issue;      ///< issue position of command i at index i
  std::vector<Route> routes;     ///< one route per transfer command
  std::int64_t slots_per_cycle = 1;  ///< slots available in one cycle
  /// Reflected fields.
  PLANCERT_FIELDS(SlotDataflow, issue, routes, slots_per_cycle)
};

/// A value bound to a symbol of the parent PortablePlanIR: the plan is bound for this shape (CAP-4).
struct SymbolBinding {
  std::string symbol;  ///< symbol name
  Int value;           ///< its value
  /// Reflected fields.
  PLANCERT_FIELDS(SymbolBinding, symbol, value)
};

/// An engine of a device and the capabilities it runs (IMPL-2).
struct Engine {
  std::vector<Capability> capabilities;  ///< kinds, dtypes and collectives it runs
  Index device = 0;                      ///< owning device
  std::string id;                        ///< stable id
  /// Reflected fields.
  PLANCERT_FIELDS(Engine, capabilities, device, id)
};

/// A kernel or runtime routine: the name commands give as `implementation` and the
/// capabilities it provides; a command runs it on the engines of its own device (IMPL).
struct Implementation {
  std::string id;                    ///< stable id: the name commands refer to
  std::vector<Capability> provides;  ///< capabilities it provides
  /// Reflected fields.
  PLANCERT_FIELDS(Implementation, id, provides)
};

/// Memory figures of one device (CAP-5).
struct DeviceMemory {
  Index device = 0;              ///< device
  Int lower_bound_bytes;         ///< bytes of the buffers that must be live at once at `witness`
  Int peak_bytes;                ///< highest end address of the device's buffers
  std::optional<Index> witness;  ///< the command at which they are live (null: pinned buffers only)
  /// Reflected fields.
  PLANCERT_FIELDS(DeviceMemory, device, lower_bound_bytes, peak_bytes, witness)
};

/// Payload of a ConcretePlanIR snapshot.
struct ConcretePlanIR {
  static constexpr std::string_view kSchema = "ConcretePlanIR";  ///< schema name
  std::vector<ConcreteBuffer> buffers;  ///< bound buffers
  std::vector<Command> commands;        ///< commands
  std::vector<Device> devices;          ///< devices
  std::optional<QueueSchedule> queue;   ///< queue extension (target "queue")
  std::vector<Region> regions;          ///< memory regions
  std::vector<std::string> rules;       ///< declared lineage rules
  std::optional<SlotDataflow> slot;     ///< slot extension (target "slot")
  TargetKind target = TargetKind::queue;  ///< which extension is authoritative
  std::vector<Token> tokens;            ///< synchronisation tokens
  std::vector<SymbolBinding> bindings;  ///< values of the parent's symbols this plan is bound for
  std::vector<Engine> engines;          ///< engines of the devices
  std::vector<Implementation> implementations;  ///< implementations the commands name
  std::vector<DeviceMemory> memory;     ///< per-device memory figures
  std::int64_t world_size = 0;          ///< devices of the deployment (device ranks lie below it)
  /// Reflected fields.
  PLANCERT_FIELDS(ConcretePlanIR, bindings, buffers, commands, devices, engines, implementations, memory, queue, regions, rules, slot, target, tokens,
                  world_size)
};

// ---- TimelineBundle, MachineIR, ObservationSet -----------------------------------------

/// Predicted interval of one command (seconds, exact).
struct Interval {
  Index command = 0;  ///< command index in the parent ConcretePlanIR
  Rat end;            ///< end time
  Rat start;          ///< start time
  /// Reflected fields.
  PLANCERT_FIELDS(Interval, command, end, start)
};

/// Payload of a TimelineBundle: references its ConcretePlanIR by the parent digest.
struct TimelineBundle {
  static constexpr std::string_view kSchema = "TimelineBundle";  ///< schema name
  Indices critical_path;            ///< commands on the critical path
  std::string evidence;             ///< evidence fingerprint
  std::vector<Interval> intervals;  ///< one interval per command
  std::string policy;               ///< policy fingerprint
  /// Reflected fields.
  PLANCERT_FIELDS(TimelineBundle, critical_path, evidence, intervals, policy)
};

/// A target instruction or runtime call, traced to a command.
struct Instruction {
  Index command = 0;       ///< command index in the parent ConcretePlanIR
  Indices dependencies;    ///< instructions that precede it
  std::string dialect;     ///< dialect, one of the declared dialects
  std::string id;          ///< stable id
  MachineOp op = MachineOp::call;  ///< operation
  std::string target;      ///< callee or runtime entry
  std::optional<Index> token;  ///< token signalled or waited (signal/wait)
  /// Reflected fields.
  PLANCERT_FIELDS(Instruction, command, dependencies, dialect, id, op, target, token)
};

/// Payload of a MachineIR snapshot.
struct MachineIR {
  static constexpr std::string_view kSchema = "MachineIR";  ///< schema name
  std::vector<std::string> dialects;       ///< declared dialects
  Indices entry_points;                    ///< instructions with no predecessor
  std::vector<Instruction> instructions;   ///< instructions
  /// Reflected fields.
  PLANCERT_FIELDS(MachineIR, dialects, entry_points, instructions)
};

/// One measured duration.
struct Observation {
  std::string command;  ///< command id in the parent ConcretePlanIR
  Rat duration;         ///< seconds
  std::string source;   ///< profiler / revision that measured it
  /// Reflected fields.
  PLANCERT_FIELDS(Observation, command, duration, source)
};

/// Payload of an ObservationSet.
struct ObservationSet {
  static constexpr std::string_view kSchema = "ObservationSet";  ///< schema name
  std::vector<Observation> observations;  ///< observations
  /// Reflected fields.
  PLANCERT_FIELDS(ObservationSet, observations)
};

}  // namespace plancert

PLANCERT_ENUM_NAMES(plancert::LineageKind, "derived", "introduced");
PLANCERT_ENUM_NAMES(plancert::ValueRole, "activation", "constant", "gradient", "input", "output", "state", "weight");
PLANCERT_ENUM_NAMES(plancert::EffectKind, "read", "write");
PLANCERT_ENUM_NAMES(plancert::SymbolAxis, "strategy", "target", "workload");
PLANCERT_ENUM_NAMES(plancert::TaskKind, "collective", "compute", "host", "recv", "send");
PLANCERT_ENUM_NAMES(plancert::CollectiveKind, "all_gather", "all_reduce", "all_to_all", "broadcast", "reduce_scatter");
PLANCERT_ENUM_NAMES(plancert::Reduction, "max", "min", "none", "sum");
PLANCERT_ENUM_NAMES(plancert::CapabilityKind, "collective", "host", "matrix", "memory", "transfer", "vector");
PLANCERT_ENUM_NAMES(plancert::BufferRole, "activation", "gradient", "input", "kv_cache", "message", "optimizer_state", "output", "weight", "workspace");
PLANCERT_ENUM_NAMES(plancert::Storage, "constant", "input", "output", "persistent", "state", "transient", "workspace");
PLANCERT_ENUM_NAMES(plancert::CommandKind, "collective", "copy", "host", "launch", "recv", "send");
PLANCERT_ENUM_NAMES(plancert::QueueKind, "collective", "compute", "host", "transfer");
PLANCERT_ENUM_NAMES(plancert::TargetKind, "queue", "slot");
PLANCERT_ENUM_NAMES(plancert::MachineOp, "call", "copy", "signal", "wait");
PLANCERT_ENUM_NAMES(plancert::Phase, "backward_activation", "backward_weight", "forward", "none", "optimizer", "recompute");
PLANCERT_ENUM_NAMES(plancert::StepKind, "backward", "forward");
PLANCERT_ENUM_NAMES(plancert::MemoryCategory, "activations", "activations_peak", "capacity", "kv_cache", "optimizer_state", "total", "weight_gradients", "weights", "workspace");
