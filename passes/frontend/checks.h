// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Source-independent consistency checks shared by the loaders (detail).
#pragma once

#include "passes/frontend/configs.h"

namespace plancert::frontend::detail {

/// Internal consistency of a strategy, whatever its source (CONFIG-5): the
/// rank count, batch divisibility, schedule / interleaving, sequence
/// parallelism / TP communication type, and the Calculon option constraints.
/// Messages name the fields through the record's provenance.
void check_strategy(const StrategyConfig& s);

}  // namespace plancert::frontend::detail
