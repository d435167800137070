// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Strict streaming JSON reader and canonical JSON writer (ARCHITECTURE.md,
/// "Canonical encoding and digests").
///
/// The reader is a pull parser: decoders ask for the value they expect, so the depth of
/// the parse is bounded by the schema, never by the input. It rejects duplicate keys
/// (by decoders, through ObjectKeys), JSON floats, integers with a leading zero or `-0`,
/// invalid UTF-8, lone surrogates and trailing garbage. Every error carries a JSON Pointer.
#pragma once

#include "core/diag.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::json {

/// Equality of strings; those of at most 16 bytes (field, enum and quantity texts) are compared
/// as two overlapping words each, without a library call.
[[gnu::always_inline]] inline bool same(std::string_view a, std::string_view b) {
  const std::size_t n = a.size();
  if (n != b.size() || n > 16) return a == b;
  auto eq = [&](std::size_t at, auto x) { auto y = x; return std::memcpy(&x, a.data() + at, sizeof x), std::memcpy(&y, b.data() + at, sizeof y), x == y; };
  if (n >= 8) return eq(0, std::uint64_t{}) && eq(n - 8, std::uint64_t{});
  if (n >= 4) return eq(0, std::uint32_t{}) && eq(n - 4, std::uint32_t{});
  return n == 0 || (a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1]);
}

/// The kind of the next value in the input.
enum class Kind { Object, Array, String, Number, True, False, Null, End };

/// The kind of value that each first byte starts (End: none).
constexpr std::array<Kind, 256> start_kinds() {
  std::array<Kind, 256> t{};
  t.fill(Kind::End);
  for (char c : std::string_view("-0123456789")) t[static_cast<unsigned char>(c)] = Kind::Number;
  t['{'] = Kind::Object, t['['] = Kind::Array, t['"'] = Kind::String, t['t'] = Kind::True, t['f'] = Kind::False, t['n'] = Kind::Null;
  return t;
}
/// start_kinds(), computed at compile time: Reader::peek() looks the next byte up in it.
inline constexpr std::array<Kind, 256> kStarts = start_kinds();

/// Pull parser over an in-memory document.
class Reader {
 public:
  /// Reads `text`; nothing is copied. `base` prefixes every JSON Pointer (e.g. `/payload` when
  /// `text` is the payload of a larger document).
  explicit Reader(std::string_view text, std::string base = {}) : s_(text), base_(std::move(base)), reserve_budget_(4 * text.size()) {}

  /// Kind of the next value (skips whitespace). Throws JSON-1 on a character that starts no value.
  Kind peek() {
    ws();
    const Kind k = pos_ < s_.size() ? kStarts[static_cast<unsigned char>(s_[pos_])] : Kind::End;
    return k != Kind::End || pos_ >= s_.size() ? k : bad_start();
  }
  /// Consumes `{`. Then call next_key() until it returns false.
  void begin_object();
  /// Reads the next key of the current object into `key` and makes it the current path
  /// segment; returns false (and consumes `}`) at the end of the object. `key` views the
  /// input, or this reader's buffer when the key has escapes: valid until the next string.
  bool next_key(std::string_view& key);
  /// The canonical case of next_key(), without reading a string: when the input continues with
  /// exactly `"name":` (after a `,` unless it is the object's first key), consumes that, makes
  /// `name` the current path segment and returns true; otherwise consumes nothing. `name` must
  /// need no escape.
  [[gnu::always_inline]] bool next_key_is(std::string_view name) {
    const std::size_t at = pos_ + (path_.back().index != -2), end = at + name.size() + 3;
    if (end > s_.size() || (at != pos_ && s_[pos_] != ',') || s_[at] != '"' || s_[end - 2] != '"' || s_[end - 1] != ':' ||
        !same(std::string_view(s_.data() + at + 1, name.size()), name))
      return false;
    path_.back() = {at, -1}, pos_ = end;
    return true;
  }
  /// Consumes `[`. Then call next_element() until it returns false.
  void begin_array();
  /// The canonical case of an array of indices, `[d,d,...]` with each element of at most nine
  /// digits, no sign and no leading zero: reads it whole in one loop, appends its elements to `out`
  /// and returns true. On anything else it consumes nothing and returns false (`out` may hold a
  /// part), and the strict path reads the array or reports what is wrong with it.
  bool digit_list(std::vector<std::int32_t>& out);
  /// The canonical case of an array of one plain string, `["s"]` with `s` of printable ASCII other
  /// than `"` and `\\` (a lineage's source): consumes it, views `s` in `out` and returns true. On
  /// anything else it consumes nothing and returns false, and the strict path reads the array.
  bool sole_plain_string(std::string_view& out);
  /// Returns true if another element follows (and pushes its index), false at `]`.
  bool next_element();
  /// Reads a string value (unescaped, validated UTF-8).
  std::string string() { return std::string(text()); }
  /// Reads a string value like string(), without a copy: the view is valid until the next
  /// string is read (it views the input, or this reader's buffer when the string has escapes).
  std::string_view text();
  /// Reads an integer number token and returns its text (canonical: no leading zero, no -0).
  std::string_view integer();
  /// Reads `true` or `false`.
  bool boolean();
  /// Reads `null`.
  void null();
  /// The input from the cursor to its end.
  [[nodiscard]] std::string_view rest() const { return s_.substr(pos_); }
  /// When the input continues with exactly `t`, consumes it and returns true. `t` must be the
  /// whole canonical text of one value: one this reader's decoders read before (a cache of
  /// decoded values), or a complete literal such as `{}`.
  bool take(std::string_view t) { return rest().starts_with(t) && (pos_ += t.size(), true); }
  /// Skips one complete value of any kind without recursion; returns its raw text.
  std::string_view skip();
  /// Requires that only whitespace remains.
  void finish();

