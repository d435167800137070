// SPDX-License-Identifier: Apache-2.0
// BindReferenceQueueTargetPass and BindReferenceSlotTargetPass (see bind.h).
#include "passes/bind/common.h"

#include <map>

namespace plancert::bind {
namespace {

ConcretePlanIR reference(const PortablePlanIR& p, const TargetProfile& t, const DeploymentProfile& dep, const SymbolValues& values, TargetKind target) {
  using namespace detail;
  const std::size_t nt = p.tasks.size();
  for (std::size_t i = 0; i < nt; ++i)
    for (Index u : p.tasks[i].dependencies)
      if (static_cast<std::size_t>(u) >= i) throw BindError("task \"" + p.tasks[i].id + "\" depends on a later task: the reference binders need tasks in topological order");
  ConcretePlanIR c;
  c.target = target;
  c.rules = {"bind.reference.buffer", "bind.reference.task"};
  c.world_size = dep.devices;
  c.bindings = binding_list(p, values);
  Placement pl = reference_devices(p, t);
  c.devices = pl.devices;
  for (std::size_t d = 0; d < c.devices.size(); ++d)  // the contract fixes the region: "hbm", alignment 16
    c.regions.push_back(Region{16, c.devices[d].memory_bytes, static_cast<Index>(d), "r:" + c.devices[d].id, Int(0), "hbm"});
  const std::vector<std::string> impl = add_engines_and_implementations(c, p, t);
  // Buffers: the aligned recurrence per home device, in canonical order.
  const std::vector<Int> sizes = buffer_sizes(p, values);
  const auto by_source = tasks_by_source(p);
  std::vector<Int> end(c.devices.size(), 0);
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    const auto& pb = p.buffers[b];
    const std::int64_t home = home_task(p, b, by_source);
    const Index d = home < 0 ? 0 : pl.of_task[static_cast<std::size_t>(home)].front();
    const std::int64_t a = std::max<std::int64_t>(16, pb.alignment);
    Int o = (end[static_cast<std::size_t>(d)] + a - 1) / a * a;  // o_i = ceil((o_{i-1} + s_{i-1}) / a_i) a_i
    end[static_cast<std::size_t>(d)] = o + sizes[b];
    c.buffers.push_back(ConcreteBuffer{a, "cb:" + pb.id, Lineage{LineageKind::derived, "bind.reference.buffer", {pb.id}}, o, d, sizes[b], pb.storage});
  }
  // Commands: one per task, in the (topological) task order.
  const std::vector<codec::Shared<Work>> works = shared_works(p);
  for (std::size_t i = 0; i < nt; ++i) {
    const auto& pt = p.tasks[i];
    Command cmd;
    cmd.id = "c:" + pt.id;
    cmd.kind = command_kind(pt.kind);
    cmd.device = pl.of_task[i].front();
    cmd.dependencies = pt.dependencies;
    cmd.reads = pt.inputs;
    cmd.writes = pt.outputs;
    cmd.implementation = impl[i];
    cmd.lineage = Lineage{LineageKind::derived, "bind.reference.task", {pt.id}};
    cmd.repeat = pt.repeat;
    cmd.work = works[i];
    c.commands.push_back(std::move(cmd));
  }
  if (target == TargetKind::queue) {
    // Partition into queues by (device, kind); each queue keeps the task order.
    std::map<std::pair<Index, QueueKind>, Indices> qs;
    for (std::size_t i = 0; i < nt; ++i) qs[{c.commands[i].device, queue_kind(c.commands[i].kind)}].push_back(static_cast<Index>(i));
    c.queue.emplace();
    for (auto& [key, cmds] : qs)
      c.queue->queues.push_back(Queue{std::move(cmds), key.first, "q:" + c.devices[static_cast<std::size_t>(key.first)].id + ":" + std::string(codec::enum_name(key.second)), key.second});
  } else {
    // issue(t_i) = (i, 0); a transfer is routed between its device and its peer's.
    std::vector<Index> peer(nt, -1);
    for (std::size_t i = 0; i < nt; ++i)
      for (Index u : p.tasks[i].dependencies)
        if (p.tasks[i].kind == TaskKind::recv && p.tasks[static_cast<std::size_t>(u)].kind == TaskKind::send) {
          if (peer[i] < 0) peer[i] = c.commands[static_cast<std::size_t>(u)].device;
          if (peer[static_cast<std::size_t>(u)] < 0) peer[static_cast<std::size_t>(u)] = c.commands[i].device;
        }
    c.slot.emplace();
    for (std::size_t i = 0; i < nt; ++i) {
      c.slot->issue.push_back(Issue{static_cast<std::int64_t>(i), 0});
      const Index own = c.commands[i].device, other = peer[i] < 0 ? own : peer[i];
      if ((p.tasks[i].kind == TaskKind::send || p.tasks[i].kind == TaskKind::recv) && other == own)
        throw BindError("transfer task \"" + p.tasks[i].id + "\" has no peer on another device: a slot route needs two devices (ROUTE-2)");
      if (p.tasks[i].kind == TaskKind::send) c.slot->routes.push_back(Route{static_cast<Index>(i), other, own});
      if (p.tasks[i].kind == TaskKind::recv) c.slot->routes.push_back(Route{static_cast<Index>(i), own, other});
    }
  }
  fill_memory(c);
  return c;
}

}  // namespace

ConcretePlanIR bind_reference_queue(const PortablePlanIR& p, const TargetProfile& t, const DeploymentProfile& d, const SymbolValues& values) {
  return reference(p, t, d, values, TargetKind::queue);
}

ConcretePlanIR bind_reference_slot(const PortablePlanIR& p, const TargetProfile& t, const DeploymentProfile& d, const SymbolValues& values) {
  return reference(p, t, d, values, TargetKind::slot);
}

SymbolValues default_bindings(const PortablePlanIR& p, std::int64_t at_least) {
  SymbolValues out;
  for (const auto& s : p.symbols) {
    Int v = s.min;  // the least allowed value >= at_least (named temporaries: no GCC 12 -Wmaybe-uninitialized)
    if (v < at_least) v = at_least;
    const Int div = s.divisible_by < 1 ? Int(1) : s.divisible_by;
    v = (v + div - 1) / div * div;
    if (s.max && v > *s.max) v = *s.max / div * div;
    out[s.name] = v;
  }
  return out;
}

std::vector<DeviceFigures> figures(const ConcretePlanIR& plan) {
  std::vector<DeviceFigures> out;
  for (const auto& m : plan.memory) {
    DeviceFigures f;
    f.device = m.device;
    f.peak_bytes = m.peak_bytes;
    f.lower_bound = m.lower_bound_bytes;
    f.capacity_bytes = plan.devices[static_cast<std::size_t>(m.device)].memory_bytes;
    for (const auto& b : plan.buffers) {
      const auto& r = plan.regions[static_cast<std::size_t>(b.region)];
      if (r.device != m.device) continue;
      const std::int64_t a = std::max(b.alignment, r.alignment);
      f.naive_bytes = (f.naive_bytes + a - 1) / a * a + b.size;
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace plancert::bind
