// SPDX-License-Identifier: Apache-2.0
// `plancert prove`: derives the training plan with symbolic shapes through the gate (which
// decides polynomial identities such as WORK and MEM by normalisation), then states the
// obligations that must hold for every shape of the declared set and discharges each with
// Z3 through proofs/solver.h. A refutation is instantiated in the concrete pipeline, which
// must reject with the matching finding; otherwise the run is an internal error.
#include "cli/prove_cmd.h"

#include "cli/embedded.h"
#include "cli/io.h"
#include "core/diag.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/symbolic/symbolic.h"
#include "proofs/solver.h"
#include "spec/checked.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

namespace plancert::cli {
namespace {

namespace sym = passes::symbolic;
using proofs::Fact;
using proofs::Rel;

struct Obligation {
  std::string code;   // spec obligation ID, or a label for checks without one
  std::string what;   // readable claim
  proofs::Query query;
  std::function<std::string(const sym::Derivation&)> confirm;  // the matching concrete finding ("" = none)
  proofs::Result result;
  std::string confirmation;
};

std::string seconds(double s) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(3) << s;
  return os.str();
}

std::string xml(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string slug(const std::string& s) {
  std::string o;
  for (char c : s) o += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  return o.substr(0, 60);
}

std::string cex_text(const std::map<std::string, Rat>& m) {
  std::string o;
  for (const auto& [k, v] : m) o += (o.empty() ? "" : ", ") + k + " = " + to_string(v);
  return o;
}

std::string describe(const Symbol& s) {
  std::string o = s.name + " in [" + to_string(s.min) + ", " + (s.max ? to_string(*s.max) : std::string("inf")) + "]";
  if (s.divisible_by > 1) o += ", " + to_string(s.divisible_by) + " | " + s.name;
  return o;
}

Fact to_fact(const sym::Relation& r) {
  static const std::map<std::string, Rel> kRel = {{"<=", Rel::le}, {"<", Rel::lt}, {"==", Rel::eq}, {"!=", Rel::ne}, {">=", Rel::ge}, {">", Rel::gt}};
  if (r.op == "%") return {r.lhs, Rel::dvd, r.rhs, r.modulus};
  return {r.lhs, kRel.at(r.op), r.rhs, 1};
}

bool has_symbols(const Expr& e) { return !e.symbols().empty(); }

// The symbol a capacity query splits on: the finite one with the fewest allowed values.
std::string split_symbol(const std::vector<Symbol>& symbols, const Expr& e) {
  std::string best;
  Int fewest = -1;
  auto used = e.symbols();
  for (const auto& s : symbols) {
    if (!s.max || std::find(used.begin(), used.end(), s.name) == used.end()) continue;
    Int n = (*s.max - s.min) / s.divisible_by + 1;
    if (fewest < 0 || n < fewest) { fewest = n; best = s.name; }
  }
  return used.size() >= 2 ? best : std::string();
}

std::vector<Obligation> obligations(const sym::Inputs& in, const sym::Shape& shape, const sym::Derivation& d) {
  std::vector<Obligation> out;
  std::vector<Fact> assumed;
  for (const auto& r : shape.relations) assumed.push_back(to_fact(r));
  auto add = [&](std::string code, std::string what, Fact goal, std::function<std::string(const sym::Derivation&)> confirm, std::string split = {}) {
    Obligation o;
    o.code = std::move(code);
    o.what = std::move(what);
    o.query.name = std::to_string(out.size() + 1) + "-" + o.code + "-" + slug(proofs::to_string(goal));
    o.query.symbols = shape.symbols;
    o.query.assumptions = assumed;
    o.query.goal = std::move(goal);
    o.query.split = std::move(split);
    if (!shape.batch.empty()) o.query.minimize.push_back(shape.batch);
    if (!shape.seq.empty()) o.query.minimize.push_back(shape.seq);
    o.confirm = std::move(confirm);
    out.push_back(std::move(o));
  };
  auto has = [](const char* code, std::string text = {}) {
    return [code, text](const sym::Derivation& c) {
      for (const auto& x : c.diagnostics.all())
        if (x.code == code && x.message.find(text) != std::string::npos) return to_text(x);
      return std::string();
    };
  };
  const auto& st = in.strategy;
  // (1) divisibility of every shard: the sequence split of sequence parallelism, and every
  //     weight split whose dimension is symbolic (as quotient / remainder constraints).
  if (st.sequence_parallel && st.tp > 1 && !shape.seq.empty()) {
    // The concrete gate's SHARD-1 covers weight shards only; the sequence split is rejected
    // by the concrete pipeline's frontend cross-check (CONFIG-5, "sequence parallelism").
    auto either = [has](const sym::Derivation& c) {
      std::string s = has("SHARD-1")(c);
      return s.empty() ? has("CONFIG-5", "sequence parallelism")(c) : s;
    };
    add("SHARD-1", "sequence parallelism splits the sequence over t = " + std::to_string(st.tp) + " ranks",
        {Expr::symbol(shape.seq), Rel::dvd, Expr(), Int(st.tp)}, either);
  }
  const auto& model = d.model->payload();
  for (const auto& s : d.dist->payload().shards) {
    if (s.dim < 0) continue;
    for (const auto& v : model.values)
      if (v.id == s.value && has_symbols(v.shape[static_cast<std::size_t>(s.dim)]))
        add("SHARD-1", "shard of " + s.value + " over " + s.axis, {v.shape[static_cast<std::size_t>(s.dim)], Rel::dvd, Expr(), Int(s.pieces)}, has("SHARD-1"));
  }
  if (in.model.max_positions && !shape.seq.empty())
    add("CONFIG-5", "the sequence fits the model's positions", {Expr::symbol(shape.seq), Rel::le, Expr(Int(*in.model.max_positions))}, has("CONFIG-5"));
  // (2) sizes: integral and non-negative (BUF-4 for the concrete sizes); work non-negative.
  const auto& plan = d.plan->payload();
  std::map<std::string, std::vector<std::string>> sizes;
  std::map<std::string, Expr> size_expr;
  for (const auto& b : plan.buffers)
    if (has_symbols(b.size)) { sizes[b.size.str()].push_back(b.id); size_expr.emplace(b.size.str(), b.size); }
  for (const auto& [text, ids] : sizes) {
    const Expr& e = size_expr.at(text);
    std::string who = std::to_string(ids.size()) + " buffer(s), e.g. " + ids.front();
    bool fractional = false;
    for (const auto& t : e.terms()) fractional = fractional || boost::multiprecision::denominator(t.coef) != 1;
    if (fractional) add("BUF-4", "whole bytes: " + who, {e, Rel::dvd, Expr(), Int(1)}, has("BUF-4"));
    add("BUF-4", "non-negative size: " + who, {e, Rel::ge, Expr()}, has("BUF-4"));
  }
  std::map<std::string, std::pair<std::size_t, int>> works;  // text -> (task, field)
  std::map<std::string, Expr> work_expr;
  static const char* kField[] = {"matrix_ops", "vector_ops", "read_bytes", "write_bytes", "message_bytes", "temporary_bytes", "persistent_bytes"};
  auto field = [](const Work& w, int k) -> const Expr& {
    const Expr* f[] = {&w.matrix_ops, &w.vector_ops, &w.read_bytes, &w.write_bytes, &w.message_bytes, &w.temporary_bytes, &w.persistent_bytes};
    return *f[k];
  };
  for (std::size_t i = 0; i < plan.tasks.size(); ++i)
    for (int k = 0; k < 7; ++k) {
      const Expr& e = field(plan.tasks[i].work, k);
      if (has_symbols(e) && works.emplace(e.str(), std::make_pair(i, k)).second) work_expr.emplace(e.str(), e);
    }
  for (const auto& [text, where] : works) {
    auto [task, k] = where;
    std::string id = plan.tasks[task].id;
    add("NONNEG", std::string(kField[k]) + " of " + id + " (and every task with the same expression)", {work_expr.at(text), Rel::ge, Expr()},
        [task = task, k = k, id, field](const sym::Derivation& c) {  // init-captures: clang < 16 cannot capture bindings
          if (!c.plan || c.plan->payload().tasks.size() <= task || c.plan->payload().tasks[task].id != id) return std::string();
          auto v = field(c.plan->payload().tasks[task].work, k).constant();
          return v && *v < 0 ? std::string(kField[k]) + " of " + id + " is " + to_string(*v) + " in the committed concrete plan" : std::string();
        });
  }
  // (3) capacity: every stage's total memory per rank fits the device memory.
  const Int capacity = in.system.mem1.capacity_bytes;
  for (std::size_t s = 0; s < d.stage_totals.size(); ++s) {
    const Expr& e = d.stage_totals[s];
    add("CAP-1", "stage " + std::to_string(s) + " total memory per rank fits the device (" + to_string(capacity) + " bytes)", {e, Rel::le, Expr(capacity)},
        has("CAP-1", "stage " + std::to_string(s) + " "), split_symbol(shape.symbols, e));
  }
  return out;
}

std::string junit_xml(const std::vector<Obligation>& obs, double total) {
  int failures = 0, errors = 0;
  for (const auto& o : obs) {
    if (o.result.verdict == proofs::Verdict::error) ++errors;
    else if (o.result.verdict != proofs::Verdict::proved) ++failures;
  }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"plancert prove\" tests=\"" << obs.size() << "\" failures=\"" << failures
    << "\" errors=\"" << errors << "\" time=\"" << seconds(total) << "\">\n";
  for (const auto& o : obs) {
    const auto& r = o.result;
    x << "  <testcase classname=\"plancert.prove." << xml(o.code) << "\" name=\"" << xml(o.query.name + ": " + proofs::to_string(o.query.goal)) << "\" time=\""
      << seconds(r.seconds) << "\">";
    std::string detail = o.what + "\nmethod: " + r.method + (r.reason.empty() ? "" : "\nreason: " + r.reason);
    if (r.verdict == proofs::Verdict::refuted)
      x << "<failure type=\"refuted\" message=\"" << xml("counterexample " + cex_text(r.counterexample)) << "\">" << xml(detail + "\n" + o.confirmation) << "</failure>";
    else if (r.verdict == proofs::Verdict::error)
      x << "<error type=\"error\" message=\"" << xml(r.reason) << "\">" << xml(detail) << "</error>";
    else if (r.verdict != proofs::Verdict::proved)
      x << "<failure type=\"" << proofs::to_string(r.verdict) << "\" message=\"" << xml("undecided: " + r.reason) << "\">" << xml(detail) << "</failure>";
    x << "</testcase>\n";
  }
  x << "</testsuite>\n</testsuites>\n";
  return x.str();
}

}  // namespace

CLI::App* add_prove_command(CLI::App& app, ProveOptions& o) {
  auto* p = app.add_subcommand("prove", "Prove symbolic-shape obligations for every shape of a declared set (Z3)");
  p->add_option("--model", o.model, "model file (default: the bundled example)");
  p->add_option("--strategy", o.strategy, "strategy file (default: the bundled example)");
  p->add_option("--system", o.system, "system file (default: the bundled example)");
  p->add_option("--symbolic", o.symbolic, "symbols of the microbatch size and the sequence length, e.g. B,S")->required();
  p->add_option("--assume", o.assume, "an assumed fact, e.g. 'S % 8 == 0' or '1 <= B <= 64' (repeatable)");
  p->add_option("--junit", o.junit, "write JUnit XML (one testcase per obligation) to this file");
  p->add_option("--smt2-dir", o.smt2_dir, "write the SMT-LIB 2 text of every query into this directory");
  p->allow_extras();
  p->footer("Megatron-LM flags may be given instead of --strategy (see `plancert certify --help`).");
  return p;
}

int run_prove(const ProveOptions& o) {
  using namespace frontend;
  auto clock = [] { return std::chrono::steady_clock::now(); };
  const auto t0 = clock();
  if (!o.megatron.empty() && !o.strategy.empty()) throw InputError("CONFIG-7", "", "give either --strategy or Megatron-LM flags, not both");
  sym::Inputs in;
  in.model = o.model.empty() ? parse_model(kDefault_model.text, std::string(kDefault_model.name)) : load_model(o.model);
  if (!o.megatron.empty()) in.strategy = parse_megatron_flags(o.megatron, in.model.layers);
  else in.strategy = o.strategy.empty() ? parse_strategy(kDefault_strategy.text, std::string(kDefault_strategy.name)) : load_strategy(o.strategy);
  in.system = o.system.empty() ? parse_system(kDefault_system.text, std::string(kDefault_system.name)) : load_system(o.system);
  validate(in.strategy, in.system);
  pad_vocabulary(in.model, in.strategy.tp);
  if (!in.strategy.training) throw InputError("CONFIG-6", "/training", "this strategy describes inference; prove needs a training strategy");
  const sym::Shape shape = sym::parse_shape(o.symbolic, o.assume);

  std::ostringstream head;  // printed once the derivation has run: a configuration it refuses (CONFIG-8, ...) leaves no partial output
  head << "plancert prove: " << in.model.name << " / " << in.strategy.name << " / " << in.system.name << "\n";
  head << "  shapes:";
  for (const auto& s : shape.symbols) head << " " << describe(s) << (s.name == shape.batch ? " (microbatch size)" : " (sequence length)") << ";";
  for (const auto& r : shape.relations) head << " " << proofs::to_string(to_fact(r)) << ";";
  head << " microbatches per iteration m = " << in.strategy.num_microbatches() << " (fixed)\n";

  const sym::Derivation d = sym::derive_symbolic(in, shape);
  const auto t1 = clock();  // the derivation's time, without the header's output
  std::cout << head.str();
  if (!d.plan) {
    std::cout << "rejected: the gate refused the symbolic output of " << d.stopped_at << "\n";
    for (const auto& x : d.diagnostics.all()) std::cout << to_text(x) << "\n";
    return static_cast<int>(Exit::Rejected);
  }
  std::cout << "  gate: ModelIR, DistributedTaskIR, PortablePlanIR committed with symbolic shapes ("
            << obligations_checked(0, false).size() + obligations_checked(1, true).size() + obligations_checked(2, true).size()
            << " obligation checks; identities such as WORK-2 and MEM-1..3 decided by normalisation) in " << seconds(std::chrono::duration<double>(t1 - t0).count())
            << " s\n";
  std::cout << "  skipped: alignment of the reference binder recurrence (ALIGN-1): no binder (passes/bind/) in this build; "
               "its lemmas are replayed from proofs/lemmas/\n";

  std::vector<Obligation> obs = obligations(in, shape, d);
  std::cout << "  " << obs.size() << " obligations for every shape of the declared set:\n";
  int proved = 0, refuted = 0, undecided = 0;
  bool internal = false;
  if (!o.smt2_dir.empty()) std::filesystem::create_directories(o.smt2_dir);
  for (auto& ob : obs) {
    ob.result = proofs::check(ob.query);
    const auto& r = ob.result;
    std::cout << "    " << std::left << std::setw(8) << proofs::to_string(r.verdict) << " " << std::setw(8) << ob.code << " " << proofs::to_string(ob.query.goal)
              << "  [" << ob.what << "]  " << seconds(r.seconds) << " s, " << r.method << "\n";
    if (r.verdict == proofs::Verdict::proved) { ++proved; }
    else if (r.verdict == proofs::Verdict::refuted) {
      ++refuted;
      std::map<std::string, Int> values;
      for (const auto& [k, v] : r.counterexample) values[k] = boost::multiprecision::numerator(v);
      sym::Derivation c = sym::derive_concrete(in, shape, values);
      std::string match = ob.confirm(c);
      bool ok = !match.empty();
      std::string first = c.diagnostics.all().empty() ? std::string("no finding") : to_text(c.diagnostics.all().front());
      ob.confirmation = ok ? "confirmed: the concrete pipeline at " + cex_text(r.counterexample) + " rejects: " + match
                           : "NOT confirmed by the concrete pipeline at " + cex_text(r.counterexample) + " (first finding: " + first + ")";
      std::cout << "             counterexample (minimised: " << (shape.batch.empty() ? shape.seq : shape.batch) << " first, binary search): " << cex_text(r.counterexample)
                << "\n             " << ob.confirmation << "\n";
      internal = internal || !ok;
    } else {
      ++undecided;
      std::cout << "             undecided (" << r.reason << "): counted as a failure\n";
    }
    if (!o.smt2_dir.empty()) write_file_atomic(std::filesystem::path(o.smt2_dir) / (ob.query.name + ".smt2"), r.smt2);
  }
  const double total = std::chrono::duration<double>(clock() - t0).count();
  if (!o.junit.empty()) write_file_atomic(o.junit, junit_xml(obs, total));
  std::cout << (proved == static_cast<int>(obs.size()) ? "proved" : "not proved") << ": " << proved << " of " << obs.size() << " obligations proved, " << refuted
            << " refuted, " << undecided << " undecided, in " << seconds(total) << " s\n";
  if (internal) {
    std::cerr << "internal error: a counterexample was not confirmed by the concrete pipeline\n";
    return static_cast<int>(Exit::Internal);
  }
  return proved == static_cast<int>(obs.size()) ? static_cast<int>(Exit::Accepted) : static_cast<int>(Exit::Rejected);
}

}  // namespace plancert::cli
