// SPDX-License-Identifier: Apache-2.0
#include "passes/infer/plan.h"

#include "passes/infer/layout.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"

#include <map>
#include <stdexcept>

namespace plancert::passes {
namespace {

std::int64_t mesh_axis(const Mesh& m, std::string_view name) {
  for (const auto& a : m.axes)
    if (a.name == name) return a.size;
  return 1;
}

std::vector<Capability> requirements(const DistTask& t, const std::string& dtype) {
  if (t.kind == TaskKind::collective) return {Capability{t.collective->kind, "", CapabilityKind::collective, t.collective->reduction}};
  if (t.kind == TaskKind::send || t.kind == TaskKind::recv) return {Capability{std::nullopt, "", CapabilityKind::transfer, std::nullopt}};
  std::vector<Capability> r;
  if (t.work.matrix_ops != Expr()) r.push_back(Capability{std::nullopt, dtype, CapabilityKind::matrix, std::nullopt});
  if (t.work.vector_ops != Expr()) r.push_back(Capability{std::nullopt, dtype, CapabilityKind::vector, std::nullopt});
  if (r.empty()) r.push_back(Capability{std::nullopt, dtype, CapabilityKind::memory, std::nullopt});
  return r;
}

}  // namespace

Expr workspace_bound(const InferenceShape& s, std::int64_t t) {
  const Expr e(dtype_bytes(s.dtype)), inv(make_rat(1, t)), bq = s.batch * s.query;
  return bq * s.hidden * e + e * Expr::max(Expr::max(Expr(3) * bq * s.hidden * inv, s.batch * s.heads * inv * s.query * s.context), bq * s.ffn * inv);
}

PortablePlanIR plan_inference(const ModelIR& m, const DistributedTaskIR& d, const Int& capacity) {
  if (!d.inference || !d.inference->kv_heads.constant()) throw std::invalid_argument("plan_inference: the distributed plan has no inference shape");
  const InferenceShape& shape = *d.inference;
  const std::int64_t t = mesh_axis(d.mesh, "tp"), stages = mesh_axis(d.mesh, "pp");
  const auto layout = infer::Layout::of(m, t, static_cast<std::int64_t>(numerator(*shape.kv_heads.constant())));
  std::map<std::string, std::size_t, std::less<>> op_of, value_of;
  for (std::size_t i = 0; i < m.operations.size(); ++i) op_of[m.operations[i].id] = i;
  for (std::size_t i = 0; i < m.values.size(); ++i) value_of[m.values[i].id] = i;

  PortablePlanIR p;
  p.rules = {"infer.plan.task", "infer.plan.buffer"};
  p.symbols = d.symbols;
  for (const auto& dt : d.tasks) {
    PortableTask pt = portable_task(dt, "infer.plan.task");
    pt.requires_ = requirements(dt, shape.dtype);
    p.tasks.push_back(std::move(pt));
  }

  // Buffers, each made when its first user is met (its lineage source).
  std::map<std::string, Index> made;
  std::vector<std::array<Indices, 3>> per_stage(static_cast<std::size_t>(stages));  // weights, kv_cache, workspace
  auto buffer = [&](const std::string& id, BufferRole role, Storage storage, const Expr& size, std::size_t user, int fact) {
    auto [it, fresh] = made.try_emplace(id, static_cast<Index>(p.buffers.size()));
    if (fresh) {
      PortableBuffer b;
      b.id = id;
      b.role = role;
      b.storage = storage;
      b.size = size;
      b.alignment = 256;
      b.lineage = Lineage{LineageKind::derived, "infer.plan.buffer", {d.tasks[user].id}};
      p.buffers.push_back(std::move(b));
      if (fact >= 0) per_stage[static_cast<std::size_t>(d.tasks[user].ranks.front() / t)][static_cast<std::size_t>(fact)].push_back(it->second);
    }
    return it->second;
  };
  auto read = [&](std::size_t task, Index buf) {
    p.tasks[task].inputs.push_back(buf);
    p.buffers[static_cast<std::size_t>(buf)].consumers.push_back(static_cast<Index>(task));
  };
  const Expr ws = workspace_bound(shape, t);
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    const DistTask& dt = d.tasks[i];
    if (dt.kind != TaskKind::compute) continue;
    const std::string st = "s" + std::to_string(dt.ranks.front() / t);
    const Operation& op = m.operations[op_of.at(dt.lineage.sources.at(0))];
    for (Index v : op.inputs) {
      const ModelValue& x = m.values[static_cast<std::size_t>(v)];
      if (x.role == ValueRole::weight) read(i, buffer("w:" + st + ":" + x.id, BufferRole::weight, Storage::constant, layout.bytes(m, v), i, 0));
      if (x.role == ValueRole::input) read(i, buffer("in:" + x.id, BufferRole::input, Storage::input, elements(x) * Expr(dtype_bytes(x.dtype)), i, -1));
    }
    for (const auto& e : dt.effects)
      read(i, buffer("kv:" + st + ":" + e.value, BufferRole::kv_cache, Storage::state, layout.bytes(m, static_cast<Index>(value_of.at(e.value))), i, 1));
    read(i, buffer("ws:" + st, BufferRole::workspace, Storage::workspace, ws, i, 2));
  }
  // The model's output: made by the last task that produces (or gathers) the output value.
  for (std::size_t v = 0; v < m.values.size(); ++v) {
    if (m.values[v].role != ValueRole::output) continue;
    std::int64_t producer = -1;
    for (std::size_t i = 0; i < d.tasks.size(); ++i) {
      const DistTask& dt = d.tasks[i];
      bool makes = dt.kind == TaskKind::collective && dt.value == m.values[v].id;
      if (dt.kind == TaskKind::compute) {
        const auto& outs = m.operations[op_of.at(dt.lineage.sources.at(0))].outputs;
        makes = std::find(outs.begin(), outs.end(), static_cast<Index>(v)) != outs.end();
      }
      if (makes) producer = static_cast<std::int64_t>(i);
    }
    if (producer < 0) continue;
    Index b = buffer("out:" + m.values[v].id, BufferRole::output, Storage::output, elements(m.values[v]) * Expr(dtype_bytes(m.values[v].dtype)),
                     static_cast<std::size_t>(producer), -1);
    p.buffers[static_cast<std::size_t>(b)].producer = producer;
    p.tasks[static_cast<std::size_t>(producer)].outputs.push_back(b);
  }

  // Memory facts per stage.
  const MemoryCategory kCat[3] = {MemoryCategory::weights, MemoryCategory::kv_cache, MemoryCategory::workspace};
  for (std::int64_t s = 0; s < stages; ++s) {
    Expr total;
    for (int k = 0; k < 3; ++k) {
      MemoryFact f;
      f.stage = s;
      f.category = kCat[k];
      f.buffers = per_stage[static_cast<std::size_t>(s)][static_cast<std::size_t>(k)];
      for (Index b : f.buffers) f.bytes += p.buffers[static_cast<std::size_t>(b)].size;
      total += f.bytes;
      p.memory.push_back(std::move(f));
    }
    p.memory.push_back(MemoryFact{{}, total, MemoryCategory::total, -1, s});
    p.memory.push_back(MemoryFact{{}, Expr(capacity), MemoryCategory::capacity, -1, s});
  }
  return p;
}

}  // namespace plancert::passes
