// SPDX-License-Identifier: Apache-2.0
// The no-drift test: every declared closed form of every registered pass equals, exactly
// (Expr ==), what the pass derives when run with symbolic B and s, at every listed
// instantiation of the other symbols. And the comparison is sensitive: a declared formula
// with one coefficient changed is reported as different.
#include "passes/formulas/formulas.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

namespace plancert::formulas {
namespace {

TEST(FormulasNoDrift, EveryDeclaredFormulaEqualsWhatItsPassDerives) {
  std::size_t n = 0;
  for (const auto& p : pass_docs())
    for (const auto& f : p.formulas)
      for (const auto& c : check_formula(p, f)) {
        ++n;
        EXPECT_TRUE(c.ok()) << describe(c);
      }
  EXPECT_GT(n, 0u);
}

// The declared value with the first coefficient of its numerator changed by one.
DeclaredFormula perturbed(DeclaredFormula f) {
  const Term& first = f.rhs.terms().front();
  Expr mono(1);
  for (const auto& fac : first.mono)
    for (unsigned k = 0; k < fac.power; ++k) mono = mono * Expr::symbol(fac.atom->name);
  f.rhs = f.rhs + mono;  // coefficient c becomes c + 1
  return f;
}

TEST(FormulasNoDrift, AChangedCoefficientIsReportedAsDrift) {
  for (const auto& p : pass_docs())
    for (const auto& f : p.formulas) {
      ASSERT_FALSE(f.rhs.terms().empty()) << p.name << " / " << f.name;
      bool symbols_only = true;
      for (const auto& fac : f.rhs.terms().front().mono) symbols_only = symbols_only && fac.atom->kind == Atom::Kind::Symbol;
      if (!symbols_only) continue;  // a node-led term: perturbing it needs more than a symbol product
      auto checks = check_formula(p, perturbed(f));
      bool any_drift = false;
      for (const auto& c : checks) any_drift = any_drift || (c.error.empty() && !c.ok());
      EXPECT_TRUE(any_drift) << p.name << " / " << f.name << ": changing a coefficient was not detected";
    }
}

TEST(FormulasRegistry, EveryPassIsDocumentedAndExercised) {
  const std::regex ident("[A-Za-z][A-Za-z0-9_]*");
  std::set<std::string> names;
  ASSERT_FALSE(pass_docs().empty());
  for (const auto& p : pass_docs()) {
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate pass " << p.name;
    EXPECT_TRUE(std::regex_match(p.name, ident)) << p.name;
    EXPECT_FALSE(p.title.empty()) << p.name;
    EXPECT_NE(p.boundary.find("->"), std::string::npos) << p.name << ": boundary should read 'A -> B'";
    EXPECT_FALSE(p.provenance.empty()) << p.name;
    EXPECT_FALSE(p.output_ir.empty()) << p.name;
    EXPECT_EQ(p.cpp_symbol.rfind("plancert::", 0), 0u) << p.name;
    EXPECT_FALSE(p.header.empty()) << p.name;
    EXPECT_FALSE(p.formulas.empty()) << p.name << " declares no formula";
    std::set<std::string> fnames;
    for (const auto& f : p.formulas) {
      EXPECT_TRUE(fnames.insert(f.name).second) << p.name << ": duplicate formula " << f.name;
      EXPECT_TRUE(std::regex_match(f.name, ident)) << p.name << " / " << f.name;
      EXPECT_FALSE(f.latex_lhs.empty()) << f.name;
      EXPECT_FALSE(f.description.empty()) << f.name;
      EXPECT_FALSE(f.derivations.empty()) << p.name << " / " << f.name << " has no derivation";
      for (const auto& d : f.derivations) {
        EXPECT_TRUE(static_cast<bool>(d.derive)) << f.name;
        EXPECT_FALSE(d.instances.empty()) << f.name << ": " << d.what;
      }
      // The denominator involves no workload symbol, and B or s occur in the numerator
      // unless the quantity is a per-parameter ratio.
      for (const auto& s : f.denominator.symbols()) EXPECT_TRUE(s != "B" && s != "s") << f.name;
    }
  }
}

TEST(FormulasInstantiate, SubstitutesWhereThenBindingsThenDivides) {
  DeclaredFormula f;
  f.name = "X";
  Expr B = Expr::symbol("B"), s = Expr::symbol("s"), h = Expr::symbol("h"), t = Expr::symbol("t"), g = Expr::symbol("B_g");
  f.rhs = Expr(6) * g * s * h * h;
  f.denominator = t;
  f.where = {{"B_g", B * Expr::symbol("m")}};
  Expr got = instantiate(f, {{"h", 4}, {"t", 3}, {"m", 2}});
  EXPECT_EQ(got, Expr(64) * B * s);  // 6 * 2 * 16 / 3 = 64
  EXPECT_THROW(instantiate(f, {{"h", 4}, {"t", 3}}), std::invalid_argument);           // m unbound
  EXPECT_THROW(instantiate(f, {{"h", 4}, {"m", 2}}), std::invalid_argument);           // t unbound
  EXPECT_THROW(instantiate(f, {{"h", 4}, {"t", 0}, {"m", 2}}), std::invalid_argument);  // zero denominator
}

TEST(FormulasSubstitute, ReachesInsideNodes) {
  Expr a = Expr::symbol("a"), b = Expr::symbol("b");
  Expr e = Expr::ceil_div(a + Expr(1), b) * a;
  Expr r = substitute(e, [](std::string_view n) -> std::optional<Expr> { return n == "b" ? std::optional<Expr>(Expr(1)) : std::nullopt; });
  EXPECT_EQ(r, (a + Expr(1)) * a);
  Expr m = substitute(Expr::max(a, b), [](std::string_view n) -> std::optional<Expr> { return n == "a" ? std::optional<Expr>(Expr(3)) : Expr(5); });
  EXPECT_EQ(m, Expr(5));
}

}  // namespace
}  // namespace plancert::formulas
