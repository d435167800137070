// SPDX-License-Identifier: Apache-2.0
// The mutation catalog. Every operator is written so that, applied to a valid chain, it
// breaks exactly the obligation it names (see the comment beside each one).
#include "props/mutations.h"

#include "passes/bind/bind.h"
#include "passes/bind/common.h"
#include "passes/emit/emit.h"
#include "props/oracle.h"

#include <algorithm>
#include <map>
#include <set>
#include <type_traits>
#include <utility>

namespace plancert::props {
namespace {

// ---- choices -------------------------------------------------------------------------------

// Deterministic choices drawn from one random 64-bit value.
struct Pick {
  std::uint64_t s;
  std::size_t operator()(std::size_t n) {
    s += 0x9e3779b97f4a7c15ull;  // splitmix64
    std::uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return n ? static_cast<std::size_t>(z % n) : 0;
  }
  template <codec::Vector V>
  const typename V::value_type& from(const V& v) { return v[(*this)(v.size())]; }
  /// A random element of `range` among those `pred` holds for (one draw, as from() over them), or
  /// nullptr, without a draw, when it holds for none.
  template <class R, class Pred>
  auto* where(R& range, Pred pred) {
    std::vector<std::remove_reference_t<decltype(*std::begin(range))>*> xs;
    for (auto& x : range)
      if (pred(x)) xs.push_back(&x);
    return xs.empty() ? nullptr : xs[(*this)(xs.size())];
  }
  /// Inserts `x` at a random position of `v` (the end included).
  template <codec::Vector V>
  void insert(V& v, typename V::value_type x) { v.insert(v.begin() + static_cast<std::ptrdiff_t>((*this)(v.size() + 1)), std::move(x)); }
  /// Inserts a copy of a random element of `v` at a random position; false if `v` is empty.
  template <codec::Vector V>
  bool duplicate_one(V& v) {
    if (v.empty()) return false;
    typename V::value_type x = from(v);
    insert(v, std::move(x));
    return true;
  }
  /// Erases a random element of the non-empty `v`.
  template <codec::Vector V>
  void erase_one(V& v) { v.erase(v.begin() + static_cast<std::ptrdiff_t>((*this)(v.size()))); }
};

template <class P>
constexpr std::size_t layer_index() {
  if constexpr (std::is_same_v<P, ModelIR>) return 0;
  else if constexpr (std::is_same_v<P, DistributedTaskIR>) return 1;
  else if constexpr (std::is_same_v<P, PortablePlanIR>) return 2;
  else if constexpr (std::is_same_v<P, ConcretePlanIR>) return 3;
  else if constexpr (std::is_same_v<P, TimelineBundle>) return 4;
  else if constexpr (std::is_same_v<P, MachineIR>) return 5;
  else return 6;
}

template <class P>
std::string layer_of() { return std::string(P::kSchema); }

template <class P>
std::string short_of() {
  static constexpr const char* kShort[] = {"model", "distributed", "portable", "concrete", "timeline", "machine", "observations"};
  return kShort[layer_index<P>()];
}

// A payload edit: f(payload, pick, parent) -> applied?; the digest is recomputed.
template <class P, class F>
MutateFn payload_edit(F f) {
  return [f](const AnySnapshot* parent, const AnySnapshot& child, std::uint64_t seed) -> std::optional<Mutant> {
    const auto* s = std::get_if<Snapshot<P>>(&child);
    if (!s) return std::nullopt;
    Snapshot<P> x = *s;
    Pick pk{seed};
    if (!f(x.payload, pk, parent)) return std::nullopt;
    x.digest = digest_of(x.payload);
    return Mutant{AnySnapshot(std::move(x)), std::nullopt, std::nullopt, std::nullopt};
  };
}

// An envelope edit of any layer (no reseal): f(snapshot, pick, parent) -> applied?
template <class F>
MutateFn envelope(F f) {
  return [f](const AnySnapshot* parent, const AnySnapshot& child, std::uint64_t seed) -> std::optional<Mutant> {
    AnySnapshot x = child;
    Pick pk{seed};
    if (!f(x, pk, parent)) return std::nullopt;
    return Mutant{std::move(x), std::nullopt, std::nullopt, std::nullopt};
  };
}

// A byte edit of the canonical file: f(bytes, pick) -> applied?
template <class F>
MutateFn bytes(F f) {
  return [f](const AnySnapshot*, const AnySnapshot& child, std::uint64_t seed) -> std::optional<Mutant> {
    std::string b = encode_any(child);
    Pick pk{seed};
    if (!f(b, pk)) return std::nullopt;
    return Mutant{child, std::nullopt, std::nullopt, std::move(b)};
  };
}

template <codec::Vector V>
bool contains(const V& v, const typename V::value_type& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

void insert_sorted(Indices& v, Index x) { v.insert(std::upper_bound(v.begin(), v.end(), x), x); }

// (update, all-reduce or reduce-scatter over `axis` it depends on): on plans of the training
// passes, COLL-6's gradient sums (tp) and COLL-4's gradient reductions (dp).
std::vector<std::pair<std::size_t, Index>> gradient_sums(const DistributedTaskIR& p, std::string_view axis) {
  std::vector<std::pair<std::size_t, Index>> edges;
  for (std::size_t i = 0; i < p.tasks.size(); ++i)
    if (p.tasks[i].phase == Phase::optimizer)
      for (Index u : p.tasks[i].dependencies)
        if (const auto& a = p.tasks[static_cast<std::size_t>(u)]; a.collective && a.collective->axis == axis && a.collective->kind != CollectiveKind::all_gather) edges.emplace_back(i, u);
  return edges;
}

// Copies collective u as a second one after it, and makes update i wait for both.
void collective_twice(DistributedTaskIR& p, std::size_t i, Index u) {
  DistTask again = p.tasks[static_cast<std::size_t>(u)];
  again.id += ":again";
  again.dependencies = {u};
  p.tasks.push_back(std::move(again));
  p.tasks[i].dependencies.push_back(static_cast<Index>(p.tasks.size() - 1));
}

std::string flip_hex(std::string d, std::size_t i) {
  d[i] = d[i] == '0' ? '1' : '0';
  return d;
}

// ---- entity views (mirror the verifiers' enumeration) ------------------------------------

struct Ent {
  std::string* id;
  Lineage* lin;
  Attrs* attrs;
};

std::vector<Ent> ents(ModelIR& m) {
  std::vector<Ent> e;
  for (auto& v : m.values) e.push_back({&v.id, &v.lineage, nullptr});
  for (auto& o : m.operations) e.push_back({&o.id, &o.lineage, &o.attrs});
  return e;
}
std::vector<Ent> ents(DistributedTaskIR& d) {
  std::vector<Ent> e;
  for (auto& t : d.tasks) e.push_back({&t.id, &t.lineage, &t.attrs});
  return e;
}
std::vector<Ent> ents(PortablePlanIR& p) {
  std::vector<Ent> e;
  for (auto& t : p.tasks) e.push_back({&t.id, &t.lineage, &t.attrs});
  for (auto& b : p.buffers) e.push_back({&b.id, &b.lineage, nullptr});
  return e;
}
std::vector<Ent> ents(ConcretePlanIR& p) {
  std::vector<Ent> e;
  for (auto& x : p.devices) e.push_back({&x.id, nullptr, nullptr});
  for (auto& x : p.regions) e.push_back({&x.id, nullptr, nullptr});
  for (auto& x : p.buffers) e.push_back({&x.id, &x.lineage, nullptr});
  for (auto& x : p.commands) e.push_back({&x.id, &x.lineage, &x.attrs});
  for (auto& x : p.tokens) e.push_back({&x.id, nullptr, nullptr});
  if (p.queue)
    for (auto& x : p.queue->queues) e.push_back({&x.id, nullptr, nullptr});
  for (auto& x : p.engines) e.push_back({&x.id, nullptr, nullptr});
  for (auto& x : p.implementations) e.push_back({&x.id, nullptr, nullptr});
  return e;
}
std::vector<Ent> ents(MachineIR& m) {
  std::vector<Ent> e;
  for (auto& x : m.instructions) e.push_back({&x.id, nullptr, nullptr});
  return e;
}

// Lineages whose sources only LINEAGE-1/2 read (WORK-2 reads those of counted distributed
// tasks, COLL-4 those of updates and dp collectives, WORK-1 those of every portable task).
bool counted_by_work2(const DistTask& t);
bool read_by_coll4(const DistTask& t) { return t.phase == Phase::optimizer || (t.collective && t.collective->axis == "dp"); }
std::vector<Lineage*> source_editable(DistributedTaskIR& p) {
  std::vector<Lineage*> out;
  for (auto& t : p.tasks)
    if (!counted_by_work2(t) && !read_by_coll4(t)) out.push_back(&t.lineage);
  return out;
}
// False for a DistributedTaskIR dependency of task j on task i that P2P-3 forbids (disjoint
// rank sets, not a receive on its send).
template <class P>
bool joinable(const P& p, std::size_t i, std::size_t j) {
  if constexpr (std::is_same_v<P, DistributedTaskIR>) {
    const auto &u = p.tasks[i], &t = p.tasks[j];
    const bool share = std::any_of(t.ranks.begin(), t.ranks.end(), [&](Index r) { return std::binary_search(u.ranks.begin(), u.ranks.end(), r); });
    return t.ranks.empty() || u.ranks.empty() || share || (t.kind == TaskKind::recv && t.peer == static_cast<Index>(i));
  } else {
    (void)p, (void)i, (void)j;
    return true;
  }
}
// True when task i could run on the ranks `rs` with every dependency edge at i, in either
// direction, still joining rank sets that share a rank or being a send/receive pair (P2P-3).
// (p is restored before it returns.)
bool joins(DistributedTaskIR& p, std::size_t i, Indices rs) {
  std::swap(p.tasks[i].ranks, rs);
  bool ok = true;
  for (Index u : p.tasks[i].dependencies) ok = ok && joinable(p, static_cast<std::size_t>(u), i);
  for (std::size_t j = 0; j < p.tasks.size() && ok; ++j)
    if (contains(p.tasks[j].dependencies, static_cast<Index>(i))) ok = joinable(p, i, j);
  std::swap(p.tasks[i].ranks, rs);
  return ok;
}
// Gives task i the ranks `rs` when joins() allows it; returns whether it did.
bool regroup(DistributedTaskIR& p, std::size_t i, Indices rs) {
  if (!joins(p, i, rs)) return false;
  p.tasks[i].ranks = std::move(rs);
  return true;
}
std::vector<Lineage*> source_editable(PortablePlanIR& p) {
  std::vector<Lineage*> out;
  for (auto& b : p.buffers) out.push_back(&b.lineage);
  return out;
}
std::vector<Lineage*> source_editable(ConcretePlanIR& p) {
  std::vector<Lineage*> out;
  for (auto& e : ents(p))
    if (e.lin) out.push_back(e.lin);
  return out;
}

std::vector<std::string>& rules(ModelIR& p) { return p.rules; }
std::vector<std::string>& rules(DistributedTaskIR& p) { return p.rules; }
std::vector<std::string>& rules(PortablePlanIR& p) { return p.rules; }
std::vector<std::string>& rules(ConcretePlanIR& p) { return p.rules; }

template <class T>
std::vector<Indices*> deps_of(std::vector<T>& xs) {
  std::vector<Indices*> out;
  for (auto& x : xs) out.push_back(&x.dependencies);
  return out;
}
std::vector<Indices*> deps(DistributedTaskIR& p) { return deps_of(p.tasks); }
std::vector<Indices*> deps(PortablePlanIR& p) { return deps_of(p.tasks); }
std::vector<Indices*> deps(ConcretePlanIR& p) { return deps_of(p.commands); }
std::vector<Indices*> deps(MachineIR& p) { return deps_of(p.instructions); }

template <class P>
std::optional<Mutant> with_witness(const AnySnapshot& child, Indices order) {
  return Mutant{child, std::nullopt, std::move(order), std::nullopt};
}

// ---- catalog construction ------------------------------------------------------------------

class Catalog {
 public:
  void add(std::string name, std::string code, std::string layer, MutateFn f, std::vector<std::string> implied = {},
           std::optional<TargetKind> target = std::nullopt) {
    v_.push_back(Mutation{std::move(name), std::move(code), std::move(layer), std::move(f), std::move(implied), target, false, false, {}});
  }
  /// Marks the last operator as needing an inference chain.
  void inference() { v_.back().inference = true; }
  /// Marks the last operator as needing a chain derived by the training passes.
  void derived() { v_.back().derived = true; }
  /// Gives the last operator an independent oracle for harmless mutants.
  void oracle(std::function<bool(const AnySnapshot*, const AnySnapshot&)> f) { v_.back().valid = std::move(f); }
  template <class P, class F>
  void edit(std::string name, std::string code, F f, std::optional<TargetKind> target = std::nullopt, std::vector<std::string> implied = {}) {
    if (name.find('.') == std::string::npos) name += "." + short_of<P>();
    add(std::move(name), std::move(code), layer_of<P>(), payload_edit<P>(std::move(f)), std::move(implied), target);
  }
  std::vector<Mutation> take() { return std::move(v_); }

 private:
  std::vector<Mutation> v_;
};

// DIGEST-1..5 for any layer.
template <class P>
void digest_ops(Catalog& c) {
  const std::string L = layer_of<P>(), S = short_of<P>();
  const bool root = std::is_same_v<P, ModelIR>;
  // DIGEST-1: a well-formed stored digest that is not the payload's.
  c.add("stale_digest." + S, "DIGEST-1", L, envelope([](AnySnapshot& s, Pick& pk, const AnySnapshot*) {
          std::visit([&](auto& x) { x.digest = flip_hex(x.digest, pk(64)); }, s);
          return true;
        }));
  // DIGEST-1: the payload edited after sealing (a harmless edit, digest not recomputed).
  c.add("payload_edited_after_seal." + S, "DIGEST-1", L, envelope([](AnySnapshot& s, Pick& pk, const AnySnapshot*) {
          auto& x = std::get<Snapshot<P>>(s);
          auto& p = x.payload;
          (void)pk;
          if constexpr (std::is_same_v<P, ModelIR>) p.name += "-edited";
          else if constexpr (std::is_same_v<P, DistributedTaskIR> || std::is_same_v<P, PortablePlanIR>) {
            if (p.tasks.empty()) return false;
            p.tasks[pk(p.tasks.size())].attrs["edited"] = "yes";
          } else if constexpr (std::is_same_v<P, ConcretePlanIR>) {
            if (p.commands.empty()) return false;
            p.commands[pk(p.commands.size())].implementation += ".edited";
          } else if constexpr (std::is_same_v<P, TimelineBundle>) p.evidence += "-edited";
          else if constexpr (std::is_same_v<P, MachineIR>) {
            if (p.instructions.empty()) return false;
            p.instructions[pk(p.instructions.size())].target += ".edited";
          } else {
            if (p.observations.empty()) return false;
            p.observations[pk(p.observations.size())].duration += 1;
          }
          return true;
        }));
  // DIGEST-2: the stored digest is not 64 lowercase hex digits.
  c.add("uppercase_digest." + S, "DIGEST-2", L, envelope([](AnySnapshot& s, Pick& pk, const AnySnapshot*) {
          std::visit([&](auto& x) {
            switch (pk(3)) {
              case 0: std::transform(x.digest.begin(), x.digest.end(), x.digest.begin(), [](char ch) { return static_cast<char>(std::toupper(static_cast<unsigned char>(ch))); }); break;
              case 1: x.digest.pop_back(); break;
              default: x.digest[pk(64)] = 'g'; break;
            }
          }, s);
          return true;
        }));
  if (!root) {
    // DIGEST-3: the parent's digest is replaced by another well-formed digest.
    c.add("wrong_parent_digest." + S, "DIGEST-3", L, envelope([](AnySnapshot& s, Pick& pk, const AnySnapshot*) {
            auto& ps = parents_of(s);
            ps[0] = flip_hex(ps[0], pk(64));
            return true;
          }));
  }
  // DIGEST-4: a second (well-formed) parent digest; the real one stays listed.
  c.add("extra_parent." + S, "DIGEST-4", L, envelope([](AnySnapshot& s, Pick& pk, const AnySnapshot*) {
          auto& ps = parents_of(s);
          std::string extra = digest_bytes("Other", std::to_string(pk(1000)));
          pk.insert(ps, extra);
          return true;
        }));
  if (!root) {
    // DIGEST-4: a derived snapshot with no parent (and no transition to check).
    c.add("no_parent." + S, "DIGEST-4", L, [](const AnySnapshot*, const AnySnapshot& child, std::uint64_t) -> std::optional<Mutant> {
      AnySnapshot x = child;
      parents_of(x).clear();
      return Mutant{std::move(x), std::nullopt, std::nullopt, std::nullopt};
    }, {"DIGEST-3"});  // the parent's digest is then necessarily not listed either
  }
  // DIGEST-5: the snapshot presented as its own parent (never the layer before).
  c.add("self_parent." + S, "DIGEST-5", L, [](const AnySnapshot*, const AnySnapshot& child, std::uint64_t) -> std::optional<Mutant> {
    return Mutant{child, child, std::nullopt, std::nullopt};
  });
  if (!root) {
    // DIGEST-5: the edge reversed: the parent presented as the child of its child.
    c.add("reversed_edge." + S, "DIGEST-5", L, [](const AnySnapshot* parent, const AnySnapshot& child, std::uint64_t) -> std::optional<Mutant> {
      if (!parent) return std::nullopt;
      return Mutant{*parent, child, std::nullopt, std::nullopt};
    });
  }
}

// ID-1, ID-2 for layers with ids.
template <class P>
void id_ops(Catalog& c) {
  const std::string S = short_of<P>();
  c.edit<P>("duplicate_id." + S, "ID-1", [](P& p, Pick& pk, const AnySnapshot*) {
    auto e = ents(p);
    if (e.size() < 2) return false;
    std::size_t i = pk(e.size()), j = pk(e.size() - 1);
    if (j >= i) ++j;
    *e[j].id = *e[i].id;
    return true;
  });
  c.edit<P>("bad_id_syntax." + S, "ID-2", [](P& p, Pick& pk, const AnySnapshot*) {
    auto e = ents(p);
    if (e.empty()) return false;
    static const char* kBad[] = {"", "has space", "tab\there", "quote\"d", "caf\xc3\xa9", "semi;colon"};
    std::string& id = *e[pk(e.size())].id;
    std::size_t k = pk(6);
    id = k == 0 ? std::string() : std::string(kBad[k]) + "#" + std::to_string(pk(1000));
    if (pk(4) == 0) id = std::string(257, 'x');
    return true;
  });
}

// LINEAGE-1 (and LINEAGE-2 for derived layers), ATTR-1 for layers with lineage and attrs.
template <class P>
void lineage_ops(Catalog& c) {
  const std::string S = short_of<P>();
  constexpr bool root = std::is_same_v<P, ModelIR>;
  c.edit<P>("undeclared_rule." + S, "LINEAGE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<Lineage*> ls;
    for (auto& e : ents(p))
      if (e.lin) ls.push_back(e.lin);
    if (ls.empty()) return false;
    pk.from(ls)->rule = "undeclared.rule" + std::to_string(pk(10));
    return true;
  });
  c.edit<P>("rule_declared_twice." + S, "LINEAGE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& r = rules(p);
    return pk.duplicate_one(r);
  });
  if constexpr (root) {
    c.edit<P>("root_entity_derived." + S, "LINEAGE-1", [](P& p, Pick& pk, const AnySnapshot*) {
      auto e = ents(p);
      Lineage& l = *e[pk(e.size())].lin;
      if (pk(2)) l.kind = LineageKind::derived;
      else l.sources.push_back("somewhere");
      return true;
    });
  } else {
    c.edit<P>("derived_without_sources." + S, "LINEAGE-1", [](P& p, Pick& pk, const AnySnapshot*) {
      std::vector<Lineage*> ls = source_editable(p);
      if (ls.empty()) return false;
      pk.from(ls)->sources.clear();
      return true;
    });
    c.edit<P>("introduced_in_derived." + S, "LINEAGE-1", [](P& p, Pick& pk, const AnySnapshot*) {
      std::vector<Lineage*> ls;
      for (auto& e : ents(p))
        if (e.lin) ls.push_back(e.lin);
      if (ls.empty()) return false;
      pk.from(ls)->kind = LineageKind::introduced;
      return true;
    });
    c.edit<P>("unknown_source." + S, "LINEAGE-2", [](P& p, Pick& pk, const AnySnapshot*) {
      std::vector<Lineage*> ls = source_editable(p);
      if (ls.empty()) return false;
      Lineage& l = *pk.from(ls);
      std::string ghost = "ghost:" + std::to_string(pk(1000));
      if (pk(2) && !l.sources.empty()) l.sources[pk(l.sources.size())] = ghost;
      else l.sources.push_back(ghost);
      return true;
    });
  }
  // ATTR-1: a name reserved for a later layer (case-insensitive).
  c.edit<P>("reserved_attribute." + S, "ATTR-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<Attrs*> as;
    for (auto& e : ents(p))
      if (e.attrs) as.push_back(e.attrs);
    if (as.empty()) return false;
    std::vector<std::string> names = {"duration", "start", "start_time", "end", "end_time", "latency", "time", "timestamp", "predicted_time"};
    if (layer_index<P>() < 3)
      for (const char* n : {"device", "queue", "stream", "kernel", "implementation", "address", "offset", "slot", "cycle", "engine"}) names.push_back(n);
    if (layer_index<P>() < 1)
      for (const char* n : {"rank", "ranks", "mesh", "collective", "communicator", "tp_rank", "pp_rank", "dp_rank"}) names.push_back(n);
    std::string k = pk.from(names);
    if (pk(2)) k[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(k[0])));
    (*pk.from(as))[k] = "1";
    return true;
  });
}

