// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Field-list reflection and the one generic canonical codec for every IR type.
///
/// Each IR struct lists its fields once, sorted by name (`static constexpr auto fields()`);
/// decode and encode are derived from that list, so the canonical encoding, the strict
/// decoder (unknown, duplicate and missing fields rejected) and the digest cannot drift apart.
#pragma once

#include "core/expr.h"
#include "core/json.h"
#include "core/numbers.h"

#include <boost/container/flat_map.hpp>
#include <boost/container/vector.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <concepts>
#include <new>
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_set>
#include <vector>

namespace plancert::codec {

/// A vector whose size and capacity are 32-bit: 16 bytes where std::vector takes 24. The lists
/// every entity holds (index lists, lineage sources, annotations) are Lists: a 1M-command plan
/// is 40 MB smaller for its five index lists a command. Decoding refuses an array of more than
/// 2^31 - 1 elements (SCHEMA-8), so every position fits an Index; a List built in code holds up
/// to 2^32 - 1.
///
/// One difference from std::vector matters to code that edits IR: the value handed to
/// `insert`, `emplace`, `push_back` or `emplace_back` must not be a reference into the same
/// List. boost::container::vector does not copy it first, so `v.insert(v.begin(), v[1])` with
/// spare capacity inserts the shifted element, and `v.push_back(v[0])` of a List of strings
/// at capacity appends a moved-from (empty) string. Pass a copy: `v.push_back(Index{v[0]})`.
/// (tests/unit/core_test.cpp, List.*, pins the first, so a Boost that changes it is noticed.)
///
/// A List's block comes from the heap, or from the open ListArena (below).
template <class T> struct ListAlloc;
/// See above.
template <class T> using List = boost::container::vector<T, ListAlloc<T>, boost::container::vector_options_t<boost::container::stored_size<std::uint32_t>>>;

/// While one is open, every List block allocated on this thread comes from a region that grows
/// in chunks (1 MiB doubling to 64 MiB) and is never returned: no malloc header or 32-byte
/// minimum per list. A 1M-command plan's 3.6M lists take about 50 MB less (README,
/// Performance). Freeing such a block does nothing, so open one only around decoding a snapshot
/// the process keeps to its end (`plancert verify`), on one thread, and not in library code.
/// Blocks allocated after it closes come from the heap again; Lists may outlive it.
class ListArena {
 public:
  ListArena() { ++state().open; }
  ~ListArena() { --state().open; }
  ListArena(const ListArena&) = delete;
  ListArena& operator=(const ListArena&) = delete;
  /// `bytes` aligned to `align` (a power of two, at most the default new alignment).
  static void* allocate(std::size_t bytes, std::size_t align) {
    State& s = state();
    if (s.open == 0) return ::operator new(bytes);
    std::uintptr_t at = (s.at + align - 1) & ~(align - 1);
    if (at > s.end || bytes > s.end - at) {  // a new chunk (the rest of the last one is left unused)
      const std::size_t size = std::max(s.next, bytes);
      s.chunks.reserve(s.chunks.size() + 1);  // before the chunk: a throw cannot lose it
      void* chunk = s.chunks.emplace_back(::operator new(size), size).first;  // kept as a pointer: reachable, not a leak, to leak checkers
      s.end = (at = reinterpret_cast<std::uintptr_t>(chunk)) + size, s.next = std::min(2 * s.next, std::size_t{64} << 20);
    }
    s.at = at + bytes;
    return reinterpret_cast<void*>(at);
  }
  /// Returns a heap block to the heap; an arena block stays (a few chunks to search).
  static void deallocate(void* p) noexcept {
    for (const auto& [begin, size] : state().chunks) if (reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(begin) < size) return;
    ::operator delete(p);  // unsized: clang declares the sized form only with -fsized-deallocation
  }

