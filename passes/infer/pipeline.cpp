// SPDX-License-Identifier: Apache-2.0
#include "passes/infer/pipeline.h"

#include "passes/emit/emit.h"
#include "passes/infer/plan.h"
#include "passes/infer/solve.h"

#include <stdexcept>

namespace plancert::passes {
namespace {

InferenceWorkload workload(const InferenceRequest& r, std::optional<Unknown> symbolic) {
  InferenceWorkload w;
  w.phase = r.phase;
  w.batch = Expr(r.batch);
  w.context = Expr(r.context);
  if (symbolic) {
    const std::string name = *symbolic == Unknown::batch ? "b" : "c";
    (*symbolic == Unknown::batch ? w.batch : w.context) = Expr::symbol(name);
    Symbol s;
    s.name = name;
    s.axis = SymbolAxis::workload;
    w.symbols.push_back(s);
  }
  return w;
}

}  // namespace

InferenceChain derive_inference(const InferenceRequest& r) {
  InferenceChain out;
  const InferenceWorkload w = workload(r, std::nullopt);
  auto refuse = [&](const Rejection& rej, const char* pass) {
    out.rejected_pass = pass;
    out.rejection = rej.diagnostics;
    return out;
  };
  auto m = Gate::commit_root(unsealed_snapshot(build_inference_model_ir(r.model, w, r.dtype), {}));
  if (auto* x = std::get_if<Rejection>(&m)) return refuse(*x, "BuildInferenceModelIR");
  out.model = std::get<Committed<ModelIR>>(m);
  auto d = Gate::commit(*out.model, unsealed_snapshot(distribute_inference(out.model->payload(), r.model, w, r.par), {out.model->digest()}));
  if (auto* x = std::get_if<Rejection>(&d)) return refuse(*x, "DistributeTransformerInferencePass");
  out.dist = std::get<Committed<DistributedTaskIR>>(d);
  auto p = Gate::commit(*out.dist, unsealed_snapshot(plan_inference(out.model->payload(), out.dist->payload(), r.capacity), {out.dist->digest()}));
  if (auto* x = std::get_if<Rejection>(&p)) return refuse(*x, "PlanTransformerInferencePass");
  out.plan = std::get<Committed<PortablePlanIR>>(p);
  return out;
}

Largest largest_inference(const InferenceRequest& r, Unknown unknown, const Int& limit) {
  const InferenceWorkload w = workload(r, unknown);
  const ModelIR m = build_inference_model_ir(r.model, w, r.dtype);
  const DistributedTaskIR d = distribute_inference(m, r.model, w, r.par);
  const PortablePlanIR p = plan_inference(m, d, r.capacity);
  Int best = limit;
  for (const auto& f : p.memory) {
    if (f.category != MemoryCategory::total) continue;
    auto v = largest_fitting(f.bytes, unknown == Unknown::batch ? "b" : "c", r.capacity, limit);
    if (!v) throw std::runtime_error("the memory total of stage " + std::to_string(f.stage) + " is not solvable exactly: " + f.bytes.str());
    if (*v < best) best = *v;
  }
  Largest out;
  out.by_limit = best == limit;
  out.value = best < 0 ? Int(0) : best;
  return out;
}

}  // namespace plancert::passes