// DAG-1 (repeated dependency), DAG-3 (wrong witnesses) for layers with dependencies.
template <class P>
void dag_ops(Catalog& c, bool self_edge_exact, bool cycle_exact) {
  const std::string L = layer_of<P>(), S = short_of<P>();
  c.edit<P>("repeated_dependency." + S, "DAG-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<Indices*> ds;
    for (auto* d : deps(p))
      if (!d->empty()) ds.push_back(d);
    return !ds.empty() && pk.duplicate_one(*pk.from(ds));
  });
  if (self_edge_exact) {
    c.edit<P>("self_dependency." + S, "DAG-1", [](P& p, Pick& pk, const AnySnapshot*) {
      auto ds = deps(p);
      if (ds.empty()) return false;
      std::size_t i = pk(ds.size());
      insert_sorted(*ds[i], static_cast<Index>(i));
      return true;
    });
  }
  if (cycle_exact) {
    // DAG-2: j depends on i; make i depend on j. For MachineIR, i must keep a dependency
    // already so that the entry points do not change (MACHINE-2).
    c.edit<P>("dependency_cycle." + S, "DAG-2", [](P& p, Pick& pk, const AnySnapshot*) {
      auto ds = deps(p);
      std::vector<std::pair<std::size_t, std::size_t>> edges;
      for (std::size_t j = 0; j < ds.size(); ++j)
        for (Index i : *ds[j])
          if ((!std::is_same_v<P, MachineIR> || !ds[static_cast<std::size_t>(i)]->empty()) && joinable(p, j, static_cast<std::size_t>(i)))
            edges.emplace_back(static_cast<std::size_t>(i), j);
      if (edges.empty()) return false;
      auto [i, j] = pk.from(edges);
      ds[i]->push_back(static_cast<Index>(j));
      return true;
    });
  }
  auto nodes = [](const P& p) {
    if constexpr (std::is_same_v<P, ConcretePlanIR>) return p.commands.size();
    else if constexpr (std::is_same_v<P, MachineIR>) return p.instructions.size();
    else return p.tasks.size();
  };
  // DAG-3: a claimed topological order that is the reverse of index order (wrong when
  // there is at least one dependency).
  c.add("witness_reversed." + S, "DAG-3", L, [nodes](const AnySnapshot*, const AnySnapshot& child, std::uint64_t) -> std::optional<Mutant> {
    const auto* s = std::get_if<Snapshot<P>>(&child);
    if (!s) return std::nullopt;
    P p = s->payload;
    bool any = false;
    for (auto* d : deps(p)) any = any || !d->empty();
    if (!any) return std::nullopt;
    Indices order;
    for (std::size_t i = nodes(s->payload); i-- > 0;) order.push_back(static_cast<Index>(i));
    return with_witness<P>(child, std::move(order));
  });
  c.add("witness_wrong_length." + S, "DAG-3", L, [nodes](const AnySnapshot*, const AnySnapshot& child, std::uint64_t seed) -> std::optional<Mutant> {
    const auto* s = std::get_if<Snapshot<P>>(&child);
    if (!s) return std::nullopt;
    Pick pk{seed};
    Indices order;
    for (std::size_t i = 0; i < nodes(s->payload); ++i) order.push_back(static_cast<Index>(i));
    if (pk(2) || order.empty()) order.push_back(static_cast<Index>(order.size()));
    else pk.erase_one(order);
    return with_witness<P>(child, std::move(order));
  });
  c.add("witness_not_permutation." + S, "DAG-3", L, [nodes](const AnySnapshot*, const AnySnapshot& child, std::uint64_t seed) -> std::optional<Mutant> {
    const auto* s = std::get_if<Snapshot<P>>(&child);
    if (!s) return std::nullopt;
    const std::size_t n = nodes(s->payload);
    if (n == 0) return std::nullopt;
    Pick pk{seed};
    Indices order;
    for (std::size_t i = 0; i < n; ++i) order.push_back(static_cast<Index>(i));
    std::size_t k = pk(n);
    switch (pk(3)) {
      case 0: order[k] = -1; break;
      case 1: order[k] = static_cast<Index>(n + pk(5)); break;
      default:
        if (n < 2) return std::nullopt;
        order[k] = order[(k + 1 + pk(n - 1)) % n];
        break;
    }
    return with_witness<P>(child, std::move(order));
  });
}

// SYM-1 (a malformed declaration) and SYM-2 (an undeclared symbol) for layers with symbols.
template <class P>
void sym_ops(Catalog& c) {
  const std::string S = short_of<P>();
  c.edit<P>("malformed_symbol." + S, "SYM-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.symbols.empty()) return false;
    const std::size_t i = pk(p.symbols.size());
    Symbol& x = p.symbols[i];
    switch (pk(4)) {  // none of these changes a divisibility fact SHARD-1 reads, except to 0
      case 0: x.integer = false; break;
      case 1: x.max = x.min - 1 - Int(static_cast<long long>(pk(5))); break;
      case 2: x.divisible_by = 0; break;  // 0 divides nothing: every SHARD-1 test passes
      default: pk.insert(p.symbols, p.symbols[i]); break;
    }
    return true;
  });
  // SYM-2: "Z" appears in an expression no other obligation reads.
  c.edit<P>("undeclared_symbol." + S, "SYM-2", [](P& p, Pick& pk, const AnySnapshot*) {
    const Expr z = Expr::symbol("Z") * Expr(static_cast<long long>(1 + pk(8)));
    if constexpr (std::is_same_v<P, ModelIR>) {
      auto& op = p.operations[pk(p.operations.size())];
      op.work.temporary_bytes = op.work.temporary_bytes + z;
    } else if constexpr (std::is_same_v<P, DistributedTaskIR>) {
      auto& t = p.tasks[pk(p.tasks.size())];
      t.work.vector_ops = t.work.vector_ops + z;  // WORK-2 reads matrix work only
    } else {
      std::vector<bool> counted(p.buffers.size(), false);  // a buffer no memory fact sums
      for (const auto& f : p.memory)
        for (Index b : f.buffers) counted[static_cast<std::size_t>(b)] = true;
      std::vector<std::size_t> bs;
      for (std::size_t b = 0; b < p.buffers.size(); ++b)
        if (!counted[b]) bs.push_back(b);
      if (bs.empty()) return false;
      auto& size = p.buffers[pk.from(bs)].size;
      size = size + z;
    }
    return true;
  });
}

// ---- byte mutations (JSON-*, SCHEMA-*) ---------------------------------------------------

// Offset just after `"payload":{` in canonical snapshot bytes.
std::size_t payload_open(const std::string& b) { return b.find("\"payload\":{") + 11; }

// Positions of JSON integer tokens outside strings inside the payload.
std::vector<std::pair<std::size_t, std::size_t>> integers_in_payload(const std::string& b) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  std::size_t i = payload_open(b);
  const std::size_t end = b.rfind(",\"schema\":");
  bool in_str = false;
  while (i < end) {
    char ch = b[i];
    if (in_str) {
      if (ch == '\\') ++i;
      else if (ch == '"') in_str = false;
      ++i;
      continue;
    }
    if (ch == '"') { in_str = true; ++i; continue; }
    if ((ch >= '0' && ch <= '9') || ch == '-') {
      std::size_t j = i + 1;
      while (j < end && b[j] >= '0' && b[j] <= '9') ++j;
      out.emplace_back(i, j - i);
      i = j;
      continue;
    }
    ++i;
  }
  return out;
}

// The string value following the first occurrence of one of `keys` (as `"key":"`); returns
// the value's [begin, end) or nullopt.
std::optional<std::pair<std::size_t, std::size_t>> string_value(const std::string& b, std::initializer_list<const char*> keys, Pick& pk) {
  std::vector<std::pair<std::size_t, std::size_t>> hits;
  for (const char* k : keys) {
    const std::string pat = std::string("\"") + k + "\":\"";
    for (std::size_t pos = b.find(pat, payload_open(b)); pos != std::string::npos; pos = b.find(pat, pos + 1)) {
      std::size_t vb = pos + pat.size(), ve = b.find('"', vb);
      hits.emplace_back(vb, ve);
    }
  }
  if (hits.empty()) return std::nullopt;
  return pk.from(hits);
}

void byte_ops(Catalog& c) {
  const std::string A = "*";
  // JSON-1: syntax errors.
  c.add("empty_input", "JSON-1", A, bytes([](std::string& b, Pick& pk) { b = pk(2) ? std::string() : std::string(" \n\t"); return true; }));
  c.add("trailing_garbage", "JSON-1", A, bytes([](std::string& b, Pick& pk) {
          static const char* kTails[] = {"x", "{}", ",", " 1", "]"};
          b += kTails[pk(5)];
          return true;
        }));
  c.add("truncated_in_string", "JSON-1", A, bytes([](std::string& b, Pick& pk) {
          b.resize(12 + pk(64));  // inside the digest string: `{"digest":"` is 11 bytes
          return true;
        }));
  // JSON-2: duplicate keys, in the envelope and in the payload.
  c.add("duplicate_envelope_key", "JSON-2", A, bytes([](std::string& b, Pick& pk) {
          static const char* kKeys[] = {"\"schema\":", "\"version\":"};
          const char* k = kKeys[pk(2)];
          std::size_t pos = b.rfind(k);
          std::size_t end = b.find('"', b.find('"', pos + std::string(k).size()) + 1) + 1;  // end of the string value
          b.insert(pos, b.substr(pos, end - pos) + ",");
          return true;
        }));
  c.add("duplicate_payload_key", "JSON-2", A, bytes([](std::string& b, Pick&) {
          const std::size_t open = payload_open(b);
          if (b[open] == '}') return false;
          json::Reader r(std::string_view(b).substr(open - 1));
          r.begin_object();
          std::string_view k;
          r.next_key(k);
          std::string member = json::quote(k);  // before skip(), which may reuse the reader's buffer
          member += ":" + std::string(r.skip());
          b.insert(open, member + ",");
          return true;
        }));
  // JSON-3: a JSON float.
  c.add("float_number", "JSON-3", A, bytes([](std::string& b, Pick& pk) {
          static const char* kFloats[] = {"1.5", "1e3", "2E-1", "0.0"};
          b.insert(payload_open(b), std::string("\"x\":") + kFloats[pk(4)] + ",");
          return true;
        }));
  c.add("integer_as_float", "JSON-3", A, bytes([](std::string& b, Pick& pk) {
          auto ints = integers_in_payload(b);
          if (ints.empty()) return false;
          auto [pos, len] = pk.from(ints);
          b.insert(pos + len, pk(2) ? ".0" : "e0");
          return true;
        }));
  // JSON-4: a leading zero or a negative zero.
  c.add("leading_zero", "JSON-4", A, bytes([](std::string& b, Pick& pk) {
          auto ints = integers_in_payload(b);
          if (ints.empty()) return false;
          auto [pos, len] = pk.from(ints);
          (void)len;
          b.insert(pos + (b[pos] == '-' ? 1 : 0), "0");
          return true;
        }));
  c.add("negative_zero", "JSON-4", A, bytes([](std::string& b, Pick&) {
          b.insert(payload_open(b), "\"x\":-0,");
          return true;
        }));
  // JSON-5: nesting deeper than the reader's limit.
  c.add("deep_nesting", "JSON-5", A, bytes([](std::string& b, Pick& pk) {
          const std::size_t depth = 520 + pk(200);
          b.insert(payload_open(b), "\"x\":" + std::string(depth, '[') + std::string(depth, ']') + ",");
          return true;
        }));
  // JSON-6: bad string contents.
  c.add("bad_string_escape", "JSON-6", A, bytes([](std::string& b, Pick& pk) {
          static const char* kBad[] = {"\\q", "\x01", "\xff", "\\ud800", "\\udc00", "\\u12g4", "\xc0\xaf", "\xed\xa0\x80"};
          b.insert(11 + pk(64), kBad[pk(8)]);  // inside the digest string
          return true;
        }));
  // SCHEMA-1: unknown schema name.
  c.add("unknown_schema", "SCHEMA-1", A, bytes([](std::string& b, Pick& pk) {
          std::size_t pos = b.rfind("\"schema\":\"") + 10;
          static const char* kNames[] = {"X", "modelir", "Plan", ""};
          std::size_t k = pk(4);
          if (k == 3) b.erase(pos, b.find('"', pos) - pos);
          else b.insert(pos, kNames[k]);
          return true;
        }));
  // SCHEMA-2: unsupported version.
  c.add("unsupported_version", "SCHEMA-2", A, bytes([](std::string& b, Pick& pk) {
          static const char* kVersions[] = {"2.0.0", "1.1.0", "0.9.0", "1", "", "10.0.0"};
          std::size_t pos = b.rfind("\"version\":\"") + 11;
          b.replace(pos, b.find('"', pos) - pos, kVersions[pk(6)]);
          return true;
        }));
  // SCHEMA-3: a required field is missing (envelope or payload).
  c.add("missing_envelope_field", "SCHEMA-3", A, bytes([](std::string& b, Pick& pk) {
          switch (pk(2)) {
            case 0: {  // drop the last member, "version"
              std::size_t pos = b.rfind(",\"version\":");
              b.erase(pos, b.size() - 1 - pos);
              break;
            }
            default: {  // drop the first member, "digest"
              std::size_t end = b.find(",\"parents\":");
              b.erase(1, end);
              break;
            }
          }
          return true;
        }));
  c.add("missing_payload_field", "SCHEMA-3", A, bytes([](std::string& b, Pick&) {
          const std::size_t open = payload_open(b);
          json::Reader r(std::string_view(b).substr(open - 1));
          r.begin_object();
          std::string_view key;
          if (!r.next_key(key)) return false;
          r.skip();
          std::size_t end = (open - 1) + r.offset();
          if (b[end] == ',') ++end;
          b.erase(open, end - open);
          return true;
        }));
  // SCHEMA-4: an unknown field (envelope or payload).
  c.add("unknown_field", "SCHEMA-4", A, bytes([](std::string& b, Pick& pk) {
          if (pk(2)) b.insert(1, "\"comment\":\"hi\",");
          else b.insert(payload_open(b), "\"zzz_unknown\":\"1\",");
          return true;
        }));
  // SCHEMA-5: a value of the wrong JSON type.
  c.add("wrong_json_type", "SCHEMA-5", A, bytes([](std::string& b, Pick& pk) {
          switch (pk(3)) {
            case 0: {  // parents not an array
              std::size_t pos = b.find("\"parents\":[") + 10;
              b.replace(pos, b.find(']', pos) + 1 - pos, "{}");
              break;
            }
            case 1: {  // digest not a string
              std::size_t pos = b.find("\"digest\":\"") + 9;
              b.replace(pos, 66, "7");
              break;
            }
            default: {  // payload not an object
              std::size_t pos = b.find("\"payload\":{") + 10;
              json::Reader r(std::string_view(b).substr(pos));
              r.skip();
              b.replace(pos, r.offset(), "[]");
              break;
            }
          }
          return true;
        }));
  // SCHEMA-6: an enum value outside its spelling list.
  c.add("unknown_enum_value", "SCHEMA-6", A, bytes([](std::string& b, Pick& pk) {
    // (key, spellings of the enum stored under it); other fields of the same name are strings
    static const std::vector<std::pair<std::string, std::vector<std::string>>> kEnums = {
        {"\"lineage\":{\"kind\":\"", {"derived", "introduced"}},
        {"\"op\":\"", {"call", "copy", "signal", "wait"}},
        {"\"axis\":\"", {"strategy", "target", "workload"}},
        {"\"target\":\"", {"queue", "slot"}},
        {"\"role\":\"", {"activation", "constant", "gradient", "input", "output", "state", "weight", "kv_cache", "message", "optimizer_state", "workspace"}},
        {"\"storage\":\"", {"constant", "input", "output", "persistent", "state", "transient", "workspace"}},
        {"\"phase\":\"", {"backward_activation", "backward_weight", "forward", "none", "optimizer", "recompute"}},
        {"\"category\":\"", {"activations", "activations_peak", "optimizer_state", "total", "weight_gradients", "weights"}},
    };
    std::vector<std::pair<std::size_t, std::size_t>> hits;
    for (const auto& [p, names] : kEnums)
      for (std::size_t pos = b.find(p, payload_open(b)); pos != std::string::npos; pos = b.find(p, pos + 1)) {
        const std::size_t vb = pos + p.size(), ve = b.find('"', vb);
        if (std::find(names.begin(), names.end(), b.substr(vb, ve - vb)) != names.end()) hits.emplace_back(vb, ve);
      }
    if (hits.empty()) return false;
    auto [vb, ve] = pk.from(hits);
    static const char* kBogus[] = {"bogus", "Derived", "", "queue "};
    b.replace(vb, ve - vb, kBogus[pk(4)]);
    return true;
  }));
  // SCHEMA-7: an exact quantity not in canonical form ("2*B+0", "07", "2/4", "S*B").
  c.add("noncanonical_exact_number", "SCHEMA-7", A, bytes([](std::string& b, Pick& pk) {
          auto v = string_value(b, {"matrix_ops", "write_bytes", "size", "memory_bytes", "capacity", "offset", "start", "end", "duration", "message_bytes"}, pk);
          if (!v) return false;
          auto [vb, ve] = *v;
          const std::string old = b.substr(vb, ve - vb);
          std::string neu;
          switch (pk(4)) {
            case 0: neu = old + "+0"; break;
            case 1: neu = "0" + old; break;
            case 2: neu = "+" + old; break;
            default: neu = old + "/1"; break;
          }
          b.replace(vb, ve - vb, neu);
          return true;
        }));
  c.add("noncanonical_symbolic_shape", "SCHEMA-7", "ModelIR", bytes([](std::string& b, Pick& pk) {
          // a symbolic dimension written with a unit coefficient or a reordered product
          std::vector<std::size_t> hits;  // "B" as an element of a shape array (not a symbol's name)
          for (std::size_t pos = b.find("\"B\"", payload_open(b)); pos != std::string::npos; pos = b.find("\"B\"", pos + 1))
            if (b[pos - 1] == '[' || b[pos - 1] == ',') hits.push_back(pos);
          if (hits.empty()) return false;
          static const char* kForms[] = {"\"1*B\"", "\"B+0\"", "\"B*1\"", "\"2*B-B\""};
          b.replace(pk.from(hits), 3, kForms[pk(4)]);
          return true;
        }));
  // SCHEMA-8: numbers out of range.
  c.add("integer_out_of_range", "SCHEMA-8", A, bytes([](std::string& b, Pick& pk) {
          auto ints = integers_in_payload(b);
          if (ints.empty()) return false;
          auto [pos, len] = pk.from(ints);
          static const char* kBig[] = {"9223372036854775808", "-9223372036854775809", "99999999999999999999999"};
          b.replace(pos, len, kBig[pk(3)]);
          return true;
        }));
  c.add("expression_too_long", "SCHEMA-8", A, bytes([](std::string& b, Pick& pk) {
          auto v = string_value(b, {"matrix_ops", "write_bytes", "message_bytes", "read_bytes"}, pk);
          if (!v) return false;
          auto [vb, ve] = *v;
          std::string big;
          while (big.size() <= 4096 * 4) big += "B+";
          big += "B";
          b.replace(vb, ve - vb, big);
          return true;
        }));
}

