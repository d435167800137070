// SPDX-License-Identifier: Apache-2.0
// Declared closed forms of the reference binders (BindReferenceQueueTargetPass,
// BindReferenceSlotTargetPass): the aligned buffer recurrence and the slot issue rule. The
// hooks build small PortablePlanIRs whose buffer sizes and alignments (or task counts) come
// from the bindings, run the binder and read the offsets, alignments and issue positions
// back from the ConcretePlanIR. These quantities are target-side constants: the declared
// forms have no workload symbol, every symbol is bound in each instance.
#include "passes/formulas/registry.h"

#include "passes/bind/bind.h"

#include <functional>
#include <stdexcept>

namespace plancert::formulas::detail {
namespace binding {  // a named namespace of its own: the library may be built as one unity file
namespace {

Expr sym(const char* name) { return Expr::symbol(name); }

// ---- inputs built from the bindings ---------------------------------------------------------

// One portable buffer of the test plan: its size, its required alignment, and the task that
// reads it (its home: the binders place a buffer on the device of its first consumer).
struct Buf {
  std::int64_t size = 0;
  std::int64_t alignment = 1;
  std::int64_t reader = 0;
};

// A portable plan of `tasks` compute tasks on `ranks` ranks (task j on rank j mod ranks,
// depending on task j - 2, so that on one rank two chains interleave and the index order is
// not the dependency depth) and the given buffers, in canonical (index) order.
PortablePlanIR plan_of(const std::vector<Buf>& bufs, std::int64_t tasks, std::int64_t ranks) {
  PortablePlanIR p;
  p.rules = {"formula-check"};
  for (std::int64_t j = 0; j < tasks; ++j) {
    PortableTask t;
    t.id = "t" + std::to_string(j);
    t.kind = TaskKind::compute;
    t.phase = Phase::forward;
    t.group = "compute";
    t.ranks = {static_cast<Index>(j % ranks)};
    if (j >= 2) t.dependencies = {static_cast<Index>(j - 2)};
    t.lineage = Lineage{LineageKind::derived, "formula-check", {t.id}};
    p.tasks.push_back(std::move(t));
  }
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    if (bufs[i].reader < 0 || bufs[i].reader >= tasks) throw std::invalid_argument("a buffer reader is not a task of the plan");
    PortableBuffer b;
    b.id = "b" + std::to_string(i);
    b.role = BufferRole::activation;
    b.storage = Storage::transient;
    b.size = Expr(static_cast<long long>(bufs[i].size));
    b.alignment = bufs[i].alignment;
    b.consumers = {static_cast<Index>(bufs[i].reader)};
    b.lineage = Lineage{LineageKind::derived, "formula-check", {b.id}};
    p.tasks[static_cast<std::size_t>(bufs[i].reader)].inputs.push_back(static_cast<Index>(i));
    p.buffers.push_back(std::move(b));
  }
  return p;
}

// A reference binder: bind_reference_queue or bind_reference_slot.
using Binder = std::function<ConcretePlanIR(const PortablePlanIR&, const bind::TargetProfile&, const bind::DeploymentProfile&, const bind::SymbolValues&)>;

ConcretePlanIR bound(const Binder& binder, const PortablePlanIR& p, std::int64_t devices) {
  return binder(p, bind::permissive_target(), bind::deployment(devices), {});
}

const ConcreteBuffer& buffer(const ConcretePlanIR& c, std::size_t i) {
  if (i >= c.buffers.size()) throw std::runtime_error("ConcretePlanIR has no buffer " + std::to_string(i));
  return c.buffers[i];
}

// The offset of buffer `i`, which must be `expected` (a placement the hook relies on).
Expr placed_at(const ConcretePlanIR& c, std::size_t i, std::int64_t expected) {
  const Int o = buffer(c, i).offset;
  if (o != expected)
    throw std::invalid_argument("buffer " + std::to_string(i) + " is at " + to_string(o) + ", not at o_prev = " + std::to_string(expected) +
                                " (o_prev must be a multiple of 16)");
  return Expr(o);
}

const Issue& issue(const ConcretePlanIR& c, std::size_t i) {
  if (!c.slot || i >= c.slot->issue.size()) throw std::runtime_error("ConcretePlanIR has no slot issue position for command " + std::to_string(i));
  return c.slot->issue[i];
}

// ---- the buffer recurrence, shared by both binders -------------------------------------------

void recurrence(PassDoc& p, const Binder& binder, const std::string& pass) {
  const Expr a_i = sym("a_i"), r_i = sym("r_i"), o_prev = sym("o_prev"), s_prev = sym("s_prev");
  const std::vector<Bindings> aligns = {{{"r_i", 1}}, {{"r_i", 8}}, {{"r_i", 16}}, {{"r_i", 64}}, {{"r_i", 256}}, {{"r_i", 4096}}};
  const std::string of = " (bound by ``" + pass + "``)";

  p.formulas.push_back(formula(
      "a_i", "a_i",
      R"(Alignment of buffer :math:`i` in the bound plan: the portable buffer's required alignment :math:`r_i`, at least the 16 bytes of the reference region.)",
      Expr::max(Expr(16), r_i), Expr(1),
      {via("``alignment`` of the concrete buffer of a portable buffer of alignment :math:`r_i`" + of,
           [binder](const Bindings& b) {
             return Expr(static_cast<long long>(buffer(bound(binder, plan_of({{1, 1, 0}, {1, need(b, "r_i"), 0}}, 1, 1), 1), 1).alignment));
           },
           aligns),
       via("``offset`` of that buffer placed after a 1-byte buffer, :math:`\\lceil 1/a_i \\rceil a_i = a_i`" + of,
           [binder](const Bindings& b) { return Expr(buffer(bound(binder, plan_of({{1, 1, 0}, {1, need(b, "r_i"), 0}}, 1, 1), 1), 1).offset); }, aligns)}));

  p.formulas.push_back(formula(
      "o_0", "o_0",
      R"(Offset of the first buffer of each device (in canonical buffer order), whatever its size and alignment and whatever the buffers of the other devices.)",
      Expr(), Expr(1),
      {via("``offset`` of the first buffer of a one-device plan, of alignment :math:`r_0`" + of,
           [binder](const Bindings& b) { return Expr(buffer(bound(binder, plan_of({{40, need(b, "r_0"), 0}, {8, 1, 0}}, 1, 1), 1), 0).offset); },
           {{{"r_0", 1}}, {{"r_0", 64}}, {{"r_0", 256}}}),
       via("``offset`` of the first buffer of the second device, which follows a 1000-byte buffer of the first device in canonical order" + of,
           [binder](const Bindings& b) { return Expr(buffer(bound(binder, plan_of({{1000, 1, 0}, {8, need(b, "r_0"), 1}}, 2, 2), 2), 1).offset); },
           {{{"r_0", 1}}, {{"r_0", 64}}, {{"r_0", 256}}})}));

  // o_i from o_{i-1}, s_{i-1} and r_i: a first buffer of o_{i-1} bytes puts buffer i-1 (16-byte
  // aligned) at o_{i-1}; buffer i follows it.
  const std::vector<Bindings> steps = {{{"o_prev", 0}, {"s_prev", 1}, {"r_i", 1}},      {{"o_prev", 0}, {"s_prev", 100}, {"r_i", 64}},
                                       {{"o_prev", 256}, {"s_prev", 300}, {"r_i", 256}}, {{"o_prev", 32}, {"s_prev", 16}, {"r_i", 16}},
                                       {{"o_prev", 4096}, {"s_prev", 1}, {"r_i", 4096}}, {{"o_prev", 64}, {"s_prev", 0}, {"r_i", 1}},
                                       {{"o_prev", 48}, {"s_prev", 17}, {"r_i", 32}}};
  DeclaredFormula oi = formula(
      "o_i", "o_i",
      R"(Offset of buffer :math:`i > 0` of a device: the end :math:`o_{i-1} + s_{i-1}` of the previous buffer of the same device (:math:`s_{i-1}` its size in bytes under the plan's symbol bindings) rounded up to :math:`a_i`. Hence :math:`o_i \bmod a_i = 0` and :math:`o_i \ge o_{i-1} + s_{i-1}`; the gate re-derives it (ALIGN-3).)",
      a_i * Expr::ceil_div(o_prev + s_prev, a_i), Expr(1),
      {via("``offset`` of buffer 2 of a one-device plan whose buffer 1 (:math:`s_{i-1}` bytes) is at :math:`o_{i-1}`" + of,
           [binder](const Bindings& b) {
             const std::int64_t o = need(b, "o_prev");
             ConcretePlanIR c = bound(binder, plan_of({{o, 1, 0}, {need(b, "s_prev"), 16, 0}, {8, need(b, "r_i"), 0}}, 1, 1), 1);
             placed_at(c, 1, o);
             return Expr(buffer(c, 2).offset);
           },
           steps),
       via("the same on the first of two devices, with buffers of the second device interleaved in canonical order" + of,
           [binder](const Bindings& b) {
             const std::int64_t o = need(b, "o_prev");
             ConcretePlanIR c = bound(binder, plan_of({{o, 1, 0}, {999, 1, 1}, {need(b, "s_prev"), 16, 0}, {77, 64, 1}, {8, need(b, "r_i"), 0}}, 2, 2), 2);
             placed_at(c, 2, o);
             return Expr(buffer(c, 4).offset);
           },
           steps)});
  oi.where = {{"a_i", Expr::max(Expr(16), r_i)}};
  p.formulas.push_back(std::move(oi));
}

PassDoc binder_doc(const char* name, const char* title, const char* symbol) {
  PassDoc p;
  p.name = name;
  p.title = title;
  p.boundary = "PortablePlanIR -> ConcretePlanIR";
  p.provenance = "internal deterministic contract of the seed (the reference binders); no paper-derived algorithm is claimed";
  p.output_ir = "ConcretePlanIR";
  p.cpp_symbol = symbol;
  p.header = "passes/bind/bind.h";
  p.references = {"Internal deterministic contract, no paper: the reference binders of the seed, re-derived by the gate "
                  "(:ref:`ALIGN-3 <obligation-ALIGN-3>`, :ref:`REFBIND-1 <obligation-REFBIND-1>`; ``passes/bind/bind.h``)."};
  return p;
}

// ---- BindReferenceQueueTargetPass -----------------------------------------------------------

PassDoc queue_doc() {
  PassDoc p = binder_doc("BindReferenceQueueTargetPass", "Reference queue binding", "plancert::bind::bind_reference_queue");
  p.evidence = "transition obligations at the gate (ALIGN-1..3 aligned offsets and the reference recurrence, REFBIND-1 equality with the re-derived normal form, QUEUE order); the no-drift test";
  recurrence(p, bind::bind_reference_queue, p.name);
  return p;
}

// ---- BindReferenceSlotTargetPass ------------------------------------------------------------

PassDoc slot_doc() {
  PassDoc p = binder_doc("BindReferenceSlotTargetPass", "Reference slot binding", "plancert::bind::bind_reference_slot");
  p.evidence = "transition obligations at the gate (SLOT-1..3 issue positions, ROUTE-1/2 routes, ALIGN-1..3, REFBIND-1); the no-drift test";
  recurrence(p, bind::bind_reference_slot, p.name);

  // issue(t_i) = (cycle i, slot 0) for the portable topological order t_0, ..., t_{n-1}.
  const std::vector<Bindings> idx = {{{"i", 0}}, {{"i", 1}}, {{"i", 2}}, {{"i", 5}}, {{"i", 9}}};
  auto on = [](std::int64_t ranks, std::function<std::int64_t(const Issue&)> get) {
    return [ranks, get](const Bindings& b) {
      const std::int64_t i = need(b, "i");
      ConcretePlanIR c = bind::bind_reference_slot(plan_of({{64, 1, 0}}, i + 3, ranks), bind::permissive_target(), bind::deployment(ranks), {});
      return Expr(static_cast<long long>(get(issue(c, static_cast<std::size_t>(i)))));
    };
  };
  const char* one = "of command :math:`i` of a plan of :math:`i + 3` tasks in two interleaved dependency chains on one device (task :math:`j` depends on task :math:`j - 2`, so :math:`i` is not the dependency depth)";
  const char* two = "of command :math:`i` of the same plan with the two chains on two devices (the cycle counts the global task order, not each device's)";
  p.formulas.push_back(formula(
      "cycle", R"(\operatorname{cycle}(t_i))",
      R"(Issue cycle of task :math:`t_i` of the portable topological order :math:`T = (t_0, \dots, t_{n-1})`: :math:`\operatorname{issue}(t_i) = (\mathrm{cycle} = i, \mathrm{slot} = 0)`, so every dependency :math:`t_j \to t_i` has :math:`\operatorname{cycle}(t_j) < \operatorname{cycle}(t_i)` (SLOT-3).)",
      sym("i"), Expr(1),
      {via(std::string("``slot.issue[i].cycle`` ") + one, on(1, [](const Issue& x) { return x.cycle; }), idx),
       via(std::string("``slot.issue[i].cycle`` ") + two, on(2, [](const Issue& x) { return x.cycle; }), idx)}));
  p.formulas.push_back(formula(
      "slot", R"(\operatorname{slot}(t_i))", R"(Issue slot of task :math:`t_i`: every task issues alone in its cycle, in slot 0.)", Expr(), Expr(1),
      {via(std::string("``slot.issue[i].slot`` ") + one, on(1, [](const Issue& x) { return x.slot; }), idx),
       via(std::string("``slot.issue[i].slot`` ") + two, on(2, [](const Issue& x) { return x.slot; }), idx)}));
  return p;
}

}  // namespace
}  // namespace binding

void add_binding_docs(std::vector<PassDoc>& out) {
  out.push_back(binding::queue_doc());
  out.push_back(binding::slot_doc());
}

}  // namespace plancert::formulas::detail
