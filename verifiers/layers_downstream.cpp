// SPDX-License-Identifier: Apache-2.0
// TimelineBundle (TIME), MachineIR (MACHINE) and ObservationSet (OBS) families.
#include "verifiers/layers.h"

#include <algorithm>
#include <unordered_set>

namespace plancert::layers {
using check::at;

void timeline(check::Ctx& c, const ConcretePlanIR& plan, const TimelineBundle& t) {
  const std::size_t n = plan.commands.size();
  std::vector<std::int64_t> iv(n, -1);
  bool ok = true;
  for (std::size_t i = 0; i < t.intervals.size(); ++i) {
    Index v = t.intervals[i].command;
    if (v < 0 || static_cast<std::size_t>(v) >= n) { c.err("TIME-1", at("intervals", i, "command"), "command " + std::to_string(v) + " is not a command of the concrete plan"); ok = false; }
    else if (iv[static_cast<std::size_t>(v)] >= 0) { c.err("TIME-1", at("intervals", i, "command"), "command \"" + plan.commands[static_cast<std::size_t>(v)].id + "\" has two intervals"); ok = false; }
    else iv[static_cast<std::size_t>(v)] = static_cast<std::int64_t>(i);
  }
  for (std::size_t v = 0; v < n; ++v)
    if (iv[v] < 0) { c.err("TIME-1", "/payload/intervals", "command \"" + plan.commands[v].id + "\" has no interval"); ok = false; }
  if (!ok) return;
  auto I = [&](std::size_t v) -> const Interval& { return t.intervals[static_cast<std::size_t>(iv[v])]; };
  std::vector<std::int64_t> signaler(plan.tokens.size(), -1);
  for (std::size_t v = 0; v < n; ++v)
    for (Index k : plan.commands[v].signals) signaler[static_cast<std::size_t>(k)] = static_cast<std::int64_t>(v);
  // TIME-3: a command starts no earlier than every dependency and every token signaller ends.
  for (std::size_t v = 0; v < n; ++v) {
    for (Index u : plan.commands[v].dependencies)
      if (I(v).start < I(static_cast<std::size_t>(u)).end)
        c.err("TIME-3", at("intervals", static_cast<std::size_t>(iv[v]), "start"), "command \"" + plan.commands[v].id + "\" starts at " + to_string(I(v).start) +
                                                                                      " before its dependency \"" + plan.commands[static_cast<std::size_t>(u)].id + "\" ends at " + to_string(I(static_cast<std::size_t>(u)).end));
    for (Index k : plan.commands[v].waits) {
      std::int64_t u = signaler[static_cast<std::size_t>(k)];
      if (u >= 0 && I(v).start < I(static_cast<std::size_t>(u)).end)
        c.err("TIME-3", at("intervals", static_cast<std::size_t>(iv[v]), "start"), "command \"" + plan.commands[v].id + "\" starts before the signaller of a token it waits for ends");
    }
  }
  // TIME-4: commands of one in-order queue do not overlap and run in issue order.
  std::vector<std::int64_t> qprev(n, -1);
  if (plan.queue)
    for (const auto& q : plan.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) {
        auto a = static_cast<std::size_t>(q.commands[k - 1]), b = static_cast<std::size_t>(q.commands[k]);
        qprev[b] = static_cast<std::int64_t>(a);
        if (I(b).start < I(a).end)
          c.err("TIME-4", at("intervals", static_cast<std::size_t>(iv[b]), "start"), "command \"" + plan.commands[b].id + "\" overlaps \"" + plan.commands[a].id + "\" on in-order queue \"" + q.id + "\"");
      }
  // TIME-5: the critical path is a chain of edges, each link starting when the previous ends,
  // from time 0 to the makespan. It stops at the first failing link (the witness): the parent is
  // acyclic, so the links checked before repeat no command and scan each one's edges once
  // (scanning on past failures cost path length x the largest in-degree).
  if (t.critical_path.empty()) { if (n) c.err("TIME-5", "/payload/critical_path", "the critical path is empty"); return; }
  Rat makespan = 0;
  for (std::size_t v = 0; v < n; ++v) makespan = std::max(makespan, I(v).end);
  for (std::size_t k = 0; k < t.critical_path.size(); ++k) {
    Index v = t.critical_path[k];
    std::string path = "/payload/critical_path/" + std::to_string(k);
    if (v < 0 || static_cast<std::size_t>(v) >= n) { c.err("TIME-5", path, "not a command of the concrete plan"); return; }
    auto cv = static_cast<std::size_t>(v);
    if (k == 0) {
      if (I(cv).start != 0) c.err("TIME-5", path, "the critical path must start at time 0");
      continue;
    }
    auto pu = static_cast<std::size_t>(t.critical_path[k - 1]);
    const auto& deps = plan.commands[cv].dependencies;
    bool edge = std::find(deps.begin(), deps.end(), static_cast<Index>(pu)) != deps.end() || qprev[cv] == static_cast<std::int64_t>(pu);
    for (Index tok : plan.commands[cv].waits) edge = edge || signaler[static_cast<std::size_t>(tok)] == static_cast<std::int64_t>(pu);
    if (!edge || I(cv).start != I(pu).end) return c.err("TIME-5", path, "each critical-path command must follow its predecessor by an edge and start exactly when it ends");
  }
  if (I(static_cast<std::size_t>(t.critical_path.back())).end != makespan)
    c.err("TIME-5", "/payload/critical_path", "the critical path must end at the makespan " + to_string(makespan));
}

void machine(check::Ctx& c, const MachineIR& m) {
  // MACHINE-3: dialects declared once; every instruction uses a declared one.
  std::unordered_set<std::string_view> dialects;
  for (std::size_t i = 0; i < m.dialects.size(); ++i)
    if (m.dialects[i].empty() || !dialects.insert(m.dialects[i]).second)
      c.err("MACHINE-3", "/payload/dialects/" + std::to_string(i), "dialect names must be non-empty and declared once");
  // MACHINE-2: the entry points are exactly the instructions without dependencies, in order.
  Indices roots;
  for (std::size_t i = 0; i < m.instructions.size(); ++i) {
    const auto& ins = m.instructions[i];
    if (!dialects.count(ins.dialect)) c.err("MACHINE-3", at("instructions", i, "dialect"), "dialect \"" + ins.dialect + "\" is not declared");
    if (ins.dependencies.empty()) roots.push_back(static_cast<Index>(i));
    bool sync = ins.op == MachineOp::signal || ins.op == MachineOp::wait;
    if (sync != ins.token.has_value())
      c.err("MACHINE-4", at("instructions", i, "token"), sync ? "signal and wait instructions must name a token" : "only signal and wait instructions name a token");
  }
  if (roots != m.entry_points) c.err("MACHINE-2", "/payload/entry_points", "entry points must be exactly the instructions without dependencies, in index order");
}

void machine_trace(check::Ctx& c, const ConcretePlanIR& plan, const MachineIR& m) {
  const std::size_t n = plan.commands.size();
  std::vector<bool> covered(n, false);
  // (command, token) of every signal [0] and wait [1]: an instruction's token is looked up in
  // O(1) (searching its command's list cost instructions x list length for one busy command).
  std::unordered_set<std::uint64_t> sync[2];
  for (std::size_t v = 0; v < n; ++v)
    for (int w : {0, 1}) for (Index k : w ? plan.commands[v].waits : plan.commands[v].signals) sync[w].insert(std::uint64_t{v} << 32 | static_cast<std::uint32_t>(k));
  for (std::size_t i = 0; i < m.instructions.size(); ++i) {
    const auto& ins = m.instructions[i];
    if (ins.command < 0 || static_cast<std::size_t>(ins.command) >= n) { c.err("MACHINE-1", at("instructions", i, "command"), "instruction is not traced to a command of the concrete plan"); continue; }
    const auto& cmd = plan.commands[static_cast<std::size_t>(ins.command)];
    covered[static_cast<std::size_t>(ins.command)] = true;
    if (!ins.token) continue;
    Index tok = *ins.token;
    if (tok < 0 || static_cast<std::size_t>(tok) >= plan.tokens.size() || !sync[ins.op != MachineOp::signal].count(std::uint64_t{static_cast<std::uint32_t>(ins.command)} << 32 | static_cast<std::uint32_t>(tok)))
      c.err("MACHINE-4", at("instructions", i, "token"), std::string("command \"") + cmd.id + "\" does not " + (ins.op == MachineOp::signal ? "signal" : "wait for") + " token " + std::to_string(tok));
  }
  for (std::size_t v = 0; v < n; ++v)
    if (!covered[v]) c.err("MACHINE-1", "/payload/instructions", "command \"" + plan.commands[v].id + "\" is lowered to no instruction");
}

void observations(check::Ctx& c, const ObservationSet& o) {
  std::unordered_set<std::string> seen;
  for (std::size_t i = 0; i < o.observations.size(); ++i) {
    const auto& x = o.observations[i];
    if (x.duration < 0) c.err("OBS-2", at("observations", i, "duration"), "duration " + to_string(x.duration) + " is negative");
    if (!seen.insert(x.command + '\0' + x.source).second) c.err("OBS-3", at("observations", i), "command \"" + x.command + "\" is observed twice by source \"" + x.source + "\"");
  }
}

void observations_trace(check::Ctx& c, const ConcretePlanIR& plan, const ObservationSet& o) {
  std::unordered_set<std::string_view> ids;
  for (const auto& cmd : plan.commands) ids.insert(cmd.id);
  for (std::size_t i = 0; i < o.observations.size(); ++i)
    if (!ids.count(o.observations[i].command)) c.err("OBS-1", at("observations", i, "command"), "\"" + o.observations[i].command + "\" is not a command of the concrete plan");
}

}  // namespace plancert::layers
