// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief `plancert fuzz`: the property harness of props/harness.h from the command line.
#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace plancert::cli {

/// Options of `plancert fuzz`.
struct FuzzOptions {
  std::string pass;          ///< registered pass to fuzz
  int runs = 100;            ///< successful cases (per operator with --mutations)
  std::uint64_t seed = 0;    ///< RapidCheck seed: the same seed reproduces the same run
  int max_size = 100;        ///< RapidCheck's maximum size
  std::string out;           ///< directory for a counterexample ("" = none)
  bool list = false;         ///< list the registered passes
  bool mutations = false;    ///< run the mutation-soundness campaign instead
};

/// Registers the `fuzz` subcommand on `app`.
CLI::App* add_fuzz_command(CLI::App& app, FuzzOptions& o);

/// `plancert fuzz --pass NAME [--runs N] [--seed S] [--max-size K] [--out DIR]`: generates
/// inputs of the pass, runs it, commits its output through the gate and checks its laws; on a
/// failure RapidCheck shrinks the input and the command prints the failure and, with --out,
/// writes the shrunk case's snapshots and `reproduce.txt` (the command line with the seed).
/// `--list` names the registered passes. `--mutations` runs the mutation-soundness campaign
/// and prints, per operator, mutants rejected with the declared code, with another code,
/// accepted and valid by the independent oracle, and accepted (a soundness bug). Exit 0 when
/// everything holds, 1 otherwise, 2 for an unknown pass.
int run_fuzz(const FuzzOptions& o);

}  // namespace plancert::cli
