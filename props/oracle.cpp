// SPDX-License-Identifier: Apache-2.0
#include "props/oracle.h"

#include <algorithm>
#include <map>
#include <vector>

namespace plancert::props {

bool brute_force_race(const ConcretePlanIR& p, std::string* why) {
  const std::size_t n = p.commands.size();
  // Full reflexive-transitive closure of the happens-before edges.
  std::vector<std::vector<std::size_t>> succ(n);
  std::map<Index, std::size_t> signaller;
  for (std::size_t v = 0; v < n; ++v)
    for (Index t : p.commands[v].signals) signaller[t] = v;
  for (std::size_t v = 0; v < n; ++v) {
    for (Index u : p.commands[v].dependencies) succ[static_cast<std::size_t>(u)].push_back(v);
    for (Index t : p.commands[v].waits)
      if (signaller.count(t) && signaller[t] != v) succ[signaller[t]].push_back(v);
  }
  if (p.queue)
    for (const auto& q : p.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) succ[static_cast<std::size_t>(q.commands[k - 1])].push_back(static_cast<std::size_t>(q.commands[k]));
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (std::size_t s = 0; s < n; ++s) {
    std::vector<std::size_t> stack{s};
    reach[s][s] = 1;
    while (!stack.empty()) {
      std::size_t u = stack.back();
      stack.pop_back();
      for (std::size_t v : succ[u])
        if (!reach[s][v]) { reach[s][v] = 1; stack.push_back(v); }
    }
  }
  auto before = [&](std::size_t a, std::size_t b) { return reach[a][b] != 0; };
  // Accesses per buffer.
  const std::size_t nb = p.buffers.size();
  std::vector<std::vector<std::pair<std::size_t, bool>>> acc(nb);
  for (std::size_t v = 0; v < n; ++v) {
    for (Index b : p.commands[v].writes) acc[static_cast<std::size_t>(b)].emplace_back(v, true);
    for (Index b : p.commands[v].reads) {
      const auto& w = p.commands[v].writes;
      if (std::find(w.begin(), w.end(), b) == w.end()) acc[static_cast<std::size_t>(b)].emplace_back(v, false);
    }
  }
  auto pinned = [](Storage s) { return s != Storage::transient && s != Storage::workspace; };
  for (std::size_t b = 0; b < nb; ++b) {
    if (p.buffers[b].size <= 0) continue;
    for (const auto& [x, xw] : acc[b])
      for (const auto& [y, yw] : acc[b])
        if (x < y && (xw || yw) && !before(x, y) && !before(y, x)) {
          if (why) *why = "race on " + p.buffers[b].id + " between " + p.commands[x].id + " and " + p.commands[y].id;
          return true;
        }
  }
  for (std::size_t a = 0; a < nb; ++a)
    for (std::size_t b = a + 1; b < nb; ++b) {
      const auto &A = p.buffers[a], &B = p.buffers[b];
      const auto &ra = p.regions[static_cast<std::size_t>(A.region)], &rb = p.regions[static_cast<std::size_t>(B.region)];
      if (ra.device != rb.device || A.size <= 0 || B.size <= 0) continue;
      if (!(pinned(A.storage) || !acc[a].empty()) || !(pinned(B.storage) || !acc[b].empty())) continue;
      const Int sa = ra.offset + A.offset, sb = rb.offset + B.offset;
      if (!(sa < sb + B.size && sb < sa + A.size)) continue;
      auto all_before = [&](std::size_t x, std::size_t y) {
        for (const auto& [u, uw] : acc[x])
          for (const auto& [v, vw] : acc[y])
            if (!before(u, v)) return false;
        return true;
      };
      if (pinned(A.storage) || pinned(B.storage) || (!all_before(a, b) && !all_before(b, a))) {
        if (why) *why = "buffers " + A.id + " and " + B.id + " share memory with overlapping lifetimes";
        return true;
      }
    }
  return false;
}

}  // namespace plancert::props
