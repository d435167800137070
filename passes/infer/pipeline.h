// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The inference pipeline through the gate (ModelIR -> DistributedTaskIR ->
/// PortablePlanIR), its symbolic memory totals, and the exact largest batch or context.
#pragma once

#include "passes/infer/distribute.h"
#include "passes/infer/model.h"
#include "verifiers/gate.h"

#include <optional>
#include <string>

namespace plancert::passes {

/// One inference phase to certify.
struct InferenceRequest {
  frontend::ModelConfig model;  ///< the model
  frontend::DType dtype = frontend::DType::BF16;  ///< serving dtype
  InferPhase phase = InferPhase::decode;  ///< prefill or decode
  Int batch = 1;                ///< b
  Int context = 1;              ///< c
  InferenceParallelism par;     ///< t and p
  Int capacity;                 ///< device memory per rank (bytes)
};

/// The committed snapshots of one phase, or the gate's rejection.
struct InferenceChain {
  std::optional<Committed<ModelIR>> model;             ///< committed ModelIR
  std::optional<Committed<DistributedTaskIR>> dist;    ///< committed DistributedTaskIR
  std::optional<Committed<PortablePlanIR>> plan;       ///< committed PortablePlanIR
  std::string rejected_pass;                           ///< pass whose output the gate refused ("" = none)
  Diagnostics rejection;                               ///< the gate's findings
  /// True when every snapshot was committed.
  [[nodiscard]] bool certified() const { return plan.has_value(); }
};

/// Runs BuildInferenceModelIR, DistributeTransformerInferencePass and
/// PlanTransformerInferencePass, committing each output through the gate.
InferenceChain derive_inference(const InferenceRequest& r);

/// What to maximise.
enum class Unknown { batch, context };

/// Result of largest_inference().
struct Largest {
  Int value;        ///< the largest batch / context that fits (0: none fits)
  bool by_limit = false;  ///< bounded by `limit` (e.g. the model's maximum positions), not by memory
};

/// The largest batch (or context) for which every stage's weights + KV cache + workspace fit
/// the capacity, with the other dimension fixed by `r`: the untrusted passes run once with the
/// unknown as a symbol, each stage's total is solved exactly with largest_fitting(), and the
/// minimum over stages is returned (at most `limit`). The caller confirms it through the gate
/// (derive_inference at the value and at the value + 1). Throws std::runtime_error when a
/// total is not of the form the solver handles.
Largest largest_inference(const InferenceRequest& r, Unknown unknown, const Int& limit);

}  // namespace plancert::passes
