// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Test support for the binding passes and the RACE / IMPL / WORK-4 / ALIGN-3 /
/// REFBIND verifiers: committed training chains from the real passes, a permissive target, a
/// verdict helper and an independent brute-force race checker.
#pragma once

#include "props/harness.h"
#include "props/oracle.h"

#include "passes/bind/bind.h"
#include "passes/frontend/configs.h"
#include "verifiers/gate.h"

#include <optional>
#include <set>
#include <string>

namespace plancert::bindtest {

/// Knobs of a small training configuration.
using props::TrainKnobs;

/// A chain committed through the gate by the real training passes.
struct TrainChain {
  frontend::StrategyConfig strategy;                ///< the strategy
  std::optional<Committed<ModelIR>> model;          ///< root
  std::optional<Committed<DistributedTaskIR>> dist; ///< layer 1
  std::optional<Committed<PortablePlanIR>> portable; ///< layer 2
};

/// Builds and commits a tiny GPT with the knobs (nullopt when the knobs are inconsistent).
std::optional<TrainChain> train_chain(const TrainKnobs& k);

/// The chain of the default example (examples/calculon: gpt3-175B, seqsel strategy, a100_80g).
TrainChain default_chain(frontend::SystemConfig* system_out);

using bind::deployment;
using bind::permissive_target;

/// Codes the gate's checks report for `child` as a child of `parent` (verify_snapshot, then
/// verify_transition as the gate does; empty: accepted).
std::set<std::string> verdict(const PortablePlanIR& parent, const ConcretePlanIR& child, std::string* text = nullptr);
/// Codes of verify_snapshot alone.
std::set<std::string> snapshot_verdict(const ConcretePlanIR& child, std::string* text = nullptr);

using props::brute_force_race;

/// Number of waits in the plan.
std::size_t wait_count(const ConcretePlanIR& plan);

}  // namespace plancert::bindtest
