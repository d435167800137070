// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief `plancert prove`: symbolic-shape obligations discharged with Z3 (through the trusted
/// bridge proofs/solver.h), with counterexamples confirmed by the concrete pipeline.
#pragma once

#include <string>
#include <vector>

namespace CLI { class App; }

namespace plancert::cli {

/// Options of `plancert prove`.
struct ProveOptions {
  std::string model;                  ///< model file ("" = the embedded default)
  std::string strategy;               ///< strategy file ("" = default, or Megatron flags)
  std::string system;                 ///< system file ("" = the embedded default)
  std::vector<std::string> megatron;  ///< Megatron-LM flags, used instead of a strategy file
  std::string symbolic;               ///< `B,S`: microbatch-size and sequence-length symbols
  std::vector<std::string> assume;    ///< assumed facts, e.g. `S % 8 == 0`, `1 <= B <= 64`
  std::string junit;                  ///< JUnit XML file, one testcase per obligation ("" = none)
  std::string smt2_dir;               ///< directory for the SMT-LIB 2 text of each query ("" = none)
};

/// Registers the `prove` subcommand on `app`, filling `o` when parsed; returns it so that
/// main can test `if (*prove)` and pass `prove->remaining()` as Megatron-LM flags.
CLI::App* add_prove_command(CLI::App& app, ProveOptions& o);

/// Runs `plancert prove`. Exit codes: 0 every obligation proved; 1 the gate rejected the
/// symbolic plan, or an obligation was refuted or not decided (unknown, timeout, solver
/// error); 2 bad input; 3 internal error (e.g. a counterexample the concrete pipeline does
/// not confirm).
int run_prove(const ProveOptions& o);

}  // namespace plancert::cli
