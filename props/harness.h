// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The pass registry and the generic property harness behind `plancert fuzz`.
///
/// Every public pass registers its name, input and output IR and contract. For any registered
/// pass the harness generates valid inputs of the pass's input type (tiny models and strategies
/// valid by construction, or generated valid snapshots from generators.h), runs the pass twice,
/// commits the output through the Gate after its parents, and checks the pass's laws:
/// - the Gate accepts the output (this covers the conservation, lineage, sharding, memory and
///   binding obligations of spec/);
/// - determinism: the two runs give the same digest.
/// A failure is shrunk by RapidCheck to a minimal input; the harness keeps the snapshots of the
/// last failing case (the shrunk one) so that `plancert fuzz --out DIR` can write them with the
/// seed that reproduces the run.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"
#include "props/mutations.h"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace plancert::props {

/// Knobs of a tiny GPT-style training configuration (valid by construction where validate()
/// agrees; train_configs() returns nullopt otherwise).
struct TrainKnobs {
  std::int64_t tp = 1, pp = 1, dp = 1, layers = 2, microbatches = 2, microbatch = 1, seq = 16, interleave = 1;
  std::int64_t kv_heads = 4;  ///< 4 (MHA) or 1 (MQA: replicated over t = 2)
  bool sequence_parallel = false, distributed_optimizer = false, vocabulary = true;
  frontend::Recompute recompute = frontend::Recompute::None;
};

/// The model and strategy of `k` (hidden 64, 4 heads, `k.kv_heads` KV heads, FFN 256, fp16), validated by the
/// frontends' validate(); nullopt when it refuses the combination.
std::optional<std::pair<frontend::ModelConfig, frontend::StrategyConfig>> train_configs(const TrainKnobs& k);

/// A generator of TrainKnobs over small degrees (t, p, d in {1, 2}), 1-4 layers, 1-4
/// microbatches, sequence parallelism, recomputation, interleaving, the distributed optimizer,
/// and one KV head (replicated when t = 2) in half the cases.
rc::Gen<TrainKnobs> train_knobs();

/// What one case of a pass produced.
struct CaseOutcome {
  bool discarded = false;  ///< the input is outside the pass's documented domain (e.g. a refused configuration)
  std::string failure;     ///< empty: every law held
  /// The case's snapshots (name -> canonical JSON): the input chain and the output, for the
  /// counterexample directory.
  std::vector<std::pair<std::string, std::string>> files;
};

/// A pass registered for property-based fuzzing.
struct RegisteredPass {
  std::string name;      ///< e.g. "BindQueueTargetPass"
  std::string input;     ///< input IR or configuration
  std::string output;    ///< output IR
  std::string contract;  ///< one line: what the pass promises
  /// Runs one case; must be called inside a RapidCheck property (it draws from generators).
  std::function<CaseOutcome()> run_case;
};

/// The public registry, in pipeline order: BuildModelIR, DistributeTransformerTrainingPass,
/// PlanTransformerTrainingPass, the three inference passes, BindReferenceQueueTargetPass,
/// BindReferenceSlotTargetPass and BindQueueTargetPass.
const std::vector<RegisteredPass>& registry();

/// The registered pass named `name`, or nullptr.
const RegisteredPass* find_pass(std::string_view name);

/// Options of one fuzzing run.
struct FuzzOptions {
  int runs = 100;                   ///< successful cases required
  std::uint64_t seed = 0;           ///< RapidCheck seed (the run is deterministic for a seed)
  int max_size = 100;               ///< RapidCheck's maximum size
  std::ostream* progress = nullptr;  ///< progress line (cases, discarded, rate), e.g. std::cerr
};

/// The result of one fuzzing run.
struct FuzzResult {
  bool passed = false;           ///< every case held every law
  bool gave_up = false;          ///< too many discarded cases
  int cases = 0;                 ///< cases run (including shrinking steps)
  int discarded = 0;             ///< discarded cases
  int first_failure = -1;        ///< 1-based number of the first failing case, -1 without one
  std::string failure;           ///< the shrunk counterexample's failure
  std::vector<std::pair<std::string, std::string>> counterexample;  ///< its snapshots
};

/// Runs the harness for `pass` with RapidCheck (shrinking on failure).
FuzzResult fuzz(const RegisteredPass& pass, const FuzzOptions& options);

/// Per-operator counts of a mutation campaign.
struct OperatorReport {
  std::string name;               ///< operator
  std::string code;               ///< the obligation it must trip
  int mutants = 0;                ///< mutants produced
  int rejected_declared = 0;      ///< rejected with the declared code (and only allowed codes)
  int rejected_other = 0;         ///< rejected, but with another code
  int accepted_valid = 0;         ///< accepted, and the independent oracle says the mutant is valid
  int accepted = 0;               ///< accepted although the oracle says it is not valid (a soundness bug)
  std::string example;            ///< the first bad mutant's findings
  /// True when every mutant was rejected with its code or recognised valid by the oracle (an
  /// operator that produced no mutant in the run is not a failure, but covers nothing).
  [[nodiscard]] bool ok() const { return rejected_other == 0 && accepted == 0; }
};

/// The valid chains operator `m` applies to: generated chains topped by its layer (any layer
/// for "*", with its target and inference needs), or, for a `derived` operator, the ModelIR and
/// DistributedTaskIR the training passes derive from generated TrainKnobs with t = 2.
rc::Gen<Chain> chain_for(const Mutation& m);

/// Applies every operator of catalog() to `runs` generated valid snapshots (seeded) and
/// classifies each mutant; no shrinking.
std::vector<OperatorReport> mutation_campaign(int runs, std::uint64_t seed, std::ostream* progress);

}  // namespace plancert::props
