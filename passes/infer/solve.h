// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The exact max-batch / max-context solver: the largest integer value of one workload
/// symbol for which a memory polynomial stays within a capacity.
#pragma once

#include "core/expr.h"

#include <optional>
#include <string>
#include <vector>

namespace plancert::passes {

/// The pieces of `f` with its max(,) nodes resolved: `f` equals the maximum of the returned
/// expressions wherever every max node occurs linearly with a positive coefficient (as in a
/// memory total \f$\ldots + e\max(x, y)\f$); nullopt when some node occurs otherwise, or when
/// `f` has ceil, floor or min nodes.
std::optional<std::vector<Expr>> max_branches(const Expr& f);

/// The largest integer \f$x \in [0, \mathrm{limit}]\f$ with \f$f(x) \le C\f$, solved in exact
/// arithmetic, where f is univariate in the symbol `x` and, after max_branches(), every
/// piece is a polynomial with non-negative coefficients (so non-decreasing for \f$x \ge 0\f$).
/// Each piece \f$p\f$ gives \f$x_p = \max\{x : p(x) \le C\}\f$ in closed form for degree
/// \f$\le 2\f$ (\f$\lfloor (C - p_0)/p_1 \rfloor\f$; the positive root of
/// \f$p_2x^2 + p_1x + p_0 - C\f$ through an integer square root, corrected by evaluating
/// \f$p\f$ at the neighbouring integers) and by exact bisection above; the answer is the
/// minimum over pieces. Returns -1 when even \f$f(0) > C\f$, and nullopt when f has another
/// form (another symbol, a negative coefficient, an unsupported node).
std::optional<Int> largest_fitting(const Expr& f, const std::string& x, const Int& capacity, const Int& limit);

}  // namespace plancert::passes
