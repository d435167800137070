// SPDX-License-Identifier: Apache-2.0
// The trusted entry points: digest, identity, lineage, attribute, reference and DAG checks
// common to all layers, then dispatch to the layer families (layers.h).
#include "verifiers/verify.h"

#include "verifiers/layers.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <unordered_set>

namespace plancert {
namespace check {

std::string at(std::string_view array, std::size_t i, std::string_view field, std::int64_t j) {
  std::string p = "/payload/" + std::string(array) + "/" + std::to_string(i);
  if (!field.empty()) p += "/" + std::string(field);
  return j >= 0 ? p + "/" + std::to_string(j) : p;
}

bool refs(Ctx& c, const Indices& list, std::size_t n, std::string_view array, std::size_t i, std::string_view field, bool unique,
          std::vector<std::uint32_t>& stamp, std::uint32_t& epoch) {
  bool ok = true;
  ++epoch;
  for (std::size_t k = 0; k < list.size(); ++k) {
    Index v = list[k];
    if (!ref(c, v, n, [&] { return at(array, i, field, static_cast<std::int64_t>(k)); })) { ok = false; continue; }
    if (!unique) continue;
    auto u = static_cast<std::size_t>(v);
    if (stamp[u] == epoch) c.err("REF-2", at(array, i, field, static_cast<std::int64_t>(k)), "entry " + std::to_string(v) + " is listed twice");
    stamp[u] = epoch;
  }
  return ok;
}

}  // namespace check

namespace {
using check::at;
using check::Ctx;

// ---- entity enumeration: (array name, index, id, lineage or null, attrs or null) --------

template <class F>
void entities(const ModelIR& m, F&& f) {
  for (std::size_t i = 0; i < m.values.size(); ++i) f("values", i, m.values[i].id, &m.values[i].lineage, nullptr);
  for (std::size_t i = 0; i < m.operations.size(); ++i) f("operations", i, m.operations[i].id, &m.operations[i].lineage, &m.operations[i].attrs);
}
template <class F>
void entities(const DistributedTaskIR& d, F&& f) {
  for (std::size_t i = 0; i < d.tasks.size(); ++i) f("tasks", i, d.tasks[i].id, &d.tasks[i].lineage, &d.tasks[i].attrs);
}
template <class F>
void entities(const PortablePlanIR& p, F&& f) {
  for (std::size_t i = 0; i < p.tasks.size(); ++i) f("tasks", i, p.tasks[i].id, &p.tasks[i].lineage, &p.tasks[i].attrs);
  for (std::size_t i = 0; i < p.buffers.size(); ++i) f("buffers", i, p.buffers[i].id, &p.buffers[i].lineage, nullptr);
}
template <class F>
void entities(const ConcretePlanIR& p, F&& f) {
  for (std::size_t i = 0; i < p.devices.size(); ++i) f("devices", i, p.devices[i].id, nullptr, nullptr);
  for (std::size_t i = 0; i < p.regions.size(); ++i) f("regions", i, p.regions[i].id, nullptr, nullptr);
  for (std::size_t i = 0; i < p.buffers.size(); ++i) f("buffers", i, p.buffers[i].id, &p.buffers[i].lineage, nullptr);
  for (std::size_t i = 0; i < p.commands.size(); ++i) f("commands", i, p.commands[i].id, &p.commands[i].lineage, &p.commands[i].attrs);
  for (std::size_t i = 0; i < p.tokens.size(); ++i) f("tokens", i, p.tokens[i].id, nullptr, nullptr);
  for (std::size_t i = 0; i < p.engines.size(); ++i) f("engines", i, p.engines[i].id, nullptr, nullptr);
  for (std::size_t i = 0; i < p.implementations.size(); ++i) f("implementations", i, p.implementations[i].id, nullptr, nullptr);
  if (p.queue)
    for (std::size_t i = 0; i < p.queue->queues.size(); ++i) f("queue/queues", i, p.queue->queues[i].id, nullptr, nullptr);
}
template <class F>
void entities(const MachineIR& m, F&& f) {
  for (std::size_t i = 0; i < m.instructions.size(); ++i) f("instructions", i, m.instructions[i].id, nullptr, nullptr);
}
template <class P, class F>
void entities(const P&, F&&) {}  // TimelineBundle, ObservationSet: no entities with ids

template <class P>
std::size_t entity_count(const P& p) { std::size_t n = 0; entities(p, [&](auto&&...) { ++n; }); return n; }

template <class P>
const std::vector<std::string>* rules_of(const P& p) { if constexpr (requires { p.rules; }) return &p.rules; else return nullptr; }

// ATTR-1: names each layer reserves for the layers that own them (compared case-insensitively).
constexpr std::string_view kTimeNames[] = {"duration", "start", "start_time", "end", "end_time", "latency", "time", "timestamp", "predicted_time"};
constexpr std::string_view kTargetNames[] = {"device", "queue", "stream", "kernel", "implementation", "address", "offset", "slot", "cycle", "engine"};
constexpr std::string_view kDistNames[] = {"rank", "ranks", "mesh", "collective", "communicator", "tp_rank", "pp_rank", "dp_rank"};

// Layer order: 0 Model, 1 Distributed, 2 Portable, 3 Concrete; time is owned by layer 4.
const char* reserved_owner(std::string_view k, std::size_t layer) {
  auto is = [&](std::string_view n) { return n.size() == k.size() && std::equal(n.begin(), n.end(), k.begin(), [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); }); };
  if (std::any_of(std::begin(kTimeNames), std::end(kTimeNames), is)) return "TimelineBundle";
  if (layer < 3 && std::any_of(std::begin(kTargetNames), std::end(kTargetNames), is)) return "ConcretePlanIR";
  if (layer < 1 && std::any_of(std::begin(kDistNames), std::end(kDistNames), is)) return "DistributedTaskIR";
  return nullptr;
}

// ID-2's characters, [A-Za-z0-9_.:/#@+-[]=,], as a table: ASCII only, whatever the locale.
constexpr auto kIdChar = [] { std::array<bool, 256> t{}; for (const char ch : std::string_view("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_.:/#@+-[]=,")) t[static_cast<unsigned char>(ch)] = true; return t; }();

bool id_syntax_ok(const std::string& id) {
  return !id.empty() && id.size() <= 256 && std::all_of(id.begin(), id.end(), [](unsigned char ch) { return kIdChar[ch]; });
}

// ID-1, ID-2, LINEAGE-1, ATTR-1.
template <class P>
void identity(Ctx& c, const P& p, std::size_t layer, bool root) {
  // Every entity's id and its hash, in entity order, first (one block of the exact size: a million
  // ids take 16 MB), so that the table slot of the id 16 ahead can be fetched early; starts: the
  // ordinal of each array's first entity, to name where an id was first used.
  struct Ent { std::uint64_t hash; const std::string* id; };
  std::vector<Ent> ent;
  std::vector<std::pair<std::size_t, std::string_view>> starts;
  ent.reserve(entity_count(p));
  entities(p, [&](std::string_view array, std::size_t i, const std::string& id, auto&&...) {
    if (i == 0) starts.emplace_back(ent.size(), array);
    ent.push_back({std::hash<std::string_view>{}(id), &id});
  });
  // Open addressing (linear probing): 0 = empty, else the hash's top 32 bits above 1 + the ordinal of
  // the entity that first used the id (fewer than 2^32 entities: each is many bytes of memory). Load
  // 1/3 to 2/3: a million ids take 16 MB, which stays largely in cache.
  std::vector<std::uint64_t> slot(std::bit_ceil(ent.size() + ent.size() / 2 + 2), 0);
  const std::size_t mask = slot.size() - 1;
  std::size_t e = 0;
  const auto* rules = rules_of(p);
  std::unordered_set<const std::string*> declared;  // interned names: a lineage's rule is looked up by its address, not hashed as text
  for (std::size_t i = 0; rules && i < rules->size(); ++i)
    if (!declared.insert(&codec::Name((*rules)[i]).str()).second) c.err("LINEAGE-1", "/payload/rules/" + std::to_string(i), "rule \"" + (*rules)[i] + "\" is declared twice");
  entities(p, [&](std::string_view array, std::size_t i, const std::string& id, const Lineage* lin, const Attrs* attrs) {
    if (!id_syntax_ok(id)) c.err("ID-2", at(array, i, "id"), "id \"" + id.substr(0, 64) + "\" is empty, longer than 256 bytes or has a character outside [A-Za-z0-9_.:/#@+-[]=,]");
    if (e + 16 < ent.size()) __builtin_prefetch(&slot[ent[e + 16].hash & mask]);
    const std::uint64_t h = ent[e++].hash, tag = h >> 32 << 32;
    std::size_t k = h & mask;
    while (slot[k] && !((slot[k] >> 32 << 32) == tag && *ent[(slot[k] & 0xFFFFFFFF) - 1].id == id)) k = (k + 1) & mask;
    if (const std::size_t f = (slot[k] & 0xFFFFFFFF) - 1; slot[k]) {  // f: the ordinal of the entity that first used the id
      const auto& [start, first] = *std::prev(std::partition_point(starts.begin(), starts.end(), [&](const auto& s) { return s.first <= f; }));
      c.err("ID-1", at(array, i, "id"), "id \"" + id + "\" is not unique", {"first used at " + at(first, f - start)});
    } else slot[k] = tag | e;
    if (lin) {
      if (!declared.count(&lin->rule.str())) c.err("LINEAGE-1", at(array, i, "lineage/rule"), "rule \"" + lin->rule.str() + "\" is not declared in /payload/rules");
      if (root && (lin->kind != LineageKind::introduced || !lin->sources.empty()))
        c.err("LINEAGE-1", at(array, i, "lineage"), "a root snapshot has no parent, so its entities must be introduced with no sources");
      if (!root && (lin->kind != LineageKind::derived || lin->sources.empty()))
        c.err("LINEAGE-1", at(array, i, "lineage"), "an entity of a derived snapshot must be derived from at least one parent entity");
    }
    if (attrs)
      for (const auto& [k, v] : *attrs)
        if (const char* owner = reserved_owner(k, layer)) {
          std::string path = at(array, i, "attrs/");
          append_pointer_token(path, k);
          c.err("ATTR-1", path, "attribute \"" + k + "\" is reserved: it is owned by " + owner + ", a later layer");
        }
  });
}

// SYM-1: symbol declarations are well-formed; SYM-2: every symbol used is declared.
template <class P>
void symbols(Ctx& c, const P& p) {
  if constexpr (requires { p.symbols; }) {
    std::unordered_set<std::string_view> names;
    for (std::size_t i = 0; i < p.symbols.size(); ++i) {
      const Symbol& s = p.symbols[i];
      bool ident = !s.name.empty() && !std::isdigit(static_cast<unsigned char>(s.name[0])) &&
                   std::all_of(s.name.begin(), s.name.end(), [](unsigned char ch) { return std::isalnum(ch) || ch == '_'; });
      if (!ident || !names.insert(s.name).second || !s.integer || s.divisible_by < 1 || (s.max && *s.max < s.min))
        c.err("SYM-1", "/payload/symbols/" + std::to_string(i), "symbol \"" + s.name + "\" must be a unique integer identifier with divisible_by >= 1 and min <= max");
    }
    std::string missing;
    codec::for_each_expr(p, [&](const Expr& e) {
      if (!missing.empty() || e.is_constant()) return;
      for (const auto& n : e.symbols())
        if (!names.count(n)) { missing = n; return; }
    });
    if (!missing.empty()) c.err("SYM-2", "/payload/symbols", "symbol \"" + missing + "\" is used in an expression but not declared");
  }
}

// ---- REF + DAG per layer; return false when a reference is out of range ----------------

struct Scratch {
  std::vector<std::uint32_t> stamp;
  std::uint32_t epoch = 0;
  explicit Scratch(std::size_t n) : stamp(n + 1, 0) {}
};

bool refs_model(Ctx& c, const ModelIR& m, Scratch& s) {
  bool ok = true;
  const std::size_t nv = m.values.size();
  for (std::size_t i = 0; i < m.operations.size(); ++i) {
    const auto& op = m.operations[i];
    ok &= check::refs(c, op.inputs, nv, "operations", i, "inputs", false, s.stamp, s.epoch);
    ok &= check::refs(c, op.outputs, nv, "operations", i, "outputs", true, s.stamp, s.epoch);
    for (std::size_t k = 0; k < op.effects.size(); ++k) ok &= check::ref(c, op.effects[k].value, nv, at("operations", i, "effects/" + std::to_string(k) + "/value"));
  }
  return ok;
}

bool refs_dist(Ctx& c, const DistributedTaskIR& d, Scratch& s) {
  bool ok = true;
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    ok &= check::refs(c, d.tasks[i].dependencies, d.tasks.size(), "tasks", i, "dependencies", false, s.stamp, s.epoch);
    if (d.tasks[i].peer) ok &= check::ref(c, *d.tasks[i].peer, d.tasks.size(), at("tasks", i, "peer"));
  }
  if (ok) check::dag(c, d.tasks, "tasks", s.stamp, s.epoch);
  return ok;
}

