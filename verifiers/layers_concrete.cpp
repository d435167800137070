// SPDX-License-Identifier: Apache-2.0
// ConcretePlanIR families: ALIGN, CAP, QUEUE, SLOT, ROUTE, TOKEN, DEADLOCK.
#include "verifiers/layers.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace plancert::layers {
using check::at;
namespace {

bool pow2(std::int64_t a) { return a >= 1 && (a & (a - 1)) == 0; }

bool is_transfer(CommandKind k) { return k == CommandKind::send || k == CommandKind::recv || k == CommandKind::copy; }

QueueKind queue_kind_for(CommandKind k) {
  return k == CommandKind::launch ? QueueKind::compute : k == CommandKind::collective ? QueueKind::collective : k == CommandKind::host ? QueueKind::host : QueueKind::transfer;
}

void memory(check::Ctx& c, const ConcretePlanIR& p) {
  for (std::size_t i = 0; i < p.regions.size(); ++i) {
    const auto& r = p.regions[i];
    if (!pow2(r.alignment)) c.err("ALIGN-2", at("regions", i, "alignment"), "alignment " + std::to_string(r.alignment) + " is not a positive power of two");
    const Int& mem = p.devices[static_cast<std::size_t>(r.device)].memory_bytes;
    if (r.offset < 0 || r.capacity < 0 || r.offset + r.capacity > mem)
      c.err("CAP-2", at("regions", i), "region [" + to_string(r.offset) + ", " + to_string(Int(r.offset + r.capacity)) + ") does not lie within the device memory of " + to_string(mem) + " bytes");
  }
  // CAP-3: regions of one device are disjoint (sort by device, offset: n log n).
  std::vector<std::size_t> order;  // but those of capacity 0, empty intervals, which overlap nothing (a neighbour's test would say otherwise)
  for (std::size_t i = 0; i < p.regions.size(); ++i) if (p.regions[i].capacity > 0) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return std::tie(p.regions[a].device, p.regions[a].offset) < std::tie(p.regions[b].device, p.regions[b].offset); });
  for (std::size_t k = 1; k < order.size(); ++k) {
    const auto &x = p.regions[order[k - 1]], &y = p.regions[order[k]];
    if (x.device == y.device && x.offset + x.capacity > y.offset)
      c.err("CAP-3", at("regions", order[k]), "region \"" + y.id + "\" overlaps region \"" + x.id + "\" of the same device");
  }
  for (std::size_t i = 0; i < p.buffers.size(); ++i) {
    const auto& b = p.buffers[i];
    const auto& r = p.regions[static_cast<std::size_t>(b.region)];
    if (!pow2(b.alignment)) { c.err("ALIGN-2", at("buffers", i, "alignment"), "alignment " + std::to_string(b.alignment) + " is not a positive power of two"); continue; }
    std::int64_t a = std::max(b.alignment, pow2(r.alignment) ? r.alignment : 1);
    if (b.offset % a != 0)
      c.err("ALIGN-1", at("buffers", i, "offset"), "offset " + to_string(b.offset) + " is not a multiple of " + std::to_string(a) + " = max(buffer alignment, region alignment)");
    if (b.offset < 0 || b.size < 0 || b.offset + b.size > r.capacity)
      c.err("CAP-1", at("buffers", i), "buffer [" + to_string(b.offset) + ", " + to_string(Int(b.offset + b.size)) + ") exceeds region \"" + r.id + "\" of " + to_string(r.capacity) + " bytes");
  }
}

