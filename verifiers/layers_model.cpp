// SPDX-License-Identifier: Apache-2.0
// FLOW (ModelIR), MESH (DistributedTaskIR) and BUF (PortablePlanIR) families.
#include "verifiers/layers.h"

#include <algorithm>

namespace plancert::layers {
using check::at;

void flow(check::Ctx& c, const ModelIR& m) {
  // defined[v]: index of the defining operation, or -1.
  std::vector<std::int64_t> defined(m.values.size(), -1);
  auto graph_defined = [&](Index v) {
    ValueRole r = m.values[static_cast<std::size_t>(v)].role;
    return r == ValueRole::input || r == ValueRole::weight || r == ValueRole::constant || r == ValueRole::state;
  };
  for (std::size_t i = 0; i < m.operations.size(); ++i) {
    const auto& op = m.operations[i];
    for (std::size_t k = 0; k < op.outputs.size(); ++k) {
      auto v = static_cast<std::size_t>(op.outputs[k]);
      if (graph_defined(op.outputs[k]))
        c.err("FLOW-1", at("operations", i, "outputs", static_cast<std::int64_t>(k)), "value \"" + m.values[v].id + "\" is a graph input (input, weight, constant or state) and cannot be defined by an operation");
      else if (defined[v] >= 0)
        c.err("FLOW-1", at("operations", i, "outputs", static_cast<std::int64_t>(k)), "value \"" + m.values[v].id + "\" is already defined", {"first definition at " + at("operations", static_cast<std::size_t>(defined[v]))});
    }
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      auto v = static_cast<std::size_t>(op.inputs[k]);
      if (defined[v] < 0 && !graph_defined(op.inputs[k]))
        c.err("FLOW-2", at("operations", i, "inputs", static_cast<std::int64_t>(k)), "value \"" + m.values[v].id + "\" is used before it is defined");
    }
    for (Index v : op.outputs)
      if (defined[static_cast<std::size_t>(v)] < 0 && !graph_defined(v)) defined[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(i);
  }
  for (std::size_t v = 0; v < m.values.size(); ++v)
    if (defined[v] < 0 && !graph_defined(static_cast<Index>(v)))
      c.err("FLOW-3", at("values", v), "value \"" + m.values[v].id + "\" (role " + std::string(codec::enum_name(m.values[v].role)) + ") is never defined");
}

namespace {
// MESH-2: a rank list is non-empty, strictly increasing and inside [0, world).
void rank_list(check::Ctx& c, const Indices& r, std::int64_t world, const std::string& path) {
  if (r.empty()) c.err("MESH-2", path, "the rank set is empty");
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (r[k] < 0 || r[k] >= world) c.err("MESH-2", path + "/" + std::to_string(k), "rank " + std::to_string(r[k]) + " is outside the mesh [0, " + std::to_string(world) + ")");
    else if (k > 0 && r[k] <= r[k - 1]) c.err("MESH-2", path + "/" + std::to_string(k), "rank sets must be strictly increasing");
  }
}
}  // namespace

void mesh(check::Ctx& c, const DistributedTaskIR& d) {
  std::int64_t world = 1;
  bool seen[3] = {false, false, false};
  for (std::size_t i = 0; i < d.mesh.axes.size(); ++i) {
    const auto& a = d.mesh.axes[i];
    std::string path = "/payload/mesh/axes/" + std::to_string(i);
    int which = a.name == "tp" ? 0 : a.name == "pp" ? 1 : a.name == "dp" ? 2 : -1;
    if (which < 0) c.err("MESH-1", path + "/name", "axis \"" + a.name + "\" is not one of tp, pp, dp");
    else if (seen[which]) c.err("MESH-1", path + "/name", "axis \"" + a.name + "\" appears twice");
    else seen[which] = true;
    if (a.size < 1 || a.size > (std::int64_t{1} << 24)) { c.err("MESH-1", path + "/size", "axis size must be in [1, 2^24]"); return; }
    world *= a.size;
    if (world > (std::int64_t{1} << 31)) { c.err("MESH-1", path + "/size", "the mesh has more than 2^31 ranks"); return; }
  }
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const auto& t = d.tasks[i];
    rank_list(c, t.ranks, world, at("tasks", i, "ranks"));
    if ((t.kind == TaskKind::collective) != t.collective.has_value())
      c.err("MESH-3", at("tasks", i, "collective"), t.collective ? "only collective tasks carry a collective" : "a collective task must carry its collective");
    if ((t.kind == TaskKind::send || t.kind == TaskKind::recv) != t.peer.has_value())
      c.err("MESH-3", at("tasks", i, "peer"), t.peer ? "only send and receive tasks have a peer" : "a send or receive task must name its peer");
    if (t.collective) rank_list(c, t.collective->group, world, at("tasks", i, "collective/group"));
  }
}