bool refs_portable(Ctx& c, const PortablePlanIR& p, Scratch& s) {
  bool ok = true;
  const std::size_t nt = p.tasks.size(), nb = p.buffers.size();
  for (std::size_t i = 0; i < nt; ++i) {
    ok &= check::refs(c, p.tasks[i].dependencies, nt, "tasks", i, "dependencies", false, s.stamp, s.epoch);
    ok &= check::refs(c, p.tasks[i].inputs, nb, "tasks", i, "inputs", true, s.stamp, s.epoch);
    ok &= check::refs(c, p.tasks[i].outputs, nb, "tasks", i, "outputs", true, s.stamp, s.epoch);
  }
  for (std::size_t i = 0; i < nb; ++i) {
    if (p.buffers[i].producer) ok &= check::ref(c, *p.buffers[i].producer, nt, at("buffers", i, "producer"));
    ok &= check::refs(c, p.buffers[i].consumers, nt, "buffers", i, "consumers", true, s.stamp, s.epoch);
  }
  if (ok) check::dag(c, p.tasks, "tasks", s.stamp, s.epoch);
  return ok;
}

bool refs_concrete(Ctx& c, const ConcretePlanIR& p, Scratch& s) {
  bool ok = true;
  const std::size_t nd = p.devices.size(), nr = p.regions.size(), nb = p.buffers.size(), nc = p.commands.size(), nk = p.tokens.size();
  for (std::size_t i = 0; i < nr; ++i) ok &= check::ref(c, p.regions[i].device, nd, at("regions", i, "device"));
  for (std::size_t i = 0; i < nb; ++i) ok &= check::ref(c, p.buffers[i].region, nr, [&] { return at("buffers", i, "region"); });
  for (std::size_t i = 0; i < nc; ++i) {
    const auto& cmd = p.commands[i];
    ok &= check::ref(c, cmd.device, nd, [&] { return at("commands", i, "device"); });
    ok &= check::refs(c, cmd.dependencies, nc, "commands", i, "dependencies", false, s.stamp, s.epoch);
    ok &= check::refs(c, cmd.reads, nb, "commands", i, "reads", true, s.stamp, s.epoch);
    ok &= check::refs(c, cmd.writes, nb, "commands", i, "writes", true, s.stamp, s.epoch);
    ok &= check::refs(c, cmd.signals, nk, "commands", i, "signals", true, s.stamp, s.epoch);
    ok &= check::refs(c, cmd.waits, nk, "commands", i, "waits", true, s.stamp, s.epoch);
  }
  if (p.queue)
    for (std::size_t i = 0; i < p.queue->queues.size(); ++i) {
      ok &= check::ref(c, p.queue->queues[i].device, nd, at("queue/queues", i, "device"));
      ok &= check::refs(c, p.queue->queues[i].commands, nc, "queue/queues", i, "commands", false, s.stamp, s.epoch);
    }
  if (p.slot)
    for (std::size_t i = 0; i < p.slot->routes.size(); ++i) {
      ok &= check::ref(c, p.slot->routes[i].command, nc, at("slot/routes", i, "command"));
      ok &= check::ref(c, p.slot->routes[i].source, nd, at("slot/routes", i, "source"));
      ok &= check::ref(c, p.slot->routes[i].destination, nd, at("slot/routes", i, "destination"));
    }
  if (ok) check::dag(c, p.commands, "commands", s.stamp, s.epoch);
  return ok;
}

