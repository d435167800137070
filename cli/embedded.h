// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The bundled default example, compiled into the program (`plancert certify` with no
/// arguments): GPT-3 175B with the sequence-parallel + selective-recomputation strategy of
/// Korthikanti et al. on the A100 80 GB system (Calculon formats, examples/calculon/).
#pragma once

#include <string_view>

namespace plancert::cli {

/// One embedded input file: the path it was copied from and its text.
struct EmbeddedFile {
  std::string_view name;  ///< repository path of the source file
  std::string_view text;  ///< file contents
};

extern const EmbeddedFile kDefault_model;     ///< examples/calculon/models/gpt3-175B.json
extern const EmbeddedFile kDefault_strategy;  ///< examples/calculon/strategies/gpt3-175B_seqsel.json
extern const EmbeddedFile kDefault_system;    ///< examples/calculon/systems/a100_80g.json

}  // namespace plancert::cli