void buffers(check::Ctx& c, const PortablePlanIR& p) {
  const std::size_t nt = p.tasks.size(), nb = p.buffers.size();
  // BUF-1: producer <-> outputs, consumers <-> inputs (both directions, linear).
  std::vector<bool> claimed(nb, false);
  std::vector<std::uint32_t> in_off(nb + 2, 0);  // counted at b + 2, then filled at b + 1: b's readers end up in [in_off[b], in_off[b + 1])
  for (std::size_t t = 0; t < nt; ++t) {
    for (std::size_t k = 0; k < p.tasks[t].outputs.size(); ++k) {
      auto b = static_cast<std::size_t>(p.tasks[t].outputs[k]);
      if (p.buffers[b].producer != static_cast<Index>(t))
        c.err("BUF-1", at("tasks", t, "outputs", static_cast<std::int64_t>(k)), "task writes buffer \"" + p.buffers[b].id + "\" whose producer is not this task");
      else claimed[b] = true;
    }
    for (Index b : p.tasks[t].inputs) ++in_off[static_cast<std::size_t>(b) + 2];
  }
  for (std::size_t b = 0; b < nb; ++b) in_off[b + 2] += in_off[b + 1];
  std::vector<Index> readers(in_off[nb + 1]);
  for (std::size_t t = 0; t < nt; ++t)
    for (Index b : p.tasks[t].inputs) readers[in_off[static_cast<std::size_t>(b) + 1]++] = static_cast<Index>(t);
  for (std::size_t b = 0; b < nb; ++b) {
    const auto& buf = p.buffers[b];
    if (buf.producer && !claimed[b]) c.err("BUF-1", at("buffers", b, "producer"), "the producer task does not list this buffer among its outputs");
    Indices expect(readers.begin() + in_off[b], readers.begin() + in_off[b + 1]);
    if (buf.consumers != expect) {
      std::string want;
      for (Index t : expect) want += (want.empty() ? "" : ", ") + std::to_string(t);
      c.err("BUF-1", at("buffers", b, "consumers"), "consumers must be exactly the tasks that read the buffer, in index order", {"tasks reading it: [" + want + "]"});
    }
    // BUF-2: only inputs, constants, state and workspace may lack a producer; inputs and constants have none.
    bool may_lack = buf.storage == Storage::input || buf.storage == Storage::constant || buf.storage == Storage::state || buf.storage == Storage::workspace;
    if (!buf.producer && !may_lack)
      c.err("BUF-2", at("buffers", b, "producer"), "a " + std::string(codec::enum_name(buf.storage)) + " buffer must have a producer");
    if (buf.producer && (buf.storage == Storage::input || buf.storage == Storage::constant))
      c.err("BUF-2", at("buffers", b, "producer"), "an " + std::string(codec::enum_name(buf.storage)) + " buffer is given, not produced");
    // BUF-4: alignment a power of two; a concrete size a non-negative integer.
    if (buf.alignment < 1 || (buf.alignment & (buf.alignment - 1)) != 0)
      c.err("BUF-4", at("buffers", b, "alignment"), "alignment " + std::to_string(buf.alignment) + " is not a positive power of two");
    if (auto v = buf.size.constant(); v && (*v < 0 || boost::multiprecision::denominator(*v) != 1))
      c.err("BUF-4", at("buffers", b, "size"), "size " + to_string(*v) + " is not a non-negative integer");
  }
  // BUF-3: the producer of every input is a (direct) dependency of the consumer.
  std::vector<std::uint32_t> stamp(nt, UINT32_MAX);
  for (std::size_t t = 0; t < nt; ++t) {
    const auto& task = p.tasks[t];
    for (Index u : task.dependencies) stamp[static_cast<std::size_t>(u)] = static_cast<std::uint32_t>(t);
    for (std::size_t k = 0; k < task.inputs.size(); ++k) {
      const auto& buf = p.buffers[static_cast<std::size_t>(task.inputs[k])];
      if (!buf.producer) continue;
      auto prod = static_cast<std::size_t>(*buf.producer);
      if (prod == t) c.err("BUF-3", at("tasks", t, "inputs", static_cast<std::int64_t>(k)), "task reads buffer \"" + buf.id + "\" that it produces itself");
      else if (stamp[prod] != t)
        c.err("BUF-3", at("tasks", t, "inputs", static_cast<std::int64_t>(k)),
              "buffer \"" + buf.id + "\" is produced by task \"" + p.tasks[prod].id + "\", which is not a dependency of this task");
    }
  }
}

}  // namespace plancert::layers