bool refs_machine(Ctx& c, const MachineIR& m, Scratch& s) {
  bool ok = true;
  const std::size_t n = m.instructions.size();
  for (std::size_t i = 0; i < n; ++i) ok &= check::refs(c, m.instructions[i].dependencies, n, "instructions", i, "dependencies", false, s.stamp, s.epoch);
  for (std::size_t k = 0; k < m.entry_points.size(); ++k) ok &= check::ref(c, m.entry_points[k], n, "/payload/entry_points/" + std::to_string(k));
  if (ok) check::dag(c, m.instructions, "instructions", s.stamp, s.epoch);
  return ok;
}

void layer_checks(Ctx& c, const ModelIR& m, Scratch& s) { if (refs_model(c, m, s)) layers::flow(c, m); }
void layer_checks(Ctx& c, const DistributedTaskIR& d, Scratch& s) {
  if (!refs_dist(c, d, s)) return;
  std::size_t before = c.d.count();
  layers::mesh(c, d);
  if (c.d.count() == before) layers::distributed(c, d), layers::effects(c, d);  // only on a valid mesh
}
void layer_checks(Ctx& c, const PortablePlanIR& p, Scratch& s) {
  if (refs_portable(c, p, s)) layers::buffers(c, p), layers::portable(c, p), layers::effects(c, p), layers::capacity(c, p);
}
void layer_checks(Ctx& c, const ConcretePlanIR& p, Scratch& s) { if (refs_concrete(c, p, s)) layers::concrete(c, p); }
void layer_checks(Ctx& c, const MachineIR& m, Scratch& s) { if (refs_machine(c, m, s)) layers::machine(c, m); }
void layer_checks(Ctx& c, const ObservationSet& o, Scratch&) { layers::observations(c, o); }
void layer_checks(Ctx& c, const TimelineBundle& t, Scratch&) {
  for (std::size_t i = 0; i < t.intervals.size(); ++i)
    if (t.intervals[i].start < 0 || t.intervals[i].end < t.intervals[i].start)
      c.err("TIME-2", at("intervals", i), "interval [" + to_string(t.intervals[i].start) + ", " + to_string(t.intervals[i].end) + "] must satisfy 0 <= start <= end");
}

}  // namespace

