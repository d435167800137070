// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Internal: the groups of PassDoc records that pass_docs() assembles.
///
/// Adding a pass to the documentation: write `void add_<group>_docs(std::vector<PassDoc>&)`
/// in a new `passes/formulas/<group>_docs.cpp` (see train_docs.cpp: one PassDoc per pass, each
/// DeclaredFormula with at least one Derivation whose hook runs the pass with symbolic
/// \f$B\f$ and \f$s\f$), declare it below, call it from pass_docs() in formulas.cpp, and add
/// the source file and the pass's library to passes/formulas/CMakeLists.txt.
#pragma once

#include "passes/formulas/formulas.h"

#include <vector>

namespace plancert::formulas::detail {

/// BuildModelIR, DistributeTransformerTrainingPass, PlanTransformerTrainingPass.
void add_training_docs(std::vector<PassDoc>& out);

}  // namespace plancert::formulas::detail
