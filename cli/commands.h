// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The plancert subcommands. Each returns the process exit code (see plancert::Exit).
#pragma once

#include "core/diag.h"
#include "core/snapshot.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::cli {

/// True when the snapshot's layer can only be checked against a parent (TimelineBundle,
/// MachineIR, ObservationSet reference the ConcretePlanIR's commands).
inline bool needs_parent(const AnySnapshot& s) { return s.index() >= 4; }

/// Exit code class of an obligation code: JSON-*, SCHEMA-*, CONFIG-*, IO-* are malformed input
/// (exit 2); every other code is a rejection (exit 1).
inline Exit exit_for_code(std::string_view code) {
  for (std::string_view f : {"JSON-", "SCHEMA-", "CONFIG-", "IO-"})
    if (code.substr(0, f.size()) == f) return Exit::BadInput;
  return Exit::Rejected;
}

/// Options of `plancert verify`.
struct VerifyOptions {
  std::string file;                 ///< the snapshot to verify
  std::string parent;               ///< optional parent snapshot ("" = none)
  std::string format = "text";      ///< "text" or "json"
  std::uintmax_t max_bytes = 0;     ///< input size limit (0 = default)
};

/// `plancert verify FILE [--parent FILE] [--format text|json]`: the trusted path; no pass code runs.
int run_verify(const VerifyOptions& o);

/// Options of `plancert certify`.
struct CertifyOptions {
  std::string model;                  ///< model file ("" = the embedded default)
  std::string strategy;               ///< strategy file ("" = default, or Megatron flags)
  std::string system;                 ///< system file ("" = the embedded default)
  std::string target;                 ///< target binding ("" = stop at the portable plan)
  std::string out;                    ///< directory for the committed snapshots ("" = none)
  std::string report;                 ///< JSON report file ("" = none)
  std::vector<std::string> megatron;  ///< Megatron-LM flags, used instead of a strategy file
};

/// `plancert certify`: frontends, the training passes and the gate; prints a summary.
int run_certify(const CertifyOptions& o);

/// `plancert explain CODE`: prints the obligation's rule, witness and complexity from spec/.
/// With `list` true prints every ID and title.
int run_explain(const std::string& code, bool list);

/// Prints a diagnostic for an exit-2 failure in the requested format and returns 2.
int report_bad_input(const std::string& format, const std::string& code, const std::string& path, const std::string& message);

}  // namespace plancert::cli
