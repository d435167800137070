// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The binding step of `plancert certify --target reference-queue|reference-slot|queue`.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"
#include "verifiers/gate.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::cli {

/// What bind_and_commit() did.
struct BindOutcome {
  int exit = 0;                                   ///< 0 committed; 1 rejected by the gate or not bindable
  nlohmann::json report;                          ///< `{"concrete": {...}}` when committed (see bind_and_commit)
  std::string digest;                             ///< digest of the committed ConcretePlanIR
  std::vector<std::string_view> obligations;      ///< obligations the gate checked to commit it
  double seconds = 0;                             ///< wall time of binding and commit
  std::optional<Committed<ConcretePlanIR>> committed;  ///< the committed ConcretePlanIR (encode it only to write it: a bound plan's text can take GBs)
};

/// Bytes as GiB with two decimals, rounded half up ("1.50"); an expression that is not a
/// constant prints as its canonical text.
std::string gib_text(const Expr& bytes);

/// True for the target names bind_and_commit() accepts: "reference-queue", "reference-slot", "queue".
bool is_bind_target(std::string_view target);

/// Builds the TargetProfile and DeploymentProfile from `system` and `strategy`, binds the
/// committed portable plan with BindReferenceQueueTargetPass ("reference-queue"),
/// BindReferenceSlotTargetPass ("reference-slot") or BindQueueTargetPass ("queue", which
/// follows the pipeline schedule of `distributed` when it is given), and commits the
/// ConcretePlanIR through the gate. On success writes `out_dir`/concrete.json (atomically, when
/// `out_dir` is not empty), prints a summary to `log`, and returns the report section
///
///     "concrete": {"target", "digest", "commands", "queues", "tokens", "buffers",
///                  "memory": [{"device", "peak_bytes", "lower_bound_bytes", "capacity_bytes",
///                              "naive_bytes", "reuse_factor"}]}
///
/// (byte figures as exact decimal strings; "reuse_factor" is naive_bytes / peak_bytes with two
/// decimals; "queues" is the number of queues, or 0 on a slot target). On rejection prints the gate's diagnostics to `log` and returns exit 1; nothing is
/// written. Throws InputError CONFIG-6 for an unknown target name.
BindOutcome bind_and_commit(const Committed<PortablePlanIR>& portable, const DistributedTaskIR* distributed, const frontend::SystemConfig& system,
                            const frontend::StrategyConfig& strategy, const std::string& target, const std::string& out_dir, std::ostream& log);

/// Ends a certified `certify` or `infer` run: when `out_dir` is not empty, writes the committed
/// snapshots into it (model.json, distributed.json, portable.json and, when `bound` holds a
/// committed ConcretePlanIR, concrete.json; each atomically) and names them on stdout; when
/// `report_path` is not empty, writes `report` there; then prints "certified" and returns
/// exit code 0. Called only once every stage is committed, so nothing is written otherwise.
int write_certified(const std::string& out_dir, const std::string& report_path, const nlohmann::json& report, const Committed<ModelIR>& model,
                    const Committed<DistributedTaskIR>& distributed, const Committed<PortablePlanIR>& portable, const BindOutcome& bound);

}  // namespace plancert::cli