// ---- layer-specific operators ----------------------------------------------------------------

void model_ops(Catalog& c) {
  using P = ModelIR;
  c.edit<P>("dangling_value_reference", "REF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& op = p.operations[pk(p.operations.size())];
    const Index bad = pk(2) ? static_cast<Index>(p.values.size() + pk(3)) : -1 - static_cast<Index>(pk(3));
    switch (pk(3)) {
      case 0: op.inputs[pk(op.inputs.size())] = bad; break;
      case 1: op.outputs.push_back(bad); break;
      default: op.effects.push_back({EffectKind::read, bad}); break;
    }
    return true;
  });
  c.edit<P>("output_listed_twice", "REF-2", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& op = p.operations[pk(p.operations.size())];
    if (op.outputs.empty()) return false;
    op.outputs.push_back(Index{op.outputs[pk(op.outputs.size())]});  // a copy: not a reference into the List (core/codec.h)
    return true;
  });
  // FLOW-1: an operation defines a graph input (input/weight/constant/state value).
  c.edit<P>("defines_graph_input", "FLOW-1", [](P& p, Pick& pk, const AnySnapshot*) {
    Indices given;
    for (std::size_t v = 0; v < p.values.size(); ++v) {
      ValueRole r = p.values[v].role;
      if (r == ValueRole::input || r == ValueRole::weight || r == ValueRole::constant || r == ValueRole::state) given.push_back(static_cast<Index>(v));
    }
    if (given.empty()) return false;
    p.operations[pk(p.operations.size())].outputs.push_back(pk.from(given));
    return true;
  });
  // FLOW-1: a later operation redefines an earlier operation's output.
  c.edit<P>("defined_twice", "FLOW-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.operations.size() < 2) return false;
    std::size_t j = 1 + pk(p.operations.size() - 1), i = pk(j);
    if (p.operations[i].outputs.empty()) return false;
    p.operations[j].outputs.push_back(p.operations[i].outputs[0]);
    return true;
  });
  // FLOW-2: an operation reads a value defined by a later operation.
  c.edit<P>("use_before_definition", "FLOW-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.operations.size() < 2) return false;
    std::size_t j = 1 + pk(p.operations.size() - 1), i = pk(j);
    if (p.operations[j].outputs.empty()) return false;
    insert_sorted(p.operations[i].inputs, p.operations[j].outputs[0]);
    return true;
  });
  // FLOW-3: an activation nobody defines.
  c.edit<P>("orphan_activation", "FLOW-3", [](P& p, Pick& pk, const AnySnapshot*) {
    static constexpr ValueRole kRoles[] = {ValueRole::activation, ValueRole::gradient, ValueRole::output};
    ModelValue v{"bf16", "v:orphan" + std::to_string(pk(100)), Lineage{LineageKind::introduced, "model.define", {}}, kRoles[pk(3)], {Expr::symbol("B")}};
    pk.insert(p.values, v);
    // keep references valid: shift indices at or after the insertion point
    Index at = static_cast<Index>(std::find_if(p.values.begin(), p.values.end(), [&](const ModelValue& x) { return x.id == v.id; }) - p.values.begin());
    for (auto& op : p.operations) {
      for (auto& x : op.inputs) x += x >= at;
      for (auto& x : op.outputs) x += x >= at;
      for (auto& e : op.effects) e.value += e.value >= at;
    }
    return true;
  });
  // FLOW-3: the last operation's output (read by nobody) loses its definition.
  c.edit<P>("definition_removed", "FLOW-3", [](P& p, Pick&, const AnySnapshot*) {
    auto& op = p.operations.back();
    if (op.outputs.empty()) return false;
    op.outputs.clear();
    return true;
  });
}

// True for the tasks whose matrix work WORK-2 sums (changing their ranks, repetition or
// sources also breaks WORK-2).
bool counted_by_work2(const DistTask& t) { return t.kind == TaskKind::compute && t.phase != Phase::none && t.phase != Phase::optimizer; }

std::int64_t mesh_size(const Mesh& m, std::string_view name) {
  for (const auto& a : m.axes)
    if (a.name == name) return a.size;
  return -1;
}

std::int64_t mesh_stride(const Mesh& m, std::string_view name) {
  std::int64_t s = 1;
  for (auto it = m.axes.rbegin(); it != m.axes.rend(); ++it) {
    if (it->name == name) return s;
    s *= it->size;
  }
  return s;
}

std::int64_t world_of(const Mesh& m) {
  std::int64_t w = 1;
  for (const auto& a : m.axes) w *= a.size;
  return w;
}

// The last task before `i` that writes state `value`, or -1.
template <class T>
std::int64_t last_writer_before(const std::vector<T>& tasks, std::size_t i, const std::string& value) {
  for (std::size_t j = i; j-- > 0;)
    for (const auto& e : tasks[j].effects)
      if (e.kind == EffectKind::write && e.value == value) return static_cast<std::int64_t>(j);
  return -1;
}

// True when dependency u of task i orders one of i's state effects after its last writer
// (EFFECT-2/3 read it).
template <class T>
bool orders_an_effect(const std::vector<T>& tasks, std::size_t i, Index u) {
  for (const auto& e : tasks[i].effects)
    if (last_writer_before(tasks, i, e.value) == u) return true;
  return false;
}

// EFFECT-1/4: a task's effects reordered (a read and a write swapped) or a read dropped;
// neither changes which task last writes a state before any other.
template <class T>
bool shuffle_effects(std::vector<T>& tasks, Pick& pk) {
  std::vector<T*> ts;
  for (auto& t : tasks) {
    bool mixed = t.effects.size() >= 2 && t.effects[0].kind != t.effects[1].kind;
    bool reads = std::any_of(t.effects.begin(), t.effects.end(), [](const TaskEffect& e) { return e.kind == EffectKind::read; });
    if (mixed || reads) ts.push_back(&t);
  }
  if (ts.empty()) return false;
  auto& e = pk.from(ts)->effects;
  if (e.size() >= 2 && e[0].kind != e[1].kind && pk(2)) std::swap(e[0], e[1]);
  else e.erase(std::find_if(e.begin(), e.end(), [](const TaskEffect& x) { return x.kind == EffectKind::read; }));
  return true;
}

// A dependency of a task whose effects are all of `kind` that orders it after the last writer.
template <class T>
bool drop_effect_order(std::vector<T>& tasks, EffectKind kind, Pick& pk) {
  std::vector<std::pair<std::size_t, Index>> cand;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& e = tasks[i].effects;
    if (e.empty() || !std::all_of(e.begin(), e.end(), [&](const TaskEffect& x) { return x.kind == kind; })) continue;
    const std::int64_t w = last_writer_before(tasks, i, e[0].value);
    if (w >= 0) cand.emplace_back(i, static_cast<Index>(w));
  }
  if (cand.empty()) return false;
  auto [i, w] = pk.from(cand);
  auto& d = tasks[i].dependencies;
  d.erase(std::remove(d.begin(), d.end(), w), d.end());
  return true;
}

