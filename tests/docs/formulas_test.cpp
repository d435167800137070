// SPDX-License-Identifier: Apache-2.0
// The no-drift test: every declared closed form of every registered pass equals, exactly
// (Expr ==), what the pass derives when run with symbolic B and s, at every listed
// instantiation of the other symbols. And the comparison is sensitive: a declared formula
// with one coefficient changed is reported as different.
#include "passes/formulas/formulas.h"

#include <gtest/gtest.h>

#include <algorithm>
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

// An atom as an Expr (a symbol, or the node rebuilt from its arguments).
Expr atom_expr(const Atom& a) {
  switch (a.kind) {
    case Atom::Kind::Symbol: return Expr::symbol(a.name);
    case Atom::Kind::Ceil: return Expr::ceil_div(a.args[0], a.args[1]);
    case Atom::Kind::Floor: return Expr::floor_div(a.args[0], a.args[1]);
    case Atom::Kind::Max: return Expr::max(a.args[0], a.args[1]);
    case Atom::Kind::Min: return Expr::min(a.args[0], a.args[1]);
  }
  return Expr();
}

// The declared value with the first coefficient of its numerator changed by one (a zero
// numerator becomes 1).
DeclaredFormula perturbed(DeclaredFormula f) {
  if (f.rhs.terms().empty()) {
    f.rhs = Expr(1);
    return f;
  }
  const Term& first = f.rhs.terms().front();
  Expr mono(1);
  for (const auto& fac : first.mono)
    for (unsigned k = 0; k < fac.power; ++k) mono = mono * atom_expr(*fac.atom);
  f.rhs = f.rhs + mono;  // coefficient c becomes c + 1
  return f;
}

TEST(FormulasNoDrift, PerturbingChangesTheFirstCoefficient) {
  const Expr a = Expr::symbol("a"), r = Expr::symbol("r");
  DeclaredFormula f;
  f.rhs = a * Expr::ceil_div(r, a) + Expr(3);
  EXPECT_EQ(perturbed(f).rhs, Expr(2) * a * Expr::ceil_div(r, a) + Expr(3));
  f.rhs = Expr();
  EXPECT_EQ(perturbed(f).rhs, Expr(1));
}

TEST(FormulasNoDrift, AChangedCoefficientIsReportedAsDrift) {
  for (const auto& p : pass_docs())
    for (const auto& f : p.formulas) {
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
      // The denominator involves no workload symbol.
      EXPECT_FALSE(f.workload.empty()) << f.name;
      for (const auto& s : f.denominator.symbols())
        EXPECT_TRUE(std::find(f.workload.begin(), f.workload.end(), s) == f.workload.end()) << p.name << " / " << f.name << ": workload symbol " << s << " in the denominator";
    }
  }
}

// The six passes of the seed (training and inference distribution and portable planning, the
// two reference binders) and the model lowering are on the formulas page, in pipeline order.
TEST(FormulasRegistry, TheSeedPassesAreDocumented) {
  std::vector<std::string> names;
  for (const auto& p : pass_docs()) names.push_back(p.name);
  const std::vector<std::string> expected = {"BuildModelIR",
                                             "DistributeTransformerTrainingPass",
                                             "PlanTransformerTrainingPass",
                                             "DistributeTransformerInferencePass",
                                             "PlanTransformerInferencePass",
                                             "BindReferenceQueueTargetPass",
                                             "BindReferenceSlotTargetPass"};
  EXPECT_EQ(names, expected);
}

TEST(FormulasInstantiate, InferenceWorkloadSymbolsStaySymbolic) {
  DeclaredFormula f;
  f.name = "C";
  const Expr b = Expr::symbol("b"), c = Expr::symbol("c"), t = Expr::symbol("t");
  f.rhs = Expr(2) * b * Expr::symbol("q") * c;
  f.denominator = t;
  f.where = {{"q", c}};
  EXPECT_THROW(instantiate(f, {{"t", 2}}), std::invalid_argument);  // b and c are not B and s
  f.workload = {"b", "c"};
  EXPECT_EQ(instantiate(f, {{"t", 2}}), b * c * c);
  EXPECT_EQ(instantiate(f, {{"t", 2}, {"b", 3}, {"c", 5}}), Expr(75));  // a derivation at concrete values
}

TEST(FormulasCompare, ContentOfMaxAndMinArgumentsIsFactoredOut) {
  const Expr b = Expr::symbol("b"), c = Expr::symbol("c");
  const Rat half = make_rat(1, 2);
  // max(3b/2, bc/2) and max(3b, bc)/2 denote the same function and compare equal.
  EXPECT_NE(Expr::max(Expr(3) * b * Expr(half), b * c * Expr(half)), Expr::max(Expr(3) * b, b * c) * Expr(half));
  EXPECT_EQ(comparable(Expr::max(Expr(3) * b * Expr(half), b * c * Expr(half))), comparable(Expr::max(Expr(3) * b, b * c) * Expr(half)));
  EXPECT_EQ(comparable(Expr(4) * Expr::min(Expr(6) * b, Expr(4) * c)), Expr(8) * Expr::min(Expr(3) * b, Expr(2) * c));
  // Nested nodes, innermost first; other nodes and polynomials are kept.
  EXPECT_EQ(comparable(Expr::max(Expr::max(Expr(2) * b, Expr(2) * c), Expr(4) * b * c)), Expr(2) * Expr::max(Expr::max(b, c), Expr(2) * b * c));
  EXPECT_EQ(comparable(Expr::ceil_div(Expr(2) * b, Expr(4))), Expr::ceil_div(Expr(2) * b, Expr(4)));
  EXPECT_EQ(comparable(Expr(3) * b * b + c), Expr(3) * b * b + c);
  // Different functions stay different.
  EXPECT_NE(comparable(Expr::max(Expr(3) * b, c)), comparable(Expr::max(b, Expr(3) * c)));
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