 private:
  // Every chunk ever taken (start, size); the free rest [at, end) of the last one; its successor's size.
  struct State { std::vector<std::pair<void*, std::size_t>> chunks; std::uintptr_t at = 0, end = 0; std::size_t next = std::size_t{1} << 20; int open = 0; };
  static State& state() { static State& s = *new State; return s; }  // never destroyed: the chunks stay reachable to the end
};

/// The allocator of List: ListArena's.
template <class T>
struct ListAlloc {
  using value_type = T;  ///< element type
  ListAlloc() = default;
  /// Rebinding.
  template <class U> ListAlloc(const ListAlloc<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  /// n elements.
  T* allocate(std::size_t n) { static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__); return static_cast<T*>(ListArena::allocate(n * sizeof(T), alignof(T))); }
  /// Frees what allocate() gave.
  void deallocate(T* p, std::size_t) noexcept { ListArena::deallocate(p); }
  /// Stateless: all are equal.
  friend bool operator==(const ListAlloc&, const ListAlloc&) noexcept { return true; }
};

/// An interned name: one pointer (8 bytes) to the process's only copy of its text, where a
/// std::string takes 32. For the names a plan repeats on every entity (lineage rules, command
/// implementations): a 1M-command plan is 46 MB smaller (README, Performance). It reads as a
/// `const std::string&`; equal names are the same pointer. The table only grows, and is not
/// locked: plancert is single-threaded.
class Name {
 public:
  /// The empty name.
  Name() : Name(std::string_view()) {}
  /// The name with text `s`.
  Name(std::string_view s) : s_(&intern(s)) {}                    // NOLINT(google-explicit-constructor): names convert implicitly
  /// The name with text `s`.
  Name(const std::string& s) : Name(std::string_view(s)) {}       // NOLINT(google-explicit-constructor)
  /// The name with text `s`.
  Name(const char* s) : Name(std::string_view(s)) {}              // NOLINT(google-explicit-constructor)
  /// The text.
  operator const std::string&() const { return *s_; }             // NOLINT(google-explicit-constructor)
  /// The text.
  [[nodiscard]] const std::string& str() const { return *s_; }
  /// Appends text (a different name).
  Name& operator+=(std::string_view t) { return *this = Name(*s_ + std::string(t)); }
  /// Same text.
  friend bool operator==(const Name& a, const Name& b) { return a.s_ == b.s_; }
  /// Same text.
  template <class S> requires std::is_convertible_v<const S&, std::string_view>
  friend bool operator==(const Name& a, const S& b) { return *a.s_ == std::string_view(b); }

 private:
  struct Hash { using is_transparent = void; std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); } };
  static const std::string& intern(std::string_view s) {  // the names read last, direct-mapped by length and end bytes, before the table
    static auto& table = *new std::unordered_set<std::string, Hash, std::equal_to<>>;  // never destroyed: outlives every Name
    static std::array<const std::string*, 64> seen{};
    const std::string*& hit = seen[(s.size() * 7 + (s.empty() ? 0U : static_cast<unsigned char>(s.front()) * 3U + static_cast<unsigned char>(s.back()))) % 64];
    if (hit != nullptr && *hit == s) return *hit;
    auto it = table.find(s);
    return *(hit = &(it != table.end() ? *it : *table.emplace(s).first));
  }
  const std::string* s_;
};

/// An immutable value its copies share: 16 bytes where `T` may take many. For a value a plan
/// repeats on many entities (a command's Work, 56 bytes: a 1M-command plan is 40 MB smaller,
/// README, Performance); the decoder gives equal texts read recently one value (decode()).
/// Empty (default-constructed), it holds `T{}`. (A std::shared_ptr, not an intrusive pointer of
/// 8 bytes: GCC 12 reports use after free where it inlines an intrusive count's release.)
template <class T>
class Shared {
  std::shared_ptr<const T> p_;

 public:
  Shared() = default;
  /// A new shared value.
  Shared(T v) : p_(std::make_shared<const T>(std::move(v))) {}  // NOLINT(google-explicit-constructor): values convert implicitly
  /// The value.
  const T& operator*() const { static const T none{}; return p_ ? *p_ : none; }
  /// The value's members.
  const T* operator->() const { return &**this; }
};

