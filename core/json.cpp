// SPDX-License-Identifier: Apache-2.0
#include "core/json.h"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace plancert::json {
namespace {
constexpr std::size_t kMaxSkipDepth = 512;
const char* kHex = "0123456789abcdef";
// The one-letter escapes and the characters they stand for (the writer uses all but `\/`).
constexpr std::string_view kEscapes = "/\"\\bfnrt", kEscaped = "/\"\\\b\f\n\r\t";

void append_utf8(std::string& out, std::uint32_t cp) {
  static constexpr unsigned kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
  const int n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  out += static_cast<char>(n == 1 ? cp : kLead[n] | (cp >> (6 * (n - 1))));
  for (int k = n - 2; k >= 0; --k) out += static_cast<char>(0x80 | ((cp >> (6 * k)) & 0x3F));
}

// Bytes that stand for themselves inside a string: printable ASCII except '"' and '\'.
constexpr auto kPlain = [] {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c) t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}();

// The first offset from `p` on whose byte is not plain in `s` (a `"`, a `\`, a control byte or a
// byte >= 0x80), or its size: the scan every string read shares.
std::size_t plain_end(std::string_view s, std::size_t p) {
#ifdef __SSE2__
  for (unsigned m = 0; !m && p + 16 <= s.size(); p += m ? static_cast<unsigned>(std::countr_zero(m)) : 16U) {  // 16 bytes at a time: the first not plain
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + p));  // signed: bytes >= 0x80 are < 0x20
    m = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
                                                              _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)))));
  }
#endif
  while (p < s.size() && kPlain[static_cast<unsigned char>(s[p])]) ++p;
  return p;
}

// Length of the valid UTF-8 sequence starting at s[i] (lead byte >= 0x80), or 0.
std::size_t utf8_len(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return b(k) >= lo && b(k) <= hi; };
  unsigned c = b(0);
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c == 0xE0) return cont(1, 0xA0) && cont(2) ? 3 : 0;
  if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) return cont(1) && cont(2) ? 3 : 0;
  if (c == 0xED) return cont(1, 0x80, 0x9F) && cont(2) ? 3 : 0;
  if (c == 0xF0) return cont(1, 0x90) && cont(2) && cont(3) ? 4 : 0;
  if (c >= 0xF1 && c <= 0xF3) return cont(1) && cont(2) && cont(3) ? 4 : 0;
  if (c == 0xF4) return cont(1, 0x80, 0x8F) && cont(2) && cont(3) ? 4 : 0;
  return 0;
}
}  // namespace

void Reader::fail(const char* code, const std::string& message) const {
  if (std::string_view(code).starts_with("SCHEMA")) lex_check(s_, base_);  // lexical errors come first
  throw InputError(code, pointer(), message + " (at byte " + std::to_string(pos_) + ")");
}

void lex_check(std::string_view text, std::string base) {
  Reader lex(text, std::move(base));
  lex.skip();
  lex.finish();
}

std::string Reader::pointer() const {
  std::string p = base_;
  for (const auto& seg : path_) {
    if (seg.index == -2) continue;  // container opened, no element yet
    p += '/';
    if (seg.index >= 0) { p += std::to_string(seg.index); continue; }
    append_pointer_token(p, Reader(s_.substr(seg.key_pos)).parse_string());  // the path keeps offsets, not copies
  }
  return p;
}

void Reader::ws_slow() {
  for (; pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\r' || s_[pos_] == '\t'); ++pos_) canonical_ = false;
}

Kind Reader::bad_start() const { fail("JSON-1", std::string("unexpected character '") + s_[pos_] + "'"); }

void Reader::expect_slow(char c) {
  ws();
  if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return; }
  fail("JSON-1", pos_ >= s_.size() ? std::string("unexpected end of input, expected '") + c + "'" : std::string("expected '") + c + "', found '" + s_[pos_] + "'");
}

void Reader::begin_object() { expect('{'), path_.push_back({0, -2}); }

bool Reader::next_key(std::string_view& key) {
  ws();
  if (pos_ < s_.size() && s_[pos_] == '}') return ++pos_, path_.pop_back(), false;  // the end: its path is popped
  if (path_.back().index != -2) expect(',');  // -2: no key read yet
  ws();
  if (pos_ >= s_.size() || s_[pos_] != '"') fail("JSON-1", "expected an object key");
  path_.back() = {0, -2};  // until the key parses, a pointer ends at its object
  const std::size_t key_pos = pos_;
  key = parse_string();
  expect(':');
  path_.back() = {key_pos, -1};
  return true;
}

