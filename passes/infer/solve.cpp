// SPDX-License-Identifier: Apache-2.0
#include "passes/infer/solve.h"

#include <map>

namespace plancert::passes {
namespace {

Expr atom_expr(const Atom& a) {
  switch (a.kind) {
    case Atom::Kind::Symbol: return Expr::symbol(a.name);
    case Atom::Kind::Max: return Expr::max(a.args[0], a.args[1]);
    case Atom::Kind::Min: return Expr::min(a.args[0], a.args[1]);
    case Atom::Kind::Ceil: return Expr::ceil_div(a.args[0], a.args[1]);
    default: return Expr::floor_div(a.args[0], a.args[1]);
  }
}

// f with the atom whose text is `text` replaced by `by`.
Expr substitute(const Expr& f, const std::string& text, const Expr& by) {
  Expr out;
  for (const auto& term : f.terms()) {
    Expr prod(term.coef);
    for (const auto& fac : term.mono)
      for (unsigned k = 0; k < fac.power; ++k) prod = prod * (fac.atom->text == text ? by : atom_expr(*fac.atom));
    out += prod;
  }
  return out;
}

Rat eval(const std::map<unsigned, Rat>& p, const Int& x) {
  Rat v = 0, xr(x), pw = 1;
  unsigned last = 0;
  for (const auto& [deg, c] : p) {
    for (; last < deg; ++last) pw *= xr;
    v += c * pw;
  }
  return v;
}

}  // namespace

std::optional<std::vector<Expr>> max_branches(const Expr& f) {
  for (const auto& term : f.terms())
    for (const auto& fac : term.mono) {
      if (fac.atom->kind == Atom::Kind::Symbol) continue;
      if (fac.atom->kind != Atom::Kind::Max || fac.power != 1 || term.mono.size() != 1 || term.coef <= 0) return std::nullopt;
      std::vector<Expr> out;
      for (const auto& arg : fac.atom->args) {
        auto sub = max_branches(substitute(f, fac.atom->text, arg));
        if (!sub) return std::nullopt;
        out.insert(out.end(), sub->begin(), sub->end());
      }
      return out;
    }
  return std::vector<Expr>{f};
}

std::optional<Int> largest_fitting(const Expr& f, const std::string& x, const Int& capacity, const Int& limit) {
  auto pieces = max_branches(f);
  if (!pieces) return std::nullopt;
  const Rat C(capacity);
  Int best = limit;
  for (const Expr& piece : *pieces) {
    std::map<unsigned, Rat> p;  // degree -> coefficient
    for (const auto& term : piece.terms()) {
      if (term.coef < 0 || term.mono.size() > 1) return std::nullopt;
      if (!term.mono.empty() && (term.mono[0].atom->kind != Atom::Kind::Symbol || term.mono[0].atom->name != x)) return std::nullopt;
      p[term.mono.empty() ? 0u : term.mono[0].power] += term.coef;
    }
    auto fits = [&](const Int& v) { return eval(p, v) <= C; };
    if (!fits(0)) return Int(-1);
    const unsigned degree = p.empty() ? 0 : p.rbegin()->first;
    Int v;
    if (degree == 0) continue;  // constant: no bound from this piece
    const Rat p0 = p.count(0) ? p[0] : Rat(0), p1 = p.count(1) ? p[1] : Rat(0);
    if (degree == 1) {
      v = floor((C - p0) / p1);
    } else if (degree == 2) {
      const Rat p2 = p[2], disc = p1 * p1 - Rat(4) * p2 * (p0 - C);  // > 0 since p0 <= C
      const Int n = numerator(disc) * denominator(disc);
      const Rat root = Rat(boost::multiprecision::sqrt(n)) / Rat(denominator(disc));  // within 1 below sqrt(disc)
      v = floor((root - p1) / (Rat(2) * p2));
      if (v < 0) v = 0;
      while (fits(v + 1)) ++v;
      while (v > 0 && !fits(v)) --v;
    } else {  // exact bisection on a non-decreasing polynomial
      Int hi = 1;
      while (fits(hi) && hi <= limit) hi *= 2;
      Int lo = 0;  // fits(lo), !fits(hi) unless hi > limit
      while (hi - lo > 1) {
        Int mid = (lo + hi) / 2;
        (fits(mid) ? lo : hi) = mid;
      }
      v = fits(hi) ? hi : lo;
    }
    if (v < best) best = v;
  }
  return best;
}

}  // namespace plancert::passes
