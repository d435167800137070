// SPDX-License-Identifier: Apache-2.0
// The obligation IDs the gate runs per layer: a report for the CLI and the formulas documentation,
// kept beside the catalog (the gate itself does not consult it).
#include "spec/checked.h"

#include <initializer_list>

namespace plancert {
namespace {

const std::vector<std::string_view> kCommon = {"DIGEST-1", "DIGEST-2", "DIGEST-4", "ID-1", "ID-2", "LINEAGE-1", "SYM-1", "SYM-2"};
const std::vector<std::string_view> kTransition = {"DIGEST-3", "DIGEST-5", "LINEAGE-2"};

std::vector<std::string_view> join(std::vector<std::string_view> a, std::initializer_list<std::string_view> b, bool transition) {
  a.insert(a.end(), b);
  if (transition) a.insert(a.end(), kTransition.begin(), kTransition.end());
  return a;
}

}  // namespace

const std::vector<std::string_view>& obligations_checked(std::size_t layer, bool transition) {
  static const std::vector<std::vector<std::string_view>> table[2] = {
      {join(kCommon, {"ATTR-1", "REF-1", "REF-2", "FLOW-1", "FLOW-2", "FLOW-3"}, false),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "MESH-1", "MESH-2", "MESH-3", "WORK-3", "COLL-1", "COLL-2", "COLL-4", "COLL-5", "P2P-1", "P2P-2", "P2P-3", "SCHED-1", "EFFECT-2",
                      "EFFECT-3"}, false),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "BUF-1", "BUF-2", "BUF-3", "BUF-4", "MEM-1", "MEM-3", "WORK-3", "EFFECT-2", "EFFECT-3", "CAPM-1", "CAPM-2"}, false),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "ALIGN-1", "ALIGN-2", "CAP-1", "CAP-2", "CAP-3", "QUEUE-1", "QUEUE-2", "QUEUE-3", "QUEUE-4",
                      "SLOT-1", "SLOT-2", "SLOT-3", "ROUTE-1", "ROUTE-2", "TOKEN-1", "TOKEN-2", "DEADLOCK-1",
                      "IMPL-2", "RACE-1", "RACE-2", "RACE-3", "CAP-5"}, false),
       join(kCommon, {"TIME-2"}, false),
       join(kCommon, {"REF-1", "REF-2", "DAG-1", "DAG-2", "MACHINE-2", "MACHINE-3", "MACHINE-4"}, false),
       join(kCommon, {"OBS-2", "OBS-3"}, false)},
      {join(kCommon, {"ATTR-1", "REF-1", "REF-2", "FLOW-1", "FLOW-2", "FLOW-3"}, true),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "MESH-1", "MESH-2", "MESH-3", "WORK-3", "COLL-1", "COLL-2", "COLL-4", "COLL-5", "P2P-1", "P2P-2", "P2P-3",
                      "SCHED-1", "WORK-2", "COLL-3", "COLL-6", "VOL-1", "SHARD-1", "SHARD-2", "SHARD-3", "SHARD-4", "EFFECT-2", "EFFECT-3", "EFFECT-1", "KV-1", "WS-1"}, true),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "BUF-1", "BUF-2", "BUF-3", "BUF-4", "MEM-1", "MEM-3", "WORK-3", "EFFECT-2", "EFFECT-3", "CAPM-1", "CAPM-2", "WORK-1", "DAG-4", "MEM-2", "EFFECT-4", "KV-2", "WS-2"}, true),
       join(kCommon, {"ATTR-1", "REF-1", "REF-2", "DAG-1", "DAG-2", "ALIGN-1", "ALIGN-2", "CAP-1", "CAP-2", "CAP-3", "QUEUE-1", "QUEUE-2", "QUEUE-3", "QUEUE-4",
                      "SLOT-1", "SLOT-2", "SLOT-3", "ROUTE-1", "ROUTE-2", "TOKEN-1", "TOKEN-2", "DEADLOCK-1",
                      "IMPL-2", "RACE-1", "RACE-2", "RACE-3", "CAP-5", "CAP-4", "WORK-4", "IMPL-1", "RACE-4", "DAG-5", "ALIGN-3", "REFBIND-1"}, true),
       join(kCommon, {"TIME-1", "TIME-2", "TIME-3", "TIME-4", "TIME-5"}, true),
       join(kCommon, {"REF-1", "REF-2", "DAG-1", "DAG-2", "MACHINE-1", "MACHINE-2", "MACHINE-3", "MACHINE-4"}, true),
       join(kCommon, {"OBS-1", "OBS-2", "OBS-3"}, true)}};
  return table[transition ? 1 : 0].at(layer);
}

}  // namespace plancert
