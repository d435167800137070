// SPDX-License-Identifier: Apache-2.0
#include "passes/formulas/latex.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <tuple>

namespace plancert::formulas {
namespace {

// A factor with a signed power (negative powers only in the term-by-term form).
struct RFactor {
  const Atom* atom;
  long power;
};
// A term with its coefficient and factors.
struct RTerm {
  Rat coef;
  std::vector<RFactor> factors;
};

std::vector<RTerm> terms_of(const Expr& e) {
  std::vector<RTerm> out;
  for (const auto& t : e.terms()) {
    RTerm r{t.coef, {}};
    for (const auto& f : t.mono) r.factors.push_back({f.atom.get(), static_cast<long>(f.power)});
    out.push_back(std::move(r));
  }
  return out;
}

// Sort key of an atom: listed symbols by their position, then other symbols, then nodes.
std::tuple<int, std::size_t, std::string> rank(const Atom& a, const LatexStyle& style) {
  if (a.kind == Atom::Kind::Symbol) {
    auto it = std::find(style.order.begin(), style.order.end(), a.name);
    if (it != style.order.end()) return {0, static_cast<std::size_t>(it - style.order.begin()), a.text};
    return {1, 0, a.text};
  }
  return {2, 0, a.text};
}

std::string latex_atom(const Atom& a, const LatexStyle& style) {
  switch (a.kind) {
    case Atom::Kind::Symbol: return latex_symbol(a.name, style);
    case Atom::Kind::Ceil:
      return "\\left\\lceil \\frac{" + to_latex(a.args[0], style) + "}{" + to_latex(a.args[1], style) + "} \\right\\rceil";
    case Atom::Kind::Floor:
      return "\\left\\lfloor \\frac{" + to_latex(a.args[0], style) + "}{" + to_latex(a.args[1], style) + "} \\right\\rfloor";
    case Atom::Kind::Max: return "\\max\\left(" + to_latex(a.args[0], style) + ", " + to_latex(a.args[1], style) + "\\right)";
    case Atom::Kind::Min: return "\\min\\left(" + to_latex(a.args[0], style) + ", " + to_latex(a.args[1], style) + "\\right)";
  }
  throw std::logic_error("unknown atom kind");
}

// The factors with positive (or, with `negative`, negative) power, in display order.
std::string monomial(std::vector<RFactor> fs, bool negative, const LatexStyle& style) {
  std::stable_sort(fs.begin(), fs.end(), [&](const RFactor& x, const RFactor& y) { return rank(*x.atom, style) < rank(*y.atom, style); });
  std::string out;
  for (const auto& f : fs) {
    long p = negative ? -f.power : f.power;
    if (p <= 0) continue;
    if (!out.empty()) out += ' ';
    out += latex_atom(*f.atom, style);
    if (p > 1) out += "^{" + std::to_string(p) + "}";
  }
  return out;
}

std::string join(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& p : parts) {
    if (p.empty()) continue;
    if (!out.empty()) out += ' ';
    out += p;
  }
  return out;
}

// One term without its sign: coefficient |c| = p/q, factors with positive powers above the
// line, factors with negative powers below it.
std::string unsigned_term(const Rat& c, const std::vector<RFactor>& fs, const LatexStyle& style) {
  Rat a = c < 0 ? Rat(-c) : c;
  Int p = boost::multiprecision::numerator(a), q = boost::multiprecision::denominator(a);
  std::string up = monomial(fs, false, style), down = monomial(fs, true, style);
  std::string top = join({p != 1 || up.empty() ? to_string(p) : std::string(), up});
  std::string bottom = join({q != 1 ? to_string(q) : std::string(), down});
  if (bottom.empty()) return top;
  return "\\frac{" + top + "}{" + bottom + "}";
}

std::string sum(const std::vector<RTerm>& terms, const LatexStyle& style) {
  if (terms.empty()) return "0";
  std::string out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const bool neg = terms[i].coef < 0;
    if (i == 0) out += neg ? "-" : "";
    else out += neg ? " - " : " + ";
    out += unsigned_term(terms[i].coef, terms[i].factors, style);
  }
  return out;
}

// Positive rational content: gcd of the numerators over lcm of the denominators.
Rat content(const std::vector<RTerm>& terms) {
  Int g = 0, l = 1;
  for (const auto& t : terms) {
    g = boost::multiprecision::gcd(g, Int(boost::multiprecision::abs(boost::multiprecision::numerator(t.coef))));
    l = boost::multiprecision::lcm(l, Int(boost::multiprecision::denominator(t.coef)));
  }
  return make_rat(g, l);
}

// Common monomial: every atom that occurs in all terms, with its least power.
std::vector<RFactor> common(const std::vector<RTerm>& terms) {
  std::vector<RFactor> out;
  if (terms.empty()) return out;
  for (const auto& f : terms.front().factors) {
    long least = f.power;
    bool everywhere = true;
    for (const auto& t : terms) {
      auto it = std::find_if(t.factors.begin(), t.factors.end(), [&](const RFactor& g) { return g.atom->text == f.atom->text; });
      if (it == t.factors.end()) { everywhere = false; break; }
      least = std::min(least, it->power);
    }
    if (everywhere) out.push_back({f.atom, least});
  }
  return out;
}

