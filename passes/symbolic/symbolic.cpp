// SPDX-License-Identifier: Apache-2.0
#include "passes/symbolic/symbolic.h"

#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/train/distribute.h"
#include "passes/train/plan.h"

#include <algorithm>
#include <map>

namespace plancert::passes::symbolic {
namespace {

[[noreturn]] void bad(const std::string& what) { throw InputError("CONFIG-7", "", what); }

Expr parse_side(const std::string& text, const std::string& whole) {
  std::string err;
  auto e = Expr::parse(text, &err);
  if (!e) bad("--assume '" + whole + "': cannot read '" + text + "': " + err);
  return *e;
}

// Splits "1<=B<=64" into operands and operators (longest operator first).
void tokenize(const std::string& s, std::vector<std::string>& operands, std::vector<std::string>& ops) {
  static const char* kOps[] = {"<=", ">=", "==", "!=", "<", ">"};
  std::string cur;
  for (std::size_t i = 0; i < s.size();) {
    bool hit = false;
    for (const char* op : kOps) {
      std::string o(op);
      if (s.compare(i, o.size(), o) == 0) {
        operands.push_back(cur);
        ops.push_back(o);
        cur.clear();
        i += o.size();
        hit = true;
        break;
      }
    }
    if (!hit) cur += s[i++];
  }
  operands.push_back(cur);
}

template <class P>
bool commit_into(std::optional<Committed<P>>& slot, CommitResult<P> r, Derivation& d, const char* pass) {
  if (auto* c = std::get_if<Committed<P>>(&r)) { slot.emplace(*c); return true; }
  d.diagnostics.merge(std::get<Rejection>(r).diagnostics);
  d.stopped_at = pass;
  return false;
}

Derivation run(const Inputs& in, const frontend::StrategyConfig& strategy, const Workload& w) {
  Derivation d;
  if (!commit_into(d.model, Gate::commit_root(unsealed_snapshot(build_model_ir(in.model, w, strategy.dtype), {})), d, "BuildModelIR")) return d;
  const auto& m = *d.model;
  if (!commit_into(d.dist, Gate::commit(m, unsealed_snapshot(distribute_training(m.payload(), m.digest(), strategy), {m.digest()})), d,
                   "DistributeTransformerTrainingPass"))
    return d;
  const auto& ds = *d.dist;
  if (!commit_into(d.plan, Gate::commit(ds, unsealed_snapshot(plan_training(m.payload(), ds.payload(), strategy), {ds.digest()})), d,
                   "PlanTransformerTrainingPass"))
    return d;
  std::map<std::int64_t, Expr> totals;
  for (const auto& f : d.plan->payload().memory)
    if (f.category == MemoryCategory::total) totals[f.stage] = f.bytes;
  for (const auto& [st, e] : totals) d.stage_totals.push_back(e);
  return d;
}

}  // namespace

Shape parse_shape(const std::string& symbolic, const std::vector<std::string>& assumptions) {
  Shape sh;
  std::vector<std::string> names;
  std::size_t pos = 0;
  while (pos <= symbolic.size()) {
    std::size_t c = symbolic.find(',', pos);
    if (c == std::string::npos) c = symbolic.size();
    names.push_back(symbolic.substr(pos, c - pos));
    pos = c + 1;
  }
  if (names.size() > 2) bad("--symbolic takes at most two names: the microbatch size and the sequence length, e.g. B,S");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i].empty()) continue;
    try { (void)Expr::symbol(names[i]); } catch (const std::invalid_argument&) { bad("--symbolic: '" + names[i] + "' is not a symbol name"); }
    if (i == 1 && names[1] == names[0]) bad("--symbolic: the two symbols must differ");
    (i == 0 ? sh.batch : sh.seq) = names[i];
    Symbol s;
    s.name = names[i];
    s.axis = SymbolAxis::workload;
    sh.symbols.push_back(s);
  }
  if (sh.symbols.empty()) bad("--symbolic needs at least one symbol name, e.g. --symbolic B,S");
  auto find = [&](const Expr& e) -> Symbol* {
    if (e.terms().size() != 1 || e.terms()[0].coef != 1 || e.terms()[0].mono.size() != 1 || e.terms()[0].mono[0].power != 1 ||
        e.terms()[0].mono[0].atom->kind != Atom::Kind::Symbol)
      return nullptr;
    for (auto& s : sh.symbols)
      if (s.name == e.terms()[0].mono[0].atom->name) return &s;
    return nullptr;
  };
  for (const auto& text : assumptions) {
    std::string s;
    for (char ch : text) if (ch != ' ' && ch != '\t') s += ch;
    std::vector<std::string> operands, ops;
    tokenize(s, operands, ops);
    if (ops.empty()) bad("--assume '" + text + "': expected a relation such as 'S % 8 == 0' or '1 <= B <= 64'");
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const std::string &a = operands[i], &b = operands[i + 1];
      if (a.empty() || b.empty()) bad("--assume '" + text + "': missing operand");
      if (auto pct = a.find('%'); pct != std::string::npos) {  // X % n == 0
        auto n = parse_int(b == "0" ? a.substr(pct + 1) : "");
        if (ops[i] != "==" || ops.size() != 1 || !n || *n < 1) bad("--assume '" + text + "': divisibility is written 'EXPR % n == 0' with n >= 1");
        Expr x = parse_side(a.substr(0, pct), text);
        if (Symbol* sym = find(x)) sym->divisible_by = boost::multiprecision::lcm(sym->divisible_by, *n);
        else sh.relations.push_back({x, "%", Expr(), *n});
        continue;
      }
      Expr x = parse_side(a, text), y = parse_side(b, text);
      for (const Expr* e : {&x, &y})
        for (const auto& name : e->symbols())
          if (std::none_of(sh.symbols.begin(), sh.symbols.end(), [&](const Symbol& q) { return q.name == name; }))
            bad("--assume '" + text + "': '" + name + "' is not declared by --symbolic");
      std::string op = ops[i];
      Symbol* sym = find(x);
      std::optional<Rat> c = y.constant();
      if (!sym && find(y) && x.constant()) {  // c op X  ->  X op' c
        sym = find(y);
        c = x.constant();
        op = op == "<=" ? ">=" : op == ">=" ? "<=" : op == "<" ? ">" : op == ">" ? "<" : op;
      }
      if (sym && c && op != "!=") {
        Int lo = op == ">" ? plancert::floor(*c) + 1 : plancert::ceil(*c);
        Int hi = op == "<" ? plancert::ceil(*c) - 1 : plancert::floor(*c);
        if (op == ">=" || op == ">" || op == "==") sym->min = std::max(sym->min, lo);
        if (op == "<=" || op == "<" || op == "==") sym->max = sym->max ? std::min(*sym->max, hi) : hi;
      } else {
        sh.relations.push_back({x, op, y, 0});
      }
    }
  }
  return sh;
}

