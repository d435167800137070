// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The trusted verifiers: snapshot obligations of every layer and transition
/// obligations against a parent snapshot. Obligation IDs are those of spec/.
///
/// Structural checks (REF, ID) run before anything that indexes through references, so a
/// malformed snapshot cannot crash a later check. Every check is linear (or n log n) in the
/// size of the snapshot, and iterative: no recursion whose depth an input controls.
#pragma once

#include "core/diag.h"
#include "core/snapshot.h"

namespace plancert {

/// Checks every snapshot obligation of `s`'s layer: DIGEST-1/2/4, ID, REF, DAG, LINEAGE-1,
/// ATTR and the layer's families (FLOW, MESH, BUF, ALIGN, CAP, QUEUE, SLOT, ROUTE, TOKEN,
/// DEADLOCK, TIME-2, MACHINE-2/3, OBS-2/3).
/// `payload_digest`: the payload's digest as decode_snapshot computed it, if the caller has it
/// (empty: recomputed here with digest_of).
Diagnostics verify_snapshot(const AnySnapshot& s, std::string_view payload_digest = {});

/// Checks the transition obligations of `child` against `parent`: DIGEST-3 (the parent's
/// digest is listed), DIGEST-5 (the parent is the layer before), LINEAGE-2 (every lineage
/// source names an entity of the parent), and every obligation whose rule in spec/ says it is
/// a transition obligation (WORK-1, DAG-4, COLL-3, REFBIND-1, TIME-1 and the others). Call it
/// only once verify_snapshot has accepted both snapshots, as `plancert verify` and the gate do:
/// the checks index into them and multiply the parent's mesh axis sizes without checking again.
Diagnostics verify_transition(const AnySnapshot& parent, const AnySnapshot& child);


}  // namespace plancert
