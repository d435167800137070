// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief How tensor parallelism splits an inference ModelIR: per-rank shares of operations
/// and values (shared by the inference distribution and planning passes).
#pragma once

#include "core/ir.h"

#include <cstdint>
#include <vector>

namespace plancert::passes::infer {

/// Per-rank division of every operation and value over t tensor-parallel ranks. Operations
/// split by `column`, `row`, `head` and `vocab` run 1/t of their work on each rank;
/// `replicated` ones run all of it on every rank (replication t); `kv` ones run on
/// \f$\max(k/t, 1)\f$ of the k KV heads, i.e. \f$1/t_{kv}\f$ with \f$t_{kv} = \min(k, t)\f$, and
/// \f$t/t_{kv}\f$ ranks compute the same heads. A value's per-rank share follows the
/// operation that defines it (row-parallel and vocabulary-parallel embedding outputs are
/// full-size partial sums), a weight's the first operation that reads it (a row-parallel
/// bias is replicated), a state's is \f$1/t_{kv}\f$.
struct Layout {
  std::int64_t t = 1;                ///< tensor-parallel degree
  std::int64_t t_kv = 1;             ///< min(k, t): distinct KV-head groups over the t ranks
  std::vector<std::int64_t> divisor;  ///< per ModelIR value: its bytes per rank are bytes / divisor

  /// Computes the layout of `m` for t ranks and k KV heads.
  static Layout of(const ModelIR& m, std::int64_t t, std::int64_t kv_heads);
  /// Divisor of an operation's work (1, t_kv or t).
  [[nodiscard]] std::int64_t op_divisor(const Operation& op) const;
  /// Bytes per rank of value `v`.
  [[nodiscard]] Expr bytes(const ModelIR& m, Index v) const;
  /// Exact per-rank work of one operation: matrix and vector work divided by the operation's
  /// divisor; bytes from the per-rank shares of its operands (plus, for a cache write, the
  /// per-rank share of what it writes into the cache).
  [[nodiscard]] Work work(const ModelIR& m, const Operation& op) const;
};

}  // namespace plancert::passes::infer
