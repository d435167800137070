// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Internal helpers shared by the verifier families: JSON Pointer building, reference
/// and uniqueness checks, and iterative cycle detection with a cycle witness.
#pragma once

#include "core/diag.h"
#include "core/ir.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace plancert::check {

/// Builds `/payload/<array>/<i>` and longer pointers cheaply, only when a finding is reported.
std::string at(std::string_view array, std::size_t i, std::string_view field = {}, std::int64_t j = -1);

/// The current checking context: the diagnostics sink.
struct Ctx {
  Diagnostics& d;  ///< findings
  /// Records one finding.
  void err(const char* code, std::string path, std::string message, std::vector<std::string> notes = {}) {
    d.error(code, std::move(path), std::move(message), std::move(notes));
  }
};

/// REF-1 for every entry of `list` (must be in [0, n)), REF-2 when `unique` and an entry
/// repeats. `stamp` is scratch of size >= n, reused across calls (epoch-based, linear).
/// Returns false if some entry is out of range (callers must not index through it).
bool refs(Ctx& c, const Indices& list, std::size_t n, std::string_view array, std::size_t i, std::string_view field, bool unique,
          std::vector<std::uint32_t>& stamp, std::uint32_t& epoch);

/// REF-1 for one reference: `v` must be in [0, n). `path` is the JSON Pointer, or a callable
/// that builds it (called only on failure, so hot loops build no strings). Always inlined: GCC
/// kept it out of line even with the profile, and a call for each of a plan's millions
/// of references cost `refs` about 80 % more instructions (bench/PERFORMANCE_LOG.md, session 46).
template <class Path>
[[gnu::always_inline]] inline bool ref(Ctx& c, Index v, std::size_t n, Path&& path) {
  if (v >= 0 && static_cast<std::size_t>(v) < n) return true;
  std::string p;
  if constexpr (std::is_invocable_v<Path>) p = path(); else p = std::move(path);
  c.err("REF-1", std::move(p), "reference " + std::to_string(v) + " is out of range (there are " + std::to_string(n) + ")");
  return false;
}

/// Iterative cycle search over nodes 0..n-1 whose predecessors are listed by `preds(v, fn)`.
/// Returns an empty vector for a DAG (and appends a topological order to `order` if given: index
/// order when every node comes after its predecessors, the common case, checked first),
/// else one cycle (in dependency order).
template <class Preds>
std::vector<std::size_t> find_cycle(std::size_t n, Preds&& preds, std::vector<std::uint32_t>* order = nullptr) {
  bool sorted = true;  // the common case, every node after its predecessors: index order is topological (and cache-friendly)
  for (std::size_t v = 0; v < n && sorted; ++v) preds(v, [&](std::size_t u) { sorted = sorted && u < v; });
  for (std::size_t v = 0; sorted && order && v < n; ++v) order->push_back(static_cast<std::uint32_t>(v));
  if (sorted) return {};
  std::vector<std::uint32_t> indeg(n, 0);
  std::vector<std::uint32_t> off(n + 1, 0);
  for (std::size_t v = 0; v < n; ++v) preds(v, [&](std::size_t u) { ++off[u + 1]; ++indeg[v]; });
  for (std::size_t v = 0; v < n; ++v) off[v + 1] += off[v];
  std::vector<std::uint32_t> succ(off[n]);
  {
    std::vector<std::uint32_t> fill(off.begin(), off.end() - 1);
    for (std::size_t v = 0; v < n; ++v) preds(v, [&](std::size_t u) { succ[fill[u]++] = static_cast<std::uint32_t>(v); });
  }
  std::vector<std::uint32_t> ready;
  for (std::size_t v = 0; v < n; ++v)
    if (indeg[v] == 0) ready.push_back(static_cast<std::uint32_t>(v));
  std::size_t done = 0;
  while (!ready.empty()) {
    std::uint32_t u = ready.back();
    ready.pop_back();
    ++done;
    if (order) order->push_back(u);
    for (std::uint32_t k = off[u]; k < off[u + 1]; ++k)
      if (--indeg[succ[k]] == 0) ready.push_back(succ[k]);
  }
  if (done == n) return {};
  // Every node left has a predecessor that is also left: walk backwards until one repeats.
  std::size_t v = 0;
  while (indeg[v] == 0) ++v;
  std::vector<std::size_t> pos(n, SIZE_MAX), walk;
  while (pos[v] == SIZE_MAX) {
    pos[v] = walk.size();
    walk.push_back(v);
    std::size_t next = SIZE_MAX;
    preds(v, [&](std::size_t u) { if (next == SIZE_MAX && indeg[u] > 0) next = u; });
    v = next;
  }
  std::vector<std::size_t> cycle(walk.rbegin(), walk.rend() - static_cast<std::ptrdiff_t>(pos[v]));
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // canonical: smallest index first
  return cycle;
}

/// DAG-1 (no self or repeated dependency) and DAG-2 (acyclic, with the cycle as witness)
/// for entities whose `dependencies` index the same array. Assumes REF-1 already passed.
template <class T>
void dag(Ctx& c, const std::vector<T>& xs, std::string_view array, std::vector<std::uint32_t>& stamp, std::uint32_t& epoch) {
  for (std::size_t i = 0; i < xs.size(); ++i) {
    ++epoch;
    stamp[i] = epoch;  // a self edge shows up as a repeat
    const auto& deps = xs[i].dependencies;
    for (std::size_t k = 0; k < deps.size(); ++k) {
      auto u = static_cast<std::size_t>(deps[k]);
      if (stamp[u] == epoch)
        c.err("DAG-1", at(array, i, "dependencies", static_cast<std::int64_t>(k)),
              u == i ? "an entity depends on itself" : "dependency " + std::to_string(u) + " is listed twice");
      stamp[u] = epoch;
    }
  }
  auto cyc = find_cycle(xs.size(), [&](std::size_t v, auto&& fn) { for (Index u : xs[v].dependencies) if (static_cast<std::size_t>(u) != v) fn(static_cast<std::size_t>(u)); });
  if (cyc.empty()) return;
  std::string w;
  for (std::size_t v : cyc) w += xs[v].id + " -> ";
  w += xs[cyc.front()].id;
  const auto& d0 = xs[cyc.front()].dependencies;
  std::int64_t k = 0;
  while (static_cast<std::size_t>(k) < d0.size() && static_cast<std::size_t>(d0[static_cast<std::size_t>(k)]) != cyc.back()) ++k;
  c.err("DAG-2", at(array, cyc.front(), "dependencies", k), "dependency cycle of " + std::to_string(cyc.size()) + " entities", {"cycle: " + w});
}

}  // namespace plancert::check
