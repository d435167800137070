// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Symbolic quantities: multivariate polynomials over Q in canonical form, whose
/// atoms are integer symbols or the non-polynomial nodes ceil-division, floor-division,
/// max and min.
#pragma once

#include "core/numbers.h"

#include <boost/smart_ptr/intrusive_ptr.hpp>
#include <boost/smart_ptr/intrusive_ref_counter.hpp>

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace plancert {

class Expr;

/// An atom of a monomial: an integer-valued symbol (B, S, ...) or a non-polynomial node.
struct Atom {
  /// What the atom is.
  enum class Kind : unsigned char { Symbol, Ceil, Floor, Max, Min };
  Kind kind;                ///< symbol or node kind
  std::string name;         ///< the symbol name (Kind::Symbol only)
  std::vector<Expr> args;   ///< the two arguments of a node (ceil/floor: numerator, denominator)
  std::string text;         ///< canonical text, the atom's identity and sort key
  bool integral = true;     ///< the atom takes only integer values (symbols are integers)
};

/// One factor `atom^power` of a monomial (power >= 1).
struct Factor {
  std::shared_ptr<const Atom> atom;  ///< the atom (immutable, shared)
  unsigned power;                    ///< exponent, at least 1
};

/// A product of factors sorted by atom text; empty for the constant monomial.
using Monomial = std::vector<Factor>;

/// One term `coef * monomial` with a non-zero coefficient.
struct Term {
  Monomial mono;  ///< the monomial
  Rat coef;       ///< its non-zero rational coefficient
};

/// The most terms a product or a sum of exact quantities may have (SYM-3): 7 shape dimensions of
/// 10 symbols each would multiply out to 10^7 terms, and the input's size bounds no product.
inline constexpr std::size_t kMaxTerms = std::size_t{1} << 16;
/// Thrown by a product or sum over kMaxTerms terms; the verifiers report it as SYM-3 (not decided).
struct TooManyTerms : std::length_error { using std::length_error::length_error; };

/// A symbolic exact quantity in canonical form. Two Exprs are equal exactly when their
/// canonical texts are equal, which decides polynomial identity over Q (with the
/// non-polynomial nodes treated as opaque atoms after local simplification).
///
/// Canonical text (what the canonical JSON stores): terms by descending total degree, then
/// by their factors' texts; `*` between factors, `^k` for powers, coefficient first
/// (`3/2*B*S^2-7`), nodes written `ceil(a,b)`, `floor(a,b)`, `max(a,b)`, `min(a,b)`.
class Expr {
 public:
  /// Zero.
  Expr() = default;
  /// A constant.
  Expr(Rat c);  // NOLINT(google-explicit-constructor): exact constants convert implicitly
  /// A constant.
  Expr(const Int& c) : Expr(Rat(c)) {}
  /// A constant.
  Expr(long long c) : Expr(Rat(c)) {}
  /// The integer symbol `name` ([A-Za-z_][A-Za-z0-9_]*, not a node name).
  static Expr symbol(std::string_view name);
  /// \f$\lceil a / b \rceil\f$ (b must not be the constant zero).
  static Expr ceil_div(const Expr& a, const Expr& b) { return divide(Atom::Kind::Ceil, a, b); }
  /// \f$\lfloor a / b \rfloor\f$ (b must not be the constant zero).
  static Expr floor_div(const Expr& a, const Expr& b) { return divide(Atom::Kind::Floor, a, b); }
  /// \f$\max(a, b)\f$.
  static Expr max(const Expr& a, const Expr& b);
  /// \f$\min(a, b)\f$.
  static Expr min(const Expr& a, const Expr& b);

  /// Parses text and returns the canonical Expr, or nullopt with `*error` set.
  /// Accepts any well-formed text in the canonical grammar, canonical or not.
  static std::optional<Expr> parse(std::string_view text, std::string* error);
  /// Parses text and additionally requires that it is already in canonical form.
  static std::optional<Expr> parse_canonical(std::string_view text, std::string* error);

  /// The canonical text. Built once per representation and kept in it (an Expr and its copies
  /// are therefore not for concurrent use; plancert is single-threaded).
  [[nodiscard]] std::string str() const;
  /// True when the expression has no atoms.
  [[nodiscard]] bool is_constant() const { return terms().empty() || (terms().size() == 1 && terms()[0].mono.empty()); }
  /// The constant value, if constant.
  [[nodiscard]] std::optional<Rat> constant() const;
  /// The terms, in canonical order.
  [[nodiscard]] const std::vector<Term>& terms() const { static const std::vector<Term> none; return rep_ ? rep_->terms : none; }
  /// Evaluates with a binding for each symbol; nullopt if a symbol is unbound or a node
  /// divides by zero.
  [[nodiscard]] std::optional<Rat> eval(const std::function<std::optional<Rat>(std::string_view)>& env) const;
  /// Names of all symbols occurring anywhere (sorted, unique).
  [[nodiscard]] std::vector<std::string> symbols() const;

  /// The sum of `parts`, normalised once: adding n parts one by one copies and sorts the growing
  /// sum n times, quadratic in its terms (a memory fact over 16,000 buffers of distinct sizes: 134 s).
  static Expr sum(const std::vector<Expr>& parts) { Expr r; for (const Expr& e : parts) r.mut().insert(r.mut().end(), e.terms().begin(), e.terms().end()); return r.normalize(), r; }
  /// Sum.
  friend Expr operator+(const Expr& a, const Expr& b);
  /// Difference.
  friend Expr operator-(const Expr& a, const Expr& b);
  /// Product.
  friend Expr operator*(const Expr& a, const Expr& b);
  /// Negation.
  friend Expr operator-(const Expr& a);
  /// Division by a non-zero constant.
  friend Expr operator/(const Expr& a, const Rat& b);
  /// Structural (= mathematical, for polynomials) equality.
  friend bool operator==(const Expr& a, const Expr& b);
  Expr& operator+=(const Expr& b) { return *this = *this + b; }  ///< in-place sum
  Expr& operator*=(const Expr& b) { return *this = *this * b; }  ///< in-place product

 private:
  void normalize();
  static Expr node(Atom::Kind kind, Expr a, Expr b);
  static Expr of(std::shared_ptr<const Atom> a);  // the atom itself, coefficient 1
  static Expr divide(Atom::Kind kind, const Expr& a, const Expr& b);  // ceil or floor of a / b
  std::vector<Term>& mut();  // the terms, writable: copied first while another Expr shares them
  // Immutable while shared, so copies are cheap and equal texts can share one representation
  // (the decoder does that for repeated quantities); null for zero. The count lives in the
  // representation, so an Expr is one pointer (a Work of seven quantities, 56 bytes); it is
  // counted without atomic instructions, plancert being single-threaded.
  // text: the canonical text once str() has built it (cleared by mut()), so a shared quantity is
  // formatted once however many entities carry it.
  struct Rep : boost::intrusive_ref_counter<Rep, boost::thread_unsafe_counter> { explicit Rep(std::vector<Term> t) : terms(std::move(t)) {} std::vector<Term> terms; std::string text; };
  boost::intrusive_ptr<Rep> rep_;
};

}  // namespace plancert