Diagnostics verify_snapshot(const AnySnapshot& any, std::string_view payload_digest) {
  Diagnostics d;
  Ctx c{d};
  std::visit([&](const auto& s) {
    bool wellformed = is_digest(s.digest);
    if (!wellformed) c.err("DIGEST-2", "/digest", "the digest must be 64 lowercase hex digits");
    for (std::size_t i = 0; i < s.parents.size(); ++i)
      if (!is_digest(s.parents[i])) c.err("DIGEST-2", "/parents/" + std::to_string(i), "a parent digest must be 64 lowercase hex digits");
    if (wellformed) {
      std::string actual = payload_digest.empty() ? digest_of(s.payload) : std::string(payload_digest);
      if (actual != s.digest)
        c.err("DIGEST-1", "/digest", "the stored digest does not match the payload", {"stored:     " + s.digest, "recomputed: " + actual});
    }
    const std::size_t layer = any.index(), want = layer == 0 ? 0 : 1;
    if (s.parents.size() != want)
      c.err("DIGEST-4", "/parents", std::string(schema_of(any)) + " must have exactly " + std::to_string(want) + " parent digest(s), found " + std::to_string(s.parents.size()));
    identity(c, s.payload, layer, layer == 0);
    symbols(c, s.payload);
    Scratch scratch(entity_count(s.payload));  // at least the size of any array a reference indexes
    try { layer_checks(c, s.payload, scratch); } catch (const TooManyTerms& e) { c.err("SYM-3", "/payload", e.what()); }
  }, any);
  return d;
}

