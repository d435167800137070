// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Snapshot envelopes, canonical snapshot files and BLAKE2b-256 digests.
///
/// A snapshot file is `{"digest", "parents", "payload", "schema", "version"}`. Its digest is
/// the lowercase hex BLAKE2b-256 (libsodium crypto_generichash, 32 bytes, no key) of
/// `plancert/` + schema + `\0` + canonical JSON of the payload. Loading recomputes it.
#pragma once

#include "core/codec.h"
#include "core/ir.h"

#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace plancert {

/// Version written into every snapshot; loading accepts major 1, minor <= this minor.
inline constexpr std::string_view kIrVersion = "1.0.0";

/// A snapshot of one IR layer: envelope plus typed payload.
template <class P>
struct Snapshot {
  std::vector<std::string> parents;  ///< digests of the snapshots this one derives from
  std::string digest;                ///< digest as stored in the file (checked by DIGEST-1)
  std::string version{kIrVersion};   ///< IR version
  P payload;                         ///< the typed payload
};

/// A snapshot of any layer.
using AnySnapshot = std::variant<Snapshot<ModelIR>, Snapshot<DistributedTaskIR>, Snapshot<PortablePlanIR>, Snapshot<ConcretePlanIR>,
                                 Snapshot<TimelineBundle>, Snapshot<MachineIR>, Snapshot<ObservationSet>>;

/// Schema name of any snapshot.
std::string_view schema_of(const AnySnapshot& s);

/// Hex digest of `plancert/` + schema + NUL + `canonical_payload`.
std::string digest_bytes(std::string_view schema, std::string_view canonical_payload);

/// Digest of a payload (streams the canonical encoding into the hash; no full copy).
template <class P>
std::string digest_of(const P& payload);

/// Parses a snapshot file. Throws InputError (JSON-*, SCHEMA-*: exit code 2) when the
/// text is not a well-formed snapshot; digest and obligations are checked by verifiers.
/// When `payload_digest` is given it receives the digest of the decoded payload: BLAKE2b of
/// the payload bytes as read when they are canonical (the reader proves it: no whitespace, no
/// escape, keys in order; numbers and enums only decode from canonical text), else of its
/// re-encoding. Either way it equals `digest_of` the decoded payload.
AnySnapshot decode_snapshot(std::string_view text, std::string* payload_digest = nullptr);

/// True for a well-formed digest: 64 lowercase hex digits.
bool is_digest(std::string_view d);

}  // namespace plancert