void distributed_ops(Catalog& c) {
  using P = DistributedTaskIR;
  c.edit<P>("dangling_task_reference", "REF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& t = p.tasks[pk(p.tasks.size())];
    const Index bad = pk(2) ? static_cast<Index>(p.tasks.size() + pk(3)) : -1;
    if (pk(2) && t.peer) t.peer = bad;
    else t.dependencies.push_back(bad);
    return true;
  });
  // MESH-1 on the pp axis: no shard, collective axis or work scale refers to it.
  c.edit<P>("unknown_axis", "MESH-1", [](P& p, Pick& pk, const AnySnapshot*) {
    static const char* kNames[] = {"ep", "PP", "", "sp"};
    for (auto& a : p.mesh.axes)
      if (a.name == "pp") a.name = kNames[pk(4)];
    return true;
  });
  c.edit<P>("duplicate_axis", "MESH-1", [](P& p, Pick& pk, const AnySnapshot*) {
    // pp renamed to tp or dp; lookups search from the innermost axis, so the renamed axis
    // must come first or have the same size
    auto& axes = p.mesh.axes;
    std::size_t ip = 0;
    while (axes[ip].name != "pp") ++ip;
    std::vector<std::string> ok;  // (the inference families search from the outermost axis)
    for (std::size_t j = 0; j < axes.size(); ++j)
      if (j != ip && axes[ip].size == axes[j].size) ok.push_back(axes[j].name);
    if (ok.empty()) return false;
    axes[ip].name = pk.from(ok);
    return true;
  });
  c.edit<P>("empty_axis", "MESH-1", [](P& p, Pick& pk, const AnySnapshot*) {
    for (auto& a : p.mesh.axes)
      if (a.name == "pp") a.size = pk(2) ? 0 : -3;
    return true;
  });
  c.edit<P>("rank_outside_mesh", "MESH-2", [](P& p, Pick& pk, const AnySnapshot*) {
    const std::int64_t world = world_of(p.mesh);
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return !counted_by_work2(t); });
    if (!picked) return false;
    DistTask& t = *picked;
    if (pk(2) && t.collective) t.collective->group.push_back(static_cast<Index>(world + static_cast<std::int64_t>(pk(3))));
    else t.ranks.push_back(static_cast<Index>(world + static_cast<std::int64_t>(pk(3))));
    return true;
  });
  c.edit<P>("ranks_unsorted", "MESH-2", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<Indices*, bool>> rs;  // (list, may change its length)
    for (auto& t : p.tasks) {
      if (t.ranks.size() >= 2) rs.emplace_back(&t.ranks, !counted_by_work2(t));
      if (t.collective && t.collective->group.size() >= 2) rs.emplace_back(&t.collective->group, true);
    }
    if (rs.empty()) return false;
    auto [r, resizable] = pk.from(rs);
    std::size_t k = pk(r->size() - 1);
    if (pk(2) || !resizable) std::swap((*r)[k], (*r)[k + 1]);
    else r->insert(r->begin() + static_cast<std::ptrdiff_t>(k) + 1, (*r)[k]);  // a repeated rank
    return true;
  });
  c.edit<P>("empty_ranks", "MESH-2", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return !counted_by_work2(t); });
    if (!picked) return false;
    picked->ranks.clear();
    return true;
  });
  c.edit<P>("compute_with_collective", "MESH-3", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.kind != TaskKind::collective && t.value.empty(); });  // a task naming no value (VOL-1 would read the payload)
    if (!picked) return false;
    DistTask& t = *picked;
    t.collective = Collective{t.ranks, CollectiveKind::all_reduce, Expr(8LL), Reduction::sum, ""};
    return true;
  });
  c.edit<P>("collective_without_collective", "MESH-3", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.kind == TaskKind::collective; });
    if (!picked) return false;
    picked->collective.reset();
    return true;
  });
  c.edit<P>("transfer_without_peer", "MESH-3", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.peer.has_value(); });
    if (!picked) return false;
    picked->peer.reset();
    return true;
  });
  c.edit<P>("compute_with_peer", "MESH-3", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return !t.peer && t.kind != TaskKind::send && t.kind != TaskKind::recv; });
    if (!picked) return false;
    picked->peer = static_cast<Index>(pk(p.tasks.size()));
    return true;
  });
  // WORK-3 on tasks whose repetition no other obligation reads (not WORK-2, not P2P-1).
  c.edit<P>("bad_repetition", "WORK-3", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return !counted_by_work2(t) && t.kind != TaskKind::send && t.kind != TaskKind::recv; });
    if (!picked) return false;
    DistTask& t = *picked;
    switch (pk(4)) {
      case 0: t.repeat = -static_cast<std::int64_t>(pk(2)); break;
      case 1: t.replication = 0; break;
      case 2: t.replication = -1; break;
      default: t.replication = static_cast<std::int64_t>(t.ranks.size()) + 1; break;
    }
    return true;
  });
  // WORK-2: a forward task's matrix work no longer adds up to the model's.
  c.edit<P>("forward_work_changed", "WORK-2", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return counted_by_work2(t); });
    if (!picked) return false;
    DistTask& t = *picked;
    t.work.matrix_ops = pk(2) ? t.work.matrix_ops + Expr(static_cast<long long>(1 + pk(5))) : t.work.matrix_ops * Expr(2LL) + Expr(1LL);
    return true;
  });
  c.edit<P>("compute_from_two_sources", "WORK-2", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& m = std::get<Snapshot<ModelIR>>(*parent).payload;
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return counted_by_work2(t) && t.effects.empty(); });  // (a task with effects would also break EFFECT-1)
    if (!picked) return false;
    picked->lineage.sources.push_back(m.values[pk(m.values.size())].id);
    return true;
  });
  // COLL-1: the group is not the task's ranks, or not made of complete axis groups.
  c.edit<P>("group_differs_from_ranks", "COLL-1", [](P& p, Pick& pk, const AnySnapshot*) {
    const std::int64_t world = world_of(p.mesh);
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.collective && (t.ranks.size() >= 2 || static_cast<std::int64_t>(t.ranks.size()) < world); });
    if (!picked) return false;
    Indices& g = picked->collective->group;
    if (g.size() >= 2 && (pk(2) || static_cast<std::int64_t>(g.size()) == world)) {
      pk.erase_one(g);
    } else {
      Indices free;
      for (Index r = 0; r < world; ++r)
        if (!contains(g, r)) free.push_back(r);
      insert_sorted(g, pk.from(free));
    }
    return true;
  });
  // Collectives whose ranks or axis COLL-4 reads are left alone by the operators that change
  // ranks or axis; a collective a send depends on keeps the send's rank (P2P-3): sent[i] is
  // that rank, -1 without a dependent send, -2 with sends on several ranks.
  const auto sent = [](const P& p) {
    std::vector<Index> r(p.tasks.size(), -1);
    for (const auto& t : p.tasks)
      if (t.kind == TaskKind::send)
        for (Index u : t.dependencies) r[static_cast<std::size_t>(u)] = r[static_cast<std::size_t>(u)] == -1 || r[static_cast<std::size_t>(u)] == t.ranks.front() ? t.ranks.front() : -2;
    return r;
  };
  c.edit<P>("incomplete_axis_group", "COLL-1", [sent](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, Indices>> ts;  // (collective, its ranks with one fewer or one more)
    const auto keep = sent(p);
    for (std::size_t i = 0; i < p.tasks.size(); ++i) {
      const auto& t = p.tasks[i];
      if (!t.collective || t.collective->axis.empty() || mesh_size(p.mesh, t.collective->axis) < 2 || read_by_coll4(t) || keep[i] == -2) continue;
      for (std::size_t k = 0; k < t.ranks.size(); ++k) {  // one rank fewer, where P2P-3 still holds
        Indices rs = t.ranks;
        rs.erase(rs.begin() + static_cast<std::ptrdiff_t>(k));
        if (t.ranks[k] != keep[i] && joins(p, i, rs)) ts.emplace_back(i, std::move(rs));
      }
      std::int64_t world = 1;
      for (const auto& a : p.mesh.axes) world *= a.size;
      for (Index x = 0; x < world; ++x)  // or one rank more: the only one of its axis group
        if (!std::binary_search(t.ranks.begin(), t.ranks.end(), x)) {
          Indices rs = t.ranks;
          rs.insert(std::lower_bound(rs.begin(), rs.end(), x), x);
          ts.emplace_back(i, std::move(rs));
        }
    }
    if (ts.empty()) return false;
    auto& [i, rs] = ts[pk(ts.size())];
    regroup(p, i, rs);
    p.tasks[i].collective->group = p.tasks[i].ranks;
    return true;
  });
  c.edit<P>("collective_axis_not_in_mesh", "COLL-1", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.collective && !read_by_coll4(t); });
    if (!picked) return false;
    picked->collective->axis = pk(2) ? "ep" : "world";
    return true;
  });
  // COLL-2: a collective over complete pp groups (so COLL-1 holds) spans pipeline stages.
  c.edit<P>("collective_across_stages", "COLL-2", [sent](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> ts;
    const auto keep = sent(p);
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].collective && !read_by_coll4(p.tasks[i]) && keep[i] != -2) ts.push_back(i);
    if (ts.empty()) return false;
    const std::size_t i = pk.from(ts);
    DistTask& t = p.tasks[i];
    const std::int64_t n = mesh_size(p.mesh, "pp"), st = mesh_stride(p.mesh, "pp");
    const Index r = keep[i] >= 0 ? keep[i] : t.ranks[pk(t.ranks.size())];
    const auto base = static_cast<Index>(r - ((r / st) % n) * st);
    Indices rs;
    for (std::int64_t k = 0; k < n; ++k) rs.push_back(static_cast<Index>(base + k * st));
    if (!regroup(p, i, rs)) return false;  // it would break P2P-3 too
    t.collective->group = t.ranks;
    t.collective->axis = "pp";
    return true;
  });
  // P2P-1: a send and its receive disagree.
  c.edit<P>("transfer_bytes_disagree", "P2P-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> ts;
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].kind == TaskKind::send || p.tasks[i].kind == TaskKind::recv) ts.push_back(i);
    if (ts.empty()) return false;
    const std::size_t i = pk.from(ts);
    DistTask& t = p.tasks[i];
    switch (pk(3)) {
      case 0: t.work.message_bytes = t.work.message_bytes + Expr(static_cast<long long>(1 + pk(7))); break;
      case 1: t.repeat += 1; break;
      default:  // not disjoint: a receive on its send's ranks, where its dependents keep a shared rank (P2P-3)
        if (t.kind != TaskKind::recv || !regroup(p, i, p.tasks[static_cast<std::size_t>(*t.peer)].ranks)) t.repeat += 1;
        break;
    }
    return true;
  });
  c.edit<P>("peer_not_mutual", "P2P-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> ts;
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].kind == TaskKind::send) ts.push_back(i);
    if (ts.empty() || p.tasks.size() < 3) return false;
    std::size_t s = pk.from(ts);
    Indices others;
    for (std::size_t k = 0; k < p.tasks.size(); ++k)
      if (k != s && static_cast<Index>(k) != *p.tasks[s].peer) others.push_back(static_cast<Index>(k));
    p.tasks[s].peer = pk.from(others);
    return true;
  });
  // P2P-3: a dependency between tasks on disjoint rank ranges that is not a receive on its send.
  c.edit<P>("dependency_across_disjoint_ranks", "P2P-3", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (earlier i, later j): stays acyclic
    for (std::size_t j = 0; j < p.tasks.size(); ++j)
      for (std::size_t i = 0; i < j && pairs.size() < 512; ++i)
        if (!joinable(p, i, j) && !contains(p.tasks[j].dependencies, static_cast<Index>(i))) pairs.emplace_back(i, j);
    if (pairs.empty()) return false;
    auto [i, j] = pk.from(pairs);
    p.tasks[j].dependencies.push_back(static_cast<Index>(i));
    return true;
  });
  // COLL-4: an update no longer follows a sum of its gradients over dp (the edge is dropped,
  // the update inheriting the reduction's dependencies, or the reduction becomes a max).
  c.edit<P>("update_without_dp_reduction", "COLL-4", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, std::size_t>> edges;  // (update, its dp reduction)
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].phase == Phase::optimizer)
        for (Index u : p.tasks[i].dependencies)
          if (const auto& a = p.tasks[static_cast<std::size_t>(u)]; a.collective && a.collective->axis == "dp" && a.collective->reduction == Reduction::sum)
            edges.emplace_back(i, static_cast<std::size_t>(u));
    if (edges.empty()) return false;
    auto [o, a] = pk.from(edges);
    if (pk(2)) {
      p.tasks[a].collective->reduction = Reduction::max;
    } else {
      Indices deps;
      for (Index u : p.tasks[o].dependencies)
        if (static_cast<std::size_t>(u) != a) deps.push_back(u);
      for (Index u : p.tasks[a].dependencies)
        if (!contains(deps, u)) deps.push_back(u);
      p.tasks[o].dependencies = std::move(deps);
    }
    return true;
  });
  // COLL-3 (on plans of the training passes, whose model declares tp layouts): a tensor-parallel
  // collective is dropped (its dependents inherit its dependencies), duplicated (the copy derived
  // from its operation, or from the value it moves, an activation: not a gradient sum of COLL-6),
  // or of another kind.
  c.edit<P>("tp_collective_dropped_duplicated_or_changed", "COLL-3", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> ts;
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].collective && p.tasks[i].collective->axis == "tp" && p.tasks[i].lineage.sources.size() == 1) ts.push_back(i);  // (not COLL-6's gradient sums)
    if (ts.empty()) return false;
    const std::size_t i = pk.from(ts), how = pk(4);
    switch (how) {
      case 0: drop_task(p, i); break;
      case 1:
      case 2: {
        DistTask again = p.tasks[i];
        again.id += ":again";
        again.dependencies = {static_cast<Index>(i)};
        if (how == 2 && again.value.empty()) return false;
        if (how == 2) again.lineage.sources = {again.value};
        p.tasks.push_back(std::move(again));
        break;
      }
      default: {  // all-reduce <-> all-gather (a reduce-scatter would switch the plan's sequence-parallel mode, COLL-6)
        auto& col = *p.tasks[i].collective;
        if (col.kind == CollectiveKind::reduce_scatter) return false;
        col.kind = col.kind == CollectiveKind::all_reduce ? CollectiveKind::all_gather : CollectiveKind::all_reduce;
        col.reduction = col.kind == CollectiveKind::all_gather ? Reduction::none : Reduction::sum;
      }
    }
    return true;
  });
  c.derived();
  // COLL-5 (on plans of the training passes): an update of a tied weight no longer depends on
  // the receive of the other stage's gradient (the dp reduction may still depend on it).
  c.edit<P>("tied_update_without_exchange", "COLL-5", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, Index>> edges;  // (update, tied receive it depends on)
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].phase == Phase::optimizer)
        for (Index u : p.tasks[i].dependencies)
          if (const auto& r = p.tasks[static_cast<std::size_t>(u)]; r.kind == TaskKind::recv && contains(p.tasks[i].lineage.sources, r.value)) edges.emplace_back(i, u);
    if (edges.empty()) return false;
    auto [i, u] = pk.from(edges);
    auto& d = p.tasks[i].dependencies;
    d.erase(std::find(d.begin(), d.end(), u));
    return true;
  });
  c.derived();
  // COLL-6 (on plans of the training passes): under sequence parallelism an update no longer
  // depends on the tp sum of its whole weights' gradients (edge dropped, or the sum is a max,
  // which is then also a tp collective that is no gradient sum: COLL-3).
  c.edit<P>("update_without_tp_gradient_sum", "COLL-6", [](P& p, Pick& pk, const AnySnapshot*) {
    const auto edges = gradient_sums(p, "tp");
    if (edges.empty()) return false;
    auto [i, u] = pk.from(edges);
    if (pk(2)) {
      p.tasks[static_cast<std::size_t>(u)].collective->reduction = Reduction::max;
    } else {
      auto& d = p.tasks[i].dependencies;
      d.erase(std::find(d.begin(), d.end(), u));
    }
    return true;
  }, std::nullopt, {"COLL-3"});
  c.derived();
  // COLL-3 / COLL-4 (on plans of the training passes; dp > 1 for COLL-4): the tp or dp gradient
  // sum an update depends on is duplicated, and the update waits for both (the gradient would be
  // summed twice), or the copy is a max.
  auto sum_twice_or_max = [](std::string_view axis) {
    return [axis](P& p, Pick& pk, const AnySnapshot*) {
      const auto edges = gradient_sums(p, axis);
      if (edges.empty()) return false;
      auto [i, u] = pk.from(edges);
      collective_twice(p, i, u);
      if (pk(2)) p.tasks.back().collective->reduction = Reduction::max;
      return true;
    };
  };
  c.edit<P>("tp_gradient_sum_twice_or_max", "COLL-3", sum_twice_or_max("tp"));
  c.derived();
  c.edit<P>("dp_gradient_sum_twice_or_max", "COLL-4", sum_twice_or_max("dp"));
  c.derived();
  c.edit<P>("receive_not_after_send", "P2P-2", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.kind == TaskKind::recv; });
    if (!picked) return false;
    DistTask& t = *picked;
    t.dependencies.erase(std::find(t.dependencies.begin(), t.dependencies.end(), *t.peer));
    return true;
  });
  // SCHED-1: a stage schedule that does not run forward-then-backward once per pair.
  c.edit<P>("backward_before_forward", "SCHED-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.schedule.empty()) return false;
    auto& steps = p.schedule[pk(p.schedule.size())].steps;
    std::vector<std::size_t> bw;
    for (std::size_t j = 0; j < steps.size(); ++j)
      if (steps[j].kind == StepKind::backward) bw.push_back(j);
    if (bw.empty()) return false;
    std::size_t j = pk.from(bw), i = 0;
    while (!(steps[i].kind == StepKind::forward && steps[i].chunk == steps[j].chunk && steps[i].microbatch == steps[j].microbatch)) ++i;
    std::swap(steps[i], steps[j]);
    return true;
  });
  c.edit<P>("schedule_step_dropped_or_foreign", "SCHED-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.schedule.empty()) return false;
    auto& s = p.schedule[pk(p.schedule.size())];
    switch (pk(4)) {
      case 0: pk.erase_one(s.steps); break;
      case 1: s.steps[pk(s.steps.size())].chunk = s.chunks; break;
      case 2: s.steps[pk(s.steps.size())].microbatch = p.microbatches + static_cast<std::int64_t>(pk(2)); break;
      default: s.chunks = 0; break;
    }
    return true;
  });
  c.edit<P>("stage_scheduled_twice", "SCHED-1", [](P& p, Pick& pk, const AnySnapshot*) {
    return pk.duplicate_one(p.schedule);
  });
  // SCHED-1: microbatches below 1, with or without schedules (WORK-2 would scale by them).
  c.edit<P>("microbatches_not_positive", "SCHED-1", [](P& p, Pick& pk, const AnySnapshot*) {
    p.microbatches = -static_cast<std::int64_t>(pk(3));
    if (pk(2)) p.schedule.clear();
    return true;
  }, std::nullopt, {"WORK-2"});
  // VOL-1: a collective's payload is not the bytes of the value it names.
  c.edit<P>("payload_not_value_bytes", "VOL-1", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.collective && !t.value.empty(); });
    if (!picked) return false;
    auto& col = *picked->collective;
    col.message_bytes = pk(2) ? col.message_bytes + Expr(2LL) : col.message_bytes * Expr(make_rat(1, 2));
    return true;
  });
  c.edit<P>("collective_of_unknown_value", "VOL-1", [](P& p, Pick& pk, const AnySnapshot*) {
    DistTask* const picked = pk.where(p.tasks, [&](auto& t) { return t.collective.has_value(); });
    if (!picked) return false;
    picked->value = "v:ghost" + std::to_string(pk(10));
    return true;
  });
  // SHARD-1: a shard of an unknown value, or of a dimension the pieces do not divide.
  c.edit<P>("shard_of_unknown_value", "SHARD-1", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& m = std::get<Snapshot<ModelIR>>(*parent).payload;
    const bool weights = std::any_of(m.values.begin(), m.values.end(), [](const ModelValue& v) { return v.role == ValueRole::weight; });
    if (p.shards.empty() && weights) return false;  // SHARD-3 would fire too
    pk.insert(p.shards, Shard{"", -1, 1, 0, "v:ghost"});
    return true;
  });
  c.edit<P>("shard_not_divisible", "SHARD-1", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& m = std::get<Snapshot<ModelIR>>(*parent).payload;
    const bool weights = std::any_of(m.values.begin(), m.values.end(), [](const ModelValue& v) { return v.role == ValueRole::weight; });
    if (p.shards.empty() && weights) return false;
    std::vector<Shard> cand;
    for (const auto& a : p.mesh.axes) {
      if (a.size < 2) continue;
      for (const auto& v : m.values)
        for (std::size_t k = 0; k < v.shape.size(); ++k) {
          const Expr& dim = v.shape[k];
          bool indivisible = false;
          if (auto cst = dim.constant()) indivisible = boost::multiprecision::numerator(*cst) % a.size != 0;
          else indivisible = dim == Expr::symbol("B");  // B is only known to be a positive integer
          if (indivisible) cand.push_back(Shard{a.name, static_cast<std::int64_t>(k), a.size, 0, v.id});
        }
    }
    if (cand.empty()) return false;
    p.shards.push_back(pk.from(cand));
    return true;
  });
  c.edit<P>("shard_pieces_mismatch", "SHARD-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.shards.empty()) return false;
    Shard& s = p.shards[pk(p.shards.size())];
    switch (pk(3)) {
      case 0: s.pieces += 1; break;
      case 1:
        if (s.axis.empty()) s.dim = 0;  // a split without an axis
        else s.dim = -1;                // an axis without a split
        break;
      default: s.dim = 64; break;      // beyond the value's rank
    }
    return true;
  });
  c.edit<P>("weight_unowned", "SHARD-3", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& m = std::get<Snapshot<ModelIR>>(*parent).payload;
    std::map<std::string, int> owners;
    for (const auto& s : p.shards) ++owners[s.value];
    std::vector<Shard*> cand;
    for (auto& s : p.shards)
      if (owners[s.value] == 1 && std::any_of(m.values.begin(), m.values.end(), [&](const ModelValue& v) { return v.id == s.value && v.role == ValueRole::weight; }))
        cand.push_back(&s);
    if (cand.empty()) return false;
    auto other = std::find_if(m.values.begin(), m.values.end(), [](const ModelValue& v) { return v.role != ValueRole::weight; });
    if (other == m.values.end()) return false;
    *pk.from(cand) = Shard{"", -1, 1, 0, other->id};  // now owns a non-weight value instead
    return true;
  });
  // SHARD-4: a training plan forgets to update a weight it shards. On generated chains every
  // update (and the dp sum COLL-4 pairs with it, same sources) stops naming the weight; on
  // chains of the training passes one stage's optimizer task is dropped.
  c.edit<P>("weight_not_updated", "SHARD-4", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& m = std::get<Snapshot<ModelIR>>(*parent).payload;
    if (std::none_of(p.tasks.begin(), p.tasks.end(), [](const DistTask& t) { return t.kind == TaskKind::compute && (t.phase == Phase::backward_activation || t.phase == Phase::backward_weight); }))
      return false;  // not a training plan
    std::vector<std::string> cand;
    for (const auto& sh : p.shards)
      if (std::any_of(m.values.begin(), m.values.end(), [&](const ModelValue& v) { return v.id == sh.value && v.role == ValueRole::weight; })) cand.push_back(sh.value);
    if (cand.empty()) return false;
    const std::string w = pk.from(cand);
    for (auto& t : p.tasks)
      if (read_by_coll4(t) && contains(t.lineage.sources, w)) {
        if (t.lineage.sources.size() == 1) return false;  // a derived task needs a source
        t.lineage.sources.erase(std::remove(t.lineage.sources.begin(), t.lineage.sources.end(), w), t.lineage.sources.end());
      }
    return true;
  });
  c.edit<P>("update_dropped", "SHARD-4", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> ts;
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].phase == Phase::optimizer) ts.push_back(i);
    if (ts.empty()) return false;
    drop_task(p, pk.from(ts));
    return true;
  });
  c.derived();
  // EFFECT-1: a compute task's effects are not its operation's, in order.
  c.edit<P>("effects_not_the_operations", "EFFECT-1", [](P& p, Pick& pk, const AnySnapshot*) { return shuffle_effects(p.tasks, pk); });
  c.inference();
  // EFFECT-2: a task that only reads a state no longer depends on its last writer.
  c.edit<P>("read_not_after_write", "EFFECT-2", [](P& p, Pick& pk, const AnySnapshot*) { return drop_effect_order(p.tasks, EffectKind::read, pk); });
  c.inference();
  // EFFECT-3: a task that only writes a state no longer depends on the previous writer.
  c.edit<P>("writes_unordered", "EFFECT-3", [](P& p, Pick& pk, const AnySnapshot*) { return drop_effect_order(p.tasks, EffectKind::write, pk); });
  c.inference();
  // KV-1: the inference shape no longer describes the KV-cache state (the workspace bound
  // only grows, so WS-1 still holds).
  c.edit<P>("kv_shape_mismatch", "KV-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.inference) return false;
    auto& is = *p.inference;
    switch (pk(5)) {
      case 0: is.context = is.context + Expr(16LL); break;
      case 1: is.head_dim = is.head_dim + Expr(8LL); break;
      case 2:
        if (is.dtype == "fp32") return false;
        is.dtype = "fp32";
        break;
      case 3: is.kv_heads = Expr(3LL); break;  // t = 2: neither divides the other; t = 1: not the state's k
      default: p.inference.reset(); break;
    }
    return true;
  });
  c.inference();
  // WS-1: a workspace bound of zero, below what some compute task materialises.
  c.edit<P>("workspace_bound_too_small", "WS-1", [](P& p, Pick&, const AnySnapshot* parent) {
    if (!p.inference) return false;
    const auto& m = std::get<Snapshot<ModelIR>>(*parent).payload;
    bool some = false;
    for (const auto& t : p.tasks) {
      if (t.kind != TaskKind::compute || t.lineage.sources.size() != 1 || t.ranks.empty()) continue;
      for (const auto& op : m.operations)
        if (op.id == t.lineage.sources[0])
          for (Index v : op.outputs) some = some || m.values[static_cast<std::size_t>(v)].role == ValueRole::activation;
    }
    if (!some) return false;
    p.inference->hidden = Expr();
    p.inference->heads = Expr();
    p.inference->ffn = Expr();
    return true;
  });
  c.inference();
  // SYM-3: the query and hidden sizes become sums of at least 256 and 257 powers of new symbols,
  // so the workspace bound's 3bqH/t would have more than 65,536 terms (KV-1 reads neither).
  c.edit<P>("inference_shape_past_term_bound", "SYM-3", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.inference) return false;
    auto powers = [&p](const std::string& base, std::size_t n) {  // the powers 1..64 of base0, base1, ...: n terms
      Expr sum;
      for (std::size_t k = 0; k < n; ++k) {
        Symbol x;
        x.name = base + std::to_string(k / 64);
        if (k % 64 == 0) p.symbols.push_back(x);
        Expr term = Expr::symbol(x.name);
        for (std::size_t e = 0; e < k % 64; ++e) term = term * Expr::symbol(x.name);
        sum = sum + term;
      }
      return sum;
    };
    p.inference->query = powers("Qsym", 256 + pk(8));
    p.inference->hidden = powers("Hsym", 257 + pk(8));
    return true;
  });
  c.inference();
}

