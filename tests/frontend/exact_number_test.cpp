// SPDX-License-Identifier: Apache-2.0
#include "core/diag.h"
#include "passes/frontend/document.h"
#include "passes/frontend/exact_number.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace plancert::frontend {
namespace {

Rational q(long long n, long long d) { return make_rational(Int(n), Int(d)); }

TEST(ExactDecimal, Decimals) {
  EXPECT_EQ(parse_exact_decimal("312"), Rational(312));
  EXPECT_EQ(parse_exact_decimal("312.0"), Rational(312));
  EXPECT_EQ(parse_exact_decimal("0.85"), q(17, 20));
  EXPECT_EQ(parse_exact_decimal("0.1"), q(1, 10));
  EXPECT_EQ(parse_exact_decimal("5e-6"), q(1, 200000));
  EXPECT_EQ(parse_exact_decimal("0.00001"), q(1, 100000));
  EXPECT_EQ(parse_exact_decimal("1.5E+3"), Rational(1500));
  EXPECT_EQ(parse_exact_decimal("1.50e3"), Rational(1500));
  EXPECT_EQ(parse_exact_decimal("-0.25"), q(-1, 4));
  EXPECT_EQ(parse_exact_decimal("+2.5"), q(5, 2));
  EXPECT_EQ(parse_exact_decimal(".5"), q(1, 2));
  EXPECT_EQ(parse_exact_decimal("5."), Rational(5));
  EXPECT_EQ(parse_exact_decimal("-0"), Rational(0));
  EXPECT_EQ(parse_exact_decimal("0e99999"), Rational(0));
  EXPECT_EQ(parse_exact_decimal("123456789012345678901234567890"),
            Rational(Int("123456789012345678901234567890")));
  EXPECT_EQ(parse_exact_decimal("1e30"), Rational(Int("1000000000000000000000000000000")));
}

TEST(ExactDecimal, Fractions) {
  EXPECT_EQ(parse_exact_decimal("7/20"), q(7, 20));
  EXPECT_EQ(parse_exact_decimal("-3/6"), q(-1, 2));
  EXPECT_EQ(parse_exact_decimal("4/2"), Rational(2));
  EXPECT_THROW((void)parse_exact_decimal("1/0"), std::domain_error);
  // Leading zeros are decimal, not an octal prefix.
  EXPECT_EQ(parse_exact_decimal("010/3"), q(10, 3));
  EXPECT_EQ(parse_exact_decimal("09/010"), q(9, 10));
  EXPECT_THROW((void)parse_exact_decimal("1/00"), std::domain_error);
}

TEST(ExactDecimal, Rejects) {
  for (const char* bad : {"", "-", "+", ".", "abc", "1e", "1e+", "1.2.3", "--1", "1/-2", "1/", "/2", "1.5/2",
                          "0x10", "1_000", "inf", "nan", " 1", "1 "}) {
    EXPECT_THROW((void)parse_exact_decimal(bad), std::invalid_argument) << bad;
  }
  EXPECT_THROW((void)parse_exact_decimal("1e99999"), std::out_of_range);
  EXPECT_THROW((void)parse_exact_decimal("1e-4097"), std::out_of_range);
  EXPECT_THROW((void)parse_exact_decimal("1e100000000000000000000"), std::out_of_range);
  EXPECT_NO_THROW((void)parse_exact_decimal("1e-4096"));
}

TEST(ExactDecimal, MakeRationalNormalisesSign) {
  EXPECT_EQ(make_rational(Int(1), Int(-1)), Rational(-1));
  EXPECT_EQ(make_rational(Int(-6), Int(-4)), q(3, 2));
  EXPECT_THROW((void)make_rational(Int(1), Int(0)), std::domain_error);
}

TEST(ExactDecimal, Text) {
  EXPECT_EQ(to_text(q(-7, 2)), "-7/2");
  EXPECT_EQ(to_text(Rational(123)), "123");
  EXPECT_TRUE(is_integer(Rational(4)));
  EXPECT_FALSE(is_integer(q(1, 3)));
}

}  // namespace
}  // namespace plancert::frontend

// The readers keep every number as its literal text: check that the TOML
// reader recovers float literals exactly, also after multi-byte characters.

namespace plancert::frontend::detail {
namespace {

TEST(DocumentReaders, TomlFloatLiteralsAreRecoveredFromSource) {
  const Node root = parse_toml("\"\xC3\xA9t\xC3\xA9\" = { x = \"\xC3\xA9\xC3\xA9\", y = 0.1 }\n"
                               "z = [ 1.5e3, # comment 2.0\n\t-2_0.0_5, 3E-2 ]\nw = +inf\nv = 0x10\n",
                               "t.toml");
  const Node* ete = root.find("\xC3\xA9t\xC3\xA9");
  ASSERT_NE(ete, nullptr);
  ASSERT_NE(ete->find("y"), nullptr);
  EXPECT_EQ(ete->find("y")->kind, Node::Kind::Decimal);
  EXPECT_EQ(ete->find("y")->text, "0.1");
  const Node* z = root.find("z");
  ASSERT_NE(z, nullptr);
  ASSERT_EQ(z->items.size(), 3U);
  EXPECT_EQ(z->items[0].text, "1.5e3");
  EXPECT_EQ(z->items[1].text, "-20.05");
  EXPECT_EQ(z->items[2].text, "3E-2");
  EXPECT_EQ(root.find("w")->text, "inf");
  EXPECT_EQ(root.find("v")->kind, Node::Kind::Integer);
  EXPECT_EQ(root.find("v")->text, "16");
}

TEST(DocumentReaders, JsonNumbersKeepTheirText) {
  const Node root = parse_json("\xEF\xBB\xBF{\"a\": 1e-5, \"b\": 123456789012345678901234567890, \"c\": -7, \"d\": 0.10}",
                               "t.json");
  EXPECT_EQ(root.find("a")->kind, Node::Kind::Decimal);
  EXPECT_EQ(root.find("a")->text, "1e-5");
  EXPECT_EQ(root.find("b")->kind, Node::Kind::Integer);
  EXPECT_EQ(root.find("b")->text, "123456789012345678901234567890");
  EXPECT_EQ(root.find("c")->text, "-7");
  EXPECT_EQ(root.find("d")->text, "0.10");
}

TEST(DocumentReaders, MalformedInputs) {
  for (const char* bad : {"", "{", "{\"a\" 1}", "{\"a\": 01}", "{\"a\": .5}", "{\"a\": NaN}", "{\"a\": \"\xFF\"}",
                          "{} {}", "{\"a\": 1,}"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW((void)parse_json(bad, "t.json"), InputError);
  }
  try {
    (void)parse_json("{\n  \"a\": tru\n}", "t.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diag.code, "CONFIG-1");
    EXPECT_NE(std::string(e.what()).find("t.json: syntax error: parse error at line "), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace plancert::frontend::detail
