// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Generator of huge, valid ConcretePlanIR snapshots for the verifier benchmarks.
///
/// The plan is synthetic but exercises every ConcretePlanIR obligation family: D devices
/// (device d runs deployment rank d) with four engines each, the implementations the commands
/// name, a compute, a collective and a transfer queue per device (or a slot/dataflow
/// extension), two aligned memory regions per device, buffers packed at aligned offsets,
/// dependencies only on earlier commands (a mix of near, far and cross-device edges, never
/// repeated), and a token for every command that has a cross-device dependent (signalled once,
/// waited by every later cross-device dependent). Buffer accesses are race-free by
/// construction: weights are only read; each activation is written once and then read only by
/// same-device commands that depend on its writer. Every command carries constant exact work.
/// Lineage is `derived` from portable-plan ids through declared rules. The output is a pure
/// function of the options: a fixed seed gives the same bytes and digest.
#pragma once

#include "core/snapshot.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace plancert::bench {

/// What to generate.
struct GenOptions {
  std::size_t commands = 1'000'000;  ///< number of commands
  std::size_t edges = 3'000'000;     ///< total number of dependency entries (exact)
  std::size_t devices = 8;           ///< devices (>= 2)
  std::size_t buffers = 0;           ///< buffers; 0 = clamp(commands / 10, 64, 100000)
  TargetKind target = TargetKind::queue;  ///< which target extension to emit
  std::uint64_t seed = 0x5eed'ba5e'c0de'2024ULL;  ///< RNG seed (the output is a function of it)
};

/// What was generated (for reports).
struct GenStats {
  std::size_t commands = 0;            ///< commands
  std::size_t edges = 0;               ///< dependency entries
  std::size_t cross_device_edges = 0;  ///< dependencies whose endpoints are on different devices
  std::size_t tokens = 0;              ///< tokens (one per command with a cross-device dependent)
  std::size_t waits = 0;               ///< wait entries (= cross-device edges)
  std::size_t buffers = 0;             ///< buffers
  std::size_t regions = 0;             ///< regions
  std::size_t queues = 0;              ///< queues (0 for a slot target)
  std::size_t reads = 0;               ///< read entries
  std::size_t writes = 0;              ///< write entries (activations written)
};

/// Generates the snapshot (digest computed, one well-formed parent digest). Throws
/// std::invalid_argument when the options are impossible (e.g. more edges than an acyclic
/// graph of that many commands can hold, or fewer than 2 devices).
Snapshot<ConcretePlanIR> generate_plan(const GenOptions& o, GenStats* stats = nullptr);

/// Writes `bytes` to `p` atomically (temporary file in the same directory, fsync, rename);
/// a failed run leaves no partial file. Throws std::runtime_error.
void write_atomic(const std::filesystem::path& p, std::string_view bytes);

/// Concatenates strings by appending (avoids GCC 12's -Wrestrict false positive on
/// `"literal" + std::string&&`).
template <class... A>
std::string cat(const A&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

/// Reads a whole file the way `plancert verify` does (open + read into one string).
/// Throws std::runtime_error.
std::string read_whole_file(const std::filesystem::path& p);

}  // namespace plancert::bench
