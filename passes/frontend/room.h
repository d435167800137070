// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief CONFIG-8: the plan a configuration derives fits the memory this process may use.
///
/// A few numbers of a configuration file set the size of everything derived from it: the layer
/// count the ModelIR's operations, the data- and tensor-parallel degrees every task's rank list,
/// the microbatch count the pipeline schedule, and the repeats and devices the commands of a
/// bound plan. A mistyped number (9,600,000 layers for 96) would otherwise run for minutes and
/// end in `internal error: out of memory`, or run for hours. Each derivation pass therefore
/// computes, before its loop over the large dimension, a lower bound of the bytes its output
/// must hold (the count of entities or list entries it is about to create times their size in
/// memory, no more), and refuses with CONFIG-8 when that bound exceeds the memory room:
/// certainly too large, never a plan that would have fitted. The room is set by the command
/// line (`plancert certify`, `prove`: the address-space cap of cli/io.h); library callers and
/// tests that set none check nothing.
#pragma once

#include "passes/frontend/configs.h"

#include <cstdint>
#include <initializer_list>
#include <string>

namespace plancert::frontend {

/// Sets the memory room of this process in bytes (0: unknown, no CONFIG-8 check). Process-wide,
/// as the address-space limit it mirrors; not synchronised (plancert's passes run on one thread).
void set_memory_room(std::uintmax_t bytes);

/// The product of `factors`, saturating at the largest std::uintmax_t (a lower bound that
/// overflows is over any room).
std::uintmax_t saturating_product(std::initializer_list<std::uintmax_t> factors);

/// The sum of `terms`, saturating at the largest std::uintmax_t.
std::uintmax_t saturating_sum(std::initializer_list<std::uintmax_t> terms);

/// `bytes` as GiB with one decimal, rounded down ("71.5 GiB"); "more than 16 EiB" at saturation.
std::string gib(std::uintmax_t bytes);

/// Throws InputError CONFIG-8 at `pointer` when a room is set and `bytes`, a lower bound of the
/// memory the caller is about to fill, exceeds it. The message is `what`, then the bound and
/// the room: "WHAT needs at least B GiB; this process may use R GiB (...)".
void require_room(std::uintmax_t bytes, const std::string& pointer, const std::string& what);

/// require_room() at the canonical `field` of a loaded record: the pointer is the field's
/// origin in its source, and the message starts with "FILE: field 'LABEL': ".
void require_room(std::uintmax_t bytes, const Provenance& source, const std::string& field, const std::string& what);

}  // namespace plancert::frontend
