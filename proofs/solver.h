// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief TRUSTED. The solver behind a small Z3-free header (Alive2's `smt/solver.h` style):
/// named queries over integer symbols, many-valued results, settings in one place, the
/// SMT-LIB 2 text of every query. Only proofs/z3_bridge.cpp includes z3++.h.
///
/// A Query claims: for every integer assignment of its symbols that satisfies their declared
/// facts (min <= x, x <= max, divisible_by | x) and the assumptions, the goal holds. The bridge
/// asserts the facts, the assumptions and the *negated* goal and asks for satisfiability:
/// `unsat` is a proof, `sat` is a counterexample, anything else is a failure (law 5).
///
/// Everything sent to Z3 is linear integer arithmetic:
/// - divisibility `n | e` is stated with explicit quotient / remainder variables
///   (`e = n*q + r, 1 <= r <= n-1` for its negation), never with a nonlinear product;
/// - a rational coefficient is cleared by multiplying the relation by the lcm of the
///   denominators; ceil / floor by a positive constant get a quotient variable with the two
///   bounding inequalities; max / min get a variable with the case constraints;
/// - `split` enumerates one symbol over its finite declared range *inside one query*
///   (a disjunction of `x = v` cases), which makes products with that symbol linear;
/// - a monomial still of degree >= 2 after that is relaxed to a fresh variable bounded by
///   the products of its symbols' bounds (sound: every real model of the original is a
///   model of the relaxation). A model of a relaxation is re-checked exactly with Expr::eval;
///   if it is not a real counterexample the answer is `unknown`, never `refuted`.
///
/// Every `sat` model is re-evaluated exactly (Expr::eval over Q) before it is reported, so a
/// reported counterexample satisfies the facts and the assumptions and violates the goal.
#pragma once

#include "core/expr.h"
#include "core/ir.h"

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::proofs {

/// Solver settings, all in one place. The rlimit (deterministic) decides; the timeout is a
/// backstop against a runaway query.
struct Settings {
  std::uint64_t rlimit = 20'000'000;  ///< Z3 resource limit per check call
  unsigned timeout_ms = 20'000;       ///< wall-clock backstop per check call
  unsigned seed = 0;                  ///< fixed random seed: reproducible answers
  std::int64_t max_split = 4096;      ///< most cases a split may enumerate
};

/// Outcome of one query. Only `proved` is a success.
enum class Verdict { proved, refuted, unknown, timeout, error };
/// "proved", "refuted", "unknown", "timeout", "error".
std::string_view to_string(Verdict v);

/// Relation of a fact.
enum class Rel { le, lt, eq, ne, ge, gt, dvd };

/// `lhs REL rhs` over integer symbols; for Rel::dvd: `modulus` divides `lhs - rhs` (there is
/// an integer q with lhs - rhs = modulus * q; a rational difference never divides).
struct Fact {
  Expr lhs;            ///< left side
  Rel rel = Rel::le;   ///< relation
  Expr rhs;            ///< right side
  Int modulus = 1;     ///< positive modulus (Rel::dvd only)
};
/// Readable text of a fact, e.g. `8 | S` or `B <= 64`.
std::string to_string(const Fact& f);
/// Exact truth value of a fact at `env`; nullopt if a symbol is unbound.
std::optional<bool> holds(const Fact& f, const std::map<std::string, Rat>& env);

/// A named claim: facts of the symbols and the assumptions imply the goal.
struct Query {
  std::string name;                    ///< stable name (also the .smt2 file name)
  std::vector<Symbol> symbols;         ///< integer unknowns with their declared facts
  std::vector<Fact> assumptions;       ///< further assumed facts
  Fact goal;                           ///< the claim
  std::string split;                   ///< symbol enumerated over its finite range ("" = none)
  std::vector<std::string> minimize;   ///< refuted: minimise these symbols in order (binary search)
};

/// Answer to a query.
struct Result {
  Verdict verdict = Verdict::error;           ///< outcome
  std::string reason;                         ///< unknown / timeout / error: why; else notes
  std::map<std::string, Rat> counterexample;  ///< refuted: exact symbol values (minimised)
  std::string smt2;                           ///< SMT-LIB 2 text of the main check
  std::string method;                         ///< linear / split / relaxed monomials used
  double seconds = 0;                         ///< wall time of all checks
  unsigned checks = 0;                        ///< solver calls (main + minimisation)
};

/// Discharges a query (never throws; solver exceptions are Verdict::error).
Result check(const Query& q, const Settings& s = {});

/// Checks SMT-LIB 2 text (e.g. a lemma of proofs/lemmas/) whose assertions state the
/// negation of a claim: unsat -> proved, sat -> refuted (no model decoding), else failure.
Result check_smt2(std::string_view text, const Settings& s = {});

}  // namespace plancert::proofs
