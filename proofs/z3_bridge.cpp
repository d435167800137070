// SPDX-License-Identifier: Apache-2.0
// TRUSTED. The only translation unit that includes z3++.h (an arch test enforces it).
// Encoding rules and the meaning of each verdict: proofs/solver.h.
#include "proofs/solver.h"

#include <z3++.h>

#include <chrono>
#include <optional>
#include <stdexcept>

namespace plancert::proofs {

using plancert::to_string;  // the exact-number overloads, beside this namespace's own

namespace {

using boost::multiprecision::denominator;
using boost::multiprecision::numerator;

Int lcm_den(const Expr& e) {
  Int l = 1;
  for (const auto& t : e.terms()) l = boost::multiprecision::lcm(l, denominator(t.coef));
  return l;
}

// Builds Z3 terms for Exprs; every nonlinear construct becomes a fresh variable with linear
// side constraints (solver.h). Throws std::domain_error for what it cannot state.
class Encoder {
 public:
  Encoder(z3::context& c, const Query& q) : c_(c), side_(c) {
    for (const auto& s : q.symbols) { vars_.emplace(s.name, c_.int_const(s.name.c_str())); sym_[s.name] = &s; }
  }
  z3::expr num(const Int& v) { return c_.int_val(to_string(v).c_str()); }
  z3::expr var(const std::string& n) {
    auto it = vars_.find(n);
    if (it == vars_.end()) throw std::domain_error("undeclared symbol " + n);
    return it->second;
  }
  // The declared symbol named `n` (the last of that name), or null.
  const Symbol* symbol(const std::string& n) const { auto it = sym_.find(n); return it == sym_.end() ? nullptr : it->second; }
  z3::expr fresh(const std::string& hint) { return c_.int_const((hint + "!" + std::to_string(fresh_++)).c_str()); }

  // `e` scaled by `scale`, which must clear every denominator.
  z3::expr poly(const Expr& e, const Int& scale) {
    z3::expr sum = c_.int_val(0);
    for (const Term& t : e.terms()) {
      Rat k = t.coef * Rat(scale);
      if (denominator(k) != 1) throw std::domain_error("coefficient not cleared");
      Int coef = numerator(k);
      std::vector<std::pair<z3::expr, unsigned>> rest;
      std::string key;
      unsigned degree = 0;
      for (const auto& f : t.mono) {
        if (f.atom->kind == Atom::Kind::Symbol && subst_.count(f.atom->name)) {
          for (unsigned i = 0; i < f.power; ++i) coef *= subst_[f.atom->name];
          continue;
        }
        z3::expr a = atom(*f.atom);
        rest.emplace_back(a, f.power);
        key += (key.empty() ? "" : "*") + a.to_string() + (f.power > 1 ? "^" + std::to_string(f.power) : "");
        degree += f.power;
      }
      if (degree == 0) sum = sum + num(coef);
      else if (degree == 1) sum = sum + num(coef) * rest[0].first;
      else sum = sum + num(coef) * relax(key, rest);
    }
    return sum;
  }

  z3::expr fact(const Fact& f, bool negate) {
    Expr d = f.lhs - f.rhs;
    Int L = lcm_den(d);
    z3::expr D = poly(d, L);
    if (f.rel == Rel::dvd) {
      Int m = L * f.modulus;
      if (f.modulus < 1) throw std::domain_error("modulus must be positive");
      z3::expr q = fresh("q");
      if (!negate) return D == num(m) * q;  // positive position only: q is existential
      if (m == 1) return c_.bool_val(false);
      z3::expr r = fresh("r");
      return D == num(m) * q + r && r >= 1 && r <= num(m - 1);
    }
    z3::expr z = c_.int_val(0);
    z3::expr p = f.rel == Rel::le ? D <= z : f.rel == Rel::lt ? D < z : f.rel == Rel::eq ? D == z : f.rel == Rel::ne ? D != z : f.rel == Rel::ge ? D >= z : D > z;
    return negate ? !p : p;
  }

  z3::expr_vector& side() { return side_; }
  std::map<std::string, Int> subst_;
  std::vector<std::string> relaxed;