// Divides every term by c * monomial (exactly; the caller guarantees divisibility).
std::vector<RTerm> divide(std::vector<RTerm> terms, const Rat& c, const std::vector<RFactor>& m) {
  for (auto& t : terms) {
    t.coef /= c;
    for (const auto& d : m)
      for (auto& f : t.factors)
        if (f.atom->text == d.atom->text) f.power -= d.power;
    std::erase_if(t.factors, [](const RFactor& f) { return f.power == 0; });
  }
  return terms;
}

void require_nonzero(const Expr& den) {
  if (den.terms().empty()) throw std::domain_error("LaTeX rendering: zero denominator");
}

}  // namespace

LatexStyle LatexStyle::standard() {
  LatexStyle s;
  s.order = {"B_g", "B", "b", "m", "d_p", "q", "c", "s", "l", "h", "H", "a", "n", "k", "d", "F", "V", "p", "v", "t", "e"};
  // The buffer recurrence of the reference binders: o_{i-1} and s_{i-1} are symbols of the
  // formula for o_i (a symbol name cannot hold "i-1").
  s.names = {{"o_prev", "o_{i-1}"}, {"s_prev", "s_{i-1}"}};
  return s;
}

std::string latex_symbol(std::string_view name, const LatexStyle& style) {
  if (auto it = style.names.find(name); it != style.names.end()) return it->second;
  static constexpr std::array<std::string_view, 24> kGreek = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
                                                             "iota", "kappa", "lambda", "mu", "nu", "xi", "pi", "rho",
                                                             "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "Omega"};
  if (name.size() == 1) return std::string(name);
  if (auto u = name.find('_'); u != std::string_view::npos && u > 0 && u + 1 < name.size()) {
    std::string_view sub = name.substr(u + 1);
    return latex_symbol(name.substr(0, u), style) + "_{" + (sub.size() == 1 ? std::string(sub) : "\\mathrm{" + std::string(sub) + "}") + "}";
  }
  if (std::find(kGreek.begin(), kGreek.end(), name) != kGreek.end()) return "\\" + std::string(name);
  return "\\mathit{" + std::string(name) + "}";
}

std::string to_latex(const Expr& e, const LatexStyle& style) { return sum(terms_of(e), style); }

std::string to_latex_fraction(const Expr& num, const Expr& den, const LatexStyle& style) {
  require_nonzero(den);
  if (num.terms().empty()) return "0";
  auto n = terms_of(num), d = terms_of(den);
  Rat cn = content(n), cd = content(d);
  auto gn = common(n), gd = common(d);
  n = divide(std::move(n), cn, gn);
  d = divide(std::move(d), cd, gd);
  // Cancel the atoms the two common monomials share.
  for (auto& f : gn)
    for (auto& g : gd)
      if (f.atom->text == g.atom->text) {
        long c = std::min(f.power, g.power);
        f.power -= c;
        g.power -= c;
      }
  std::erase_if(gn, [](const RFactor& f) { return f.power == 0; });
  std::erase_if(gd, [](const RFactor& f) { return f.power == 0; });
  Rat k = cn / cd;
  bool negative = false;
  auto side = [&](const Int& coef, const std::vector<RFactor>& mono, const std::vector<RTerm>& rest) {
    std::string prefix = join({coef != 1 ? to_string(coef) : std::string(), monomial(mono, false, style)});
    if (rest.size() == 1) {
      if (rest.front().coef < 0) negative = !negative;  // the rest is the constant 1 or -1
      return prefix;
    }
    if (prefix.empty()) return sum(rest, style);
    return prefix + " \\left(" + sum(rest, style) + "\\right)";
  };
  std::string top = side(boost::multiprecision::numerator(k), gn, n);
  std::string bottom = side(boost::multiprecision::denominator(k), gd, d);
  if (top.empty()) top = "1";
  std::string body = bottom.empty() ? top : "\\frac{" + top + "}{" + bottom + "}";
  return negative ? "-" + body : body;
}

std::string to_latex_expanded(const Expr& num, const Expr& den, const LatexStyle& style) {
  require_nonzero(den);
  if (den.terms().size() != 1) return to_latex_fraction(num, den, style);
  const RTerm d = terms_of(den).front();
  auto n = terms_of(num);
  for (auto& t : n) {
    t.coef /= d.coef;
    for (const auto& g : d.factors) {
      auto it = std::find_if(t.factors.begin(), t.factors.end(), [&](const RFactor& f) { return f.atom->text == g.atom->text; });
      if (it != t.factors.end()) it->power -= g.power;
      else t.factors.push_back({g.atom, -g.power});
    }
    std::erase_if(t.factors, [](const RFactor& f) { return f.power == 0; });
  }
  return sum(n, style);
}

}  // namespace plancert::formulas