void portable_ops(Catalog& c) {
  using P = PortablePlanIR;
  c.edit<P>("dangling_buffer_reference", "REF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    const Index bad = static_cast<Index>(p.buffers.size() + pk(3));
    switch (pk(3)) {
      case 0: p.tasks[pk(p.tasks.size())].inputs.push_back(bad); return true;
      case 1:
        if (p.buffers.empty()) return false;
        p.buffers[pk(p.buffers.size())].producer = static_cast<Index>(p.tasks.size() + pk(3));
        return true;
      case 2: p.tasks[pk(p.tasks.size())].dependencies.push_back(static_cast<Index>(p.tasks.size())); return true;
      default:
        if (p.memory.empty()) return false;
        p.memory[pk(p.memory.size())].buffers.push_back(static_cast<Index>(p.buffers.size()));
        return true;
    }
  });
  c.edit<P>("output_listed_twice", "REF-2", [](P& p, Pick& pk, const AnySnapshot*) {
    PortableTask* const picked = pk.where(p.tasks, [&](auto& t) { return !t.outputs.empty(); });
    if (!picked) return false;
    auto& o = picked->outputs;
    o.push_back(o[pk(o.size())]);
    return true;
  });
  c.edit<P>("consumer_dropped", "BUF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    PortableBuffer* const picked = pk.where(p.buffers, [&](auto& b) { return !b.consumers.empty(); });
    if (!picked) return false;
    auto& cs = picked->consumers;
    pk.erase_one(cs);
    return true;
  });
  c.edit<P>("consumer_added", "BUF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.buffers.empty()) return false;
    auto& b = p.buffers[pk(p.buffers.size())];
    Indices others;
    for (std::size_t t = 0; t < p.tasks.size(); ++t)
      if (!contains(b.consumers, static_cast<Index>(t))) others.push_back(static_cast<Index>(t));
    if (others.empty()) return false;
    insert_sorted(b.consumers, pk.from(others));
    return true;
  });
  c.edit<P>("consumers_unsorted", "BUF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    PortableBuffer* const picked = pk.where(p.buffers, [&](auto& b) { return b.consumers.size() >= 2; });
    if (!picked) return false;
    auto& cs = picked->consumers;
    std::reverse(cs.begin(), cs.end());
    return true;
  });
  c.edit<P>("producer_unclaimed", "BUF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    Indices bs;
    for (std::size_t b = 0; b < p.buffers.size(); ++b)
      if (p.buffers[b].producer) bs.push_back(static_cast<Index>(b));
    if (bs.empty()) return false;
    Index b = pk.from(bs);
    auto& outs = p.tasks[static_cast<std::size_t>(*p.buffers[static_cast<std::size_t>(b)].producer)].outputs;
    outs.erase(std::find(outs.begin(), outs.end(), b));
    return true;
  });
  c.edit<P>("produced_given_buffer", "BUF-2", [](P& p, Pick& pk, const AnySnapshot*) {
    PortableBuffer* const picked = pk.where(p.buffers, [&](auto& b) { return b.producer.has_value(); });
    if (!picked) return false;
    picked->storage = pk(2) ? Storage::input : Storage::constant;
    return true;
  });
  c.edit<P>("unproduced_transient", "BUF-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.buffers.empty()) return false;
    std::size_t b = pk(p.buffers.size());
    auto& buf = p.buffers[b];
    static constexpr Storage kNeedProducer[] = {Storage::transient, Storage::output, Storage::persistent};
    if (buf.producer) {  // drop the producer on both sides
      auto& outs = p.tasks[static_cast<std::size_t>(*buf.producer)].outputs;
      outs.erase(std::find(outs.begin(), outs.end(), static_cast<Index>(b)));
      buf.producer.reset();
    }
    buf.storage = kNeedProducer[pk(3)];
    return true;
  });
  c.edit<P>("missing_producer_dependency", "BUF-3", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, Index>> cand;  // (task, producer dependency to drop)
    for (std::size_t t = 0; t < p.tasks.size(); ++t)
      for (Index b : p.tasks[t].inputs)
        if (auto pr = p.buffers[static_cast<std::size_t>(b)].producer; pr && !orders_an_effect(p.tasks, t, *pr)) cand.emplace_back(t, *pr);
    if (cand.empty()) return false;
    auto [t, pr] = pk.from(cand);
    auto& d = p.tasks[t].dependencies;
    d.erase(std::find(d.begin(), d.end(), pr));
    return true;
  });
  c.edit<P>("reads_own_output", "BUF-3", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, Index>> cand;
    for (std::size_t t = 0; t < p.tasks.size(); ++t)
      for (Index b : p.tasks[t].outputs) cand.emplace_back(t, b);
    if (cand.empty()) return false;
    auto [t, b] = pk.from(cand);
    insert_sorted(p.tasks[t].inputs, b);
    insert_sorted(p.buffers[static_cast<std::size_t>(b)].consumers, static_cast<Index>(t));
    return true;
  });
  c.edit<P>("alignment_not_power_of_two", "BUF-4", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.buffers.empty()) return false;
    static constexpr std::int64_t kBad[] = {0, 3, 6, -4, 96};
    p.buffers[pk(p.buffers.size())].alignment = kBad[pk(5)];
    return true;
  });
  c.edit<P>("negative_size", "BUF-4", [](P& p, Pick& pk, const AnySnapshot*) {
    // a buffer no memory fact counts (MEM-1 adds up buffer sizes)
    std::vector<bool> counted(p.buffers.size(), false);
    for (const auto& f : p.memory)
      for (Index b : f.buffers) counted[static_cast<std::size_t>(b)] = true;
    std::vector<std::size_t> bs;
    for (std::size_t b = 0; b < p.buffers.size(); ++b)
      if (!counted[b]) bs.push_back(b);
    if (bs.empty()) return false;
    p.buffers[pk.from(bs)].size = pk(2) ? Expr(-64LL) : Expr(make_rat(7, 2));
    return true;
  });
  // WORK-3 on a portable task; the copy of its distributed task then differs (WORK-1).
  c.edit<P>("bad_repetition", "WORK-3", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& t = p.tasks[pk(p.tasks.size())];
    switch (pk(3)) {
      case 0: t.repeat = 0; break;
      case 1: t.replication = -static_cast<std::int64_t>(pk(2)); break;
      default: t.replication = static_cast<std::int64_t>(t.ranks.size()) + 1; break;
    }
    return true;
  }, std::nullopt, {"WORK-1"});
  // WORK-1: a portable task is not an exact copy of exactly one distributed task.
  c.edit<P>("work_vector_changed", "WORK-1", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& w = p.tasks[pk(p.tasks.size())].work;
    Expr* fields[] = {&w.matrix_ops, &w.message_bytes, &w.persistent_bytes, &w.read_bytes, &w.temporary_bytes, &w.vector_ops, &w.write_bytes};
    Expr& f = *fields[pk(7)];
    f = f + Expr(static_cast<long long>(1 + pk(9)));
    return true;
  });
  c.edit<P>("phase_or_ranks_changed", "WORK-1", [](P& p, Pick& pk, const AnySnapshot*) {
    auto& t = p.tasks[pk(p.tasks.size())];
    if (pk(2)) t.phase = static_cast<Phase>((static_cast<std::size_t>(t.phase) + 1 + pk(5)) % 6);
    else if (t.replication == 1 && t.ranks.back() > 0 && t.ranks.front() > 0) t.ranks.front() -= 1 + static_cast<Index>(pk(static_cast<std::size_t>(t.ranks.front())));
    else t.repeat += 1;
    return true;
  });
  c.edit<P>("task_planned_twice", "WORK-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> ts;  // without effects (a copy would write out of order)
    for (std::size_t i = 0; i < p.tasks.size(); ++i)
      if (p.tasks[i].effects.empty()) ts.push_back(i);
    if (ts.empty()) return false;
    PortableTask t = p.tasks[pk.from(ts)];
    t.id += ":again";
    t.inputs.clear();
    t.outputs.clear();
    p.tasks.push_back(std::move(t));
    return true;
  });
  c.edit<P>("task_from_two_sources", "WORK-1", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& d = std::get<Snapshot<DistributedTaskIR>>(*parent).payload;
    PortableTask* const picked = pk.where(p.tasks, [&](auto& x) { return x.effects.empty(); });  // without effects (EFFECT-4 compares them to one source's)
    if (!picked) return false;
    auto& t = *picked;
    t.lineage.sources.push_back(d.tasks[pk(d.tasks.size())].id);
    return true;
  });
  // DAG-4: a portable task drops the direct dependency u it copied from its distributed task.
  // u produces none of its inputs (BUF-3) and the task has no effects (EFFECT-2/3), the laws
  // that ask for direct edges; the order survives through another dependency w (w now depends
  // on u, unless u already precedes w). Only the edge itself is gone.
  c.edit<P>("dependency_dropped", "DAG-4", [](P& p, Pick& pk, const AnySnapshot*) {
    auto ancestors = [&](std::size_t x) {  // x and every task x transitively depends on
      std::vector<char> seen(p.tasks.size(), 0);
      std::vector<std::size_t> stack{x};
      seen[x] = 1;
      while (!stack.empty()) {
        const std::size_t v = stack.back();
        stack.pop_back();
        for (Index u : p.tasks[v].dependencies)
          if (!seen[static_cast<std::size_t>(u)]) { seen[static_cast<std::size_t>(u)] = 1; stack.push_back(static_cast<std::size_t>(u)); }
      }
      return seen;
    };
    std::vector<std::tuple<std::size_t, Index, Index>> cands;  // (task, dropped u, carrier w)
    for (std::size_t i = 0; i < p.tasks.size(); ++i) {
      const auto& t = p.tasks[i];
      auto feeds = [&](Index u) { return std::any_of(t.inputs.begin(), t.inputs.end(), [&](Index b) { return p.buffers[static_cast<std::size_t>(b)].producer == u; }); };
      if (t.effects.empty())
        for (Index u : t.dependencies) {
          if (feeds(u)) continue;
          const auto before_u = ancestors(static_cast<std::size_t>(u));  // once per edge, not per carrier
          for (Index w : t.dependencies)
            if (w != u && !before_u[static_cast<std::size_t>(w)]) cands.emplace_back(i, u, w);  // w after u: no cycle
        }
    }
    if (cands.empty()) return false;
    const auto [i, u, w] = pk.from(cands);
    auto& deps = p.tasks[i].dependencies;
    deps.erase(std::find(deps.begin(), deps.end(), u));
    auto& carrier = p.tasks[static_cast<std::size_t>(w)].dependencies;
    if (!ancestors(static_cast<std::size_t>(w))[static_cast<std::size_t>(u)]) carrier.insert(std::lower_bound(carrier.begin(), carrier.end(), u), u);
    return true;
  });
  // MEM-1: a fact claims a buffer its bytes do not count.
  c.edit<P>("fact_claims_extra_buffer", "MEM-1", [](P& p, Pick& pk, const AnySnapshot*) {
    // facts without a per-buffer rule of their own (KV-2, WS-2 check kv_cache and workspace
    // facts), and in an inference plan a buffer whose claims CAPM-1 does not count
    using M = MemoryCategory;
    const bool inference = std::any_of(p.memory.begin(), p.memory.end(), [](const MemoryFact& f) { return f.category == M::kv_cache; });
    std::vector<MemoryFact*> fs;
    for (auto& f : p.memory)
      if (f.category == M::activations || f.category == M::weights || f.category == M::weight_gradients || f.category == M::optimizer_state) fs.push_back(&f);
    Indices bs;
    for (std::size_t b = 0; b < p.buffers.size(); ++b) {
      const BufferRole r = p.buffers[b].role;
      if (!(p.buffers[b].size == Expr()) && !(inference && (r == BufferRole::weight || r == BufferRole::kv_cache || r == BufferRole::workspace))) bs.push_back(static_cast<Index>(b));
    }
    if (fs.empty() || bs.empty()) return false;
    pk.from(fs)->buffers.push_back(pk.from(bs));
    return true;
  });
  // MEM-2: a scheduled stage's peak (and total, to keep MEM-3) moved off the schedule's peak.
  c.edit<P>("peak_not_schedule_peak", "MEM-2", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& d = std::get<Snapshot<DistributedTaskIR>>(*parent).payload;
    if (d.schedule.empty()) return false;
    const std::int64_t stage = d.schedule[pk(d.schedule.size())].stage;
    const Expr delta = pk(2) ? Expr(static_cast<long long>(1 + pk(100))) : Expr::symbol("B");
    for (auto& f : p.memory)  // (the capacity moves too, so CAPM-2 still decides the total fits)
      if (f.stage == stage && (f.category == MemoryCategory::activations_peak || f.category == MemoryCategory::total || f.category == MemoryCategory::capacity))
        f.bytes = f.bytes + delta;
    return true;
  });
  // MEM-2: an empty activations fact (0 bytes, so the peak is unchanged) for a chunk the stage's
  // schedule lacks, -1 or one past its last; such a fact counted for no chunk before session 36.
  c.edit<P>("activations_fact_off_the_schedule", "MEM-2", [](P& p, Pick& pk, const AnySnapshot* parent) {
    const auto& d = std::get<Snapshot<DistributedTaskIR>>(*parent).payload;
    if (d.schedule.empty()) return false;
    const auto& s = d.schedule[pk(d.schedule.size())];
    p.memory.push_back(MemoryFact{.buffers = {}, .bytes = Expr(), .category = MemoryCategory::activations, .chunk = pk(2) ? -1 : s.chunks, .stage = s.stage});
    return true;
  });
  // MEM-3: a stage's facts are incomplete, duplicated or do not add up.
  c.edit<P>("memory_facts_inconsistent", "MEM-3", [](P& p, Pick& pk, const AnySnapshot*) {
    // not peaks (MEM-2 reads those), not capacities (MEM-3 does not count them), and not on
    // an inference stage (CAPM-1 replaces MEM-3 there)
    using M = MemoryCategory;
    std::set<std::int64_t> inference_stages;
    for (const auto& f : p.memory)
      if (f.category == M::kv_cache) inference_stages.insert(f.stage);
    std::vector<std::size_t> fs;
    for (std::size_t k = 0; k < p.memory.size(); ++k) {
      const M cat = p.memory[k].category;
      if (cat != M::activations && cat != M::activations_peak && cat != M::capacity && !inference_stages.count(p.memory[k].stage)) fs.push_back(k);
    }
    if (fs.empty()) return false;
    const std::size_t k = pk.from(fs);
    switch (pk(3)) {
      case 0: p.memory.erase(p.memory.begin() + static_cast<std::ptrdiff_t>(k)); break;
      case 1: p.memory.push_back(p.memory[k]); break;
      default:
        if (p.memory[k].category != MemoryCategory::total) return false;
        p.memory[k].bytes = p.memory[k].bytes + Expr(1LL);
        break;
    }
    return true;
  });
  // MEM-3: a training stage gains a workspace fact (a copy of its weights fact's buffers and bytes)
  // that its total leaves out; the total left workspace out before session 36.
  c.edit<P>("workspace_left_out_of_total", "MEM-3", [](P& p, Pick& pk, const AnySnapshot*) {
    std::set<std::int64_t> skip;  // inference stages (CAPM-1 there), and stages with a workspace fact already
    for (const auto& f : p.memory)
      if (f.category == MemoryCategory::kv_cache || f.category == MemoryCategory::workspace) skip.insert(f.stage);
    std::vector<std::size_t> fs;  // weights facts of other stages with bytes that are not 0
    for (std::size_t k = 0; k < p.memory.size(); ++k)
      if (const auto& f = p.memory[k]; f.category == MemoryCategory::weights && !skip.count(f.stage) && !(f.bytes == Expr())) fs.push_back(k);
    if (fs.empty()) return false;
    MemoryFact w = p.memory[pk.from(fs)];
    w.category = MemoryCategory::workspace;
    p.memory.push_back(std::move(w));
    return true;
  });
  // EFFECT-4: a portable task's effects are not those of the distributed task it copies.
  c.edit<P>("effects_not_the_tasks", "EFFECT-4", [](P& p, Pick& pk, const AnySnapshot*) { return shuffle_effects(p.tasks, pk); });
  c.inference();
  // KV-2: a KV-cache buffer (and its fact, total and capacity, consistently) off the
  // inference shape's per-rank state size.
  c.edit<P>("kv_buffer_resized", "KV-2", [](P& p, Pick& pk, const AnySnapshot*) {
    using M = MemoryCategory;
    MemoryFact* const picked = pk.where(p.memory, [&](auto& f) { return f.category == M::kv_cache && !f.buffers.empty(); });
    if (!picked) return false;
    MemoryFact& f = *picked;
    const Expr delta(static_cast<long long>(pk(2) ? 64 : -1));
    auto& size = p.buffers[static_cast<std::size_t>(f.buffers[pk(f.buffers.size())])].size;
    size = size + delta;
    for (auto& g : p.memory)
      if (g.stage == f.stage && (g.category == M::kv_cache || g.category == M::total || g.category == M::capacity)) g.bytes = g.bytes + delta;
    return true;
  });
  c.inference();
  // WS-2: a workspace buffer (and its fact and total) below the unfused bound.
  c.edit<P>("workspace_below_bound", "WS-2", [](P& p, Pick& pk, const AnySnapshot* parent) {
    using M = MemoryCategory;
    const auto& d = std::get<Snapshot<DistributedTaskIR>>(*parent).payload;
    if (!d.inference) return false;
    MemoryFact* const picked = pk.where(p.memory, [&](auto& f) { return f.category == M::workspace && f.buffers.size() == 1; });
    if (!picked) return false;
    MemoryFact& f = *picked;
    auto& size = p.buffers[static_cast<std::size_t>(f.buffers[0])].size;
    // the bound is at least b q H e = one activation; the buffer drops to half of it
    const Expr target = Expr(d.inference->batch * d.inference->query * d.inference->hidden * Expr(make_rat(1, 2)));
    const Expr delta = target - size;
    size = target;
    for (auto& g : p.memory)
      if (g.stage == f.stage && (g.category == M::workspace || g.category == M::total)) g.bytes = g.bytes + delta;
    return true;
  });
  c.inference();
  // CAPM-1: an inference stage without its capacity, or whose total is not the sum.
  c.edit<P>("inference_memory_incomplete", "CAPM-1", [](P& p, Pick& pk, const AnySnapshot*) {
    using M = MemoryCategory;
    std::vector<std::size_t> cand;
    for (std::size_t k = 0; k < p.memory.size(); ++k)
      if ((p.memory[k].category == M::capacity || p.memory[k].category == M::total) &&
          std::any_of(p.memory.begin(), p.memory.end(), [&](const MemoryFact& f) { return f.category == M::kv_cache && f.stage == p.memory[k].stage; }))
        cand.push_back(k);
    if (cand.empty()) return false;
    const std::size_t k = pk.from(cand);
    if (p.memory[k].category == M::capacity) p.memory.erase(p.memory.begin() + static_cast<std::ptrdiff_t>(k));
    else p.memory[k].bytes = p.memory[k].bytes + Expr(1LL);  // every capacity has a byte to spare
    return true;
  });
  c.inference();
  // CAPM-2: a stage's total exceeds its capacity.
  c.edit<P>("over_capacity", "CAPM-2", [](P& p, Pick& pk, const AnySnapshot*) {
    using M = MemoryCategory;
    MemoryFact* const picked = pk.where(p.memory, [&](auto& f) { return f.category == M::capacity; });
    if (!picked) return false;
    MemoryFact& cap = *picked;
    for (const auto& f : p.memory)
      if (f.category == M::total && f.stage == cap.stage) cap.bytes = f.bytes - Expr(static_cast<long long>(1 + pk(100)));
    return true;
  });
}