// QUEUE-2..4; returns the queue predecessor of each command (or -1) for DEADLOCK.
std::vector<Index> queues(check::Ctx& c, const ConcretePlanIR& p, bool& ok) {
  const std::size_t n = p.commands.size();
  std::vector<Index> qof(n, -1), pos(n, -1), prev(n, -1);  // Index: 4 bytes a command, not 8
  for (std::size_t q = 0; q < p.queue->queues.size(); ++q) {
    const auto& queue = p.queue->queues[q];
    for (std::size_t k = 0; k < queue.commands.size(); ++k) {
      auto v = static_cast<std::size_t>(queue.commands[k]);
      if (k + 8 < queue.commands.size()) __builtin_prefetch(&p.commands[static_cast<std::size_t>(queue.commands[k + 8])].kind);  // issue order jumps
      const auto& cmd = p.commands[v];
      auto path = [&] { return at("queue/queues", q, "commands", static_cast<std::int64_t>(k)); };  // built only for a finding
      if (qof[v] >= 0) { c.err("QUEUE-3", path(), "command \"" + cmd.id + "\" is issued on more than one queue or twice"); ok = false; continue; }
      qof[v] = static_cast<Index>(q);
      pos[v] = static_cast<Index>(k);
      prev[v] = k ? queue.commands[k - 1] : -1;
      if (queue_kind_for(cmd.kind) != queue.kind || cmd.device != queue.device)
        c.err("QUEUE-2", path(), "a " + std::string(codec::enum_name(cmd.kind)) + " command of device " + std::to_string(cmd.device) + " cannot be issued on a " +
                                   std::string(codec::enum_name(queue.kind)) + " queue of device " + std::to_string(queue.device));
    }
  }
  for (std::size_t v = 0; v < n; ++v) {
    if (v + 8 < n)  // the queue positions of the dependencies 8 commands ahead: random reads, fetched early
      for (Index u : p.commands[v + 8].dependencies) __builtin_prefetch(&qof[static_cast<std::size_t>(u)]), __builtin_prefetch(&pos[static_cast<std::size_t>(u)]);
    if (qof[v] < 0) { c.err("QUEUE-3", at("commands", v), "command \"" + p.commands[v].id + "\" is on no queue"); ok = false; continue; }
    for (std::size_t k = 0; k < p.commands[v].dependencies.size(); ++k) {
      auto u = static_cast<std::size_t>(p.commands[v].dependencies[k]);
      if (qof[u] == qof[v] && pos[u] > pos[v])
        c.err("QUEUE-4", at("commands", v, "dependencies", static_cast<std::int64_t>(k)),
              "dependency \"" + p.commands[u].id + "\" is issued after this command on the same in-order queue");
    }
  }
  return prev;
}

bool issue_less(const Issue& a, const Issue& b) { return a.cycle != b.cycle ? a.cycle < b.cycle : a.slot < b.slot; }

void slots(check::Ctx& c, const ConcretePlanIR& p, const std::vector<Index>& signaler) {
  const auto& s = *p.slot;
  const std::size_t n = p.commands.size();
  if (s.issue.size() != n) { c.err("SLOT-1", "/payload/slot/issue", "there must be one issue position per command (" + std::to_string(n) + "), found " + std::to_string(s.issue.size())); return; }
  if (s.slots_per_cycle < 1) { c.err("SLOT-2", "/payload/slot/slots_per_cycle", "slots_per_cycle must be at least 1"); return; }
  for (std::size_t i = 0; i < n; ++i)
    if (s.issue[i].cycle < 0 || s.issue[i].slot < 0 || s.issue[i].slot >= s.slots_per_cycle)
      c.err("SLOT-2", "/payload/slot/issue/" + std::to_string(i), "issue position must have cycle >= 0 and 0 <= slot < slots_per_cycle");
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return issue_less(s.issue[a], s.issue[b]); });
  for (std::size_t k = 1; k < n; ++k)
    if (!issue_less(s.issue[order[k - 1]], s.issue[order[k]]))
      c.err("SLOT-2", "/payload/slot/issue/" + std::to_string(order[k]), "issue position (" + std::to_string(s.issue[order[k]].cycle) + ", " +
                                                                             std::to_string(s.issue[order[k]].slot) + ") is used by two commands");
  for (std::size_t v = 0; v < n; ++v) {
    const auto& cmd = p.commands[v];
    for (std::size_t k = 0; k < cmd.dependencies.size(); ++k)
      if (!issue_less(s.issue[static_cast<std::size_t>(cmd.dependencies[k])], s.issue[v]))
        c.err("SLOT-3", at("commands", v, "dependencies", static_cast<std::int64_t>(k)), "dependency is not issued strictly before this command in (cycle, slot) order");
    for (std::size_t k = 0; k < cmd.waits.size(); ++k) {
      const Index u = signaler[static_cast<std::size_t>(cmd.waits[k])];
      if (u >= 0 && !issue_less(s.issue[static_cast<std::size_t>(u)], s.issue[v]))
        c.err("TOKEN-2", at("commands", v, "waits", static_cast<std::int64_t>(k)), "the token's signaller is not issued strictly before the waiting command");
    }
  }
  // ROUTE-1/2: exactly the transfers have exactly one route; endpoints distinct, one of them the command's device.
  std::vector<int> routes(n, 0);
  for (std::size_t i = 0; i < s.routes.size(); ++i) {
    const auto& r = s.routes[i];
    auto v = static_cast<std::size_t>(r.command);
    std::string path = "/payload/slot/routes/" + std::to_string(i);
    if (!is_transfer(p.commands[v].kind)) c.err("ROUTE-1", path + "/command", "command \"" + p.commands[v].id + "\" is not a transfer and must have no route");
    else if (++routes[v] > 1) c.err("ROUTE-1", path + "/command", "transfer \"" + p.commands[v].id + "\" has more than one route");
    if (r.source == r.destination) c.err("ROUTE-2", path, "route source and destination are the same device");
    else if (r.source != p.commands[v].device && r.destination != p.commands[v].device) c.err("ROUTE-2", path, "neither endpoint of the route is the device of its command");
  }
  for (std::size_t v = 0; v < n; ++v)
    if (is_transfer(p.commands[v].kind) && routes[v] == 0) c.err("ROUTE-1", at("commands", v), "transfer \"" + p.commands[v].id + "\" has no route");
}

