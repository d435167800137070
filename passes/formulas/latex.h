// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief LaTeX rendering of exact symbolic quantities (Expr) for the formulas page.
///
/// Untrusted presentation code: it only formats an Expr. Every rendering is exact — the
/// rendered formula denotes the same rational function as the Expr it was made from — and
/// follows the canonical term order, so the same Expr always renders the same text.
#pragma once

#include "core/expr.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::formulas {

/// How symbols are written and in which order the factors of a monomial appear.
struct LatexStyle {
  /// Factor order inside a monomial: symbols listed here come first, in this order; the
  /// others follow in canonical (text) order, then the ceil/floor/max/min nodes.
  std::vector<std::string> order;
  /// LaTeX of a symbol, overriding the default spelling (see latex_symbol()).
  std::map<std::string, std::string, std::less<>> names;
  /// The style of the formulas page, factor order \f$B_g, B, b, m, d_p, q, c, s, l, h, H, a, n, k, d, F, V, p, v, t, e\f$;
  /// `o_prev` and `s_prev` are written \f$o_{i-1}\f$ and \f$s_{i-1}\f$.
  static LatexStyle standard();
};

/// LaTeX of one symbol: the style's override if any, else a one-letter name as it is,
/// `x_y` as `x_{y}`, a Greek letter name as its command (`alpha` as `\alpha`), and any other
/// name in `\mathit{...}`.
std::string latex_symbol(std::string_view name, const LatexStyle& style);

/// The expanded form of `e`: the sum of its terms in canonical order, each with its exact
/// rational coefficient (as `\frac{p X}{q}` when \f$q > 1\f$), e.g. `6 B s h^{2} - \frac{B}{2}`.
/// Nodes render as `\left\lceil \frac{a}{b} \right\rceil`, `\left\lfloor ... \right\rfloor`,
/// `\max\left(a, b\right)`, `\min\left(a, b\right)`.
std::string to_latex(const Expr& e, const LatexStyle& style = LatexStyle::standard());

/// The factored form of `num / den`: the positive rational content and the common monomial of
/// each side are pulled out and cancelled, the remaining polynomial is parenthesised, e.g.
/// `\frac{6 B s h^{2}}{t}` or `\frac{B s h (t - 1)}{t}`. Throws std::domain_error when `den`
/// is zero.
std::string to_latex_fraction(const Expr& num, const Expr& den, const LatexStyle& style = LatexStyle::standard());

/// The term-by-term form of `num / den` when `den` is a single term (a constant times a
/// monomial): each term of `num` divided by `den` and reduced, e.g.
/// `B s h - \frac{B s h}{t}`; otherwise the same as to_latex_fraction(). Throws
/// std::domain_error when `den` is zero.
std::string to_latex_expanded(const Expr& num, const Expr& den, const LatexStyle& style = LatexStyle::standard());

}  // namespace plancert::formulas
