// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Internal: the groups of PassDoc records that pass_docs() assembles.
///
/// Adding a pass to the documentation: write `void add_<group>_docs(std::vector<PassDoc>&)`
/// in a new `passes/formulas/<group>_docs.cpp` (see train_docs.cpp: one PassDoc per pass, each
/// DeclaredFormula with at least one Derivation whose hook runs the pass with a symbolic
/// workload, or at concrete values), declare it below, call it from pass_docs() in formulas.cpp, and add
/// the source file and the pass's library to passes/formulas/CMakeLists.txt.
#pragma once

#include "passes/formulas/formulas.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plancert::formulas::detail {

/// The value of `key` in the instance; throws std::invalid_argument when it has none.
inline std::int64_t need(const Bindings& b, std::string_view key) {
  auto it = b.find(key);
  if (it == b.end()) throw std::invalid_argument("the instance gives no value for " + std::string(key));
  return it->second;
}

/// The value of `key` in the instance, or `fallback`.
inline std::int64_t value_or(const Bindings& b, std::string_view key, std::int64_t fallback) {
  auto it = b.find(key);
  return it == b.end() ? fallback : it->second;
}

/// A Derivation.
inline Derivation via(std::string what, std::function<Expr(const Bindings&)> hook, std::vector<Bindings> instances) {
  return Derivation{std::move(what), std::move(hook), std::move(instances)};
}

/// A DeclaredFormula with the default workload symbols and no abbreviations.
inline DeclaredFormula formula(std::string name, std::string lhs, std::string description, Expr rhs, Expr den, std::vector<Derivation> derivations) {
  DeclaredFormula f;
  f.name = std::move(name);
  f.latex_lhs = std::move(lhs);
  f.description = std::move(description);
  f.rhs = std::move(rhs);
  f.denominator = std::move(den);
  f.derivations = std::move(derivations);
  return f;
}

/// BuildModelIR, DistributeTransformerTrainingPass, PlanTransformerTrainingPass.
void add_training_docs(std::vector<PassDoc>& out);

/// DistributeTransformerInferencePass, PlanTransformerInferencePass (infer_docs.cpp).
void add_inference_docs(std::vector<PassDoc>& out);

/// BindReferenceQueueTargetPass, BindReferenceSlotTargetPass (bind_docs.cpp).
void add_binding_docs(std::vector<PassDoc>& out);

}  // namespace plancert::formulas::detail
