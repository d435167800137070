// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Diagnostics and exit codes shared by the trusted core, the passes and the CLI.
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

namespace plancert {

/// Exit codes of every plancert command (ARCHITECTURE.md, "Diagnostics and exit codes").
enum class Exit : int {
  Accepted = 0,  ///< accepted / proved / certified
  Rejected = 1,  ///< an obligation failed, a counterexample exists, or the solver did not decide
  BadInput = 2,  ///< bad usage, unreadable or malformed input
  Internal = 3,  ///< internal error (a bug in plancert)
};

/// One finding. `code` is an obligation ID from spec/ (e.g. `DAG-2`); `path` is a
/// JSON Pointer (RFC 6901) into the snapshot or input file that the finding is about.
struct Diagnostic {
  std::string code;                ///< obligation ID, e.g. "DAG-2"
  std::string message;             ///< one-line human-readable statement of what is wrong
  std::string path;                ///< JSON Pointer, e.g. "/payload/tasks/17/dependencies/0"
  std::vector<std::string> notes;  ///< attached notes (witnesses, related locations)
  std::string hint;                ///< optional suggestion of how to fix the input
};

/// Appends the RFC 6901 escaped form of `token` ("~" -> "~0", "/" -> "~1") to `out`.
void append_pointer_token(std::string& out, std::string_view token);

/// An ordered collection of diagnostics with a cap, so a pathological input cannot
/// make a verifier allocate without bound while reporting.
class Diagnostics {
 public:
  /// Creates an empty collection that keeps at most `cap` diagnostics (the count goes on).
  explicit Diagnostics(std::size_t cap = 1000) : cap_(cap) {}
  /// Records an error.
  void error(std::string code, std::string path, std::string message,
             std::vector<std::string> notes = {}, std::string hint = {});
  /// True when no error was recorded.
  [[nodiscard]] bool ok() const { return count_ == 0; }
  /// Number of errors recorded (including those over the cap).
  [[nodiscard]] std::size_t count() const { return count_; }
  /// The kept diagnostics, in the order they were found.
  [[nodiscard]] const std::vector<Diagnostic>& all() const { return items_; }
  /// True if some recorded error carries `code`.
  [[nodiscard]] bool has(std::string_view code) const { return std::any_of(items_.begin(), items_.end(), [&](const Diagnostic& d) { return d.code == code; }); }
  /// Appends every diagnostic of `other`.
  void merge(const Diagnostics& other);

 private:
  std::vector<Diagnostic> items_;
  std::size_t count_ = 0;
  std::size_t cap_;
};

/// Thrown by decoders and loaders for malformed input (exit code 2). Carries a
/// complete diagnostic so the CLI can print it as one line.
class InputError : public std::runtime_error {
 public:
  /// Builds the error from its obligation code, JSON Pointer path and message.
  InputError(std::string code, std::string path, std::string message)
      : std::runtime_error(message), diag{std::move(code), std::move(message), std::move(path), {}, {}} {}
  Diagnostic diag;  ///< the diagnostic to report
};

}  // namespace plancert