Diagnostics verify_transition(const AnySnapshot& parent, const AnySnapshot& child) {
  Diagnostics d;
  Ctx c{d};
  const std::size_t pl = parent.index(), cl = child.index();
  const std::size_t expected_parent = cl == 0 ? SIZE_MAX : (cl <= 3 ? cl - 1 : 3);
  if (pl != expected_parent) {
    constexpr std::string_view kNames[] = {"ModelIR", "DistributedTaskIR", "PortablePlanIR", "ConcretePlanIR"};
    c.err("DIGEST-5", "/parents/0", cl == 0 ? std::string("a ModelIR is a root and has no parent")
                                            : "the parent of a " + std::string(schema_of(child)) + " must be a " + std::string(kNames[expected_parent]) + ", not a " +
                                                  std::string(schema_of(parent)));
    return d;
  }
  const std::string& pd = std::visit([](const auto& s) -> const std::string& { return s.digest; }, parent);
  const auto& cps = std::visit([](const auto& s) -> const std::vector<std::string>& { return s.parents; }, child);
  if (std::find(cps.begin(), cps.end(), pd) == cps.end())
    c.err("DIGEST-3", "/parents", "the parent snapshot's digest is not listed in /parents", {"parent digest: " + pd});
  // LINEAGE-2: every source names an entity of the parent.
  std::unordered_set<std::string_view> parent_ids;
  std::visit([&](const auto& s) { entities(s.payload, [&](std::string_view, std::size_t, const std::string& id, const Lineage*, const Attrs*) { parent_ids.insert(id); }); }, parent);
  std::visit([&](const auto& s) {
    entities(s.payload, [&](std::string_view array, std::size_t i, const std::string&, const Lineage* lin, const Attrs*) {
      if (!lin) return;
      for (std::size_t k = 0; k < lin->sources.size(); ++k)
        if (!parent_ids.count(lin->sources[k]))
          c.err("LINEAGE-2", at(array, i, "lineage/sources", static_cast<std::int64_t>(k)), "source \"" + lin->sources[k] + "\" is not an entity of the parent snapshot");
    });
  }, child);
  try {
    if (cl == 1) {
      layers::model_to_distributed(c, std::get<0>(parent).payload, std::get<1>(child).payload);
      layers::model_to_distributed_infer(c, std::get<0>(parent).payload, std::get<1>(child).payload);
    }
    if (cl == 2) {
      layers::distributed_to_portable(c, std::get<1>(parent).payload, std::get<2>(child).payload);
      layers::distributed_to_portable_infer(c, std::get<1>(parent).payload, std::get<2>(child).payload);
    }
    if (cl == 3 && d.ok()) layers::portable_to_concrete(c, std::get<2>(parent).payload, std::get<3>(child).payload);
    if (cl == 4) layers::timeline(c, std::get<3>(parent).payload, std::get<4>(child).payload);
    if (cl == 5) layers::machine_trace(c, std::get<3>(parent).payload, std::get<5>(child).payload);
    if (cl == 6) layers::observations_trace(c, std::get<3>(parent).payload, std::get<6>(child).payload);
  } catch (const TooManyTerms& e) { c.err("SYM-3", "/payload", e.what()); }
  return d;
}

}  // namespace plancert
