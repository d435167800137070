// SPDX-License-Identifier: Apache-2.0
#include "passes/frontend/exact_number.h"

#include <stdexcept>
#include <string>

namespace plancert::frontend {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads a run of decimal digits starting at `pos`; returns how many were read.
std::size_t digit_run(std::string_view s, std::size_t pos) {
  std::size_t n = 0;
  while (pos + n < s.size() && is_digit(s[pos + n])) ++n;
  return n;
}

Int pow10(int e) {
  Int r = 1;
  Int base = 10;
  unsigned u = static_cast<unsigned>(e);
  while (u != 0) {
    if ((u & 1U) != 0) r *= base;
    base *= base;
    u >>= 1U;
  }
  return r;
}

}  // namespace

Rational make_rational(const Int& num, const Int& den) {
  if (den == 0) throw std::domain_error("zero denominator");
  Rational r(num);
  r /= Rational(den);
  return r;
}

bool is_integer(const Rational& r) { return boost::multiprecision::denominator(r) == 1; }

std::string to_text(const Rational& r) {
  if (is_integer(r)) return boost::multiprecision::numerator(r).str();
  return boost::multiprecision::numerator(r).str() + "/" + boost::multiprecision::denominator(r).str();
}

Rational parse_exact_decimal(std::string_view text) {
  std::size_t pos = 0;
  bool negative = false;
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    negative = text[pos] == '-';
    ++pos;
  }
  const std::size_t int_len = digit_run(text, pos);
  std::string digits(text.substr(pos, int_len));
  pos += int_len;

  // Fraction form p/q.
  if (pos < text.size() && text[pos] == '/') {
    const std::size_t den_len = digit_run(text, pos + 1);
    if (int_len == 0 || den_len == 0 || pos + 1 + den_len != text.size())
      throw std::invalid_argument("not a number");
    if (int_len > static_cast<std::size_t>(kMaxDecimalExponent) ||
        den_len > static_cast<std::size_t>(kMaxDecimalExponent))
      throw std::out_of_range("too many digits");
    // cpp_int's string constructor reads a leading 0 as an octal prefix: strip them.
    const auto decimal = [](std::string_view d) {
      const std::size_t nz = d.find_first_not_of('0');
      return std::string(nz == std::string_view::npos ? std::string_view("0") : d.substr(nz));
    };
    Int num(decimal(digits));
    const Int den(decimal(text.substr(pos + 1, den_len)));
    if (negative) num = -num;
    return make_rational(num, den);
  }

  std::size_t frac_len = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    frac_len = digit_run(text, pos);
    digits.append(text.substr(pos, frac_len));
    pos += frac_len;
  }
  if (int_len + frac_len == 0) throw std::invalid_argument("not a number");

  long long exponent = 0;
  if (pos < text.size() && (text[pos] == 'e' || text[pos] == 'E')) {
    ++pos;
    bool exp_negative = false;
    if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
      exp_negative = text[pos] == '-';
      ++pos;
    }
    const std::size_t exp_len = digit_run(text, pos);
    if (exp_len == 0) throw std::invalid_argument("not a number");
    // Skip leading zeros, then bound the magnitude before converting.
    std::size_t first = pos;
    while (first < pos + exp_len - 1 && text[first] == '0') ++first;
    if (pos + exp_len - first > 6) throw std::out_of_range("exponent too large");
    for (std::size_t i = first; i < pos + exp_len; ++i) exponent = exponent * 10 + (text[i] - '0');
    if (exp_negative) exponent = -exponent;
    pos += exp_len;
  }
  if (pos != text.size()) throw std::invalid_argument("not a number");

  // Drop leading zeros of the mantissa (they do not count towards the limit).
  const std::size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) return Rational(0);
  digits.erase(0, nz);
  if (digits.size() > static_cast<std::size_t>(kMaxDecimalExponent)) throw std::out_of_range("too many digits");

  exponent -= static_cast<long long>(frac_len);
  if (exponent > kMaxDecimalExponent || exponent < -kMaxDecimalExponent)
    throw std::out_of_range("exponent too large");

  Int mantissa(digits);
  if (negative) mantissa = -mantissa;
  if (exponent >= 0) return Rational(mantissa * pow10(static_cast<int>(exponent)));
  return make_rational(mantissa, pow10(static_cast<int>(-exponent)));
}

}  // namespace plancert::frontend