/// Free-form string annotations, sorted by key: a flat map (one block per annotated entity,
/// not a node per entry) over a List. Unlike std::map, its keys can be changed through an
/// iterator, so the encoder checks their order (see encode()).
using Attrs = boost::container::flat_map<std::string, std::string, std::less<std::string>, List<std::pair<std::string, std::string>>>;

/// An array type of the canonical encoding: std::vector or List.
template <class V>
concept Vector = std::same_as<V, std::vector<typename V::value_type>> || std::same_as<V, List<typename V::value_type>>;

/// One reflected field: its JSON name and the member pointer.
template <class C, class M>
struct Field {
  std::string_view name;  ///< JSON key
  M C::*ptr;              ///< member
};

/// Makes a Field (deduces the types).
template <class C, class M>
constexpr Field<C, M> field(std::string_view name, M C::*ptr) { return {name, ptr}; }

/// Declares `static constexpr auto fields()` of struct `C`: one Field per listed member, its
/// JSON key the member's name. List them in sorted key order (checked where fields() is used).
/// A member whose key differs from its name (a C++ keyword) needs a hand-written fields().
#define PLANCERT_FIELDS(C, ...) \
  static constexpr auto fields() { return std::tuple{PLANCERT_FIELDS_X3(PLANCERT_FIELDS_X3(PLANCERT_FIELDS_X3(PLANCERT_FIELDS_X3(PLANCERT_FIELDS_EACH(C, __VA_ARGS__)))))}; }
/// Rescans its argument at least 16 times. PLANCERT_FIELDS nests it 4 deep: 64 rescans, each
/// expanding one more member (a struct with more members fails to compile).
#define PLANCERT_FIELDS_X3(...) PLANCERT_FIELDS_X2(PLANCERT_FIELDS_X2(PLANCERT_FIELDS_X2(PLANCERT_FIELDS_X2(__VA_ARGS__))))
/// Rescans its argument at least 4 times.
#define PLANCERT_FIELDS_X2(...) PLANCERT_FIELDS_X1(PLANCERT_FIELDS_X1(PLANCERT_FIELDS_X1(PLANCERT_FIELDS_X1(__VA_ARGS__))))
/// Rescans its argument at least once.
#define PLANCERT_FIELDS_X1(...) __VA_ARGS__
/// The Field of member `m` of `C`, then (on the next rescan) those of the remaining members.
#define PLANCERT_FIELDS_EACH(C, m, ...) ::plancert::codec::field(#m, &C::m) __VA_OPT__(, PLANCERT_FIELDS_AGAIN PLANCERT_FIELDS_PARENS(C, __VA_ARGS__))
/// `()`, kept apart from PLANCERT_FIELDS_AGAIN so that the recursion waits for the next rescan.
#define PLANCERT_FIELDS_PARENS ()
/// Names PLANCERT_FIELDS_EACH once rescanned (a macro cannot expand itself directly).
#define PLANCERT_FIELDS_AGAIN() PLANCERT_FIELDS_EACH

/// Names of an enum's values in declaration order; specialise with PLANCERT_ENUM_NAMES.
template <class E>
struct EnumNames;

/// Declares the JSON spellings of enum `E`'s values, in declaration order.
#define PLANCERT_ENUM_NAMES(E, ...)                                   \
  template <>                                                         \
  struct plancert::codec::EnumNames<E> {                              \
    static constexpr std::string_view names[] = {__VA_ARGS__};        \
  }

/// A type with a field list.
template <class T>
concept Reflected = requires { T::fields(); };

/// True when the field names of T are strictly increasing (canonical key order).
template <Reflected T>
constexpr bool fields_sorted() {
  constexpr auto names = std::apply([](const auto&... f) { return std::array{f.name...}; }, T::fields());
  return std::adjacent_find(names.begin(), names.end(), [](std::string_view a, std::string_view b) { return a >= b; }) == names.end();
}