std::vector<std::size_t> queue_of_commands(const ConcretePlanIR& p) {
  std::vector<std::size_t> q(p.commands.size(), SIZE_MAX);
  if (p.queue)
    for (std::size_t i = 0; i < p.queue->queues.size(); ++i)
      for (Index v : p.queue->queues[i].commands) q[static_cast<std::size_t>(v)] = i;
  return q;
}

bool issue_less(const Issue& a, const Issue& b) { return a.cycle != b.cycle ? a.cycle < b.cycle : a.slot < b.slot; }

std::vector<std::int64_t> signallers(const ConcretePlanIR& p) {
  std::vector<std::int64_t> s(p.tokens.size(), -1);
  for (std::size_t v = 0; v < p.commands.size(); ++v)
    for (Index t : p.commands[v].signals) s[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(v);
  return s;
}

bool is_transfer(CommandKind k) { return k == CommandKind::send || k == CommandKind::recv || k == CommandKind::copy; }

// ---- target binding (RACE, IMPL, CAP-4/5, WORK-4, ALIGN-3, REFBIND-1) ----------------------

// The reference binding of the parent PortablePlanIR on a target that runs everything, with the
// generated plan's target kind (nullopt when the reference binders refuse the plan).
std::optional<ConcretePlanIR> reference_of(const AnySnapshot* parent, TargetKind t) {
  if (!parent || parent->index() != 2) return std::nullopt;
  const PortablePlanIR& pp = std::get<2>(*parent).payload;
  Index world = 1;
  for (const auto& task : pp.tasks)
    for (Index r : task.ranks) world = std::max(world, r + 1);
  try {
    const auto values = bind::default_bindings(pp, 1);
    return t == TargetKind::queue ? bind::bind_reference_queue(pp, bind::permissive_target(), bind::deployment(world), values)
                                  : bind::bind_reference_slot(pp, bind::permissive_target(), bind::deployment(world), values);
  } catch (const bind::BindError&) {
    return std::nullopt;
  }
}

const PortableTask* task_of(const ConcretePlanIR&, const Command& cmd, const AnySnapshot* parent) {
  if (!parent || parent->index() != 2 || cmd.lineage.sources.size() != 1) return nullptr;
  for (const auto& t : std::get<2>(*parent).payload.tasks)
    if (t.id == cmd.lineage.sources[0]) return &t;
  return nullptr;
}

// Moves buffer b of one of `pairs` (a, b) onto the bytes of buffer a: same region, offset and
// alignment. False when there is no pair.
bool move_onto(ConcretePlanIR& p, Pick& pk, const std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  if (pairs.empty()) return false;
  auto [a, b] = pk.from(pairs);
  p.buffers[b].region = p.buffers[a].region;
  p.buffers[b].offset = p.buffers[a].offset;
  p.buffers[b].alignment = p.buffers[a].alignment;
  return true;
}

// Happens-before predecessors of every command: dependencies, the queue predecessor, signallers.
std::vector<std::vector<std::size_t>> hb_preds(const ConcretePlanIR& p) {
  std::vector<std::vector<std::size_t>> pred(p.commands.size());
  std::map<Index, std::size_t> sig;
  for (std::size_t v = 0; v < p.commands.size(); ++v)
    for (Index t : p.commands[v].signals) sig[t] = v;
  for (std::size_t v = 0; v < p.commands.size(); ++v) {
    for (Index u : p.commands[v].dependencies) pred[v].push_back(static_cast<std::size_t>(u));
    for (Index t : p.commands[v].waits)
      if (sig.count(t)) pred[v].push_back(sig[t]);
  }
  if (p.queue)
    for (const auto& q : p.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) pred[static_cast<std::size_t>(q.commands[k])].push_back(static_cast<std::size_t>(q.commands[k - 1]));
  return pred;
}

void bind_ops(Catalog& c) {
  using P = ConcretePlanIR;
  const auto S = TargetKind::slot;
  // ALIGN-3: the last buffer of a device of the reference binding moves up by its a_i (still
  // aligned, overlapping nothing); the memory figures follow it.
  c.edit<P>("offset_off_the_recurrence", "ALIGN-3", [](P& p, Pick& pk, const AnySnapshot* parent) {
    auto ref = reference_of(parent, p.target);
    if (!ref || ref->buffers.empty()) return false;
    std::map<Index, std::size_t> last;
    for (std::size_t i = 0; i < ref->buffers.size(); ++i) last[ref->buffers[i].region] = i;
    std::vector<std::size_t> ends;
    for (const auto& [r, i] : last) ends.push_back(i);
    ConcreteBuffer& b = ref->buffers[pk.from(ends)];
    b.offset += b.alignment * static_cast<std::int64_t>(1 + pk(3));
    bind::detail::fill_memory(*ref);
    p = std::move(*ref);
    return true;
  });
  // REFBIND-1: the reference binding with one command or buffer renamed.
  c.edit<P>("reference_entity_renamed", "REFBIND-1", [](P& p, Pick& pk, const AnySnapshot* parent) {
    auto ref = reference_of(parent, p.target);
    if (!ref || ref->commands.empty()) return false;
    if (pk(2) == 0 || ref->buffers.empty()) ref->commands[pk(ref->commands.size())].id += ".renamed";
    else ref->buffers[pk(ref->buffers.size())].id += ".renamed";
    p = std::move(*ref);
    return true;
  });
  // CAP-4: a bound buffer below the alignment of its portable buffer.
  c.edit<P>("alignment_below_portable", "CAP-4", [](P& p, Pick& pk, const AnySnapshot* parent) {
    if (!parent || parent->index() != 2) return false;
    std::map<std::string_view, std::int64_t> need;
    for (const auto& pb : std::get<2>(*parent).payload.buffers) need.emplace(pb.id, pb.alignment);
    ConcreteBuffer* const picked = pk.where(p.buffers, [&](auto& b) { return b.lineage.sources.size() == 1 && need.count(b.lineage.sources[0]) && need[b.lineage.sources[0]] >= 2; });
    if (!picked) return false;
    ConcreteBuffer& b = *picked;
    b.alignment = need[b.lineage.sources[0]] / 2;
    return true;
  });
  // CAP-5: a memory entry whose peak is one byte off the highest buffer end of its device.
  c.edit<P>("memory_figures_wrong", "CAP-5", [](P& p, Pick& pk, const AnySnapshot*) {
    const auto d = static_cast<Index>(pk(p.devices.size()));
    Int peak = 0, pinned = 0;
    for (const auto& b : p.buffers) {
      const Region& r = p.regions[static_cast<std::size_t>(b.region)];
      if (r.device != d) continue;
      peak = std::max(peak, Int(r.offset + b.offset + b.size));
      if (bind::detail::pinned(b.storage)) pinned += b.size;
    }
    p.memory.push_back(DeviceMemory{d, pinned, peak + 1 + Int(pk(64)), std::nullopt});
    return true;
  });
  // IMPL-1: a command whose task requires a capability names an undeclared implementation.
  c.edit<P>("implementation_not_declared", "IMPL-1", [](P& p, Pick& pk, const AnySnapshot* parent) {
    std::vector<std::size_t> vs;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      if (const PortableTask* t = task_of(p, p.commands[v], parent); t && !t->requires_.empty()) vs.push_back(v);
    if (vs.empty()) return false;
    p.commands[pk.from(vs)].implementation = "impl.missing";
    return true;
  });
  // IMPL-2: a device stands for a rank outside the deployment.
  c.edit<P>("rank_outside_deployment", "IMPL-2", [](P& p, Pick& pk, const AnySnapshot*) {
    p.devices[pk(p.devices.size())].ranks = {static_cast<Index>(p.world_size + static_cast<std::int64_t>(pk(4)))};
    return true;
  });
  // RACE-1: a command that nothing happens before, and that happens before none of a buffer's
  // accesses, writes that buffer too.
  c.edit<P>("unordered_writer", "RACE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    const auto pred = hb_preds(p);
    const std::size_t n = p.commands.size();
    std::vector<std::vector<std::size_t>> succ(n);
    for (std::size_t v = 0; v < n; ++v)
      for (std::size_t u : pred[v]) succ[u].push_back(v);
    std::vector<std::size_t> sources;
    for (std::size_t v = 0; v < n; ++v)
      if (pred[v].empty()) sources.push_back(v);
    if (sources.empty()) return false;
    const std::size_t x = pk.from(sources);
    std::vector<char> reach(n, 0);
    std::vector<std::size_t> stack{x};
    reach[x] = 1;
    while (!stack.empty()) {
      std::size_t u = stack.back();
      stack.pop_back();
      for (std::size_t w : succ[u])
        if (!reach[w]) { reach[w] = 1; stack.push_back(w); }
    }
    std::vector<Index> bs;
    for (std::size_t v = 0; v < n; ++v)
      if (!reach[v])
        for (const Indices* l : {&p.commands[v].reads, &p.commands[v].writes})
          for (Index b : *l)
            if (p.buffers[static_cast<std::size_t>(b)].size > 0) bs.push_back(b);
    if (bs.empty()) return false;
    const Index b = pk.from(bs);
    auto& w = p.commands[x].writes;
    if (std::find(w.begin(), w.end(), b) != w.end()) return false;
    w.push_back(b);
    auto& r = p.commands[x].reads;
    r.erase(std::remove(r.begin(), r.end(), b), r.end());  // REF-2 would reject a buffer read and written twice
    return true;
  }, std::nullopt, {"RACE-2", "CAP-5"});
  // RACE-2: a buffer moved onto the bytes of a pinned buffer of its device.
  c.edit<P>("buffer_onto_pinned_bytes", "RACE-2", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<char> accessed(p.buffers.size(), 0);
    for (const auto& cmd : p.commands)
      for (const Indices* l : {&cmd.reads, &cmd.writes})
        for (Index b : *l) accessed[static_cast<std::size_t>(b)] = 1;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t a = 0; a < p.buffers.size(); ++a) {
      const auto& A = p.buffers[a];
      if (!bind::detail::pinned(A.storage) || A.size <= 0) continue;
      const Region& ra = p.regions[static_cast<std::size_t>(A.region)];
      for (std::size_t b = 0; b < p.buffers.size() && pairs.size() < 64; ++b) {
        const auto& B = p.buffers[b];
        if (b == a || B.size <= 0 || !(bind::detail::pinned(B.storage) || accessed[b])) continue;
        if (p.regions[static_cast<std::size_t>(B.region)].device != ra.device || A.offset + B.size > ra.capacity) continue;
        pairs.emplace_back(a, b);
      }
    }
    return move_onto(p, pk, pairs);
  }, std::nullopt, {"CAP-5"});
  // RACE-2: a buffer a command writes moved onto the bytes of a buffer the same command reads: the
  // command would overwrite what it is still reading, and it is not ordered with itself.
  c.edit<P>("written_onto_own_read", "RACE-2", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (read, written) by one command
    for (const auto& cmd : p.commands)
      for (Index ra : cmd.reads)
        for (Index wb : cmd.writes) {
          const auto a = static_cast<std::size_t>(ra), b = static_cast<std::size_t>(wb);
          const auto &A = p.buffers[a], &B = p.buffers[b];
          if (a == b || A.size <= 0 || B.size <= 0 || bind::detail::pinned(A.storage) || bind::detail::pinned(B.storage)) continue;
          if (A.offset + B.size <= p.regions[static_cast<std::size_t>(A.region)].capacity && pairs.size() < 64) pairs.emplace_back(a, b);
        }
    return move_onto(p, pk, pairs);
  }, std::nullopt, {"CAP-5"});
  // RACE-3: 12,000 independent host commands on a slot target, then one that depends on them all:
  // as many chains of clocks as commands, all live until the last one, 4-byte clocks over the
  // 512 MiB limit (2^27 entries), so race freedom is not decided.
  c.edit<P>("clocks_over_limit", "RACE-3", [](P& p, Pick&, const AnySnapshot*) {
    if (!p.slot || p.commands.empty()) return false;
    std::int64_t cycle = 0;
    for (const auto& is : p.slot->issue) cycle = std::max(cycle, is.cycle + 1);
    const Lineage lin = p.commands.front().lineage;
    const auto first = static_cast<Index>(p.commands.size());
    for (std::int64_t i = 0; i <= 12000; ++i) {
      Command cmd;
      cmd.id = "c:flood:" + std::to_string(i);
      cmd.kind = CommandKind::host;
      cmd.device = 0;
      cmd.lineage = lin;
      cmd.implementation = "impl.host.flood";
      if (i == 12000) for (Index u = first; u < first + 12000; ++u) cmd.dependencies.push_back(u);
      p.commands.push_back(std::move(cmd));
      p.slot->issue.push_back(Issue{cycle + i, 0});
    }
    return true;
  }, S);
  // RACE-4: a command no longer reads a binding of one of its task's inputs.
  c.edit<P>("input_not_read", "RACE-4", [](P& p, Pick& pk, const AnySnapshot* parent) {
    if (!parent || parent->index() != 2) return false;
    const auto& pbs = std::get<2>(*parent).payload.buffers;
    std::vector<std::pair<std::size_t, std::size_t>> vs;  // (command, position in reads)
    for (std::size_t v = 0; v < p.commands.size(); ++v) {
      const PortableTask* t = task_of(p, p.commands[v], parent);
      if (!t || t->inputs.empty()) continue;
      for (std::size_t k = 0; k < p.commands[v].reads.size(); ++k) {
        const auto& src = p.buffers[static_cast<std::size_t>(p.commands[v].reads[k])].lineage.sources;
        for (Index in : t->inputs)
          if (src.size() == 1 && src[0] == pbs[static_cast<std::size_t>(in)].id) vs.emplace_back(v, k);
      }
    }
    if (vs.empty()) return false;
    auto [v, k] = pk.from(vs);
    auto& r = p.commands[v].reads;
    const Index gone = r[k];
    r.erase(std::remove(r.begin(), r.end(), gone), r.end());
    if (!p.memory.empty()) bind::detail::fill_memory(p);  // the figures follow the accesses (else CAP-5 hides RACE-4)
    return true;
  });
  // Generic: drop one token wait. Harmless when other edges still order every conflicting
  // access (the wait was redundant): the all-pairs race checker of oracle.h decides that,
  // independently of the RACE verifier.
  c.edit<P>("token_wait_dropped", "RACE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::size_t> vs;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      if (!p.commands[v].waits.empty()) vs.push_back(v);
    if (vs.empty()) return false;
    auto& w = p.commands[pk.from(vs)].waits;
    pk.erase_one(w);
    return true;
  }, std::nullopt, {"RACE-2", "CAP-5"});
  c.oracle([](const AnySnapshot*, const AnySnapshot& m) { return !brute_force_race(std::get<Snapshot<ConcretePlanIR>>(m).payload); });
  // DAG-5: a command drops its dependency on the command of one of its task's dependencies.
  // A token it waits for from that command, or their queue order, still orders the two, so
  // happens-before is unchanged (no RACE or CAP-5 finding); only the edge is gone.
  c.edit<P>("dependency_dropped", "DAG-5", [](P& p, Pick& pk, const AnySnapshot* parent) {
    std::vector<std::pair<std::size_t, std::size_t>> qat(p.commands.size(), {SIZE_MAX, 0});  // (queue, position)
    if (p.queue)
      for (std::size_t q = 0; q < p.queue->queues.size(); ++q)
        for (std::size_t k = 0; k < p.queue->queues[q].commands.size(); ++k) qat[static_cast<std::size_t>(p.queue->queues[q].commands[k])] = {q, k};
    std::vector<std::pair<std::size_t, std::size_t>> vs;  // (command, position in dependencies)
    for (std::size_t v = 0; v < p.commands.size(); ++v) {
      const Command& y = p.commands[v];
      const PortableTask* b = task_of(p, y, parent);
      if (!b) continue;
      for (std::size_t k = 0; k < y.dependencies.size(); ++k) {
        const auto u = static_cast<std::size_t>(y.dependencies[k]);
        const PortableTask* a = task_of(p, p.commands[u], parent);
        const Indices& sig = p.commands[u].signals;
        const bool token = std::any_of(y.waits.begin(), y.waits.end(), [&](Index t) { return std::find(sig.begin(), sig.end(), t) != sig.end(); });
        const bool needed = a && std::find(b->dependencies.begin(), b->dependencies.end(), a - std::get<2>(*parent).payload.tasks.data()) != b->dependencies.end();
        if (needed && (token || (qat[u].first != SIZE_MAX && qat[u].first == qat[v].first && qat[u].second < qat[v].second))) vs.emplace_back(v, k);
      }
    }
    if (vs.empty()) return false;
    auto [v, k] = pk.from(vs);
    auto& d = p.commands[v].dependencies;
    d.erase(d.begin() + static_cast<std::ptrdiff_t>(k));
    return true;
  });
  // WORK-4: a command's work differs from its task's by one byte.
  c.edit<P>("command_work_changed", "WORK-4", [](P& p, Pick& pk, const AnySnapshot* parent) {
    std::vector<std::size_t> vs;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      if (task_of(p, p.commands[v], parent)) vs.push_back(v);
    if (vs.empty()) return false;
    codec::Shared<Work>& shared = p.commands[pk.from(vs)].work;
    Work w = *shared;
    (pk(2) ? w.read_bytes : w.write_bytes) += Expr(1);
    shared = std::move(w);
    return true;
  });
}