 private:
  std::string subst_key() const {
    std::string k;
    for (const auto& [n, v] : subst_) k += "|" + n + "=" + to_string(v);
    return k;
  }
  z3::expr atom(const Atom& a) {
    if (a.kind == Atom::Kind::Symbol) return var(a.name);
    std::string key = a.text + subst_key();
    if (auto it = nodes_.find(key); it != nodes_.end()) return it->second;
    z3::expr v = fresh(a.kind == Atom::Kind::Ceil ? "ceil" : a.kind == Atom::Kind::Floor ? "floor" : a.kind == Atom::Kind::Max ? "max" : "min");
    const Expr &x = a.args[0], &y = a.args[1];
    if (a.kind == Atom::Kind::Ceil || a.kind == Atom::Kind::Floor) {
      auto b = y.constant();
      if (!b || *b <= 0) throw std::domain_error("ceil/floor needs a positive constant divisor: " + a.text);
      Int L = boost::multiprecision::lcm(lcm_den(x), denominator(*b));
      z3::expr A = poly(x, L), Bq = num(numerator(*b * Rat(L))) * v, Bn = num(numerator(*b * Rat(L)));
      side_.push_back(a.kind == Atom::Kind::Ceil ? (Bq - Bn < A && A <= Bq) : (Bq <= A && A < Bq + Bn));
    } else {
      if (lcm_den(x) != 1 || lcm_den(y) != 1) throw std::domain_error("max/min of non-integral arguments: " + a.text);
      z3::expr X = poly(x, 1), Y = poly(y, 1);
      side_.push_back(a.kind == Atom::Kind::Max ? (v >= X && v >= Y && (v == X || v == Y)) : (v <= X && v <= Y && (v == X || v == Y)));
    }
    nodes_.emplace(key, v);
    return v;
  }
  // A monomial of degree >= 2: a fresh variable within the products of the symbols' bounds.
  z3::expr relax(const std::string& key, const std::vector<std::pair<z3::expr, unsigned>>& fs) {
    if (auto it = monos_.find(key); it != monos_.end()) return it->second;
    z3::expr v = fresh("mono");
    std::optional<Int> lo = Int(1), hi = Int(1);
    for (const auto& [e, p] : fs) {
      auto it = sym_.find(e.to_string());
      if (it == sym_.end() || it->second->min < 0) { lo.reset(); hi.reset(); break; }
      for (unsigned i = 0; i < p; ++i) {
        *lo *= it->second->min;
        if (hi && it->second->max) *hi *= *it->second->max;
        else hi.reset();
      }
    }
    std::string note = key + " in [" + (lo ? to_string(*lo) : "-inf") + ", " + (hi ? to_string(*hi) : "inf") + "]";
    if (lo) side_.push_back(v >= num(*lo));
    if (hi) side_.push_back(v <= num(*hi));
    relaxed.push_back(note);
    monos_.emplace(key, v);
    return v;
  }
  z3::context& c_;
  z3::expr_vector side_;
  std::map<std::string, z3::expr> vars_, nodes_, monos_;
  std::map<std::string, const Symbol*> sym_;
  int fresh_ = 0;
};

void configure(z3::context& c, z3::solver& s, const Settings& st) {
  z3::params p(c);
  p.set("rlimit", static_cast<unsigned>(st.rlimit));
  p.set("timeout", st.timeout_ms);
  p.set("random_seed", st.seed);
  s.set(p);
}

Verdict failure_kind(const std::string& why) {
  return why.find("timeout") != std::string::npos || why.find("canceled") != std::string::npos || why.find("resource") != std::string::npos ? Verdict::timeout
                                                                                                                                          : Verdict::unknown;
}

std::string header(const std::string& name, const Settings& st) {
  return "; plancert query " + name + ": the negated claim; unsat = proved\n(set-option :rlimit " + std::to_string(st.rlimit) + ")\n";
}

// Runs `body` on a fresh Result and times it; an exception (z3::exception derives from
// std::exception) makes the result an error with no counterexample.
template <class F>
Result timed(F&& body) {
  Result r;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    body(r);
  } catch (const std::exception& e) {
    r.verdict = Verdict::error, r.reason = e.what(), r.counterexample.clear();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

std::string_view to_string(Verdict v) {
  static constexpr std::string_view kNames[] = {"proved", "refuted", "unknown", "timeout", "error"};
  return kNames[static_cast<int>(v)];
}

std::string to_string(const Fact& f) {
  static constexpr const char* kOps[] = {" <= ", " < ", " == ", " != ", " >= ", " > "};
  if (f.rel == Rel::dvd) return to_string(f.modulus) + " | " + (f.rhs == Expr() ? f.lhs : f.lhs - f.rhs).str();
  return f.lhs.str() + kOps[static_cast<int>(f.rel)] + f.rhs.str();
}

std::optional<bool> holds(const Fact& f, const std::map<std::string, Rat>& env) {
  auto look = [&](std::string_view n) -> std::optional<Rat> {
    auto it = env.find(std::string(n));
    return it == env.end() ? std::nullopt : std::optional<Rat>(it->second);
  };
  auto a = f.lhs.eval(look), b = f.rhs.eval(look);
  if (!a || !b) return std::nullopt;
  switch (f.rel) {
    case Rel::le: return *a <= *b;
    case Rel::lt: return *a < *b;
    case Rel::eq: return *a == *b;
    case Rel::ne: return *a != *b;
    case Rel::ge: return *a >= *b;
    case Rel::gt: return *a > *b;
    default: {
      Rat q = (*a - *b) / Rat(f.modulus);
      return denominator(q) == 1;
    }
  }
}

Result check(const Query& q, const Settings& st) {
  return timed([&](Result& r) {
    z3::context c;
    Encoder enc(c, q);
    z3::solver s(c);
    configure(c, s, st);
    std::vector<Fact> facts;  // the declared symbol facts, for the exact re-check of models
    for (const auto& sym : q.symbols) {
      facts.push_back({Expr::symbol(sym.name), Rel::ge, Expr(sym.min)});
      if (sym.max) facts.push_back({Expr::symbol(sym.name), Rel::le, Expr(*sym.max)});
      if (sym.divisible_by > 1) facts.push_back({Expr::symbol(sym.name), Rel::dvd, Expr(), sym.divisible_by});
    }
    for (const auto& f : facts) s.add(enc.fact(f, false));
    auto body = [&] {
      z3::expr b = enc.fact(q.goal, true);
      for (const auto& f : q.assumptions) b = b && enc.fact(f, false);
      return b;
    };
    r.method = "linear";
    if (!q.split.empty()) {
      const Symbol* x = enc.symbol(q.split);
      if (!x || !x->max || (*x->max - x->min) / x->divisible_by >= st.max_split) throw std::domain_error("split symbol " + q.split + " has no small finite range");
      z3::expr_vector cases(c);
      Int first = x->min + (x->divisible_by - x->min % x->divisible_by) % x->divisible_by;
      for (Int v = first; v <= *x->max; v += x->divisible_by) {
        enc.subst_[x->name] = v;
        cases.push_back(enc.var(x->name) == enc.num(v) && body());
      }
      enc.subst_.clear();
      s.add(cases.empty() ? c.bool_val(false) : z3::mk_or(cases));
      r.method = "case split over " + x->name + " (" + std::to_string(cases.size()) + " cases)";
    } else {
      s.add(body());
    }
    for (unsigned i = 0; i < enc.side().size(); ++i) s.add(enc.side()[static_cast<int>(i)]);
    for (const auto& n : enc.relaxed) r.method += "; relaxed " + n;
    r.smt2 = header(q.name, st) + s.to_smt2();

    // A sat model is a counterexample only if it survives the exact re-check.
    auto decide = [&](std::map<std::string, Rat>& out) -> Verdict {
      ++r.checks;
      auto res = s.check();
      if (res == z3::unsat) return Verdict::proved;
      if (res == z3::unknown) { r.reason = s.reason_unknown(); return failure_kind(r.reason); }
      z3::model m = s.get_model();
      std::map<std::string, Rat> env;
      for (const auto& sym : q.symbols) {
        std::string text;
        if (!m.eval(enc.var(sym.name), true).is_numeral(text)) throw std::domain_error("non-numeral model value");
        auto v = parse_rat(text);
        if (!v) throw std::domain_error("unparsable model value " + text);
        env[sym.name] = *v;
      }
      bool real = holds(q.goal, env) == false;
      for (const auto& f : facts) real = real && holds(f, env) == true;
      for (const auto& f : q.assumptions) real = real && holds(f, env) == true;
      if (!real) {
        if (enc.relaxed.empty()) throw std::logic_error("bridge inconsistency: the model is not a counterexample");
        r.reason = "the linear relaxation has a model that is not a counterexample (spurious)";
        return Verdict::unknown;
      }
      out = std::move(env);
      return Verdict::refuted;
    };
    r.verdict = decide(r.counterexample);
    if (r.verdict == Verdict::refuted) {
      for (const auto& name : q.minimize) {  // lexicographic minimum by binary search
        const Symbol* x = enc.symbol(name);
        if (!x) continue;
        Int lo = x->min, hi = numerator(r.counterexample[name]);
        while (lo < hi) {
          Int mid = lo + (hi - lo) / 2;
          s.push();
          s.add(enc.var(name) <= enc.num(mid));
          std::map<std::string, Rat> better;
          Verdict v = decide(better);
          s.pop();
          if (v == Verdict::refuted) { r.counterexample = better; hi = numerator(better[name]); }
          else if (v == Verdict::proved) lo = mid + 1;
          else { r.reason = "minimisation of " + name + " stopped: " + r.reason; break; }
        }
        if (lo < hi) break;
        s.add(enc.var(name) == enc.num(hi));
        r.method += "; " + name + " minimised by binary search";
      }
    }
  });
}

Result check_smt2(std::string_view text, const Settings& st) {
  return timed([&](Result& r) {
    z3::context c;
    z3::solver s(c);
    configure(c, s, st);
    s.add(c.parse_string(std::string(text).c_str()));
    r.smt2 = std::string(text);
    r.checks = 1;
    auto res = s.check();
    r.verdict = res == z3::unsat ? Verdict::proved : res == z3::sat ? Verdict::refuted : failure_kind(s.reason_unknown());
    if (res == z3::unknown) r.reason = s.reason_unknown();
  });
}

}  // namespace plancert::proofs
