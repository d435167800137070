// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Uniform handling of snapshots of any layer in properties: wrapping into
/// AnySnapshot, resealing digests, running verify_snapshot + verify_transition, and sending
/// a chain through the Gate.
#pragma once

#include "props/generators.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <optional>
#include <set>
#include <string>

namespace plancert::props {

/// Wraps a typed snapshot.
template <class P>
AnySnapshot any(Snapshot<P> s) { return AnySnapshot(std::move(s)); }

/// Recomputes the stored digest of a snapshot from its payload (after a payload edit).
void reseal(AnySnapshot& s);

/// The stored digest of any snapshot.
const std::string& digest_of_any(const AnySnapshot& s);
/// The parent digests of any snapshot.
std::vector<std::string>& parents_of(AnySnapshot& s);

/// Canonical file bytes of any snapshot.
std::string encode_any(const AnySnapshot& s);

/// verify_snapshot(child), then verify_transition(*parent, child) when a parent is given.
Diagnostics verify_pair(const AnySnapshot* parent, const AnySnapshot& child);

/// verify_pair for every snapshot of the chain against its parent.
Diagnostics verify_chain(const Chain& c);

/// Commits the chain through the Gate, root first. When `top` is given it replaces the
/// chain's top snapshot (which must be of the same layer); `w` is handed to the gate with
/// the top snapshot. Returns the rejection's diagnostics (empty when everything committed).
Diagnostics commit_chain(const Chain& c, const std::optional<AnySnapshot>& top = std::nullopt, const Witnesses& w = {});

/// The set of codes of the diagnostics.
std::set<std::string> codes_of(const Diagnostics& d);

/// All diagnostics as text, one per line (for failure messages).
std::string render(const Diagnostics& d);

}  // namespace plancert::props