void Reader::begin_array() { expect('['), path_.push_back({0, -2}); }

bool Reader::digit_list(std::vector<std::int32_t>& out) {
  if (pos_ + 1 >= s_.size() || s_[pos_] != '[') return false;
  std::size_t p = pos_ + 1;
  if (s_[p] != ']')
    for (;; ++p) {  // p: where an element must start (the end of the input, after a trailing ',')
      const std::size_t b = p;
      std::int32_t v = 0;
      for (; p < s_.size() && p - b < 9 && static_cast<unsigned char>(s_[p] - '0') < 10; ++p) v = 10 * v + (s_[p] - '0');  // < 10^9: no overflow
      if (p == b || p >= s_.size() || (s_[b] == '0' && p - b > 1) || (s_[p] != ',' && s_[p] != ']')) return false;
      out.push_back(v);
      if (s_[p] == ']') break;
    }
  pos_ = p + 1;
  return true;
}

bool Reader::sole_plain_string(std::string_view& out) {
  if (pos_ + 2 >= s_.size() || s_[pos_] != '[' || s_[pos_ + 1] != '"') return false;
  const std::size_t p = plain_end(s_, pos_ + 2);
  if (p + 1 >= s_.size() || s_[p] != '"' || s_[p + 1] != ']') return false;
  return out = std::string_view(s_.data() + pos_ + 2, p - pos_ - 2), pos_ = p + 2, true;
}

bool Reader::next_element() {
  ws();
  if (pos_ < s_.size() && s_[pos_] == ']') return ++pos_, path_.pop_back(), false;  // the end: its path is popped
  if (path_.back().index != -2) expect(',');  // -2: no element read yet
  path_.back().index = path_.back().index < 0 ? 0 : path_.back().index + 1;
  __builtin_prefetch(s_.data() + std::min(pos_ + 4096, s_.size()));  // the page ahead: its TLB entry and first line, early
  return true;
}

std::string_view Reader::parse_string() {
  const std::size_t begin = ++pos_;  // after the opening quote
  pos_ = plain_end(s_, pos_);
  if (pos_ < s_.size() && s_[pos_] == '"') return s_.substr(begin, pos_++ - begin);  // nothing to unescape: no copy
  std::string& out = buf_;
  out.assign(s_.substr(begin, pos_ - begin));
  for (;;) {
    const std::size_t b = pos_;
    pos_ = plain_end(s_, pos_);
    out.append(s_.substr(b, pos_ - b));
    if (pos_ >= s_.size()) fail("JSON-1", "unterminated string");
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c == '"') { ++pos_; return out; }
    if (c < 0x20) fail("JSON-6", "unescaped control character in string");
    if (c >= 0x80) {
      std::size_t n = utf8_len(s_, pos_);
      if (n == 0) fail("JSON-6", "invalid UTF-8 in string");
      out.append(s_.substr(pos_, n));
      pos_ += n;
      continue;
    }
    canonical_ = false;  // an escape: the canonical writer may spell it otherwise
    if (++pos_ >= s_.size()) fail("JSON-1", "unterminated escape");
    const char e = s_[pos_++];
    if (const std::size_t k = kEscapes.find(e); k != std::string_view::npos) { out += kEscaped[k]; continue; }  // a one-letter escape
    if (e != 'u') fail("JSON-6", std::string("invalid escape '\\") + e + "'");
    auto hex4 = [&]() -> std::uint32_t {
      if (pos_ + 4 > s_.size()) fail("JSON-1", "truncated \\u escape");
      std::uint32_t v = 0;
      auto r = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, v, 16);
      if (r.ptr != s_.data() + pos_ + 4) fail("JSON-6", "malformed \\u escape");
      pos_ += 4;
      return v;
    };
    std::uint32_t cp = hex4();
    if (cp >= 0xDC00 && cp <= 0xDFFF) fail("JSON-6", "lone low surrogate in \\u escape");
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      if (pos_ + 2 > s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') fail("JSON-6", "lone high surrogate in \\u escape");
      pos_ += 2;
      std::uint32_t lo = hex4();
      if (lo < 0xDC00 || lo > 0xDFFF) fail("JSON-6", "invalid surrogate pair");
      cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
    }
    append_utf8(out, cp);
  }
}

std::string_view Reader::text() { return peek() != Kind::String ? fail("SCHEMA-5", "expected a string"), "" : parse_string(); }

