// SPDX-License-Identifier: Apache-2.0
// Target-binding families: IMPL (implementations, engines, deployment ranks), RACE (memory
// safety under happens-before), CAP-4/5, WORK-4, ALIGN-3 and REFBIND-1 (the reference
// binders' normal form, re-derived from the parent PortablePlanIR).
#include "verifiers/layers.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <span>
#include <unordered_map>

namespace plancert::layers {
using check::at;
namespace {

using Env = std::function<std::optional<Rat>(std::string_view)>;
constexpr CommandKind kCommand[] = {CommandKind::collective, CommandKind::launch, CommandKind::host, CommandKind::recv, CommandKind::send};  // by TaskKind
constexpr QueueKind kQueue[] = {QueueKind::collective, QueueKind::compute, QueueKind::host, QueueKind::transfer, QueueKind::transfer};

auto cap_key(std::size_t owner, const Capability& x) { return std::tuple(owner, x.collective, x.dtype, x.kind, x.reduction); }  // (device or implementation, capability)
bool pinned(Storage s) { return s != Storage::transient && s != Storage::workspace; }
std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// Happens-before as vector clocks over chains: the queues of a queue target, a greedy chain
// cover (in topological order) of a slot target. The clock of v, a row of k entries, holds at
// q the largest 1-based position in chain q of a command that happens before v or is v. Rows
// are computed in topological order, and a row is kept only while its command has a successor
// still to compute (the frontier): every question "does a happen before b" is asked while b's
// row is live, so the table holds the frontier, not every command.
struct Hb {
  Hb(const ConcretePlanIR& plan, Flow&& f) : p(plan), signaller(std::move(f.signaller)), qprev(std::move(f.prev)), order(std::move(f.order)) {}
  const ConcretePlanIR& p;
  std::vector<Index> signaller, qprev;  // the families' (layers.h, Flow)
  std::size_t k = 0, rows = 0;  // chains; the most rows live at once
  struct Node { std::uint32_t chain, pos, last, slot; };  // together: one cache miss per predecessor, not four
  std::vector<std::uint32_t> order;
  std::vector<Node> node;  // last: the step of the last successor (or its own); slot: where a live row is
  std::unique_ptr<std::uint32_t[]> vc;
  template <class F>
  void preds(std::size_t v, F&& fn) const {  // the queue predecessor first: its clock covers most of the others'
    if (qprev[v] >= 0) fn(static_cast<std::size_t>(qprev[v]));
    for (Index u : p.commands[v].dependencies) fn(static_cast<std::size_t>(u));
    for (Index t : p.commands[v].waits)
      if (const Index u = signaller[static_cast<std::size_t>(t)]; u >= 0 && static_cast<std::size_t>(u) != v) fn(static_cast<std::size_t>(u));
  }
  // Asked while b's row is live (b is the command sweep() hands to the checks).
  [[nodiscard]] bool before(std::size_t a, std::size_t b) const { return a == b || vc[std::size_t{node[b].slot} * k + node[a].chain] >= node[a].pos; }
  // Orders, chains and sizes the table. 0: done; 1: cyclic (DAG-2, DEADLOCK-1 or SLOT-3 report
  // it); 2: over the resource limit (RACE-3).
  int build() {
    const std::size_t n = p.commands.size();
    if (qprev.empty()) qprev.assign(n, -1);  // a slot target: no queues, and no order from DEADLOCK-1
    if (order.empty() && !check::find_cycle(n, [&](std::size_t v, auto&& fn) { preds(v, fn); }, &order).empty()) return 1;
    std::vector<std::uint32_t> tail;
    std::vector<std::int32_t> d(n + 1, 0);  // d[i]: rows taken at step i minus rows freed after step i - 1
    node.assign(n, Node{0, 0, 0, 0});
    for (std::uint32_t i = 0; i < n; ++i) {  // queue: the queue predecessor's chain; slot: a predecessor that ends its chain
      const std::uint32_t v = order[i];
      std::int64_t q = p.queue && qprev[v] >= 0 ? std::int64_t{node[static_cast<std::size_t>(qprev[v])].chain} : -1;
      preds(v, [&](std::size_t u) { q = q < 0 && !p.queue && tail[node[u].chain] == u ? node[u].chain : q, node[u].last = i; });
      if (q < 0) { q = static_cast<std::int64_t>(tail.size()); tail.push_back(v); }
      node[v].pos = node[tail[static_cast<std::size_t>(q)]].pos + 1;  // a new chain's tail is v itself, at position 0
      node[v].chain = static_cast<std::uint32_t>(q);
      tail[static_cast<std::size_t>(q)] = v, node[v].last = i, ++d[i];
    }
    k = tail.size();
    for (std::size_t v = 0; v < n; ++v) --d[node[v].last + 1];
    for (std::size_t i = 0, live = 0; i < n; ++i) rows = std::max(rows, live += static_cast<std::size_t>(d[i]));
    return k * rows * 4 > (std::size_t{1} << 29) ? 2 : 0;  // 512 MiB of clocks
  }
  // Computes the rows in topological order and calls at(v) while v's row is live.
  template <class F>
  void sweep(F&& at) {
    const std::size_t n = order.size();
    std::vector<std::uint32_t> spare(rows);  // free rows
    std::iota(spare.rbegin(), spare.rend(), 0U);
    vc.reset(new std::uint32_t[k * rows]);  // uninitialised: a row is zeroed when it is taken
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t v = order[i];
      if (i + 32 < n) preds(order[i + 32], [&](std::size_t u) { __builtin_prefetch(&node[u]); });  // predecessors lie far apart: fetch them,
      if (i + 16 < n)  // then their rows, a few commands ahead (slot 0 for one not computed yet)
        preds(order[i + 16], [&](std::size_t u) { __builtin_prefetch(&vc[node[u].slot * k]), __builtin_prefetch(&vc[node[u].slot * k + k - 1]); });
      node[v].slot = spare.back(), spare.pop_back();
      std::uint32_t* cv = std::fill_n(&vc[std::size_t{node[v].slot} * k], k, 0U) - k;
      preds(v, [&](std::size_t u) {  // u != v: a different row. Skipped when u happens before a predecessor merged already: its clock is no larger
        if (const std::uint32_t* cu = &vc[std::size_t{node[u].slot} * k]; cv[node[u].chain] < node[u].pos)
          for (std::size_t q = 0, kk = k; q < kk; ++q) cv[q] = std::max(cv[q], cu[q]);  // locals: a uint32_t store could alias slot or k
        if (node[u].last == i) spare.push_back(node[u].slot), node[u].last = UINT32_MAX;  // v is u's last successor: u's row is free (once: u may be listed twice)
      });
      cv[node[v].chain] = node[v].pos;
      at(v);
      if (node[v].last == i) spare.push_back(node[v].slot);
    }
  }
};

// RACE-1..3, and CAP-5 (which needs happens-before). RACE-1 is checked as the sweep reaches
// each access; the questions of RACE-2 and CAP-5 are collected first, keyed by the command
// whose row answers them, and tallied during the sweep.
void race(check::Ctx& c, const ConcretePlanIR& p, Flow&& flow) {
  Hb h(p, std::move(flow));
  if (int st = h.build(); st != 0) {
    if (st == 2) c.err("RACE-3", "/payload/commands", "happens-before needs " + std::to_string(h.k) + " chains x " + std::to_string(h.rows) +
                                                          " live commands x 4 bytes of clocks, over the limit of 512 MiB: race freedom is not decided, so the plan is rejected");
    return;
  }
  const std::size_t nb = p.buffers.size(), n = p.commands.size();
  auto cid = [&](std::size_t v) { return in_quotes(p.commands[v].id); };
  // Accesses of buffer b in topological order (read + write = write): acc[off[b] .. off[b + 1]), one
  // array counted then filled. wrote[b] == v exactly when v writes b (its writes come first), in every pass.
  std::vector<std::size_t> off(nb + 2, 0);
  std::vector<std::uint32_t> wrote(nb, UINT32_MAX), topo(n);
  auto accesses = [&](std::uint32_t v, auto&& fn) {
    for (Index b : p.commands[v].writes) fn(static_cast<std::size_t>(b), v, true), wrote[static_cast<std::size_t>(b)] = v;
    for (Index b : p.commands[v].reads) if (wrote[static_cast<std::size_t>(b)] != v) fn(static_cast<std::size_t>(b), v, false);
  };
  for (std::uint32_t v : h.order) accesses(v, [&](std::size_t b, std::uint32_t, bool) { ++off[b + 2]; });
  std::partial_sum(off.begin(), off.end(), off.begin());  // off[b + 1]: where b's accesses start
  struct Access { std::uint32_t command : 31, writes : 1; };  // 4 bytes, not 8: fewer than 2^31 commands (SCHEMA-8)
  std::vector<Access> acc(off[nb + 1]);
  for (std::size_t i = 0; i < n; ++i) topo[h.order[i]] = static_cast<std::uint32_t>(i);
  for (std::uint32_t v : h.order) accesses(v, [&](std::size_t b, std::uint32_t u, bool wr) { acc[off[b + 1]++] = {u & INT32_MAX, wr}; });  // then off[b + 1]: where they end
  // head: leading reads and the first write; tail: the last write and the reads after it (both
  // empty for an empty buffer). Every access happens after some head and before some tail access
  // (RACE-1). Ranges of acc: head [off[b], hend[b]), tail [tw[b], off[b + 1]).
  std::vector<std::size_t> hend(nb), tw(nb), lw(nb, SIZE_MAX), next(off.begin(), off.begin() + static_cast<std::ptrdiff_t>(nb));
  std::vector<char> done(nb, 0);  // RACE-1 is not checked (further) on b: it is empty, or raced already
  for (std::size_t b = 0; b < nb; ++b) {
    done[b] = p.buffers[b].size <= 0;
    hend[b] = p.buffers[b].size > 0 ? off[b + 1] : off[b], tw[b] = p.buffers[b].size > 0 ? off[b] : off[b + 1];
    for (std::size_t i = off[b]; i < off[b + 1] && p.buffers[b].size > 0; ++i)
      if (acc[i].writes) hend[b] = std::min(hend[b], i + 1), tw[b] = i;
  }
  auto head = [&](std::size_t b) { return std::span(acc).subspan(off[b], hend[b] - off[b]); };
  auto tail = [&](std::size_t b) { return std::span(acc).subspan(tw[b], off[b + 1] - tw[b]); };
  // RACE-1: per buffer, every access happens after the write before it (lw: the last so far) and
  // every write after the reads since that write. One finding per buffer.
  auto race1 = [&](std::size_t b, std::uint32_t v, bool wr) {
    const std::size_t i = next[b]++, w = std::exchange(lw[b], wr ? i : lw[b]);
    if (done[b]) return;
    std::int64_t bad = w != SIZE_MAX && !h.before(acc[w].command, v) ? std::int64_t{acc[w].command} : -1;
    for (std::size_t j = w == SIZE_MAX ? off[b] : w + 1; wr && j < i; ++j) bad = bad < 0 && !h.before(acc[j].command, v) ? acc[j].command : bad;  // the reads since w
    if (bad >= 0 && (done[b] = 1))
      c.err("RACE-1", at("buffers", b), "commands " + cid(static_cast<std::size_t>(bad)) + " and " + cid(v) + " access buffer " + in_quotes(p.buffers[b].id) + ", one of them writes, and neither happens before the other");
  };
  // Questions "does e happen before l" as (topological position of l, e, tally): yes[tally]
  // counts the answers yes.
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::size_t>> asks;  // fewer than 2^25 (512 MiB): else RACE-3, as for clocks
  constexpr std::size_t kMaxAsks = std::size_t{1} << 25;  // (the bundled examples bound to queues ask at most 0.6 million)
  auto question = [&](std::uint32_t l, std::uint32_t e, std::size_t t) { if (asks.size() < kMaxAsks) asks.emplace_back(l, e, t); };
  std::vector<std::size_t> yes;
  // RACE-2: on each device, buffers that share a byte are ordered as wholes (every access of one
  // happens before every access of the other) and neither is pinned. Address sweep: the active
  // buffers share the bytes just below the sweep point; sorted by first access they must form a
  // chain, so comparing neighbours (as they become neighbours) suffices. Tally t: pairs[t].
  auto device_of = [&](std::size_t b) { return p.regions[static_cast<std::size_t>(p.buffers[b].region)].device; };
  auto start_of = [&](std::size_t b) { return Int(p.regions[static_cast<std::size_t>(p.buffers[b].region)].offset + p.buffers[b].offset); };
  auto sat = [](const Int& a) { return a <= 0 ? std::uint64_t{0} : a >= UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(a); };  // monotone in a
  // (device, address saturated to 64 bits, address, 0 = end / 1 = start, buffer): the 64-bit image decides
  // most comparisons cheaply, and the exact (multiprecision) address breaks only its ties.
  std::vector<std::tuple<Index, std::uint64_t, Int, int, std::uint32_t>> ev;
  for (std::size_t b = 0; b < nb; ++b)
    if (p.buffers[b].size > 0 && (pinned(p.buffers[b].storage) || !head(b).empty())) {
      const Int s = start_of(b), e = s + p.buffers[b].size;
      ev.emplace_back(device_of(b), sat(s), s, 1, static_cast<std::uint32_t>(b));
      ev.emplace_back(device_of(b), sat(e), e, 0, static_cast<std::uint32_t>(b));
    }
  std::sort(ev.begin(), ev.end());
  std::set<std::pair<std::uint64_t, std::uint32_t>> active;  // a device's buffers all end before the next device's start
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::size_t>> pairs;  // (a, b, the yes answers that order them)
  auto key = [&](std::uint32_t b) { return std::make_pair(pinned(p.buffers[b].storage) ? 0 : std::uint64_t{topo[head(b).front().command]} + 1, b); };
  // Of the accesses on one chain only the last of tail(a) and the first of head(b) are asked about:
  // the others happen before (after) them on the chain. So a pair asks at most K x K questions
  // (K chains), where every access of tail(a) x head(b) can be quadratic in the plan. Each is
  // computed once a buffer, into pool[memo[2b + last]): a buffer can neighbour many others in turn.
  std::vector<std::uint32_t> in_ends(h.k, UINT32_MAX), pool;  // scratch: where a chain's access is in the result being built
  std::vector<std::pair<std::size_t, std::size_t>> memo(2 * nb, {0, SIZE_MAX});
  auto ends = [&](std::size_t b, bool last) {
    if (auto& [s, e] = memo[2 * b + last]; e == SIZE_MAX) {
      s = pool.size();
      for (const auto& x : last ? tail(b) : head(b))
        if (std::uint32_t& j = in_ends[h.node[x.command].chain]; j == UINT32_MAX) j = static_cast<std::uint32_t>(pool.size() - s), pool.push_back(x.command);
        else if ((h.node[x.command].pos > h.node[pool[s + j]].pos) == last) pool[s + j] = x.command;
      for (std::size_t i = s; i < pool.size(); ++i) in_ends[h.node[pool[i]].chain] = UINT32_MAX;
      e = pool.size();
    }
    return memo[2 * b + last];
  };
  auto check = [&](std::uint32_t a, std::uint32_t b) {  // a pinned buffer shares memory with none: no question
    const auto [x0, x1] = pinned(p.buffers[a].storage) || pinned(p.buffers[b].storage) ? std::pair<std::size_t, std::size_t>() : ends(a, true);
    const auto [y0, y1] = x0 == x1 ? std::pair<std::size_t, std::size_t>() : ends(b, false);
    for (std::size_t i = x0; i < x1; ++i)
      for (std::size_t j = y0; j < y1; ++j) if (pool[i] != pool[j]) question(topo[pool[j]], pool[i], pairs.size());  // one command accessing both: never ordered
    pairs.emplace_back(a, b, (x1 - x0) * (y1 - y0)), yes.push_back(0);
  };
  for (const auto& [dev, sat_addr, addr, kind, b] : ev) {
    auto it = kind == 0 ? active.find(key(b)) : active.insert(key(b)).first, nx = std::next(it);
    if (kind == 0 && it != active.begin() && nx != active.end()) check(std::prev(it)->second, nx->second);
    if (kind == 1 && it != active.begin()) check(std::prev(it)->second, b);
    if (kind == 1 && nx != active.end()) check(b, nx->second);
    if (kind == 0) active.erase(it);
  }
  decltype(ev)().swap(ev);  // freed before the sweep, whose clock table can take the space (README, Performance)
  // CAP-5: peak = highest end address of the device's buffers; lower bound = pinned bytes plus the
  // bytes of buffers with an access at or before the witness and one strictly after it. Tallies
  // base[k] + 2j and + 2j + 1: the j-th buffer of the device has an access before / after the witness.
  // Buffers by device, once: each memory entry visits its device's buffers only (not devices x buffers).
  std::vector<std::vector<std::uint32_t>> on(p.devices.size());
  for (std::uint32_t b = 0; b < nb; ++b) on[static_cast<std::size_t>(device_of(b))].push_back(b);
  std::vector<std::size_t> base(p.memory.size(), SIZE_MAX);
  std::vector<char> listed(p.devices.size(), 0);  // one entry a device: entries x buffers of their device stays linear
  for (std::size_t k = 0; k < p.memory.size(); ++k) {
    const auto& m = p.memory[k];
    const std::string path = "/payload/memory/" + std::to_string(k);
    if (!check::ref(c, m.device, p.devices.size(), path + "/device") || (m.witness && !check::ref(c, *m.witness, n, path + "/witness"))) continue;
    if (std::exchange(listed[static_cast<std::size_t>(m.device)], 1)) { c.err("CAP-5", path + "/device", "device " + in_quotes(p.devices[static_cast<std::size_t>(m.device)].id) + " has an earlier entry"); continue; }
    const auto w = static_cast<std::uint32_t>(m.witness.value_or(0));
    base[k] = yes.size();
    for (std::uint32_t b : on[static_cast<std::size_t>(m.device)]) {
      for (const auto& y : m.witness ? head(b) : head(b).first(0)) question(topo[w], y.command, yes.size());
      for (const auto& x : m.witness ? tail(b) : tail(b).first(0)) if (x.command != w) question(topo[x.command], w, yes.size() + 1);
      yes.resize(yes.size() + 2);
    }
  }
  if (asks.size() >= kMaxAsks) return c.err("RACE-3", "/payload/buffers", "RACE-2 and CAP-5 ask 2^25 or more happens-before questions (buffers that share memory, each accessed by many commands): not decided, so the plan is rejected");
  std::sort(asks.begin(), asks.end());
  auto ask = asks.begin();
  h.sweep([&](std::uint32_t v) {
    accesses(v, race1);
    for (; ask != asks.end() && std::get<0>(*ask) == topo[v]; ++ask) yes[std::get<2>(*ask)] += h.before(std::get<1>(*ask), v);
  });
  for (std::size_t t = 0; t < pairs.size(); ++t)
    if (auto [a, b, all] = pairs[t]; pinned(p.buffers[a].storage) || pinned(p.buffers[b].storage) || yes[t] < all)
      c.err("RACE-2", at("buffers", b), "buffers " + in_quotes(p.buffers[a].id) + " and " + in_quotes(p.buffers[b].id) +
                                            " share device memory, but one is pinned or not every access of one happens before every access of the other");
  for (std::size_t k = 0; k < p.memory.size(); ++k) {
    if (base[k] == SIZE_MAX) continue;
    const auto& m = p.memory[k];
    Int peak = 0, live = 0;
    std::size_t t = base[k];
    for (std::uint32_t b : on[static_cast<std::size_t>(m.device)]) {
      peak = std::max(peak, Int(start_of(b) + p.buffers[b].size));
      if (pinned(p.buffers[b].storage) || (yes[t] > 0 && yes[t + 1] > 0)) live += p.buffers[b].size;
      t += 2;
    }
    if (peak != m.peak_bytes || live != m.lower_bound_bytes)
      c.err("CAP-5", "/payload/memory/" + std::to_string(k), "device " + in_quotes(p.devices[static_cast<std::size_t>(m.device)].id) + " has peak_bytes " + to_string(peak) +
                                                               " (highest buffer end) and lower_bound_bytes " + to_string(live) + " (live at the witness)");
  }
}

// The first difference between two members of the same name (its first differing element for arrays).
template <class T>
void diff(std::string_view name, const T& want, const T& got, std::string& where) {
  if (!where.empty() || codec::to_canonical(want) == codec::to_canonical(got)) return;
  std::size_t i = 0;
  if constexpr (codec::Vector<T>)
    while (i < want.size() && i < got.size() && codec::to_canonical(want[i]) == codec::to_canonical(got[i])) ++i;
  where = std::string(name) + (codec::Vector<T> ? "/" + std::to_string(i) : "");
}

// REFBIND-1 and ALIGN-3: re-derives the reference normal form (BindReferenceQueueTargetPass,
// BindReferenceSlotTargetPass) from the parent and compares. Target facts (device kind and
// memory, engines, implementation names, bindings, memory figures) are taken from `got`; the
// other families check them.
void reference(check::Ctx& c, const PortablePlanIR& pp, const ConcretePlanIR& got, const Env& env) {
  const std::size_t nt = pp.tasks.size();  // tasks in index order (QUEUE-4 / SLOT-3 reject it when that is not topological)
  ConcretePlanIR e = got;  // then every derived member is rebuilt
  e.rules = {"bind.reference.buffer", "bind.reference.task"};
  e.tokens.clear();
  e.queue.reset();
  e.slot.reset();
  // Devices: the tasks' rank sets when they are non-empty, pairwise equal or disjoint, and of
  // one size (in their order), else one device without ranks; one "hbm" region of alignment 16 each.
  std::map<Indices, Index> sets;
  std::unordered_map<Index, int> owners;
  for (const auto& t : pp.tasks) sets.emplace(t.ranks, 0);
  bool disjoint = nt > 0;
  for (const auto& [r, d] : sets) {
    disjoint = disjoint && !r.empty();
    for (Index x : r) disjoint = disjoint && ++owners[x] == 1;
    disjoint = disjoint && r.size() == sets.begin()->first.size();
  }
  if (!disjoint) sets = {{Indices{}, 0}};
  e.devices.clear();
  e.regions.clear();
  for (auto& [r, d] : sets) {
    d = static_cast<Index>(e.devices.size());
    const Device* g = e.devices.size() < got.devices.size() ? &got.devices[e.devices.size()] : nullptr;
    std::string id = r.empty() ? std::string("dev:ref") : "dev:r" + std::to_string(r.front());
    e.devices.push_back(Device{id, g ? g->kind : "", g ? g->memory_bytes : Int(0), r});
    e.regions.push_back(Region{16, e.devices.back().memory_bytes, d, "r:" + id, Int(0), "hbm"});
  }
  auto dev_of = [&](std::size_t t) { return disjoint ? sets.at(pp.tasks[t].ranks) : Index{0}; };
  // Buffers in canonical order on their home device (producer, first consumer, the task planned
  // from the same source, else device 0): a_i = max(16, r_i), o_i = ceil((o_{i-1} + s_{i-1}) / a_i) a_i.
  std::unordered_map<std::string_view, std::size_t> by_source;
  for (std::size_t t = 0; t < nt; ++t)
    if (!pp.tasks[t].lineage.sources.empty()) by_source.emplace(pp.tasks[t].lineage.sources[0], t);
  std::vector<Int> end(e.devices.size());
  e.buffers.clear();
  for (const auto& pb : pp.buffers) {
    auto it = pb.lineage.sources.empty() ? by_source.end() : by_source.find(pb.lineage.sources[0]);
    std::int64_t home = pb.producer ? *pb.producer : !pb.consumers.empty() ? pb.consumers.front() : it != by_source.end() ? static_cast<std::int64_t>(it->second) : -1;
    const Index d = home < 0 ? 0 : dev_of(static_cast<std::size_t>(home));
    auto v = pb.size.eval(env);
    if (!v || *v < 0 || boost::multiprecision::denominator(*v) != 1) return c.err("REFBIND-1", "/payload/buffers", "portable buffer " + in_quotes(pb.id) + " has no integer size under the bindings");
    const std::int64_t a = std::max<std::int64_t>(16, pb.alignment);
    Int& o = end[static_cast<std::size_t>(d)];
    o = (o + a - 1) / a * a;
    e.buffers.push_back(ConcreteBuffer{a, "cb:" + pb.id, Lineage{LineageKind::derived, "bind.reference.buffer", {pb.id}}, o, d, boost::multiprecision::numerator(*v), pb.storage});
    o += e.buffers.back().size;
  }
  // Commands in the task order; a transfer is routed to its peer's device (the first send a
  // receive depends on; the first receive that depends on a send).
  std::vector<Index> peer(nt, -1);
  e.commands.resize(nt);
  for (std::size_t t = 0; t < nt; ++t) {
    const PortableTask& pt = pp.tasks[t];
    std::string impl = t < got.commands.size() ? got.commands[t].implementation : "";
    e.commands[t] = Command{.dependencies = pt.dependencies, .waits = {}, .reads = pt.inputs, .writes = pt.outputs, .signals = {}, .device = dev_of(t),
                            .kind = kCommand[static_cast<std::size_t>(pt.kind)], .id = "c:" + pt.id, .implementation = impl,
                            .lineage = {LineageKind::derived, "bind.reference.task", {pt.id}}, .attrs = {}, .repeat = pt.repeat, .work = pt.work};
    for (Index u : pt.dependencies)
      if (pt.kind == TaskKind::recv && pp.tasks[static_cast<std::size_t>(u)].kind == TaskKind::send) {
        peer[t] = peer[t] < 0 ? dev_of(static_cast<std::size_t>(u)) : peer[t];
        peer[static_cast<std::size_t>(u)] = peer[static_cast<std::size_t>(u)] < 0 ? dev_of(t) : peer[static_cast<std::size_t>(u)];
      }
  }
  if (e.target == TargetKind::queue) {  // per device: collective, compute, host, transfer queues, in task order
    std::map<std::pair<Index, QueueKind>, Indices> qs;
    for (std::size_t t = 0; t < nt; ++t) qs[{e.commands[t].device, kQueue[static_cast<std::size_t>(pp.tasks[t].kind)]}].push_back(static_cast<Index>(t));
    e.queue.emplace();
    for (auto& [k, cmds] : qs) e.queue->queues.push_back(Queue{std::move(cmds), k.first, "q:" + e.devices[static_cast<std::size_t>(k.first)].id + ":" + std::string(codec::enum_name(k.second)), k.second});
  } else {  // issue(t_i) = (cycle i, slot 0); one route per transfer
    e.slot.emplace();
    for (std::size_t t = 0; t < nt; ++t) {
      e.slot->issue.push_back(Issue{static_cast<std::int64_t>(t), 0});
      const Index own = e.commands[t].device, other = peer[t] < 0 ? own : peer[t];
      if (pp.tasks[t].kind == TaskKind::send || pp.tasks[t].kind == TaskKind::recv)
        e.slot->routes.push_back(pp.tasks[t].kind == TaskKind::send ? Route{static_cast<Index>(t), other, own} : Route{static_cast<Index>(t), own, other});
    }
  }
  if (e.buffers.size() == got.buffers.size())  // ALIGN-3 on the offsets, then REFBIND-1 on everything else
    for (std::size_t i = 0; i < e.buffers.size(); ++i) {
      if (e.buffers[i].offset != got.buffers[i].offset)
        c.err("ALIGN-3", at("buffers", i, "offset"), "the reference recurrence places buffer " + in_quotes(e.buffers[i].id) + " at offset " + to_string(e.buffers[i].offset) +
                                                         " (a_i = " + std::to_string(e.buffers[i].alignment) + ")");
      e.buffers[i].offset = got.buffers[i].offset;
    }
  std::string where;
  std::apply([&](const auto&... f) { (diff(f.name, e.*(f.ptr), got.*(f.ptr), where), ...); }, ConcretePlanIR::fields());
  if (!where.empty()) c.err("REFBIND-1", "/payload/" + where, "the plan declares the reference binding but differs here from the normal form re-derived from its parent");
}

}  // namespace

