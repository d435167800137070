// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The gate: the one way into the trusted state. A Committed<P> exists only if the
/// gate verified the snapshot's own obligations and its transition from a committed parent.
#pragma once

#include "core/diag.h"
#include "core/snapshot.h"

#include <memory>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace plancert {

class Gate;

/// A verified snapshot. Only the Gate constructs one; copies share the immutable snapshot.
template <class P>
class Committed {
 public:
  /// The verified snapshot.
  [[nodiscard]] const Snapshot<P>& snapshot() const { return *s_; }
  /// Its payload.
  [[nodiscard]] const P& payload() const { return s_->payload; }
  /// Its digest.
  [[nodiscard]] const std::string& digest() const { return s_->digest; }

 private:
  friend class Gate;
  explicit Committed(Snapshot<P> s) : s_(std::make_shared<const Snapshot<P>>(std::move(s))) {}
  std::shared_ptr<const Snapshot<P>> s_;
};

/// Why the gate refused a snapshot.
struct Rejection {
  Diagnostics diagnostics;  ///< every finding
};

/// Witnesses an untrusted pass may hand the gate. The gate checks them; it never trusts them.
struct Witnesses {
  /// A claimed topological order of the snapshot's tasks / commands / instructions (DAG-3).
  std::optional<Indices> topological_order;
};

/// Result of a commit.
template <class P>
using CommitResult = std::variant<Committed<P>, Rejection>;

/// The commit gate.
///
/// A snapshot handed over with an empty digest (an *unsealed* snapshot, as the in-process
/// pipelines build them: emit.h's unsealed_snapshot) is sealed here: the gate computes its
/// digest from its payload, once, and verifies it with that digest, which DIGEST-1 then holds
/// by construction. A snapshot that carries a digest (one read from a file, or built with
/// make_snapshot) has it checked against the payload as `plancert verify` does. Sealing in the
/// gate spares the pipeline one canonical encoding and hash of every snapshot (for a bound plan
/// of millions of commands, seconds).
class Gate {
 public:
  /// Commits a root snapshot (ModelIR), sealing it when unsealed.
  static CommitResult<ModelIR> commit_root(Snapshot<ModelIR> s, const Witnesses& w = {});
  /// Commits `s` as a child of the committed `parent`, sealing it when unsealed.
  template <class P, class Q>
  static CommitResult<P> commit(const Committed<Q>& parent, Snapshot<P> s, const Witnesses& w = {});
};

/// MEM-2's reference: the peak over a stage schedule of the activations of the in-flight
/// (chunk, microbatch) pairs, given one microbatch's activation bytes per chunk; nullopt when
/// chunks of different symbolic sizes make the maximum undecidable by normalisation alone.
std::optional<Expr> schedule_peak(const StageSchedule& s, const std::vector<Expr>& chunk_bytes);

/// Bytes per element of a ModelIR dtype name ("bf16", "fp16": 2; "fp32", "i32": 4; "u8": 1).
std::optional<std::int64_t> dtype_size(std::string_view dtype);

/// DAG-3: checks a claimed topological order of `n` entities with the given dependency lists.
void check_topological_witness(Diagnostics& d, const Indices& order, const std::vector<const Indices*>& deps, std::string_view array);

}  // namespace plancert
