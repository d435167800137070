// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Exact conversion of decimal and fraction text to rationals.
///
/// Configuration files write quantities such as `312.0`, `0.85`, `5e-6` or
/// `80`; a binary floating-point value cannot represent most of them, so the
/// loaders never let one exist: they read the literal's text and convert it
/// here, exactly, to a `cpp_rational`.
#pragma once

#include "passes/frontend/configs.h"

#include <string_view>

namespace plancert::frontend {

/// Largest decimal exponent (after folding in the fraction digits) that
/// parse_exact_decimal() accepts, and the most digits it reads. Larger inputs
/// are rejected instead of building numbers with millions of digits.
inline constexpr int kMaxDecimalExponent = 4096;

/// Builds num/den through a sign-normalising path (Boost 1.74 throws on
/// `cpp_rational(1, -1)`). Throws std::domain_error when `den` is zero.
Rational make_rational(const Int& num, const Int& den);

/// Converts a number literal to its exact value. Accepted forms:
///   - decimal: `[+-]DIGITS[.DIGITS][(e|E)[+-]DIGITS]` and `[+-].DIGITS...`,
///     `[+-]DIGITS.` (JSON, TOML and C spellings; `_` digit separators are not
///     accepted here: the TOML reader strips them first);
///   - fraction: `[+-]DIGITS/DIGITS` with a non-zero denominator.
/// Throws std::invalid_argument for any other text, std::out_of_range when the
/// exponent or the digit count exceeds kMaxDecimalExponent, and
/// std::domain_error for a zero denominator.
Rational parse_exact_decimal(std::string_view text);

/// True when the rational is an integer (denominator 1).
bool is_integer(const Rational& r);

/// Decimal text of an exact rational: `"123"`, `"-7/2"` (lowest terms).
std::string to_text(const Rational& r);

}  // namespace plancert::frontend
