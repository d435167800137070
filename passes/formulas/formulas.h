// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The declared closed forms of the passes and the pass registry of the documentation.
///
/// Every pass that derives workload facts registers a PassDoc here: its name, its IR boundary,
/// the provenance of its formulas, the C++ function that implements it, and the closed forms
/// it claims (DeclaredFormula). A closed form is an exact Expr; each one carries derivation
/// hooks that run the pass itself with *symbolic* workload symbols (\f$B\f$ and \f$s\f$ for
/// training, \f$b\f$ and \f$c\f$ for inference), or at concrete values of every symbol, and
/// extract the quantity the formula describes. The no-drift test (ctest label `docs`) and
/// `plancert-docgen` compare the two exactly (Expr ==, see comparable()) at several concrete
/// values of the other symbols, and the "Pass formulae and API" page renders the *declared*
/// Expr, so the page cannot show a formula that the code does not reproduce.
///
/// Untrusted documentation support: nothing here is used by the gate.
#pragma once

#include "core/expr.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plancert::formulas {

/// Concrete values of the non-workload symbols of a formula (\f$h, F, a, t, e, \ldots\f$) at
/// one instantiation. The workload symbols (DeclaredFormula::workload) stay symbolic unless
/// the instance binds them too (a derivation at concrete values).
using Bindings = std::map<std::string, std::int64_t, std::less<>>;

/// One way the code derives a declared quantity: a hook that builds the pass's input (a model
/// and a strategy, or a plan) from the bindings, runs the pass (and the passes before it) with
/// a symbolic workload (\f$B\f$, \f$s\f$ or \f$b\f$, \f$c\f$) or at the bound values, and
/// extracts the quantity as an Expr over the workload symbols that stay unbound.
struct Derivation {
  std::string what;                               ///< the extracted quantity, reST inline text
  std::function<Expr(const Bindings&)> derive;    ///< the hook; throws std::exception on failure
  std::vector<Bindings> instances;                ///< instantiations the comparison runs at
};

/// A closed form that a pass claims: \f$\mathit{lhs} = \mathit{rhs} / \mathit{denominator}\f$.
///
/// `rhs` and `denominator` are polynomials (Expr) over the formula's symbols; the denominator
/// may only involve non-workload symbols, so that it is a non-zero constant at every
/// instantiation (Expr divides by constants only). `where` lists abbreviations that are
/// substituted, in order, before the bindings (e.g. \f$B_g = B\,m\,d_p\f$, or \f$q = 1\f$
/// for a decode step).
struct DeclaredFormula {
  std::string name;                                 ///< identifier, unique within the pass ("W_QKV")
  std::string latex_lhs;                            ///< LaTeX of the left-hand side ("W_{\\mathrm{QKV}}")
  std::string description;                          ///< what the quantity is and when it holds, reST
  Expr rhs;                                         ///< numerator of the declared value
  Expr denominator = Expr(1);                       ///< denominator of the declared value
  std::vector<std::pair<std::string, Expr>> where;  ///< abbreviations: symbol, its definition
  std::vector<Derivation> derivations;              ///< how the code derives it (at least one)
  /// The workload symbols, which may stay unbound in an instance: training's microbatch size
  /// and sequence length by default, \f$b\f$ and \f$c\f$ (batch, context) for inference.
  std::vector<std::string> workload = {"B", "s"};
};

/// The documentation record of one pass that exists in the code.
struct PassDoc {
  std::string name;                     ///< pass name, e.g. "DistributeTransformerTrainingPass"
  std::string title;                    ///< section title, e.g. "Training distribution"
  std::string boundary;                 ///< IR boundary, e.g. "ModelIR -> DistributedTaskIR"
  std::string provenance;               ///< where the formulas come from (papers, or "internal contract")
  std::string evidence;                 ///< what establishes the output besides the gate, reST
  std::string output_ir;                ///< schema of the snapshot the pass produces ("DistributedTaskIR")
  bool root = false;                    ///< committed as a root snapshot (no parent, no transition checks)
  std::string cpp_symbol;               ///< qualified C++ function for Breathe's doxygenfunction
  std::string header;                   ///< header that declares it, relative to the source root
  std::vector<std::string> references;  ///< citations, reST inline text
  std::vector<DeclaredFormula> formulas;  ///< declared closed forms (at least one)
};

/// The registry: every documented pass, in pipeline order. Built once, on first use.
const std::vector<PassDoc>& pass_docs();

/// Replaces every symbol for which `value` returns an Expr (inside ceil/floor/max/min nodes
/// too) and re-normalises; other symbols are kept.
Expr substitute(const Expr& e, const std::function<std::optional<Expr>(std::string_view)>& value);

/// The declared value of `f` at `b`: the `where` abbreviations substituted, then the bindings,
/// then divided by the (then constant) denominator. Throws std::invalid_argument when a symbol
/// other than the workload symbols of `f` stays unbound, or the denominator does not become a
/// non-zero constant.
Expr instantiate(const DeclaredFormula& f, const Bindings& b);

/// The form in which a declared and a derived value are compared: `e` with the positive
/// rational content of the two arguments of every max and min node factored out of the node,
/// innermost first (\f$\max(kx, ky) = k\max(x, y)\f$ for \f$k > 0\f$; e.g.
/// \f$\max(3bH/t, bac/t)\f$ and \f$\max(3bH, bac)/t\f$ both become
/// \f$\frac{1}{t}\max(3bH, bac)\f$ at a constant \f$t\f$). An exact identity: two Exprs
/// with equal comparable forms denote the same function. Other nodes and all polynomial parts
/// are kept as they are, so the comparison stays Expr equality.
Expr comparable(const Expr& e);

/// Outcome of one comparison of a declared formula with one derivation at one instantiation.
struct Check {
  std::string pass;      ///< PassDoc::name
  std::string formula;   ///< DeclaredFormula::name
  std::string what;      ///< Derivation::what
  Bindings instance;     ///< the bindings
  Expr declared;         ///< comparable(instantiate(formula, instance)) (zero if `error` is set)
  Expr derived;          ///< comparable() of what the hook returned (zero if `error` is set)
  std::string error;     ///< a hook or instantiation failure ("" = none)
  /// True when the comparison ran and the two are the same Expr.
  [[nodiscard]] bool ok() const { return error.empty() && declared == derived; }
};

/// Runs every derivation of `f` at every one of its instances.
std::vector<Check> check_formula(const PassDoc& pass, const DeclaredFormula& f);

/// Runs check_formula() for every formula of every registered pass.
std::vector<Check> check_all();

/// One line describing a check: "PASS / FORMULA at h=64, t=2 via WHAT: declared X, derived Y".
std::string describe(const Check& c);

}  // namespace plancert::formulas