frontend::StrategyConfig instance_strategy(const frontend::StrategyConfig& s, std::int64_t b, std::int64_t s_len) {
  frontend::StrategyConfig c = s;
  const std::int64_t m = s.num_microbatches();
  c.microbatch = b;
  c.global_batch = m * b * s.dp;
  c.seq_length = s_len;
  return c;
}

Derivation derive_symbolic(const Inputs& in, const Shape& shape) {
  const std::int64_t ref_seq = *frontend::effective_seq_length(in.model, in.strategy);
  // Frontend cross-checks at reference values; the sequence-length checks become
  // obligations (t | S under sequence parallelism, S <= max_positions) when S is symbolic.
  frontend::validate(in.model, instance_strategy(in.strategy, in.strategy.microbatch, shape.seq.empty() ? ref_seq : in.strategy.tp));
  Workload w{shape.batch.empty() ? Expr(in.strategy.microbatch) : Expr::symbol(shape.batch), shape.seq.empty() ? Expr(ref_seq) : Expr::symbol(shape.seq),
             shape.symbols};
  return run(in, in.strategy, w);
}

Derivation derive_concrete(const Inputs& in, const Shape& shape, const std::map<std::string, Int>& values) {
  auto value = [&](const std::string& name, std::int64_t fallback) {
    if (name.empty()) return fallback;
    auto it = values.find(name);
    if (it == values.end() || it->second < 1 || it->second > (Int(1) << 40)) throw std::invalid_argument("no positive value for symbol " + name);
    return static_cast<std::int64_t>(it->second);
  };
  const std::int64_t b = value(shape.batch, in.strategy.microbatch);
  const std::int64_t s = value(shape.seq, *frontend::effective_seq_length(in.model, in.strategy));
  const frontend::StrategyConfig strategy = instance_strategy(in.strategy, b, s);
  Derivation d;
  try {
    frontend::validate(in.model, strategy);
  } catch (const InputError& e) {
    d.diagnostics.error(e.diag.code, e.diag.path, e.diag.message);
    d.stopped_at = "frontend cross-checks";
    return d;
  }
  d = run(in, strategy, Workload{Expr(b), Expr(s), {}});
  const Int capacity = in.system.mem1.capacity_bytes;
  for (std::size_t st = 0; st < d.stage_totals.size(); ++st) {
    auto v = d.stage_totals[st].constant();
    if (v && *v > Rat(capacity))
      d.diagnostics.error("CAP-1", "/payload/memory", "stage " + std::to_string(st) + " needs " + to_string(*v) + " bytes per rank; the device has " + to_string(capacity));
  }
  if (!d.diagnostics.ok() && d.stopped_at.empty()) d.stopped_at = "capacity comparison";
  return d;
}

}  // namespace plancert::passes::symbolic