void bind(check::Ctx& c, const ConcretePlanIR& p, bool families_ok, Flow&& flow) {
  const std::size_t nd = p.devices.size();
  for (std::size_t i = 0; i < p.engines.size(); ++i) check::ref(c, p.engines[i].device, nd, at("engines", i, "device"));
  // IMPL-2: device ranks are sorted ranks of the deployment, each on one device, and every
  // device stands for as many ranks as device 0 (so none has ranks, or all have).
  std::unordered_map<Index, std::size_t> owner;
  for (std::size_t d = 0; d < nd; ++d) {
    const auto& r = p.devices[d].ranks;
    if (r.size() != p.devices[0].ranks.size()) c.err("IMPL-2", at("devices", d, "ranks"), "every device must stand for as many ranks as device 0");
    for (std::size_t k = 0; k < r.size(); ++k)
      if (r[k] < 0 || r[k] >= p.world_size || !owner.emplace(r[k], d).second || (k > 0 && r[k] <= r[k - 1]))
        c.err("IMPL-2", at("devices", d, "ranks", static_cast<std::int64_t>(k)), "rank " + std::to_string(r[k]) + " is outside the deployment of " +
                                                                                      std::to_string(p.world_size) + " devices, out of order, or on two devices");
  }
  if (families_ok) race(c, p, std::move(flow));
}

