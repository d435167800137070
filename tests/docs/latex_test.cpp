// SPDX-License-Identifier: Apache-2.0
// The Expr -> LaTeX renderer of the formulas page.
#include "passes/formulas/latex.h"

#include <gtest/gtest.h>

namespace plancert::formulas {
namespace {

Expr S(const char* n) { return Expr::symbol(n); }

TEST(Latex, Symbols) {
  const auto st = LatexStyle::standard();
  EXPECT_EQ(latex_symbol("h", st), "h");
  EXPECT_EQ(latex_symbol("d_p", st), "d_{p}");
  EXPECT_EQ(latex_symbol("B_g", st), "B_{g}");
  EXPECT_EQ(latex_symbol("W_QKV", st), "W_{\\mathrm{QKV}}");
  EXPECT_EQ(latex_symbol("alpha", st), "\\alpha");
  EXPECT_EQ(latex_symbol("seq", st), "\\mathit{seq}");
  LatexStyle custom = st;
  custom.names["seq"] = "S";
  EXPECT_EQ(latex_symbol("seq", custom), "S");
}

TEST(Latex, ExpandedPolynomial) {
  Expr B = S("B"), s = S("s"), h = S("h");
  EXPECT_EQ(to_latex(Expr()), "0");
  EXPECT_EQ(to_latex(Expr(7)), "7");
  EXPECT_EQ(to_latex(Expr(-7)), "-7");
  EXPECT_EQ(to_latex(Expr(6) * B * s * h * h), "6 B s h^{2}");
  EXPECT_EQ(to_latex(B * s - Expr(1)), "B s - 1");
  EXPECT_EQ(to_latex(Expr(make_rat(1, 2)) * B), "\\frac{B}{2}");
  EXPECT_EQ(to_latex(Expr(make_rat(-3, 2)) * B * B + s), "-\\frac{3 B^{2}}{2} + s");
}

TEST(Latex, Nodes) {
  Expr a = S("a"), b = S("b");
  EXPECT_EQ(to_latex(Expr::ceil_div(a, b)), "\\left\\lceil \\frac{a}{b} \\right\\rceil");
  EXPECT_EQ(to_latex(Expr::floor_div(a, b)), "\\left\\lfloor \\frac{a}{b} \\right\\rfloor");
  EXPECT_EQ(to_latex(Expr::max(a, Expr(16))), "\\max\\left(16, a\\right)");  // arguments in canonical order
  EXPECT_EQ(to_latex(Expr::min(a, b) * Expr::min(a, b)), "\\min\\left(a, b\\right)^{2}");
}

TEST(Latex, FactoredFraction) {
  Expr B = S("B"), s = S("s"), h = S("h"), t = S("t"), a = S("a"), dp = S("d_p");
  EXPECT_EQ(to_latex_fraction(Expr(6) * B * s * h * h, t), "\\frac{6 B s h^{2}}{t}");
  EXPECT_EQ(to_latex_fraction(B * s * h * (t - Expr(1)), t), "\\frac{B s h \\left(t - 1\\right)}{t}");
  EXPECT_EQ(to_latex_fraction(Expr(6) * dp + Expr(12), dp), "\\frac{6 \\left(d_{p} + 2\\right)}{d_{p}}");
  EXPECT_EQ(to_latex_fraction(Expr(18), Expr(1)), "18");
  EXPECT_EQ(to_latex_fraction(Expr(34) * B * s * h + Expr(5) * a * B * s * s, Expr(1)), "B s \\left(5 s a + 34 h\\right)");
  EXPECT_EQ(to_latex_fraction(Expr(3) * B * t, Expr(6) * t * t), "\\frac{B}{2 t}");  // common content and atoms cancel
  EXPECT_EQ(to_latex_fraction(-B, t), "-\\frac{B}{t}");
  EXPECT_EQ(to_latex_fraction(Expr(), t), "0");
  EXPECT_THROW(to_latex_fraction(B, Expr()), std::domain_error);
}

TEST(Latex, TermByTerm) {
  Expr B = S("B"), s = S("s"), h = S("h"), t = S("t"), dp = S("d_p");
  EXPECT_EQ(to_latex_expanded(B * s * h * (t - Expr(1)), t), "B s h - \\frac{B s h}{t}");
  EXPECT_EQ(to_latex_expanded(Expr(6) * dp + Expr(12), dp), "6 + \\frac{12}{d_{p}}");
  EXPECT_EQ(to_latex_expanded(Expr(6) * B * s * h * h, t), "\\frac{6 B s h^{2}}{t}");
  // A denominator with several terms falls back to the factored form.
  EXPECT_EQ(to_latex_expanded(B, t + Expr(1)), "\\frac{B}{t + 1}");
}

}  // namespace
}  // namespace plancert::formulas
