// SPDX-License-Identifier: Apache-2.0
// corpus_gate: commits a chain of snapshot files through the gate, handing the last one a
// topological-order witness (DAG-3). plancert verify runs no pass and has no witnesses, so
// the corpus checks DAG-3 through this driver (tools/run_corpus.py --gate-tool).
//
//   corpus_gate WITNESS.json ROOT.json [CHILD.json ...]
//
// The files are given root first (a ModelIR, then each child); every file but the last is
// committed without a witness and must be accepted. WITNESS.json is {"topological_order": [...]}
// and is handed to the commit of the last file. Prints {"diagnostics":[...],"verdict":...}
// like `plancert verify --format json`; exit code 0 accepted, 1 rejected, 2 malformed input.
#include "core/diag.h"
#include "core/json.h"
#include "core/snapshot.h"
#include "passes/emit/emit.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace {
using namespace plancert;

using AnyCommitted = std::variant<Committed<ModelIR>, Committed<DistributedTaskIR>, Committed<PortablePlanIR>, Committed<ConcretePlanIR>>;

std::string slurp(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("IO-1", "", std::string(path) + ": cannot open");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int print(const Diagnostics& d, const char* verdict, int rc) {
  std::string s = "{\"diagnostics\":[";
  for (std::size_t i = 0; i < d.all().size(); ++i) s += (i ? "," : "") + to_json(d.all()[i]);
  std::cout << s << "],\"verdict\":" << json::quote(verdict) << "}\n";
  return rc;
}

template <class P>
std::optional<AnyCommitted> keep(CommitResult<P>&& r, Diagnostics& out) {
  if (auto* c = std::get_if<Committed<P>>(&r)) {
    if constexpr (std::is_constructible_v<AnyCommitted, Committed<P>>) return AnyCommitted(std::move(*c));
    else return std::nullopt;
  }
  out = std::get<Rejection>(r).diagnostics;
  return std::nullopt;
}

// Layer order of AnySnapshot: 0 Model, 1 Distributed, 2 Portable, 3 Concrete, 4.. downstream.
template <class Q, class P>
constexpr bool is_child_of() {
  constexpr bool concrete_child = std::is_same_v<P, TimelineBundle> || std::is_same_v<P, MachineIR> || std::is_same_v<P, ObservationSet>;
  return (std::is_same_v<Q, ModelIR> && std::is_same_v<P, DistributedTaskIR>) || (std::is_same_v<Q, DistributedTaskIR> && std::is_same_v<P, PortablePlanIR>) ||
         (std::is_same_v<Q, PortablePlanIR> && std::is_same_v<P, ConcretePlanIR>) || (std::is_same_v<Q, ConcretePlanIR> && concrete_child);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: corpus_gate WITNESS.json ROOT.json [CHILD.json ...]\n";
    return 2;
  }
  try {
    Witnesses witness;
    auto w = nlohmann::json::parse(slurp(argv[1]));
    witness.topological_order = w.at("topological_order").get<Indices>();

    std::optional<AnyCommitted> parent;
    Diagnostics d;
    for (int i = 2; i < argc; ++i) {
      AnySnapshot s = decode_snapshot(slurp(argv[i]));
      const Witnesses& wi = i + 1 == argc ? witness : Witnesses{};
      bool ok = false;
      if (!parent) {
        auto* root = std::get_if<Snapshot<ModelIR>>(&s);
        if (!root) { std::cerr << argv[i] << ": the first file must be a ModelIR\n"; return 2; }
        parent = keep(Gate::commit_root(std::move(*root), wi), d);
        ok = parent.has_value();
      } else {
        std::optional<AnyCommitted> next;
        bool paired = false;
        std::visit(
            [&](const auto& q, auto& child) {
              using Q = std::decay_t<decltype(q.payload())>;
              using P = std::decay_t<decltype(child.payload)>;
              if constexpr (is_child_of<Q, P>()) {
                paired = true;
                auto r = Gate::commit(q, std::move(child), wi);
                if (auto* c = std::get_if<Committed<P>>(&r)) {
                  ok = true;
                  if constexpr (std::is_constructible_v<AnyCommitted, Committed<P>>) next = AnyCommitted(std::move(*c));
                } else {
                  d = std::get<Rejection>(r).diagnostics;
                }
              }
            },
            *parent, s);
        if (!paired) { std::cerr << argv[i] << ": not a child layer of the file before it\n"; return 2; }
        parent = std::move(next);
      }
      if (!ok) {
        if (i + 1 != argc) std::cerr << argv[i] << ": an ancestor was rejected\n";
        return print(d, "rejected", 1);
      }
      if (!parent && i + 1 != argc) { std::cerr << argv[i] << ": nothing can be committed below this layer\n"; return 2; }
    }
    return print(Diagnostics{}, "accepted", 0);
  } catch (const InputError& e) {
    Diagnostics d;
    d.error(e.diag.code, e.diag.path, e.diag.message);
    return print(d, "rejected", 2);
  } catch (const std::exception& e) {
    std::cerr << "internal error: " << e.what() << "\n";
    return 3;
  }
}
