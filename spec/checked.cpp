// SPDX-License-Identifier: Apache-2.0
// The obligation IDs the gate runs per layer: a report for the CLI and the formulas documentation,
// kept beside the catalog (the gate itself does not consult it).
#include "spec/checked.h"

#include <array>

namespace plancert {
namespace {

using Ids = std::vector<std::string_view>;
const Ids kCommon = {"DIGEST-1", "DIGEST-2", "DIGEST-4", "ID-1", "ID-2", "LINEAGE-1", "SYM-1", "SYM-2", "SYM-3"};
const Ids kTransition = {"DIGEST-3", "DIGEST-5", "LINEAGE-2"};

// Per layer (AnySnapshot index): the snapshot's own obligations beyond kCommon, and those of its
// transition from a parent beyond kTransition.
const std::array<Ids, 7> kOwn = {
    Ids{"ATTR-1", "REF-1", "REF-2", "FLOW-1", "FLOW-2", "FLOW-3"},
    Ids{"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "MESH-1", "MESH-2", "MESH-3", "WORK-3", "COLL-1", "COLL-2", "COLL-4", "COLL-5", "P2P-1", "P2P-2", "P2P-3", "SCHED-1",
        "EFFECT-2", "EFFECT-3"},
    Ids{"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "BUF-1", "BUF-2", "BUF-3", "BUF-4", "MEM-1", "MEM-3", "WORK-3", "EFFECT-2", "EFFECT-3", "CAPM-1", "CAPM-2"},
    Ids{"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "ALIGN-1", "ALIGN-2", "CAP-1", "CAP-2", "CAP-3", "QUEUE-1", "QUEUE-2", "QUEUE-3", "QUEUE-4", "SLOT-1", "SLOT-2",
        "SLOT-3", "ROUTE-1", "ROUTE-2", "TOKEN-1", "TOKEN-2", "DEADLOCK-1", "IMPL-2", "RACE-1", "RACE-2", "RACE-3", "CAP-5"},
    Ids{"TIME-2"},
    Ids{"REF-1", "REF-2", "DAG-1", "DAG-2", "MACHINE-2", "MACHINE-3", "MACHINE-4"},
    Ids{"OBS-2", "OBS-3"}};
const std::array<Ids, 7> kAgainstParent = {
    Ids{},
    Ids{"WORK-2", "COLL-3", "COLL-6", "VOL-1", "SHARD-1", "SHARD-2", "SHARD-3", "SHARD-4", "EFFECT-1", "KV-1", "WS-1"},
    Ids{"WORK-1", "DAG-4", "MEM-2", "EFFECT-4", "KV-2", "WS-2"},
    Ids{"CAP-4", "WORK-4", "IMPL-1", "RACE-4", "DAG-5", "ALIGN-3", "REFBIND-1"},
    Ids{"TIME-1", "TIME-3", "TIME-4", "TIME-5"},
    Ids{"MACHINE-1"},
    Ids{"OBS-1"}};

Ids join(std::size_t layer, bool transition) {
  Ids a = kCommon;
  a.insert(a.end(), kOwn[layer].begin(), kOwn[layer].end());
  if (transition) a.insert(a.end(), kAgainstParent[layer].begin(), kAgainstParent[layer].end()), a.insert(a.end(), kTransition.begin(), kTransition.end());
  return a;
}

}  // namespace

const std::vector<std::string_view>& obligations_checked(std::size_t layer, bool transition) {
  static const std::array<std::array<Ids, 7>, 2> table = [] {
    std::array<std::array<Ids, 7>, 2> t;
    for (std::size_t l = 0; l < 7; ++l) t[0][l] = join(l, false), t[1][l] = join(l, true);
    return t;
  }();
  return table[transition ? 1 : 0].at(layer);
}

}  // namespace plancert