void concrete_ops(Catalog& c) {
  using P = ConcretePlanIR;
  const auto Q = TargetKind::queue, S = TargetKind::slot;
  c.edit<P>("dangling_concrete_reference", "REF-1", [](P& p, Pick& pk, const AnySnapshot*) {
    switch (pk(4)) {
      case 0: p.commands[pk(p.commands.size())].device = static_cast<Index>(p.devices.size() + pk(2)); return true;
      case 1:
        if (p.buffers.empty()) return false;
        p.buffers[pk(p.buffers.size())].region = -1;
        return true;
      case 2: p.commands[pk(p.commands.size())].waits.push_back(static_cast<Index>(p.tokens.size())); return true;
      default: p.regions[pk(p.regions.size())].device = static_cast<Index>(p.devices.size()); return true;
    }
  });
  c.edit<P>("buffer_listed_twice", "REF-2", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<Indices*> ls;
    for (auto& cmd : p.commands) {
      if (!cmd.reads.empty()) ls.push_back(&cmd.reads);
      if (!cmd.writes.empty()) ls.push_back(&cmd.writes);
    }
    if (ls.empty()) return false;
    Indices& l = *pk.from(ls);
    l.push_back(l[pk(l.size())]);
    return true;
  });
  // ALIGN-1: raise a buffer's alignment to twice the lowest set bit of its offset.
  c.edit<P>("misaligned_offset", "ALIGN-1", [](P& p, Pick& pk, const AnySnapshot*) {
    ConcreteBuffer* const picked = pk.where(p.buffers, [&](auto& b) { return b.offset > 0 && b.offset < (Int(1) << 60); });
    if (!picked) return false;
    ConcreteBuffer& b = *picked;
    std::int64_t low = 1;
    while ((b.offset % (2 * low)) == 0) low *= 2;
    b.alignment = 2 * low;
    return true;
  });
  c.edit<P>("region_alignment_not_power_of_two", "ALIGN-2", [](P& p, Pick& pk, const AnySnapshot*) {
    static constexpr std::int64_t kBad[] = {0, 3, 12, -8};
    p.regions[pk(p.regions.size())].alignment = kBad[pk(4)];
    return true;
  });
  c.edit<P>("buffer_alignment_not_power_of_two", "ALIGN-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.buffers.empty()) return false;
    static constexpr std::int64_t kBad[] = {0, 3, 6, -2};
    p.buffers[pk(p.buffers.size())].alignment = kBad[pk(4)];
    return true;
  });
  c.edit<P>("buffer_overflows_region", "CAP-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.buffers.empty()) return false;
    auto& b = p.buffers[pk(p.buffers.size())];
    const Region& r = p.regions[static_cast<std::size_t>(b.region)];
    if (pk(3) == 0) b.size = -1;
    else b.size = r.capacity - b.offset + 1 + Int(pk(100));
    return true;
  });
  c.edit<P>("device_memory_too_small", "CAP-2", [](P& p, Pick& pk, const AnySnapshot*) {
    std::size_t d = pk(p.devices.size());
    std::optional<Int> top;
    for (const auto& r : p.regions)
      if (static_cast<std::size_t>(r.device) == d && (!top || r.offset + r.capacity > *top)) top = r.offset + r.capacity;
    if (!top) return false;
    p.devices[d].memory_bytes = *top - 1;
    return true;
  });
  c.edit<P>("region_negative_offset", "CAP-2", [](P& p, Pick& pk, const AnySnapshot*) {
    // the lowest region of a device moves below 0 (so it overlaps nothing)
    std::size_t d = pk(p.devices.size());
    Region* low = nullptr;
    for (auto& r : p.regions)
      if (static_cast<std::size_t>(r.device) == d && (!low || r.offset < low->offset)) low = &r;
    if (!low) return false;
    low->offset = -1 - Int(pk(64));
    return true;
  });
  c.edit<P>("overlapping_regions", "CAP-3", [](P& p, Pick& pk, const AnySnapshot*) {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;  // (lower, upper) on one device
    for (std::size_t i = 0; i < p.regions.size(); ++i)
      for (std::size_t j = 0; j < p.regions.size(); ++j)
        if (i != j && p.regions[i].device == p.regions[j].device && p.regions[i].offset < p.regions[j].offset) pairs.emplace_back(i, j);
    if (pairs.empty()) return false;
    auto [i, j] = pk.from(pairs);
    // move the upper region down into the lower one (its end only decreases)
    Int gap = p.regions[j].offset - p.regions[i].offset;
    Int into = Int(pk(static_cast<std::size_t>(std::min<Int>(gap, Int(1) << 20))));
    Int cap = p.regions[i].capacity;
    p.regions[j].offset = p.regions[i].offset + (into < cap ? into : Int(0));
    return true;
  });
  c.edit<P>("queue_target_without_queues", "QUEUE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.target != TargetKind::queue) return false;
    if (pk(2)) p.queue.reset();
    else p.slot = SlotDataflow{};
    return true;
  }, Q);
  c.edit<P>("queue_kind_mismatch", "QUEUE-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.queue || p.queue->queues.empty()) return false;
    auto& q = p.queue->queues[pk(p.queue->queues.size())];
    if (q.commands.empty()) return false;
    if (pk(2)) q.kind = static_cast<QueueKind>((static_cast<std::size_t>(q.kind) + 1 + pk(3)) % 4);
    else q.device = static_cast<Index>((static_cast<std::size_t>(q.device) + 1 + pk(p.devices.size() - 1)) % p.devices.size());
    return true;
  }, Q);
  c.edit<P>("command_moved_device", "QUEUE-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.queue) return false;
    auto& cmd = p.commands[pk(p.commands.size())];
    cmd.device = static_cast<Index>((static_cast<std::size_t>(cmd.device) + 1 + pk(p.devices.size() - 1)) % p.devices.size());
    return true;
  }, Q);
  c.edit<P>("command_on_no_queue", "QUEUE-3", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.queue) return false;
    Queue* const picked = pk.where(p.queue->queues, [](const Queue& x) { return !x.commands.empty(); });
    if (!picked) return false;
    Indices& q = picked->commands;
    pk.erase_one(q);
    return true;
  }, Q);
  // QUEUE-3: a command issued a second time, later on its own queue (so its first position,
  // kind and device are unchanged).
  c.edit<P>("command_issued_twice", "QUEUE-3", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.queue) return false;
    Queue* const picked = pk.where(p.queue->queues, [](const Queue& x) { return !x.commands.empty(); });
    if (!picked) return false;
    Indices& q = picked->commands;
    std::size_t k = pk(q.size());
    Index v = q[k];
    q.insert(q.begin() + static_cast<std::ptrdiff_t>(k + 1 + pk(q.size() - k)), v);
    return true;
  }, Q);
  // QUEUE-4: a command and its dependency swapped on their in-order queue. The queue edge
  // and the dependency edge then form a cycle, so DEADLOCK-1 is necessarily reported too.
  c.edit<P>("queue_order_violates_dependency", "QUEUE-4", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.queue) return false;
    auto qof = queue_of_commands(p);
    std::vector<std::pair<Index, Index>> pairs;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      for (Index u : p.commands[v].dependencies)
        if (qof[static_cast<std::size_t>(u)] == qof[v]) pairs.emplace_back(u, static_cast<Index>(v));
    if (pairs.empty()) return false;
    auto [u, v] = pk.from(pairs);
    auto& q = p.queue->queues[qof[static_cast<std::size_t>(v)]].commands;
    std::iter_swap(std::find(q.begin(), q.end(), u), std::find(q.begin(), q.end(), v));
    return true;
  }, Q, {"DEADLOCK-1"});
  // DEADLOCK-1: an earlier command of a queue waits for a token signalled by a later one.
  c.edit<P>("token_wait_against_queue_order", "DEADLOCK-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.queue) return false;
    Queue* const picked = pk.where(p.queue->queues, [](const Queue& x) { return x.commands.size() >= 2; });
    if (!picked) return false;
    Indices& q = picked->commands;
    std::size_t j = 1 + pk(q.size() - 1), i = pk(j);
    p.tokens.push_back(Token{"tok:deadlock"});
    const Index t = static_cast<Index>(p.tokens.size() - 1);
    p.commands[static_cast<std::size_t>(q[j])].signals.push_back(t);
    p.commands[static_cast<std::size_t>(q[i])].waits.push_back(t);
    return true;
  }, Q);
  c.edit<P>("slot_target_without_slot", "SLOT-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.target != TargetKind::slot) return false;
    if (pk(2)) p.slot.reset();
    else p.queue = QueueSchedule{};
    return true;
  }, S);
  c.edit<P>("issue_count_mismatch", "SLOT-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot) return false;
    if (pk(2) || p.slot->issue.empty()) p.slot->issue.push_back(Issue{1'000'000, 0});
    else pk.erase_one(p.slot->issue);
    return true;
  }, S);
  c.edit<P>("no_slots_per_cycle", "SLOT-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot) return false;
    p.slot->slots_per_cycle = -static_cast<std::int64_t>(pk(3));
    return true;
  }, S);
  c.edit<P>("issue_out_of_range", "SLOT-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot || p.commands.empty()) return false;
    auto& is = p.slot->issue;
    if (pk(2)) {  // command 0 has no dependency and waits for nothing: move it before cycle 0
      is[0].cycle = -1 - static_cast<std::int64_t>(pk(3));
    } else {  // the last-issued command moves to a slot past the end of its cycle
      std::size_t last = 0;
      for (std::size_t v = 1; v < is.size(); ++v)
        if (issue_less(is[last], is[v])) last = v;
      is[last].slot = p.slot->slots_per_cycle + static_cast<std::int64_t>(pk(3));
    }
    return true;
  }, S);
  c.edit<P>("shared_issue_position", "SLOT-2", [](P& p, Pick&, const AnySnapshot*) {
    // the last-issued command takes the position of the one before it, when the two are
    // unrelated by dependencies and tokens
    if (!p.slot || p.commands.size() < 2) return false;
    auto& is = p.slot->issue;
    std::vector<std::size_t> order(is.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return issue_less(is[a], is[b]); });
    std::size_t m = order.back(), s = order[order.size() - 2];
    auto sig = signallers(p);
    if (contains(p.commands[m].dependencies, static_cast<Index>(s))) return false;
    for (Index t : p.commands[m].waits)
      if (sig[static_cast<std::size_t>(t)] == static_cast<std::int64_t>(s)) return false;
    is[m] = is[s];
    return true;
  }, S);
  // SLOT-3: a command moves to the (free, odd) cycle just before its latest dependency; it
  // stops waiting for tokens whose signaller would no longer be issued before it.
  c.edit<P>("dependency_issued_later", "SLOT-3", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot) return false;
    auto& is = p.slot->issue;
    std::vector<std::size_t> vs;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      if (!p.commands[v].dependencies.empty()) vs.push_back(v);
    if (vs.empty()) return false;
    std::size_t v = pk.from(vs);
    std::size_t u = static_cast<std::size_t>(p.commands[v].dependencies[0]);
    for (Index d : p.commands[v].dependencies)
      if (issue_less(is[u], is[static_cast<std::size_t>(d)])) u = static_cast<std::size_t>(d);
    if (is[u].cycle < 1) return false;
    is[v] = Issue{is[u].cycle - 1, 0};
    auto sig = signallers(p);
    auto& w = p.commands[v].waits;
    w.erase(std::remove_if(w.begin(), w.end(), [&](Index t) { return sig[static_cast<std::size_t>(t)] >= 0 && !issue_less(is[static_cast<std::size_t>(sig[static_cast<std::size_t>(t)])], is[v]); }), w.end());
    return true;
  }, S);
  c.edit<P>("route_missing", "ROUTE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot || p.slot->routes.empty()) return false;
    pk.erase_one(p.slot->routes);
    return true;
  }, S);
  c.edit<P>("route_duplicated", "ROUTE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    return p.slot && pk.duplicate_one(p.slot->routes);
  }, S);
  c.edit<P>("route_for_non_transfer", "ROUTE-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot) return false;
    Indices vs;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      if (!is_transfer(p.commands[v].kind)) vs.push_back(static_cast<Index>(v));
    if (vs.empty()) return false;
    Index v = pk.from(vs);
    Index dev = p.commands[static_cast<std::size_t>(v)].device;
    Index other = static_cast<Index>((static_cast<std::size_t>(dev) + 1) % p.devices.size());
    p.slot->routes.push_back(pk(2) ? Route{v, dev, other} : Route{v, other, dev});
    return true;
  }, S);
  c.edit<P>("route_loop", "ROUTE-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot || p.slot->routes.empty()) return false;
    Route& r = p.slot->routes[pk(p.slot->routes.size())];
    r.source = r.destination = p.commands[static_cast<std::size_t>(r.command)].device;
    return true;
  }, S);
  c.edit<P>("route_detached", "ROUTE-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot || p.slot->routes.empty() || p.devices.size() < 3) return false;
    Route& r = p.slot->routes[pk(p.slot->routes.size())];
    Index dev = p.commands[static_cast<std::size_t>(r.command)].device;
    Indices others;
    for (std::size_t d = 0; d < p.devices.size(); ++d)
      if (static_cast<Index>(d) != dev) others.push_back(static_cast<Index>(d));
    r.source = others[0];
    r.destination = others[1];
    if (pk(2)) std::swap(r.source, r.destination);
    return true;
  }, S);
  c.edit<P>("unsignalled_token", "TOKEN-1", [](P& p, Pick& pk, const AnySnapshot*) {
    pk.insert(p.tokens, Token{"tok:never"});
    // keep every existing token reference pointing at the same token
    Index at = static_cast<Index>(std::find_if(p.tokens.begin(), p.tokens.end(), [](const Token& t) { return t.id == "tok:never"; }) - p.tokens.begin());
    for (auto& cmd : p.commands) {
      for (auto& t : cmd.signals) t += t >= at;
      for (auto& t : cmd.waits) t += t >= at;
    }
    return true;
  });
  c.edit<P>("token_signalled_twice", "TOKEN-1", [](P& p, Pick& pk, const AnySnapshot*) {
    if (p.tokens.empty()) return false;
    auto sig = signallers(p);
    std::size_t t = pk(p.tokens.size());
    Indices others;
    for (std::size_t v = 0; v < p.commands.size(); ++v)
      if (static_cast<std::int64_t>(v) != sig[t]) others.push_back(static_cast<Index>(v));
    if (others.empty()) return false;
    // a later signaller than the first keeps "first signaller" unchanged for TOKEN-2/DEADLOCK-1
    Indices later;
    for (Index v : others)
      if (v > sig[t]) later.push_back(v);
    if (later.empty()) return false;
    p.commands[static_cast<std::size_t>(pk.from(later))].signals.push_back(static_cast<Index>(t));
    return true;
  });
  c.edit<P>("wait_for_own_token", "TOKEN-2", [](P& p, Pick& pk, const AnySnapshot*) {
    std::size_t v = pk(p.commands.size());
    p.tokens.push_back(Token{"tok:self"});
    const Index t = static_cast<Index>(p.tokens.size() - 1);
    p.commands[v].signals.push_back(t);
    p.commands[v].waits.push_back(t);
    return true;
  });
  c.edit<P>("wait_for_later_signal", "TOKEN-2", [](P& p, Pick& pk, const AnySnapshot*) {
    if (!p.slot || p.commands.size() < 2) return false;
    std::size_t a = pk(p.commands.size()), b = pk(p.commands.size() - 1);
    if (b >= a) ++b;
    auto& is = p.slot->issue;
    std::size_t early = issue_less(is[a], is[b]) ? a : b, late = early == a ? b : a;
    p.tokens.push_back(Token{"tok:later"});
    const Index t = static_cast<Index>(p.tokens.size() - 1);
    p.commands[late].signals.push_back(t);
    p.commands[early].waits.push_back(t);
    return true;
  }, S);
}

