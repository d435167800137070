// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Exact numbers: arbitrary-precision integers and rationals, and their canonical text.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace plancert {

/// Arbitrary-precision integer (work, bytes, sizes, offsets, capacities).
using Int = boost::multiprecision::cpp_int;
/// Arbitrary-precision rational, always in lowest terms with a positive denominator.
using Rat = boost::multiprecision::cpp_rational;

/// The one factory for rationals: normalises the sign of the denominator first
/// (Boost 1.74 throws on `cpp_rational(1, -1)`). Throws std::domain_error when `den == 0`.
Rat make_rat(const Int& num, const Int& den);

/// Longest decimal text accepted for one exact number (digits), so a hostile input cannot
/// make the parser build a gigantic integer.
inline constexpr std::size_t kMaxNumberDigits = 4096;

/// Parses a canonical decimal integer: `0` or `-?[1-9][0-9]*` (no `+`, no leading zero,
/// no `-0`), at most kMaxNumberDigits digits. Returns nullopt when the text is not canonical.
std::optional<Int> parse_int(std::string_view text);

/// Parses a canonical rational: a canonical integer, or `p/q` with q > 1 and gcd(p, q) = 1.
std::optional<Rat> parse_rat(std::string_view text);

/// Canonical text of an integer (what parse_int accepts).
std::string to_string(const Int& v);
/// Canonical text of a rational: `p` when the denominator is 1, else `p/q`.
std::string to_string(const Rat& v);

/// Ceiling of a rational.
Int ceil(const Rat& v);
/// Floor of a rational.
Int floor(const Rat& v);

}  // namespace plancert
