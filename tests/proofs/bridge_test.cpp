// SPDX-License-Identifier: Apache-2.0
// The trusted Z3 bridge (proofs/solver.h): a proved query, a refuted one with its minimised
// counterexample, undecided ones reported as failures, and the lemma library replayed.
#include "proofs/solver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace plancert::proofs {
namespace {

Symbol sym(const std::string& name, Int min, std::optional<Int> max, Int div = 1) {
  Symbol s;
  s.name = name;
  s.min = min;
  s.max = max;
  s.divisible_by = div;
  return s;
}
Expr X(const char* n) { return Expr::symbol(n); }

TEST(Bridge, ProvesDivisibilityFromTheDeclaredFact) {
  Query q{"sp-div", {sym("S", 1, Int(8192), 8)}, {}, {X("S"), Rel::dvd, Expr(), 4}, "", {}};
  Result r = check(q);
  EXPECT_EQ(r.verdict, Verdict::proved) << r.reason;
  EXPECT_NE(r.smt2.find("(check-sat)"), std::string::npos);
  EXPECT_NE(r.smt2.find("rlimit"), std::string::npos);
  EXPECT_EQ(r.method, "linear");
}

TEST(Bridge, RefutesDivisibilityWithTheSmallestCounterexample) {
  Query q{"sp-div-missing", {sym("S", 1, Int(8192))}, {}, {X("S"), Rel::dvd, Expr(), 8}, "", {"S"}};
  Result r = check(q);
  ASSERT_EQ(r.verdict, Verdict::refuted) << r.reason;
  EXPECT_EQ(r.counterexample.at("S"), Rat(1));  // minimised by binary search
  Query q2 = q;
  q2.symbols[0].min = 16;
  r = check(q2);
  ASSERT_EQ(r.verdict, Verdict::refuted);
  EXPECT_EQ(r.counterexample.at("S"), Rat(17));
}

TEST(Bridge, CaseSplitMakesProductsLinearAndFindsTheSmallestFailingValue) {
  // 3072*B*S + 10^6 <= 2*10^8 for S <= 2048 fails first at B = 32 (3072*32*2048 > 2*10^8 - 10^6).
  Expr total = Expr(3072) * X("B") * X("S") + Expr(1000000);
  Query q{"cap", {sym("B", 1, Int(64)), sym("S", 8, Int(2048), 8)}, {}, {total, Rel::le, Expr(200000000)}, "B", {"B", "S"}};
  Result r = check(q);
  ASSERT_EQ(r.verdict, Verdict::refuted) << r.reason;
  Int b = 1;
  while (3072 * b * 2048 + 1000000 <= 200000000) ++b;
  EXPECT_EQ(r.counterexample.at("B"), Rat(b));
  Int s = 8;
  while (3072 * b * s + 1000000 <= 200000000) s += 8;
  EXPECT_EQ(r.counterexample.at("S"), Rat(s));
  EXPECT_NE(r.method.find("case split over B (64 cases)"), std::string::npos);
  q.symbols[0].max = b - 1;
  EXPECT_EQ(check(q).verdict, Verdict::proved);
}

TEST(Bridge, RationalCoefficientsAndCeilNodes) {
  // B*S/8 is whole when 8 | S; ceil(S, 256) * 256 >= S.
  Query q{"whole", {sym("B", 1, Int(4)), sym("S", 1, Int(4096), 8)}, {}, {X("B") * X("S") / Rat(8), Rel::dvd, Expr(), 1}, "B", {}};
  EXPECT_EQ(check(q).verdict, Verdict::proved);
  Query c{"ceil", {sym("S", 1, std::nullopt)}, {}, {Expr::ceil_div(X("S"), Expr(256)) * Expr(256), Rel::ge, X("S")}, "", {}};
  EXPECT_EQ(check(c).verdict, Verdict::proved);
}

TEST(Bridge, UndecidedIsAFailureNeverAProof) {
  // S^2 >= 2*S*B is false for S = 1, B = 1 ... but S^2 is relaxed and the relaxation's
  // model is checked exactly; with no bounds on S the answer is not a proof.
  Query q{"nonlinear", {sym("S", 1, std::nullopt), sym("B", 1, std::nullopt)}, {}, {X("S") * X("S"), Rel::ge, Expr(1000) * X("B")}, "", {}};
  Result r = check(q);
  EXPECT_NE(r.verdict, Verdict::proved);
  if (r.verdict == Verdict::refuted) {  // only if the exact re-check found a real counterexample
    auto s = r.counterexample.at("S"), b = r.counterexample.at("B");
    EXPECT_LT(s * s, 1000 * b);
  } else {
    EXPECT_EQ(r.verdict, Verdict::unknown);
    EXPECT_NE(r.reason.find("spurious"), std::string::npos);
  }
  // An exhausted resource limit is a timeout, not a proof.
  Settings tiny;
  tiny.rlimit = 1;
  Query big{"tiny-rlimit", {sym("S", 1, Int(1) << 40, 8)}, {}, {X("S"), Rel::dvd, Expr(), 4}, "", {}};
  Result t = check(big, tiny);
  EXPECT_NE(t.verdict, Verdict::proved);
  EXPECT_NE(t.verdict, Verdict::refuted);
  // What cannot be stated is an error, reported as such.
  Query bad{"bad", {sym("S", 1, Int(8))}, {}, {Expr::ceil_div(X("S"), X("S")), Rel::ge, Expr(1)}, "", {}};
  Result e = check(bad);
  EXPECT_EQ(e.verdict, Verdict::error);
  EXPECT_FALSE(e.reason.empty());
}

TEST(Bridge, NonNegativityOfAPolynomialByRelaxation) {
  Expr w = Expr(4) * X("B") * X("S") * X("S") + Expr(3) * X("B") * X("S");
  Query q{"nonneg", {sym("B", 1, Int(64)), sym("S", 8, Int(8192), 8)}, {}, {w, Rel::ge, Expr()}, "", {}};
  Result r = check(q);
  EXPECT_EQ(r.verdict, Verdict::proved) << r.reason;
  EXPECT_NE(r.method.find("relaxed"), std::string::npos);
}

std::string read(const std::filesystem::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(Lemmas, EveryLemmaIsProvedAndItsPremisesAreSatisfiable) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(PLANCERT_LEMMA_DIR)) {
    if (e.path().extension() != ".smt2") continue;
    ++n;
    std::string text = read(e.path());
    Result r = check_smt2(text);
    EXPECT_EQ(r.verdict, Verdict::proved) << e.path() << ": " << r.reason;
    // Not vacuous: without the negated claim (the last assert) the premises have a model.
    auto i = text.rfind("(assert"), j = text.rfind("(check-sat)");
    ASSERT_NE(i, std::string::npos);
    Result pre = check_smt2(text.substr(0, i) + text.substr(j));
    EXPECT_EQ(pre.verdict, Verdict::refuted) << e.path() << ": premises unsatisfiable";
  }
  EXPECT_GE(n, 5);
  // Text the solver cannot parse is an error with the solver's reason, not a verdict.
  Result broken = check_smt2("(declare-const x Int)\n(assert (> x");
  EXPECT_EQ(broken.verdict, Verdict::error);
  EXPECT_FALSE(broken.reason.empty());
}

}  // namespace
}  // namespace plancert::proofs