  /// The current JSON Pointer (e.g. `/payload/tasks/3`).
  [[nodiscard]] std::string pointer() const;
  /// Byte offset of the cursor.
  [[nodiscard]] std::size_t offset() const { return pos_; }
  /// Capacity to reserve for an array whose text from offset `from` to the end of the input
  /// would hold elements as long as its first `count` (read up to the cursor), of `bytes` each:
  /// that estimate while all estimates stay within 4 bytes per input byte (untouched capacity
  /// costs address space, not memory), else 0. Saves the copies and page faults of growing a
  /// large array; the codec asks once an array of structs has 4,096 elements, not at its
  /// first, because the estimate runs to the end of the input: a short array near the start would
  /// reserve for the whole file, and on huge pages every such reservation costs a 2 MiB page.
  std::size_t reserve_hint(std::size_t from, std::size_t count, std::size_t bytes) {
    const std::size_t n = (s_.size() - from) * count / std::max<std::size_t>(pos_ - from, 1);
    return n <= count || n > reserve_budget_ / bytes ? 0 : (reserve_budget_ -= n * bytes, n);
  }
  /// Throws an InputError with `code` at the current pointer. A SCHEMA-* error is thrown only
  /// once the whole input is known to be lexically valid JSON: otherwise the first lexical error
  /// (JSON-*) is thrown instead, wherever it is.
  [[noreturn]] void fail(const char* code, const std::string& message) const;
  /// True while every byte read is canonical: no whitespace, no escape, and no key that a
  /// decoder reported out of order, so the text equals the canonical encoding of its value.
  [[nodiscard]] bool canonical() const { return canonical_; }
  /// Records that the text read is not canonical (a decoder saw keys out of order).
  void noncanonical() { canonical_ = false; }

 private:
  struct Seg {
    std::size_t key_pos;  // offset of the key's opening quote (index -1)
    std::int64_t index;   // -1 for a key, -2 for a container with no member yet
  };
  void ws() {
    if (pos_ >= s_.size() || static_cast<unsigned char>(s_[pos_]) > ' ') return;
    ws_slow();
  }
  void ws_slow();
  void expect(char c) { if (pos_ < s_.size() && s_[pos_] == c) ++pos_; else expect_slow(c); }
  void expect_slow(char c);
  [[noreturn]] Kind bad_start() const;
  void literal(std::string_view word);
  std::string_view parse_string();
  std::string_view s_;
  std::size_t pos_ = 0;
  std::vector<Seg> path_;
  std::string base_;
  std::string buf_;  // unescaped text of the last string that had escapes
  bool canonical_ = true;
  std::size_t reserve_budget_;  // bytes reserve_hint may still hand out
};

/// Streaming canonical writer: no whitespace, minimal escapes, raw UTF-8. Keys must be
/// written in sorted byte order by the caller (the codec lists fields sorted).
class Writer {
 public:
  /// Receives output in chunks (for hashing or writing without one huge buffer).
  using Sink = std::function<void(std::string_view)>;
  /// Writes into `sink` through a 64 KiB buffer.
  explicit Writer(Sink sink) : sink_(std::move(sink)) { buf_.reserve(kBuf); }
  ~Writer() { flush(); }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void begin_object();                   ///< writes `{`
  void key(std::string_view k);          ///< writes `"k":`
  void end_object();                     ///< writes `}`
  void begin_array();                    ///< writes `[`
  void end_array();                      ///< writes `]`
  void string(std::string_view s);       ///< writes an escaped string
  void raw_number(std::string_view n);   ///< writes a canonical integer token
  void integer(std::int64_t v);          ///< writes an integer
  void boolean(bool b);                  ///< writes `true`/`false`
  void null();                           ///< writes `null`
  void flush();                          ///< passes buffered bytes to the sink

 private:
  static constexpr std::size_t kBuf = 1 << 16;
  void sep();
  void escaped(std::string_view s);
  void put(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kBuf) flush();
  }
  Sink sink_;
  std::string buf_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

/// Throws the first lexical error (JSON-*) of `text`, which must be one JSON value, with its
/// JSON Pointer under `base`; returns if there is none.
void lex_check(std::string_view text, std::string base = {});

}  // namespace plancert::json
