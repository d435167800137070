// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Which obligations the gate checks to commit a snapshot of each layer (a report: the
/// gate runs verify_snapshot() and verify_transition(), and does not consult this list).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace plancert {

/// Obligation IDs checked for a snapshot of variant index `layer` (see AnySnapshot), with or
/// without the transition obligations against a parent.
const std::vector<std::string_view>& obligations_checked(std::size_t layer, bool transition);

}  // namespace plancert
