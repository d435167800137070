// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Mutation operators: each takes a valid chain (parent + child) and breaks exactly
/// one obligation of the trusted core, so a property can check that the verifiers reject
/// the mutant with that obligation's code and no other.
///
/// Four kinds of mutant:
/// - a payload edit of the child (the digest is recomputed with digest_of, except by the
///   DIGEST mutations), checked with verify_snapshot + verify_transition;
/// - a replaced parent (DIGEST-5), checked with verify_transition;
/// - a wrong topological-order witness handed to the Gate with the unchanged child (DAG-3);
/// - edited canonical bytes (JSON-*, SCHEMA-*), which decode_snapshot must refuse with an
///   InputError carrying the code.
#pragma once

#include "props/any.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace plancert::props {

/// What a mutation operator produces.
struct Mutant {
  AnySnapshot child;                          ///< the mutated (or, for DAG-3 and bytes, unchanged) child
  std::optional<AnySnapshot> parent;          ///< replaces the chain's parent (DIGEST-5)
  std::optional<Indices> topological_order;   ///< a witness handed to the Gate (DAG-3)
  std::optional<std::string> bytes;           ///< edited snapshot file bytes (JSON-*, SCHEMA-*)
};

/// An operator: (parent or null for a root, child, random choice) -> mutant, or nullopt
/// when this input offers nothing to mutate (the property discards the case).
using MutateFn = std::function<std::optional<Mutant>(const AnySnapshot* parent, const AnySnapshot& child, std::uint64_t pick)>;

/// One entry of the catalog.
struct Mutation {
  std::string name;                   ///< unique operator name, e.g. "duplicate_id.concrete"
  std::string code;                   ///< the obligation ID the mutant must trip
  std::string layer;                  ///< schema name of the child it applies to, or "*" (any layer)
  MutateFn apply;                     ///< the operator
  std::vector<std::string> implied;   ///< codes the verifiers necessarily report with `code`
  std::optional<TargetKind> target;   ///< concrete target the operator needs, if any
  bool inference = false;             ///< needs an inference chain (a model with a KV-cache state)
  /// Needs a chain derived by the training passes (ModelIR -> DistributedTaskIR with declared
  /// tensor-parallel layouts) instead of a generated one (see chain_for in props/harness.h).
  bool derived = false;
  /// Independent oracle for operators whose mutants can be harmless: true when the mutant is
  /// really valid (then its acceptance is correct). Empty: every mutant must be rejected.
  std::function<bool(const AnySnapshot* parent, const AnySnapshot& mutant)> valid;
};

/// Removes task `r` of `d` and keeps the rest well formed, as a pass that forgot the task
/// would emit it: a task that depended on `r` now depends on `r`'s own dependencies (every
/// ordering through `r` survives), and indices above `r` are renumbered (dependencies, peers).
void drop_task(DistributedTaskIR& d, std::size_t r);

/// The catalog: at least one operator for every obligation ID the trusted core emits.
const std::vector<Mutation>& catalog();

/// How the trusted core reacts to a mutant.
struct Verdict {
  std::set<std::string> codes;  ///< codes of every finding (empty: accepted)
  std::string text;             ///< the findings, for failure messages
};

/// Runs the mutant through the trusted core: decode_snapshot for bytes, the Gate for a
/// witness, verify_snapshot + verify_transition otherwise (against the replaced parent when
/// the mutant has one).
Verdict judge(const Chain& c, const Mutant& m);

/// Codes the Gate reports when the chain with `m.child` on top is committed (used to check
/// that the gate agrees with the verifiers on payload mutants).
Verdict judge_gate(const Chain& c, const Mutant& m);

}  // namespace plancert::props