void portable_to_concrete(check::Ctx& c, const PortablePlanIR& pp, const ConcretePlanIR& p) {
  const std::size_t nt = pp.tasks.size(), npb = pp.buffers.size();
  std::unordered_map<std::string_view, std::size_t> task_of, buf_of, impl_of;
  std::set<decltype(cap_key(0, Capability{}))> runs, provides;  // what the engines of each device run; what each implementation provides
  for (std::size_t i = 0; i < nt; ++i) task_of.emplace(pp.tasks[i].id, i);
  for (std::size_t i = 0; i < npb; ++i) buf_of.emplace(pp.buffers[i].id, i);
  for (std::size_t i = 0; i < p.implementations.size(); ++i)
    for (impl_of.emplace(p.implementations[i].id, i); const auto& cap : p.implementations[i].provides) provides.insert(cap_key(i, cap));
  for (const auto& e : p.engines)
    for (const auto& cap : e.capabilities) runs.insert(cap_key(static_cast<std::size_t>(e.device), cap));
  // CAP-4: bindings are values the parent's symbols allow; every portable buffer is bound, each
  // binding with its size under the bindings, its storage and at least its alignment.
  std::unordered_map<std::string_view, Rat> values;
  std::unordered_map<std::string_view, const Symbol*> symbol;  // SYM-1: names are unique
  for (const auto& x : pp.symbols) symbol.emplace(x.name, &x);
  for (std::size_t k = 0; k < p.bindings.size(); ++k) {
    const auto& b = p.bindings[k];
    const Symbol* s = symbol[b.symbol];  // null for an undeclared name
    if (!s || b.value < s->min || (s->max && b.value > *s->max) || b.value % s->divisible_by != 0 || !values.emplace(b.symbol, Rat(b.value)).second)
      c.err("CAP-4", "/payload/bindings/" + std::to_string(k), "binding " + b.symbol + " = " + to_string(b.value) + " is repeated or not a value the parent's symbol allows");
  }
  Env env = [&](std::string_view s) { auto it = values.find(s); return it == values.end() ? std::nullopt : std::optional<Rat>(it->second); };
  std::vector<std::optional<Rat>> size_of(npb);  // each portable size evaluated once: any number of concrete buffers may bind one
  for (std::size_t j = 0; j < npb; ++j) size_of[j] = pp.buffers[j].size.eval(env);
  std::vector<std::int64_t> src(p.buffers.size(), -1);
  std::vector<char> bound(npb, 0);
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    auto it = b.lineage.sources.size() == 1 ? buf_of.find(b.lineage.sources[0]) : buf_of.end();
    if (it == buf_of.end()) continue;  // introduced by the binder: only the snapshot families apply
    const auto& pb = pp.buffers[it->second];
    src[i] = static_cast<std::int64_t>(it->second);
    bound[it->second] = 1;
    const auto& v = size_of[it->second];
    if (!v || *v != Rat(b.size) || b.storage != pb.storage || b.alignment < pb.alignment)
      c.err("CAP-4", at("buffers", i), "a binding of portable buffer " + in_quotes(pb.id) + " must have its size (" + (v ? to_string(*v) : pb.size.str() + ", unbound") +
                                           "), its storage and at least its alignment");
  }
  for (std::size_t j = 0; j < npb; ++j)
    if (!bound[j]) c.err("CAP-4", "/payload/buffers", "portable buffer " + in_quotes(pp.buffers[j].id) + " is bound to no buffer");
  // WORK-4, IMPL-1, RACE-4 per command.
  std::unordered_map<std::uint64_t, std::int64_t> instances;  // (task, device) -> instances
  std::vector<std::uint32_t> rd(npb, 0), wr(npb, 0);
  std::vector<std::int64_t> task(p.commands.size(), -1);  // the portable task of each command
  for (std::size_t v = 0; v < p.commands.size(); ++v) {
    const Command& cmd = p.commands[v];
    auto it = cmd.lineage.sources.size() == 1 ? task_of.find(cmd.lineage.sources[0]) : task_of.end();
    if (it == task_of.end()) {  // else only a copy of one portable buffer, introduced by the binder
      if (cmd.kind != CommandKind::copy || cmd.lineage.sources.size() != 1 || !buf_of.count(cmd.lineage.sources[0]))
        c.err("WORK-4", at("commands", v, "lineage/sources"), "a command must derive from exactly one portable task, or be a copy of one portable buffer");
      continue;
    }
    task[v] = static_cast<std::int64_t>(it->second);
    const PortableTask& t = pp.tasks[it->second];
    if (cmd.kind != kCommand[static_cast<std::size_t>(t.kind)] || cmd.repeat < 1 || *cmd.work != t.work)
      c.err("WORK-4", at("commands", v), "a command of task " + in_quotes(t.id) + " must have its kind and work and repeat >= 1");
    instances[(static_cast<std::uint64_t>(it->second) << 32) | static_cast<std::uint32_t>(cmd.device)] += cmd.repeat;
    auto im = impl_of.find(cmd.implementation.str());
    for (const auto& r : t.requires_)
      if (im == impl_of.end() || !provides.count(cap_key(im->second, r)) || !runs.count(cap_key(static_cast<std::size_t>(cmd.device), r)))
        c.err("IMPL-1", at("commands", v, "implementation"), "task " + in_quotes(t.id) + " requires " + codec::to_canonical(r) + ": implementation " +
                                                                 in_quotes(cmd.implementation) + " is not declared, does not provide it, or no engine of the device runs it");
    const auto epoch = static_cast<std::uint32_t>(v + 1);
    for (Index b : cmd.reads)
      if (std::int64_t s = src[static_cast<std::size_t>(b)]; s >= 0) rd[static_cast<std::size_t>(s)] = epoch;
    for (Index b : cmd.writes)
      if (std::int64_t s = src[static_cast<std::size_t>(b)]; s >= 0) wr[static_cast<std::size_t>(s)] = epoch;
    if (!std::all_of(t.inputs.begin(), t.inputs.end(), [&](Index b) { return rd[static_cast<std::size_t>(b)] == epoch; }) ||
        !std::all_of(t.outputs.begin(), t.outputs.end(), [&](Index b) { return wr[static_cast<std::size_t>(b)] == epoch; }))
      c.err("RACE-4", at("commands", v), "the command must read a binding of every input and write a binding of every output of task " + in_quotes(t.id));
  }
  // WORK-4: with device ranks, a task's devices partition its ranks; without, it has one device;
  // either way each of its devices runs exactly its repeat instances.
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> per(nt);
  for (const auto& [k, count] : instances) per[k >> 32].emplace_back(k & 0xffffffffu, count);
  const bool ranked = !p.devices.empty() && !p.devices[0].ranks.empty();
  for (std::size_t t = 0; t < nt; ++t) {
    const Indices& R = pp.tasks[t].ranks;
    std::size_t covered = 0;
    bool ok = !per[t].empty() && (ranked || per[t].size() == 1);
    for (const auto& [d, count] : per[t]) {
      ok = ok && count == pp.tasks[t].repeat;
      for (Index r : p.devices[d].ranks) ok = ok && std::binary_search(R.begin(), R.end(), r);
      covered += p.devices[d].ranks.size();
    }
    if (!ok || (ranked && covered != R.size()))
      c.err("WORK-4", "/payload/commands", "task " + in_quotes(pp.tasks[t].id) + " must run its " + std::to_string(pp.tasks[t].repeat) + " instances on devices " +
                                               (ranked ? "whose ranks partition its ranks" : "(one device, as no device has ranks)"));
  }
  // DAG-5: a command of task b lists, for every dependency a of b and every device that runs a,
  // a command of a on that device. (task, device) pairs are numbered first[a] + their rank in
  // per[a]; one finding per command keeps it O(C + E log d).
  std::vector<std::size_t> first(nt + 1, 0);
  for (std::size_t t = 0; t < nt; ++t) std::sort(per[t].begin(), per[t].end()), first[t + 1] = first[t] + per[t].size();
  auto pair_of = [&](std::size_t t, std::size_t d) { return first[t] + static_cast<std::size_t>(std::partition_point(per[t].begin(), per[t].end(), [&](const auto& x) { return x.first < d; }) - per[t].begin()); };
  std::vector<std::size_t> seen(first[nt], 0);
  for (std::size_t v = 0; v < p.commands.size(); ++v) {
    if (task[v] < 0) continue;
    for (Index u : p.commands[v].dependencies)
      if (std::int64_t a = task[static_cast<std::size_t>(u)]; a >= 0) seen[pair_of(static_cast<std::size_t>(a), static_cast<std::size_t>(p.commands[static_cast<std::size_t>(u)].device))] = v + 1;
    for (Index a : pp.tasks[static_cast<std::size_t>(task[v])].dependencies)
      if (auto k = first[static_cast<std::size_t>(a)]; std::any_of(seen.begin() + static_cast<std::ptrdiff_t>(k), seen.begin() + static_cast<std::ptrdiff_t>(first[static_cast<std::size_t>(a) + 1]), [&](std::size_t s) { return s != v + 1; })) {
        c.err("DAG-5", at("commands", v, "dependencies"), "a command of portable task " + in_quotes(pp.tasks[static_cast<std::size_t>(task[v])].id) + " must depend on a command of its dependency " +
                                                            in_quotes(pp.tasks[static_cast<std::size_t>(a)].id) + " on every device that runs one");
        break;
      }
  }
  if (std::find(p.rules.begin(), p.rules.end(), "bind.reference.task") != p.rules.end()) reference(c, pp, p, env);
}

}  // namespace plancert::layers
