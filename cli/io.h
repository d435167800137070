// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief File input with size limits and atomic output (temporary file + rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace plancert::cli {

/// Default largest input file read (bytes); `--max-bytes` raises it.
inline constexpr std::uintmax_t kDefaultMaxInputBytes = std::uintmax_t{1} << 30;

/// Reads a whole file. Throws InputError IO-1 (missing / unreadable / not a regular file)
/// or IO-2 (larger than `max_bytes`, checked before reading).
std::string read_file(const std::filesystem::path& p, std::uintmax_t max_bytes = kDefaultMaxInputBytes);

/// Writes `bytes` to `p` atomically: a temporary file in the same directory, flushed, then
/// renamed over `p`. A failed or interrupted run leaves no partial file. Throws
/// std::runtime_error on failure.
void write_file_atomic(const std::filesystem::path& p, std::string_view bytes);

}  // namespace plancert::cli