// Interval index of each command, and the predecessors the timeline must respect.
struct TimeView {
  std::vector<std::size_t> iv;              // command -> interval index
  std::vector<std::int64_t> qprev, signaller;
};

TimeView time_view(const ConcretePlanIR& c, const TimelineBundle& t) {
  TimeView v;
  v.iv.assign(c.commands.size(), 0);
  for (std::size_t i = 0; i < t.intervals.size(); ++i) v.iv[static_cast<std::size_t>(t.intervals[i].command)] = i;
  v.qprev.assign(c.commands.size(), -1);
  if (c.queue)
    for (const auto& q : c.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) v.qprev[static_cast<std::size_t>(q.commands[k])] = q.commands[k - 1];
  v.signaller = signallers(c);
  return v;
}

void timeline_ops(Catalog& c) {
  using P = TimelineBundle;
  auto plan = [](const AnySnapshot* parent) -> const ConcretePlanIR* {
    if (!parent) return nullptr;
    const auto* s = std::get_if<Snapshot<ConcretePlanIR>>(parent);
    return s ? &s->payload : nullptr;
  };
  c.edit<P>("interval_missing", "TIME-1", [](P& t, Pick& pk, const AnySnapshot*) {
    if (t.intervals.empty()) return false;
    pk.erase_one(t.intervals);
    return true;
  });
  c.edit<P>("interval_duplicated", "TIME-1", [](P& t, Pick& pk, const AnySnapshot*) {
    return pk.duplicate_one(t.intervals);
  });
  c.edit<P>("interval_for_unknown_command", "TIME-1", [](P& t, Pick& pk, const AnySnapshot*) {
    if (t.intervals.empty()) return false;
    auto& x = t.intervals[pk(t.intervals.size())];
    x.command = pk(2) ? -1 : static_cast<Index>(t.intervals.size() + pk(3));
    return true;
  });
  // TIME-2: an interval off the critical path ends before it starts.
  c.edit<P>("interval_reversed", "TIME-2", [](P& t, Pick& pk, const AnySnapshot*) {
    Interval* const picked = pk.where(t.intervals, [&](auto& x) { return !contains(t.critical_path, x.command); });
    if (!picked) return false;
    Interval& x = *picked;
    x.end = x.start - make_rat(1, static_cast<long long>(1 + pk(4)));
    return true;
  });
  // TIME-2: a command with no predecessor, off the critical path, starts before time 0.
  c.edit<P>("negative_start", "TIME-2", [plan](P& t, Pick& pk, const AnySnapshot* parent) {
    const ConcretePlanIR* c = plan(parent);
    if (!c) return false;
    auto tv = time_view(*c, t);
    std::vector<Interval*> xs;
    for (auto& x : t.intervals) {
      auto v = static_cast<std::size_t>(x.command);
      if (x.start == 0 && !contains(t.critical_path, x.command) && c->commands[v].dependencies.empty() && c->commands[v].waits.empty() && tv.qprev[v] < 0) xs.push_back(&x);
    }
    if (xs.empty()) return false;
    pk.from(xs)->start = -make_rat(1, static_cast<long long>(1 + pk(4)));
    return true;
  });
  // TIME-3: a command off the critical path starts before a dependency (or token signaller)
  // ends, but not before its queue predecessor ends.
  c.edit<P>("starts_before_dependency", "TIME-3", [plan](P& t, Pick& pk, const AnySnapshot* parent) {
    const ConcretePlanIR* c = plan(parent);
    if (!c) return false;
    auto tv = time_view(*c, t);
    std::vector<std::pair<std::size_t, Rat>> cand;  // (interval, new start)
    for (std::size_t v = 0; v < c->commands.size(); ++v) {
      if (contains(t.critical_path, static_cast<Index>(v))) continue;
      Rat dep_end = 0, q_end = 0;
      for (Index u : c->commands[v].dependencies) dep_end = std::max(dep_end, t.intervals[tv.iv[static_cast<std::size_t>(u)]].end);
      for (Index k : c->commands[v].waits)
        if (tv.signaller[static_cast<std::size_t>(k)] >= 0) dep_end = std::max(dep_end, t.intervals[tv.iv[static_cast<std::size_t>(tv.signaller[static_cast<std::size_t>(k)])]].end);
      if (tv.qprev[v] >= 0) q_end = t.intervals[tv.iv[static_cast<std::size_t>(tv.qprev[v])]].end;
      if (q_end < dep_end) cand.emplace_back(tv.iv[v], (q_end + dep_end) / 2);
    }
    if (cand.empty()) return false;
    auto [i, s] = pk.from(cand);
    t.intervals[i].start = s;
    return true;
  });
  // TIME-4: a command off the critical path overlaps its queue predecessor, while still
  // starting after its dependencies and token signallers end.
  c.edit<P>("overlaps_queue_predecessor", "TIME-4", [plan](P& t, Pick& pk, const AnySnapshot* parent) {
    const ConcretePlanIR* c = plan(parent);
    if (!c || !c->queue) return false;
    auto tv = time_view(*c, t);
    std::vector<std::pair<std::size_t, Rat>> cand;
    for (std::size_t v = 0; v < c->commands.size(); ++v) {
      if (contains(t.critical_path, static_cast<Index>(v)) || tv.qprev[v] < 0) continue;
      Rat dep_end = 0;
      for (Index u : c->commands[v].dependencies) dep_end = std::max(dep_end, t.intervals[tv.iv[static_cast<std::size_t>(u)]].end);
      for (Index k : c->commands[v].waits)
        if (tv.signaller[static_cast<std::size_t>(k)] >= 0) dep_end = std::max(dep_end, t.intervals[tv.iv[static_cast<std::size_t>(tv.signaller[static_cast<std::size_t>(k)])]].end);
      Rat q_end = t.intervals[tv.iv[static_cast<std::size_t>(tv.qprev[v])]].end;
      if (dep_end < q_end) cand.emplace_back(tv.iv[v], (q_end + dep_end) / 2);
    }
    if (cand.empty()) return false;
    auto [i, s] = pk.from(cand);
    t.intervals[i].start = s;
    return true;
  }, TargetKind::queue);
  c.edit<P>("critical_path_cleared", "TIME-5", [](P& t, Pick&, const AnySnapshot*) {
    if (t.intervals.empty()) return false;
    t.critical_path.clear();
    return true;
  });
  c.edit<P>("critical_path_short_of_makespan", "TIME-5", [](P& t, Pick&, const AnySnapshot*) {
    if (t.critical_path.empty()) return false;
    t.critical_path.pop_back();
    return true;
  });
  c.edit<P>("critical_path_not_from_zero", "TIME-5", [](P& t, Pick&, const AnySnapshot*) {
    if (t.critical_path.size() < 2) return false;
    t.critical_path.erase(t.critical_path.begin());
    return true;
  });
  c.edit<P>("critical_path_unknown_command", "TIME-5", [](P& t, Pick& pk, const AnySnapshot*) {
    if (t.critical_path.empty()) return false;
    t.critical_path.push_back(pk(2) ? -1 : static_cast<Index>(t.intervals.size() + pk(3)));
    return true;
  });
}

void machine_ops(Catalog& c) {
  using P = MachineIR;
  c.edit<P>("dangling_instruction_reference", "REF-1", [](P& m, Pick& pk, const AnySnapshot*) {
    const Index bad = pk(2) ? static_cast<Index>(m.instructions.size() + pk(3)) : -1;
    if (pk(2)) m.entry_points.push_back(bad);
    else m.instructions[pk(m.instructions.size())].dependencies.push_back(bad);
    return true;
  });
  c.edit<P>("instruction_untraced", "MACHINE-1", [](P& m, Pick& pk, const AnySnapshot* parent) {
    if (!parent || m.instructions.empty()) return false;
    const auto& plan = std::get<Snapshot<ConcretePlanIR>>(*parent).payload;
    m.instructions[pk(m.instructions.size())].command = pk(2) ? -1 : static_cast<Index>(plan.commands.size() + pk(3));
    return true;
  });
  c.edit<P>("entry_point_dropped", "MACHINE-2", [](P& m, Pick& pk, const AnySnapshot*) {
    if (m.entry_points.empty()) return false;
    pk.erase_one(m.entry_points);
    return true;
  });
  c.edit<P>("entry_point_added", "MACHINE-2", [](P& m, Pick& pk, const AnySnapshot*) {
    Indices inner;
    for (std::size_t i = 0; i < m.instructions.size(); ++i)
      if (!m.instructions[i].dependencies.empty()) inner.push_back(static_cast<Index>(i));
    if (inner.empty()) return false;
    insert_sorted(m.entry_points, pk.from(inner));
    return true;
  });
  c.edit<P>("entry_points_unordered", "MACHINE-2", [](P& m, Pick&, const AnySnapshot*) {
    if (m.entry_points.size() < 2) return false;
    std::reverse(m.entry_points.begin(), m.entry_points.end());
    return true;
  });
  c.edit<P>("undeclared_dialect", "MACHINE-3", [](P& m, Pick& pk, const AnySnapshot*) {
    if (m.instructions.empty()) return false;
    m.instructions[pk(m.instructions.size())].dialect = pk(2) ? "rocm" : "";
    return true;
  });
  c.edit<P>("dialect_declared_twice", "MACHINE-3", [](P& m, Pick& pk, const AnySnapshot*) {
    if (pk(3) == 0) pk.insert(m.dialects, "");
    else m.dialects.push_back(m.dialects[pk(m.dialects.size())]);
    return true;
  });
  c.edit<P>("call_with_token", "MACHINE-4", [](P& m, Pick& pk, const AnySnapshot*) {
    Instruction* const picked = pk.where(m.instructions, [&](auto& x) { return x.op == MachineOp::call || x.op == MachineOp::copy; });
    if (!picked) return false;
    picked->token = static_cast<Index>(pk(4));
    return true;
  });
  c.edit<P>("sync_without_token", "MACHINE-4", [](P& m, Pick& pk, const AnySnapshot*) {
    Instruction* const picked = pk.where(m.instructions, [&](auto& x) { return x.token.has_value(); });
    if (!picked) return false;
    picked->token.reset();
    return true;
  });
  c.edit<P>("sync_on_foreign_token", "MACHINE-4", [](P& m, Pick& pk, const AnySnapshot* parent) {
    if (!parent) return false;
    const auto& plan = std::get<Snapshot<ConcretePlanIR>>(*parent).payload;
    Instruction* const picked = pk.where(m.instructions, [&](auto& x) { return x.token.has_value(); });
    if (!picked) return false;
    Instruction& x = *picked;
    const Command& cmd = plan.commands[static_cast<std::size_t>(x.command)];
    const Indices& own = x.op == MachineOp::signal ? cmd.signals : cmd.waits;
    Indices foreign;
    for (std::size_t t = 0; t < plan.tokens.size(); ++t)
      if (!contains(own, static_cast<Index>(t))) foreign.push_back(static_cast<Index>(t));
    foreign.push_back(static_cast<Index>(plan.tokens.size()));  // out of range
    x.token = pk.from(foreign);
    return true;
  });
}

void observation_ops(Catalog& c) {
  using P = ObservationSet;
  c.edit<P>("observation_of_unknown_command", "OBS-1", [](P& o, Pick& pk, const AnySnapshot*) {
    if (o.observations.empty()) return false;
    o.observations[pk(o.observations.size())].command = "c:ghost" + std::to_string(pk(10));
    return true;
  });
  c.edit<P>("negative_duration", "OBS-2", [](P& o, Pick& pk, const AnySnapshot*) {
    if (o.observations.empty()) return false;
    o.observations[pk(o.observations.size())].duration = -make_rat(static_cast<long long>(1 + pk(9)), static_cast<long long>(1 + pk(4)));
    return true;
  });
  c.edit<P>("observed_twice", "OBS-3", [](P& o, Pick& pk, const AnySnapshot*) {
    if (o.observations.empty()) return false;
    Observation x = o.observations[pk(o.observations.size())];
    x.duration += make_rat(1, 3);
    pk.insert(o.observations, x);
    return true;
  });
}

std::vector<Mutation> build() {
  Catalog c;
  digest_ops<ModelIR>(c);
  digest_ops<DistributedTaskIR>(c);
  digest_ops<PortablePlanIR>(c);
  digest_ops<ConcretePlanIR>(c);
  digest_ops<TimelineBundle>(c);
  digest_ops<MachineIR>(c);
  digest_ops<ObservationSet>(c);
  id_ops<ModelIR>(c);
  id_ops<DistributedTaskIR>(c);
  id_ops<PortablePlanIR>(c);
  id_ops<ConcretePlanIR>(c);
  id_ops<MachineIR>(c);
  lineage_ops<ModelIR>(c);
  lineage_ops<DistributedTaskIR>(c);
  lineage_ops<PortablePlanIR>(c);
  lineage_ops<ConcretePlanIR>(c);
  // self edges are also deadlocks / slot-order errors in a ConcretePlanIR, and entry-point
  // changes in a MachineIR; cycles in a ConcretePlanIR also break queue and slot order.
  dag_ops<DistributedTaskIR>(c, true, true);
  dag_ops<PortablePlanIR>(c, true, true);
  dag_ops<ConcretePlanIR>(c, false, false);
  dag_ops<MachineIR>(c, false, true);
  sym_ops<ModelIR>(c);
  sym_ops<DistributedTaskIR>(c);
  sym_ops<PortablePlanIR>(c);
  model_ops(c);
  distributed_ops(c);
  portable_ops(c);
  concrete_ops(c);
  bind_ops(c);
  timeline_ops(c);
  machine_ops(c);
  observation_ops(c);
  byte_ops(c);
  return c.take();
}

}  // namespace

void drop_task(DistributedTaskIR& d, std::size_t r) {
  const Indices via = d.tasks[r].dependencies;
  d.tasks.erase(d.tasks.begin() + static_cast<std::ptrdiff_t>(r));
  const auto renumber = [r](Index i) { return static_cast<std::size_t>(i) > r ? i - 1 : i; };
  for (auto& t : d.tasks) {
    Indices deps;
    for (Index u : t.dependencies) {
      if (static_cast<std::size_t>(u) == r) {
        for (Index w : via)
          if (!contains(deps, renumber(w))) deps.push_back(renumber(w));
      } else if (!contains(deps, renumber(u))) {
        deps.push_back(renumber(u));
      }
    }
    t.dependencies = std::move(deps);
    if (t.peer) t.peer = renumber(*t.peer);
  }
}

const std::vector<Mutation>& catalog() {
  static const std::vector<Mutation> kCatalog = build();
  return kCatalog;
}

Verdict judge(const Chain& c, const Mutant& m) {
  Verdict v;
  if (m.bytes) {
    try {
      (void)decode_snapshot(*m.bytes);
      v.text = "decoded without error";
    } catch (const InputError& e) {
      v.codes.insert(e.diag.code);
      v.text = to_text(e.diag);
    }
    return v;
  }
  if (m.topological_order) {
    Witnesses w;
    w.topological_order = m.topological_order;
    Diagnostics d = commit_chain(c, m.child, w);
    v.codes = codes_of(d);
    v.text = render(d);
    return v;
  }
  std::optional<AnySnapshot> parent = m.parent ? m.parent : c.parent();
  Diagnostics d = verify_pair(parent ? &*parent : nullptr, m.child);
  v.codes = codes_of(d);
  v.text = render(d);
  return v;
}

Verdict judge_gate(const Chain& c, const Mutant& m) {
  Verdict v;
  Witnesses w;
  w.topological_order = m.topological_order;
  Diagnostics d = commit_chain(c, m.child, w);
  v.codes = codes_of(d);
  v.text = render(d);
  return v;
}

}  // namespace plancert::props
