// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief `plancert certify --phase prefill|decode ...`: certifies one inference phase.
#pragma once

#include <string>
#include <vector>

namespace plancert::cli {

/// Options of `plancert certify` in inference mode. Numbers are kept as given on the command
/// line and validated by run_certify_inference() (CONFIG codes, exit 2).
struct InferOptions {
  std::string model;                ///< model file ("" = the embedded default)
  std::string system;               ///< system file ("" = the embedded default)
  std::string out;                  ///< directory for the committed snapshots ("" = none)
  std::string report;               ///< JSON report ("" = none)
  std::string strategy;             ///< training only: rejected with --phase
  std::string target;               ///< not available for inference: rejected
  std::vector<std::string> extra;   ///< Megatron-LM flags (training only): rejected
  std::string phase;                ///< "prefill" or "decode"
  std::string batch;                ///< b
  std::string context;              ///< c
  std::string tp;                   ///< t (default 1)
  std::string pp;                   ///< p (default 1)
  bool max_batch = false;           ///< report the largest batch that fits
  bool max_context = false;         ///< report the longest context that fits
  /// True when any inference option was given (certify then runs in inference mode).
  [[nodiscard]] bool any() const {
    return !phase.empty() || !batch.empty() || !context.empty() || !tp.empty() || !pp.empty() || max_batch || max_context;
  }
};

/// `plancert certify --model F --phase prefill|decode --batch B --context C [--tp T] [--pp P]
/// [--system F] [--max-batch | --max-context] [--out DIR] [--report F]`: derives one inference
/// phase, commits ModelIR, DistributedTaskIR and PortablePlanIR through the gate (the KV, WS,
/// EFFECT and CAPM obligations with the others) and prints per-rank memory. Without
/// `--system` the bundled default system is used (Calculon a100_80g: 80 GiB per device, the
/// same capacity as examples/calculon/systems/h100_80g_nvl8.json); without `--model`, the
/// bundled default model. `--max-batch` (`--max-context`) finds the largest batch (context)
/// whose weights + KV cache + workspace fit every rank, exactly, confirms it through the gate
/// (it is certified, one more is rejected by CAPM-2) and certifies it. Exit codes as for every
/// command: 0 certified, 1 rejected, 2 bad input (CONFIG-*), 3 internal error.
int run_certify_inference(const InferOptions& o);

}  // namespace plancert::cli
