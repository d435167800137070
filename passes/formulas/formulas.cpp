// SPDX-License-Identifier: Apache-2.0
// The pass registry of the documentation, and the comparison of declared closed forms with
// what the passes derive.
#include "passes/formulas/formulas.h"

#include "passes/formulas/registry.h"

#include <algorithm>
#include <stdexcept>

namespace plancert::formulas {

const std::vector<PassDoc>& pass_docs() {
  static const std::vector<PassDoc> docs = [] {
    std::vector<PassDoc> v;
    // One line per group of passes, in pipeline order (see registry.h).
    detail::add_training_docs(v);
    detail::add_inference_docs(v);
    detail::add_binding_docs(v);
    return v;
  }();
  return docs;
}

namespace {

// The node `kind` over x and y.
Expr node(Atom::Kind kind, const Expr& x, const Expr& y) {
  switch (kind) {
    case Atom::Kind::Ceil: return Expr::ceil_div(x, y);
    case Atom::Kind::Floor: return Expr::floor_div(x, y);
    case Atom::Kind::Max: return Expr::max(x, y);
    default: return Expr::min(x, y);
  }
}

// Rebuilds `e` term by term: each symbol atom becomes on_symbol(name), each node atom
// on_node(kind, rebuilt first argument, rebuilt second argument); the result re-normalises.
template <class S, class N>
Expr rebuild(const Expr& e, const S& on_symbol, const N& on_node) {
  Expr out;
  for (const auto& t : e.terms()) {
    Expr prod(t.coef);
    for (const auto& f : t.mono) {
      const Atom& a = *f.atom;
      const Expr base = a.kind == Atom::Kind::Symbol ? on_symbol(a.name)
                                                     : on_node(a.kind, rebuild(a.args[0], on_symbol, on_node), rebuild(a.args[1], on_symbol, on_node));
      for (unsigned k = 0; k < f.power; ++k) prod = prod * base;
    }
    out = out + prod;
  }
  return out;
}

}  // namespace

Expr substitute(const Expr& e, const std::function<std::optional<Expr>(std::string_view)>& value) {
  return rebuild(
      e, [&](const std::string& name) { auto v = value(name); return v ? *v : Expr::symbol(name); }, node);
}

Expr instantiate(const DeclaredFormula& f, const Bindings& b) {
  Expr num = f.rhs, den = f.denominator;
  for (const auto& [name, def] : f.where) {
    auto one = [&name = name, &def = def](std::string_view s) -> std::optional<Expr> { return s == name ? std::optional<Expr>(def) : std::nullopt; };
    num = substitute(num, one);
    den = substitute(den, one);
  }
  auto bound = [&](std::string_view s) -> std::optional<Expr> {
    auto it = b.find(s);
    return it == b.end() ? std::nullopt : std::optional<Expr>(Expr(static_cast<long long>(it->second)));
  };
  num = substitute(num, bound);
  den = substitute(den, bound);
  for (const auto& s : num.symbols())
    if (std::find(f.workload.begin(), f.workload.end(), s) == f.workload.end())
      throw std::invalid_argument(f.name + ": symbol " + s + " has no value in this instance");
  auto c = den.constant();
  if (!c) throw std::invalid_argument(f.name + ": the denominator " + den.str() + " is not constant in this instance");
  if (*c == 0) throw std::invalid_argument(f.name + ": the denominator is zero in this instance");
  return num / *c;
}

namespace {

// Positive rational content of the terms of a and b: gcd of the numerators over lcm of the
// denominators (0 when both are zero).
Rat content(const Expr& a, const Expr& b) {
  Int g = 0, l = 1;
  for (const Expr* e : {&a, &b})
    for (const auto& t : e->terms()) {
      g = boost::multiprecision::gcd(g, Int(boost::multiprecision::abs(boost::multiprecision::numerator(t.coef))));
      l = boost::multiprecision::lcm(l, Int(boost::multiprecision::denominator(t.coef)));
    }
  return make_rat(g, l);
}

}  // namespace

Expr comparable(const Expr& e) {
  return rebuild(
      e, [](const std::string& name) { return Expr::symbol(name); },
      [](Atom::Kind kind, Expr x, Expr y) {
        const bool extremum = kind == Atom::Kind::Max || kind == Atom::Kind::Min;
        const Rat k = extremum ? content(x, y) : Rat(1);
        if (k == 0 || k == 1) return node(kind, x, y);
        return Expr(k) * node(kind, x / k, y / k);  // max(kx, ky) = k max(x, y) for k > 0
      });
}

std::vector<Check> check_formula(const PassDoc& pass, const DeclaredFormula& f) {
  std::vector<Check> out;
  for (const auto& d : f.derivations)
    for (const auto& inst : d.instances) {
      Check c;
      c.pass = pass.name;
      c.formula = f.name;
      c.what = d.what;
      c.instance = inst;
      try {
        c.declared = comparable(instantiate(f, inst));
        c.derived = comparable(d.derive(inst));
      } catch (const std::exception& e) {
        c.error = e.what();
        c.declared = c.derived = Expr();
      }
      out.push_back(std::move(c));
    }
  return out;
}

std::vector<Check> check_all() {
  std::vector<Check> out;
  for (const auto& p : pass_docs())
    for (const auto& f : p.formulas) {
      auto c = check_formula(p, f);
      out.insert(out.end(), std::make_move_iterator(c.begin()), std::make_move_iterator(c.end()));
    }
  return out;
}

std::string describe(const Check& c) {
  std::string at;
  for (const auto& [k, v] : c.instance) at += (at.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  std::string s = c.pass + " / " + c.formula + " at " + (at.empty() ? "(no bindings)" : at) + " via " + c.what + ": ";
  if (!c.error.empty()) return s + "error: " + c.error;
  if (c.ok()) return s + "declared = derived = " + c.declared.str();
  return s + "declared " + c.declared.str() + ", derived " + c.derived.str();
}

}  // namespace plancert::formulas