std::string_view Reader::integer() {
  if (peek() != Kind::Number) fail("SCHEMA-5", "expected an integer");
  const std::size_t b = pos_, d = pos_ += s_[pos_] == '-';  // d: the first digit
  while (pos_ < s_.size() && static_cast<unsigned char>(s_[pos_] - '0') < 10) ++pos_;
  if (pos_ == d) fail("JSON-1", "malformed number");
  if (pos_ < s_.size() && (s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
    fail("JSON-3", "JSON float where only integers are allowed (exact numbers are strings such as \"7/2\")");
  const std::string_view t(s_.data() + b, pos_ - b);
  if (s_[d] == '0' && pos_ - d > 1) fail("JSON-4", "integer with a leading zero: " + std::string(t));
  if (s_[d] == '0' && d > b) fail("JSON-4", "negative zero");
  return t;
}

void Reader::literal(std::string_view word) {
  ws();
  if (s_.substr(pos_, word.size()) != word) fail("JSON-1", "invalid literal");
  pos_ += word.size();
}

bool Reader::boolean() {
  Kind k = peek();
  if (k == Kind::True) { literal("true"); return true; }
  if (k == Kind::False) { literal("false"); return false; }
  fail("SCHEMA-5", "expected a boolean");
}

void Reader::null() {
  if (peek() != Kind::Null) fail("SCHEMA-5", "expected null");
  literal("null");
}

std::string_view Reader::skip() {
  ws();
  const std::size_t begin = pos_, base = path_.size();
  std::string_view scratch;
  // Iterative: open containers live on path_, so an error deep inside has its JSON Pointer.
  do {
    Kind k = peek();
    if (k == Kind::End) fail("JSON-1", "unexpected end of input");
    if (k == Kind::Object || k == Kind::Array) {
      if (path_.size() - base >= kMaxSkipDepth) fail("JSON-5", "nesting deeper than " + std::to_string(kMaxSkipDepth) + " levels");
      if (k == Kind::Object ? (begin_object(), next_key(scratch)) : (begin_array(), next_element())) continue;  // into its first member
    } else if (k == Kind::String) { parse_string(); }
    else if (k == Kind::Number) integer();
    else literal(k == Kind::True ? "true" : k == Kind::False ? "false" : "null");
    // after a complete value: close containers until one has a next member
    while (path_.size() > base && !(path_.back().index == -1 ? next_key(scratch) : next_element())) {}
  } while (path_.size() > base);
  return s_.substr(begin, pos_ - begin);
}

void Reader::finish() { if (ws(), pos_ != s_.size()) fail("JSON-1", "trailing characters after the document"); }

void Writer::flush() {
  if (!buf_.empty()) {
    sink_(buf_);
    buf_.clear();
  }
}

void Writer::sep() {
  if (after_key_) { after_key_ = false; return; }
  if (!first_.empty()) {
    if (!first_.back()) put(",");
    first_.back() = false;
  }
}

void Writer::begin_object() { sep(); put("{"); first_.push_back(true); }
void Writer::end_object() { put("}"); first_.pop_back(); }
void Writer::begin_array() { sep(); put("["); first_.push_back(true); }
void Writer::end_array() { put("]"); first_.pop_back(); }
void Writer::key(std::string_view k) { sep(); escaped(k); put(":"); after_key_ = true; }
void Writer::raw_number(std::string_view n) { sep(); put(n); }
void Writer::integer(std::int64_t v) {
  char tmp[24];
  auto r = std::to_chars(tmp, tmp + sizeof tmp, v);
  raw_number(std::string_view(tmp, static_cast<std::size_t>(r.ptr - tmp)));
}
void Writer::boolean(bool b) { sep(); put(b ? "true" : "false"); }
void Writer::null() { sep(); put("null"); }

void Writer::string(std::string_view s) { sep(); escaped(s); }

void Writer::escaped(std::string_view s) {
  put("\"");
  std::size_t b = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (kPlain[c] || c >= 0x80) continue;  // one look-up for the common byte (not three comparisons)
    put(s.substr(b, i - b));
    b = i + 1;
    const std::size_t k = kEscaped.find(static_cast<char>(c), 1);  // `"`, `\` and five controls have a letter; the other controls \u00xx
    const char u[6] = {'\\', k != std::string_view::npos ? kEscapes[k] : 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
    put(std::string_view(u, k != std::string_view::npos ? 2 : 6));
  }
  put(s.substr(b));
  put("\"");
}

}  // namespace plancert::json