using json::same;

/// Name of an enum value.
template <class E>
std::string_view enum_name(E e) { return EnumNames<E>::names[static_cast<std::size_t>(e)]; }

// ---- decoding ------------------------------------------------------------------------

/// \name Strict decoders
/// Decode one JSON value into `v`; throw InputError (JSON-*, SCHEMA-*) on anything that is not
/// the canonical encoding of a value of that type.
///@{
template <class S> requires(std::same_as<S, std::string> || std::same_as<S, Name>) void decode(json::Reader& r, S& v) { v = r.text(); }
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
inline void decode(json::Reader& r, bool& v) { v = r.boolean(); }
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <std::signed_integral I> requires(sizeof(I) >= 4)
void decode(json::Reader& r, I& v) {
  std::string_view t = r.integer();
  if (t.size() <= std::numeric_limits<I>::digits10 && t[0] != '-') { v = 0; for (char d : t) v = static_cast<I>(10 * v + (d - '0')); return; }  // cannot overflow
  auto res = std::from_chars(t.data(), t.data() + t.size(), v);
  if (res.ec != std::errc() || res.ptr != t.data() + t.size()) r.fail("SCHEMA-8", "integer out of the " + std::to_string(8 * sizeof(I)) + "-bit range: " + std::string(t));
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
inline void decode(json::Reader& r, Int& v) {
  std::string_view s = r.text();
  auto p = parse_int(s);
  if (!p) r.fail("SCHEMA-7", "not a canonical exact integer: \"" + std::string(s.substr(0, 64)) + "\"");
  v = std::move(*p);
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
inline void decode(json::Reader& r, Rat& v) {
  std::string_view s = r.text();
  auto p = parse_rat(s);
  if (!p) r.fail("SCHEMA-7", "not a canonical exact rational: \"" + std::string(s.substr(0, 64)) + "\"");
  v = std::move(*p);
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
/// A text seen recently shares its Expr (a plan repeats few distinct quantities).
inline void decode(json::Reader& r, Expr& v) {
  std::string_view s = r.text();
  std::string err;
  if (s.size() > kMaxNumberDigits * 4) r.fail("SCHEMA-8", "expression longer than " + std::to_string(kMaxNumberDigits * 4) + " characters");
  thread_local std::pair<std::string, Expr> seen[256];  // direct-mapped by hash; only accepted texts enter
  std::size_t h = s.size();
  for (const char ch : s) h = h * 33 ^ static_cast<unsigned char>(ch);  // quantity texts are short: a cheap hash does
  auto& [text, e] = seen[(h ^ h >> 8) % 256];
  if (same(text, s) && !s.empty()) { v = e; return; }
  auto p = Expr::parse_canonical(s, &err);
  if (!p) r.fail("SCHEMA-7", "bad exact quantity \"" + std::string(s.substr(0, 64)) + "\": " + err);
  v = std::move(*p);
  text = s, e = v;
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <class E>
  requires std::is_enum_v<E>
void decode(json::Reader& r, E& v) {
  std::string_view s = r.text();
  const auto& names = EnumNames<E>::names;
  for (std::size_t i = 0; i < std::size(names); ++i)
    if (same(names[i], s)) { v = static_cast<E>(i); return; }
  std::string expected;
  for (auto n : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
  r.fail("SCHEMA-6", "unknown value \"" + std::string(s.substr(0, 64)) + "\" (expected one of: " + expected + ")");
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <Vector V> void decode(json::Reader& r, V& v);
/// SCHEMA-8 unless `n` <= 2^31 - 1: the most elements of an array (every position is an Index)
/// and entries of an annotation object (a List holds them).
inline void check_size(json::Reader& r, std::size_t n) { if (n > INT32_MAX) r.fail("SCHEMA-8", "array or object of more than 2^31 - 1 members"); }
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <class T> void decode(json::Reader& r, std::optional<T>& v);
void decode(json::Reader& r, Attrs& v);
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <Reflected T> void decode(json::Reader& r, T& v);

/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <Vector V>
void decode(json::Reader& r, V& v) {
  if constexpr (std::is_arithmetic_v<typename V::value_type> || std::is_same_v<typename V::value_type, std::string>) {  // into reused scratch, then one
    if constexpr (std::is_same_v<typename V::value_type, std::string>) if (std::string_view s; r.sole_plain_string(s)) return v.clear(), void(v.emplace_back(s));  // canonical: at once
    thread_local std::vector<typename V::value_type> scratch;  // allocation of the exact size, not 1, 2, 4, ... (an element decodes no array: no reentry)
    scratch.clear();
    if constexpr (std::is_same_v<typename V::value_type, std::int32_t>) if (r.digit_list(scratch)) return check_size(r, scratch.size()), v.assign(scratch.begin(), scratch.end());  // canonical: at once
    if (r.peek() != json::Kind::Array) r.fail("SCHEMA-5", "expected an array");  // anything else: strictly, element by element
    for (scratch.clear(), r.begin_array(); r.next_element();) decode(r, scratch.emplace_back());
    check_size(r, scratch.size());
    return v.assign(std::make_move_iterator(scratch.begin()), std::make_move_iterator(scratch.end()));
  }
  if (r.peek() != json::Kind::Array) r.fail("SCHEMA-5", "expected an array");
  v.clear();
  r.begin_array();
  for (const std::size_t from = r.offset(); r.next_element();) {
    check_size(r, v.size() + 1);  // before the element: a List could not take it
    decode(r, v.emplace_back());
    if (Reflected<typename V::value_type> && v.size() == 4096) {  // a long array of structs: reserve once, a guess from the rest of the input
      try { v.reserve(r.reserve_hint(from, v.size(), sizeof(typename V::value_type))); } catch (const std::bad_alloc&) {}  // refused: grow as usual
    }
  }
  if (v.capacity() > 2 * v.size() + 4096) v.shrink_to_fit();  // the guess overshot (an early array of a long input): free the address space
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <class T>
void decode(json::Reader& r, std::optional<T>& v) {
  if (r.peek() == json::Kind::Null) { r.null(); v.reset(); return; }
  decode(r, v.emplace());
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
/// The entries are read in text order and sorted once at the end, so an object of n keys in
/// any order takes O(n log n) (inserting each into the flat map would move O(n) entries).
/// A repeated key is reported with the object's path; more than 2^31 - 1 entries, like an
/// array's elements, is SCHEMA-8. The canonical empty object `{}`, which most entities carry,
/// is taken at once (the general path costs about 120 instructions even when empty).
inline void decode(json::Reader& r, Attrs& v) {
  if (r.take("{}")) return v.clear();
  if (r.peek() != json::Kind::Object) r.fail("SCHEMA-5", "expected an object");
  thread_local std::vector<std::pair<std::string, std::string>> seq;  // then one block of the exact size (a string decodes no object)
  seq.clear();
  r.begin_object();
  for (std::string_view key; r.next_key(key);) {
    if (!seq.empty() && !(seq.back().first < key)) r.noncanonical();  // not in sorted order (or repeated)
    decode(r, seq.emplace_back(std::string(key), std::string()).second);
  }
  check_size(r, seq.size());
  if (!r.canonical()) std::sort(seq.begin(), seq.end(), [](const auto& a, const auto& b) { return a.first < b.first; });  // canonical so far: the keys came in strictly rising order (above)
  if (auto d = std::adjacent_find(seq.begin(), seq.end(), [](const auto& a, const auto& b) { return a.first == b.first; }); d != seq.end()) r.fail("JSON-2", "duplicate key \"" + d->first + "\"");
  v.adopt_sequence(boost::container::ordered_unique_range, Attrs::sequence_type(std::make_move_iterator(seq.begin()), std::make_move_iterator(seq.end())));
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error).
template <Reflected T>
void decode(json::Reader& r, T& out) {
  static_assert(fields_sorted<T>(), "fields() must be listed in sorted key order");
  constexpr auto fs = T::fields();
  constexpr std::size_t n = std::tuple_size_v<decltype(fs)>;
  static_assert(n <= 64);
  if (r.peek() != json::Kind::Object) r.fail("SCHEMA-5", "expected an object");
  r.begin_object();
  constexpr auto names = std::apply([](const auto&... f) { return std::array<std::string_view, n>{f.name...}; }, fs);
  std::uint64_t seen = 0;
  std::size_t next = 0;  // canonical text: the fields in order, each key spelled exactly (read in place, no key string)
  std::apply([&](const auto&... f) { (void)((r.next_key_is(f.name) && (decode(r, out.*(f.ptr)), seen |= std::uint64_t{1} << next++, true)) && ...); }, fs);
  std::string_view key;
  for (std::size_t hit = 0, i = 0; r.next_key(key); i = 0) {  // anything else: read key by key from where that stopped
    if ((hit = static_cast<std::size_t>(std::find(names.begin(), names.end(), key) - names.begin())) == n)
      r.fail("SCHEMA-4", "unknown field \"" + std::string(key.substr(0, 64)) + "\"");
    std::apply([&](const auto&... f) { ((i++ == hit ? decode(r, out.*(f.ptr)) : void()), ...); }, fs);
    if (seen & (std::uint64_t{1} << hit)) r.fail("JSON-2", "duplicate key \"" + std::string(names[hit]) + "\"");
    if (seen >> hit) r.noncanonical();  // a later field came first
    seen |= std::uint64_t{1} << hit;
  }
  if (seen != (n == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1))  // the first missing field is the lowest bit not seen
    r.fail("SCHEMA-3", "missing field \"" + std::string(names[static_cast<std::size_t>(std::countr_one(seen))]) + "\"");
}
/// Decodes one value strictly (JSON-*, SCHEMA-* on error). The value of a text equal to one
/// read recently is that one's (the strict decoder is a function of the bytes it consumes):
/// `r.take()` checks the input continues with exactly those bytes, so any other text, even one
/// differing in its last byte, is decoded in full with its own errors and paths. Only texts read
/// while the reader was canonical enter, so a cached text never hides keys out of order from the
/// digest. The lookup key is the text to its first '}': exact for a T with no nested object
/// (Work); for any other T it costs misses, never soundness.
template <class T>
void decode(json::Reader& r, Shared<T>& v) {
  thread_local std::array<std::pair<std::string, Shared<T>>, 1024> recent;  // direct-mapped by hash
  const std::string_view text = r.rest();
  std::uint64_t h = 0, w = 0, i = 0, n = text.find('}') + 1;  // hash of the text up to its first `}`: multiply-xor of 8-byte words, then bytes
  for (; i + 8 <= n; i += 8) std::memcpy(&w, text.data() + i, 8), h = (h ^ w) * 0x9E3779B97F4A7C15U;
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(text[i])) * 0x9E3779B97F4A7C15U;
  auto& [seen, value] = recent[h >> 54];  // the top 10 bits: the best mixed
  if (!seen.empty() && r.take(seen)) return void(v = value);
  v = [&] { T t; decode(r, t); return t; }();
  if (r.canonical()) seen = text.substr(0, text.size() - r.rest().size()), value = v;
}

///@}

// ---- encoding ------------------------------------------------------------------------

/// \name Canonical encoders
/// Write `v` in canonical JSON (strings for exact numbers, fields in sorted order).
///@{
inline void encode(json::Writer& w, const std::string& v) { w.string(v); }
/// Encodes one value canonically.
inline void encode(json::Writer& w, const Name& v) { w.string(v.str()); }
/// Encodes one value canonically.
inline void encode(json::Writer& w, bool v) { w.boolean(v); }
/// Encodes one value canonically.
template <std::signed_integral I> void encode(json::Writer& w, I v) { w.integer(v); }
/// Encodes one value canonically.
inline void encode(json::Writer& w, const Int& v) { w.string(to_string(v)); }
/// Encodes one value canonically.
inline void encode(json::Writer& w, const Rat& v) { w.string(to_string(v)); }
/// Encodes one value canonically.
inline void encode(json::Writer& w, const Expr& v) { w.string(v.str()); }
/// Encodes one value canonically.
template <class E>
  requires std::is_enum_v<E>
void encode(json::Writer& w, E v) { w.string(enum_name(v)); }
/// Encodes one value canonically.
template <Vector V> void encode(json::Writer& w, const V& v);
/// Encodes one value canonically.
template <class T> void encode(json::Writer& w, const std::optional<T>& v);
void encode(json::Writer& w, const Attrs& v);
/// Encodes one value canonically.
template <Reflected T> void encode(json::Writer& w, const T& v);

/// Encodes one value canonically.
template <Vector V>
void encode(json::Writer& w, const V& v) {
  w.begin_array();
  for (const auto& x : v) encode(w, x);
  w.end_array();
}
/// Encodes one value canonically.
template <class T>
void encode(json::Writer& w, const std::optional<T>& v) {
  if (v) encode(w, *v);
  else w.null();
}
/// Encodes one value canonically.
/// Throws std::logic_error if the keys are not strictly increasing (changed through an
/// iterator by an untrusted producer): no digest is ever computed over such a map.
inline void encode(json::Writer& w, const Attrs& v) {
  if (std::adjacent_find(v.begin(), v.end(), [](const auto& a, const auto& b) { return !(a.first < b.first); }) != v.end()) throw std::logic_error("annotation keys out of order or repeated");
  w.begin_object();
  for (const auto& [k, x] : v) { w.key(k); w.string(x); }
  w.end_object();
}
/// Encodes one value canonically.
template <class T> void encode(json::Writer& w, const Shared<T>& v) { encode(w, *v); }
/// Encodes one value canonically.
template <Reflected T>
void encode(json::Writer& w, const T& v) {
  static_assert(fields_sorted<T>(), "fields() must be listed in sorted key order");
  w.begin_object();
  std::apply([&](const auto&... f) { ((w.key(f.name), encode(w, v.*(f.ptr))), ...); }, T::fields());
  w.end_object();
}

///@}

/// The leaves of for_each_expr: the types that cannot hold an Expr.
template <class T> concept ExprFree = std::is_arithmetic_v<T> || std::is_enum_v<T> || std::same_as<T, std::string> || std::same_as<T, Name> || std::same_as<T, Int> || std::same_as<T, Rat> || std::same_as<T, Attrs>;

/// Calls `f` on every Expr inside `v` (through fields, vectors, optionals and shared values),
/// iteratively in the data and recursively only in the static type structure. Any other type
/// that is not ExprFree (a map, a pair, a plain pointer) does not compile: a field of such a type
/// would otherwise hide its Exprs (tests/unit, Codec.ForEachExprRefusesUnknownTypes).
template <class T, class F>
void for_each_expr(const T& v, F&& f) {
  if constexpr (std::is_same_v<T, Expr>) f(v);
  else if constexpr (Reflected<T>) std::apply([&](const auto&... fl) { (for_each_expr(v.*(fl.ptr), f), ...); }, T::fields());
  else if constexpr (Vector<T>) for (const auto& x : v) for_each_expr(x, f);
  else if constexpr (requires { v.has_value(); }) { if (v) for_each_expr(*v, f); }  // optional
  else if constexpr (requires { requires std::same_as<T, Shared<std::remove_cvref_t<decltype(*v)>>>; }) for_each_expr(*v, f);  // Shared only: not any pointer
  else static_assert(ExprFree<T>, "for_each_expr: a type it neither follows nor knows to hold no Expr");
}

/// Canonical JSON text of any reflected value.
template <class T>
std::string to_canonical(const T& v) {
  std::string out;
  {
    json::Writer w([&](std::string_view chunk) { out.append(chunk); });
    encode(w, v);
  }
  return out;
}

}  // namespace plancert::codec