Flow families(check::Ctx& c, const ConcretePlanIR& p) {
  const std::size_t n = p.commands.size();
  memory(c, p);
  // TOKEN-1: one signaller per token; TOKEN-2: waited tokens are signalled by another command.
  Flow f;
  auto& signaler = f.signaller;
  signaler.assign(p.tokens.size(), -1);
  for (std::size_t v = 0; v < n; ++v) {  // one pass: a token's first signaller is final once set
    for (std::size_t k = 0; k < p.commands[v].signals.size(); ++k) {
      auto t = static_cast<std::size_t>(p.commands[v].signals[k]);
      if (signaler[t] >= 0) c.err("TOKEN-1", at("commands", v, "signals", static_cast<std::int64_t>(k)), "token \"" + p.tokens[t].id + "\" is signalled by more than one command");
      else signaler[t] = static_cast<Index>(v);
    }
    for (std::size_t k = 0; k < p.commands[v].waits.size(); ++k)
      if (signaler[static_cast<std::size_t>(p.commands[v].waits[k])] == static_cast<Index>(v))
        c.err("TOKEN-2", at("commands", v, "waits", static_cast<std::int64_t>(k)), "a command waits for a token it signals itself");
  }
  for (std::size_t t = 0; t < p.tokens.size(); ++t)
    if (signaler[t] < 0) c.err("TOKEN-1", at("tokens", t), "token \"" + p.tokens[t].id + "\" is never signalled");

  bool queue_target = p.target == TargetKind::queue;
  if (queue_target ? (!p.queue || p.slot) : (!p.slot || p.queue)) {
    c.err(queue_target ? "QUEUE-1" : "SLOT-1", "/payload/target",
          std::string("a ") + (queue_target ? "queue" : "slot") + " target must carry exactly the " + (queue_target ? "queue" : "slot") + " extension");
    return f;
  }
  if (!queue_target) { slots(c, p, signaler); return f; }
  bool ok = true;
  const auto& prev = f.prev = queues(c, p, ok);
  if (!ok) return f;
  // DEADLOCK-1: in-order queue edges + dependencies + token edges are acyclic (the order bind() reuses).
  auto cyc = check::find_cycle(n, [&](std::size_t v, auto&& fn) {
    if (prev[v] >= 0) fn(static_cast<std::size_t>(prev[v]));
    for (Index u : p.commands[v].dependencies) fn(static_cast<std::size_t>(u));
    for (Index t : p.commands[v].waits)
      if (signaler[static_cast<std::size_t>(t)] >= 0 && signaler[static_cast<std::size_t>(t)] != static_cast<std::int64_t>(v)) fn(static_cast<std::size_t>(signaler[static_cast<std::size_t>(t)]));
  }, &f.order);
  if (!cyc.empty()) {
    f.order.clear();  // the part of an order found before the cycle: not one
    std::string w;
    for (std::size_t v : cyc) w += p.commands[v].id + " -> ";
    c.err("DEADLOCK-1", at("commands", cyc.front()), "dependencies, queue order and token waits form a cycle: these commands can never all complete",
          {"cycle: " + w + p.commands[cyc.front()].id});
  }
  return f;
}

}  // namespace

void concrete(check::Ctx& c, const ConcretePlanIR& p) {
  const std::size_t before = c.d.count();
  Flow f = families(c, p);
  bind(c, p, c.d.count() == before, std::move(f));
}

}  // namespace plancert::layers
