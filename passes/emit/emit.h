// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Emission (untrusted): snapshot files and the rendering of diagnostics.
///
/// Nothing here decides a verdict, so it lives outside the trusted base. A snapshot built or
/// written here is trusted only once the verifiers have checked it (its digest, DIGEST-1, and
/// every obligation of its layer); a rendered diagnostic only presents a finding the verifiers
/// made.
#pragma once

#include "core/diag.h"
#include "core/snapshot.h"

#include <string>
#include <vector>

namespace plancert {

/// Canonical snapshot file bytes (the stored digest is written as is).
template <class P>
std::string encode_snapshot(const Snapshot<P>& s);

/// Builds a snapshot without its digest, for Gate::commit, which seals it (computes the digest
/// once; a snapshot built with make_snapshot and then committed is encoded and hashed twice).
template <class P>
Snapshot<P> unsealed_snapshot(P payload, std::vector<std::string> parents) {
  return Snapshot<P>{std::move(parents), {}, std::string(kIrVersion), std::move(payload)};
}

/// Builds a snapshot with its digest computed (for verify_snapshot, files and tests).
template <class P>
Snapshot<P> make_snapshot(P payload, std::vector<std::string> parents) {
  Snapshot<P> s = unsealed_snapshot(std::move(payload), std::move(parents));
  s.digest = digest_of(s.payload);
  return s;
}

/// Recomputes the digest of a loaded snapshot's payload (`digest_of` it; for tests and tools:
/// the verifiers check a snapshot's digest themselves, DIGEST-1).
std::string recompute_digest(const AnySnapshot& s);

/// Renders `error[CODE] PATH: MESSAGE` (notes follow on indented lines).
std::string to_text(const Diagnostic& d);

/// Renders one diagnostic as a canonical JSON object
/// `{"code","hint","message","notes","path"}`.
std::string to_json(const Diagnostic& d);

namespace json {
/// Canonical JSON text of a string value, with its quotes (json::Writer's escapes).
std::string quote(std::string_view s);
}  // namespace json

}  // namespace plancert
