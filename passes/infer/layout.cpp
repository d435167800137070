// SPDX-License-Identifier: Apache-2.0
#include "passes/infer/layout.h"

#include "passes/train/model_builder.h"

namespace plancert::passes::infer {

Layout Layout::of(const ModelIR& m, std::int64_t t, std::int64_t kv_heads) {
  Layout l;
  l.t = t;
  l.t_kv = std::min(kv_heads, t);
  l.divisor.assign(m.values.size(), 0);
  for (const auto& op : m.operations) {
    const std::string& tp = op.attrs.at("tp");
    const bool linear = op.kind == "linear";
    for (Index v : op.outputs) {
      bool split = tp == "column" || tp == "head" || (tp == "vocab" && linear);
      l.divisor[static_cast<std::size_t>(v)] = split ? t : tp == "kv" ? l.t_kv : 1;
    }
    for (std::size_t k = 0; k < op.inputs.size(); ++k) {
      auto v = static_cast<std::size_t>(op.inputs[k]);
      if (m.values[v].role != ValueRole::weight || l.divisor[v] != 0) continue;
      bool split = tp == "column" || tp == "vocab" || (tp == "row" && k == 1);
      l.divisor[v] = split ? t : tp == "kv" ? l.t_kv : 1;
    }
  }
  for (std::size_t v = 0; v < m.values.size(); ++v) {
    if (m.values[v].role == ValueRole::state) l.divisor[v] = l.t_kv;
    if (l.divisor[v] == 0) l.divisor[v] = 1;
  }
  return l;
}

std::int64_t Layout::op_divisor(const Operation& op) const {
  const std::string& tp = op.attrs.at("tp");
  return tp == "replicated" ? 1 : tp == "kv" ? t_kv : t;
}

Expr Layout::bytes(const ModelIR& m, Index v) const {
  const ModelValue& x = m.values[static_cast<std::size_t>(v)];
  return elements(x) * Expr(dtype_bytes(x.dtype)) / Rat(divisor[static_cast<std::size_t>(v)]);
}

Work Layout::work(const ModelIR& m, const Operation& op) const {
  const Rat share = make_rat(1, op_divisor(op));
  Work w;
  w.matrix_ops = op.work.matrix_ops * Expr(share);
  w.vector_ops = op.work.vector_ops * Expr(share);
  Expr outputs_full;
  for (Index v : op.inputs) {
    w.read_bytes += bytes(m, v);
    if (m.values[static_cast<std::size_t>(v)].role == ValueRole::weight) w.persistent_bytes += bytes(m, v);
  }
  for (Index v : op.outputs) {
    w.write_bytes += bytes(m, v);
    outputs_full += elements(m.values[static_cast<std::size_t>(v)]) * Expr(dtype_bytes(m.values[static_cast<std::size_t>(v)].dtype));
  }
  if (op.kind == "slice") w.read_bytes = w.write_bytes;
  w.write_bytes += (op.work.write_bytes - outputs_full) * Expr(share);  // what a cache write stores
  return w;
}

}  // namespace plancert::passes::infer
