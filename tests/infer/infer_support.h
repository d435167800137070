// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Helpers shared by the inference tests.
#pragma once

#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/infer/pipeline.h"
#include "passes/infer/plan.h"

#include <filesystem>
#include <string>

namespace plancert::test {

/// Absolute path of a file of the source tree.
inline std::filesystem::path source_path(const std::string& relative) { return std::filesystem::path(PLANCERT_SOURCE_DIR) / relative; }

/// A Hugging Face example model (examples/hf/NAME.config.json).
inline frontend::ModelConfig hf(const std::string& name) { return frontend::load_model(source_path("examples/hf/" + name + ".config.json")); }

/// Device memory of the H100 80 GB system.
inline Int h100_capacity() { return frontend::load_system(source_path("examples/calculon/systems/h100_80g_nvl8.json")).mem1.capacity_bytes; }

/// A request for one phase of `model`.
inline passes::InferenceRequest request(const frontend::ModelConfig& model, passes::InferPhase phase, std::int64_t batch, std::int64_t context,
                                        std::int64_t tp = 1, std::int64_t pp = 1, Int capacity = Int(1) << 50) {
  passes::InferenceRequest r;
  r.model = model;
  r.dtype = passes::inference_dtype(model);
  r.phase = phase;
  r.batch = batch;
  r.context = context;
  r.par = {tp, pp};
  r.capacity = capacity;
  return r;
}

/// The memory fact of a stage and category (nullptr if none).
inline const MemoryFact* fact(const PortablePlanIR& p, std::int64_t stage, MemoryCategory cat) {
  for (const auto& f : p.memory)
    if (f.stage == stage && f.category == cat) return &f;
  return nullptr;
}

/// Renders diagnostics for a failure message.
inline std::string render(const Diagnostics& d) {
  std::string s;
  for (const auto& x : d.all()) s += to_text(x) + "\n";
  return s;
}

}  // namespace plancert::test
