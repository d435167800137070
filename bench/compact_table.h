// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A prototype of the compact command table (README, Performance), for measurement only.
///
/// `plancert verify` decodes each command of a ConcretePlanIR into a `Command` of 200 bytes with
/// five index lists, an id string and a lineage of its own (about 275 bytes a command in all),
/// through the generic strict decoder. The compact table the README proposes instead keeps every
/// command's fields in a struct of arrays: the five index lists back to back in one pool, the
/// id, sources and annotations as views of the input, names and works as shared values. This
/// prototype decodes the `commands` array of a canonical payload into such a table, so that
/// `bench_verify`'s `compact/N` case measures what that decoder would cost before anyone
/// rewrites core/ir.h and the verifiers for it. It is not a plancert code path and nothing in
/// plancert trusts it.
///
/// It accepts the canonical form only: the keys in order, no whitespace, integers without a
/// leading zero, strings of printable ASCII without escapes; anything else makes it stop with the
/// byte offset and what it expected (a real decoder would then fall back to the generic one,
/// which reports the exact diagnostic). Names are interned as the decoder's are (`codec::Name`),
/// and works go through the decoder's cache of repeated texts (`codec::decode` of a
/// `codec::Shared<Work>`, which decodes a text it has not seen strictly); annotations are
/// checked (strings, keys strictly increasing) and kept as their text.
#pragma once

#include "core/ir.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::bench {

/// A byte range of the decoded text (a view that stays valid while the text does).
struct Span {
  std::uint32_t offset = 0;  ///< from the start of the text
  std::uint32_t size = 0;    ///< bytes
};

/// The commands of a ConcretePlanIR as a struct of arrays (one entry per command unless noted).
struct CompactCommands {
  /// The lists of every command back to back, in the order dependencies, reads, signals,
  /// waits, writes (the canonical key order); command i's list k is
  /// `pool[at[5 i + k] .. at[5 i + k + 1])`.
  std::vector<Index> pool;
  std::vector<std::uint32_t> at;  ///< 5 n + 1 offsets into pool
  std::vector<Index> device;      ///< executing device
  std::vector<CommandKind> kind;  ///< command kind
  std::vector<Span> id;           ///< stable id
  std::vector<codec::Name> implementation;    ///< implementation name
  std::vector<LineageKind> lineage_kind;      ///< lineage kind
  std::vector<codec::Name> rule;              ///< lineage rule
  std::vector<Span> sources;                  ///< every command's lineage sources, back to back
  std::vector<std::uint32_t> sources_at;      ///< n + 1 offsets into sources
  std::vector<std::int64_t> repeat;           ///< repeat count
  std::vector<codec::Shared<Work>> work;      ///< work (equal texts share one value)
  std::vector<Span> attrs;                    ///< annotations as their canonical text (`{}` when none)
  std::size_t size() const { return device.size(); }  ///< commands
};

/// Decodes the `commands` array that starts at `text[from]` (its `[`) into `out`. Returns the
/// offset just after the array's `]`, or SIZE_MAX with `why` set (the byte offset and what was
/// expected) when the text is not the canonical encoding of a commands array. Texts longer
/// than 4 GiB are refused (spans are 32-bit).
std::size_t decode_compact_commands(std::string_view text, std::size_t from, CompactCommands& out, std::string& why);

/// Whether `t`, decoded from `text`, holds exactly the commands of `plan` (every field of every
/// command, in order); else false with the first difference in `why`.
bool same_commands(const CompactCommands& t, std::string_view text, const ConcretePlanIR& plan, std::string& why);

}  // namespace plancert::bench
