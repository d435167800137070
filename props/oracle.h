// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Independent oracles: brute-force checkers that decide, without the verifier under
/// test, whether a mutant is really invalid.
#pragma once

#include "core/ir.h"

#include <string>

namespace plancert::props {

/// Independent all-pairs race checker (O(C^2 + B^2 + C x E) with a full transitive closure;
/// small plans only): true when two different commands access one buffer, one writing,
/// unordered by happens-before (dependencies, in-order queues, token signal -> wait), or two
/// overlapping buffers of one device (pinned or accessed) have a pinned one or lifetimes not
/// ordered as wholes. `why` gets a description. Shares no code with verifiers/layers_bind.cpp.
bool brute_force_race(const ConcretePlanIR& plan, std::string* why = nullptr);

}  // namespace plancert::props
