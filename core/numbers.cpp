// SPDX-License-Identifier: Apache-2.0
#include "core/numbers.h"

#include <stdexcept>

namespace plancert {

Rat make_rat(const Int& num, const Int& den) {
  if (den == 0) throw std::domain_error("rational with zero denominator");
  if (den < 0) return Rat(Int(-num)) / Rat(Int(-den));
  return Rat(num) / Rat(den);
}

std::optional<Int> parse_int(std::string_view t) {
  std::string_view digits = t;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || digits.size() > kMaxNumberDigits) return std::nullopt;
  if (digits.size() > 1 && digits.front() == '0') return std::nullopt;
  if (digits.size() != t.size() && digits == "0") return std::nullopt;  // "-0"
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  if (digits.size() <= 18) {  // fast path: fits an int64
    long long v = 0;
    for (char c : digits) v = v * 10 + (c - '0');
    return Int(digits.size() == t.size() ? v : -v);
  }
  return Int(std::string(t));
}

std::optional<Rat> parse_rat(std::string_view t) {
  auto slash = t.find('/');
  if (slash == std::string_view::npos) {
    auto i = parse_int(t);
    if (!i) return std::nullopt;
    return Rat(std::move(*i));
  }
  auto p = parse_int(t.substr(0, slash));
  auto q = parse_int(t.substr(slash + 1));
  if (!p || !q || *q <= 1) return std::nullopt;
  Rat r = make_rat(*p, *q);
  if (boost::multiprecision::denominator(r) != *q) return std::nullopt;  // not in lowest terms
  return r;
}

std::string to_string(const Int& v) { return v.str(); }

std::string to_string(const Rat& v) { return v.str(); }  // Boost writes `p`, or `p/q` when q != 1

Int floor(const Rat& v) {
  const Int& n = boost::multiprecision::numerator(v);
  const Int& d = boost::multiprecision::denominator(v);
  Int q = n / d;  // truncates toward zero
  if (n % d != 0 && n < 0) q -= 1;
  return q;
}

Int ceil(const Rat& v) { return -floor(-v); }

}  // namespace plancert
