// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Untrusted helpers of `plancert prove`: declared symbolic shapes (`--symbolic B,S`,
/// `--assume ...`), the training derivation through the gate with a symbolic microbatch size
/// and sequence length, and its concrete instantiation at given values.
///
/// The microbatch size B is symbolic while the number of microbatches per iteration
/// \f$m = B_g / (B\,d_p)\f$ of the strategy stays fixed (the global batch is \f$m B d_p\f$),
/// so the pipeline schedule is the same for every shape and only sizes and work vary.
#pragma once

#include "core/diag.h"
#include "passes/frontend/configs.h"
#include "passes/train/model_builder.h"
#include "verifiers/gate.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace plancert::passes::symbolic {

/// The three inputs of a training derivation.
struct Inputs {
  frontend::ModelConfig model;        ///< the model
  frontend::StrategyConfig strategy;  ///< the strategy (its B and s are the reference values)
  frontend::SystemConfig system;      ///< the system (device memory for capacity)
};

/// An assumption that is not a symbol fact (range or divisibility), e.g. `B*S <= 65536`.
struct Relation {
  Expr lhs;        ///< left side
  std::string op;  ///< "<=", "<", "==", "!=", ">=", ">" or "%" (modulus divides lhs - rhs)
  Expr rhs;        ///< right side
  Int modulus;     ///< for "%"
};

/// The declared set of shapes.
struct Shape {
  std::string batch;                ///< symbol of the microbatch size ("" = concrete)
  std::string seq;                  ///< symbol of the sequence length ("" = concrete)
  std::vector<Symbol> symbols;      ///< declarations with their facts (min >= 1)
  std::vector<Relation> relations;  ///< further assumptions
};

/// Parses `--symbolic B,S` (first name: microbatch size, second: sequence length; either may
/// be empty, as in `,S`) and the `--assume` texts: `X % n == 0`, `a <= X <= b`, `X < b`,
/// `X == c`, or any relation between polynomials (kept as a Relation). Single-symbol bounds
/// and divisibility become the symbol's facts (symbols stay positive: min is at least 1).
/// Throws InputError CONFIG-7 for bad syntax or an undeclared symbol.
Shape parse_shape(const std::string& symbolic, const std::vector<std::string>& assumptions);

/// A derivation: the committed snapshots, or the findings that stopped it.
struct Derivation {
  std::optional<Committed<ModelIR>> model;            ///< committed ModelIR
  std::optional<Committed<DistributedTaskIR>> dist;   ///< committed DistributedTaskIR
  std::optional<Committed<PortablePlanIR>> plan;      ///< committed PortablePlanIR
  Diagnostics diagnostics;                            ///< input, gate and capacity findings
  std::vector<Expr> stage_totals;                     ///< total memory per rank of each stage
  std::string stopped_at;                             ///< pass / check that failed ("" = none)
};

/// The strategy of the concrete instance with microbatch size `b` and sequence length `s`
/// (same m: global batch m * b * dp).
frontend::StrategyConfig instance_strategy(const frontend::StrategyConfig& s, std::int64_t b, std::int64_t s_len);

/// Runs BuildModelIR, DistributeTransformerTrainingPass and PlanTransformerTrainingPass
/// through the gate with the declared symbols (frontend cross-checks run at the reference
/// values, except the ones about the sequence length that the caller proves symbolically).
Derivation derive_symbolic(const Inputs& in, const Shape& shape);

/// The concrete pipeline at `values` (symbol -> value; unnamed dimensions keep the
/// strategy's values): frontend cross-checks (CONFIG-*), the passes through the gate, then
/// the capacity comparison of every stage total with the device memory (CAP-1).
Derivation derive_concrete(const Inputs& in, const Shape& shape, const std::map<std::string, Int>& values);

}  // namespace plancert::passes::symbolic
