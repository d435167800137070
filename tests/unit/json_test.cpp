// Unit tests of the strict reader, the canonical writer and snapshot decoding.
#include "core/codec.h"
#include "core/snapshot.h"
#include "passes/emit/emit.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace plancert {
namespace {

std::string code_of(std::string_view text) {
  try {
    decode_snapshot(text);
  } catch (const InputError& e) {
    return e.diag.code + " " + e.diag.path;
  }
  return "ok";
}

const std::string kEmptyModel = R"({"digest":"00","parents":[],"payload":{"name":"m","operations":[],"rules":[],"symbols":[],"values":[]},"schema":"ModelIR","version":"1.0.0"})";

std::string with(std::string_view from, std::string_view to) {
  std::string s = kEmptyModel;
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << from;
  return s.replace(p, from.size(), to);
}

TEST(Json, CanonicalStringEscapes) {
  EXPECT_EQ(json::quote("a\"b\\c\n\t\x01\x7f é/"), "\"a\\\"b\\\\c\\n\\t\\u0001\x7f é/\"");
  EXPECT_EQ(json::quote(std::string("\0", 1)), "\"\\u0000\"");
  EXPECT_EQ(json::quote("\x1f"), "\"\\u001f\"");
}

// Every ASCII byte: the writer escapes exactly `"`, `\` and the controls (those with a letter as
// such, the rest as \u00xx in lowercase hex), and the reader reads each spelling back, the
// letter escapes of both directions (with `\/`) among them; any other letter is JSON-6.
TEST(Json, EveryAsciiByteEscapesCanonicallyAndReadsBack) {
  const std::map<char, std::string> letters = {{'"', "\\\""}, {'\\', "\\\\"}, {'\b', "\\b"}, {'\f', "\\f"}, {'\n', "\\n"}, {'\r', "\\r"}, {'\t', "\\t"}};
  for (int c = 0; c < 0x80; ++c) {
    const std::string one(1, static_cast<char>(c));
    const char hex[] = {'0', '0', "0123456789abcdef"[c >> 4], "0123456789abcdef"[c & 15], 0};
    const std::string want = letters.contains(one[0]) ? letters.at(one[0]) : c < 0x20 ? std::string("\\u") + hex : one;
    EXPECT_EQ(json::quote(one), "\"" + want + "\"") << "byte " << c;
    EXPECT_EQ(json::Reader(json::quote(one)).string(), one) << "byte " << c;
  }
  EXPECT_EQ(json::Reader(R"("\"\\\/\b\f\n\r\t")").string(), "\"\\/\b\f\n\r\t");
  for (char e : std::string("aBeUvx0' ")) {
    try {
      (void)json::Reader(std::string("\"\\") + e + "\"").string();
      ADD_FAILURE() << "escape \\" << e << " accepted";
    } catch (const InputError& err) {
      EXPECT_EQ(err.diag.code, "JSON-6") << e;
    }
  }
}

TEST(Json, ReaderUnescapesAndValidates) {
  json::Reader r(R"(["\u00e9\ud83d\ude00\/", "x"])");
  r.begin_array();
  ASSERT_TRUE(r.next_element());
  EXPECT_EQ(r.string(), "é😀/");
  ASSERT_TRUE(r.next_element());
  EXPECT_EQ(r.string(), "x");
  EXPECT_FALSE(r.next_element());
  r.finish();
}

// The string scanner reads sixteen bytes per step (SSE2), and byte by byte within sixteen bytes
// of the end of the input: every kind of byte that ends a run of plain bytes ('"', '\', a
// control byte, a non-ASCII byte) must be found at every offset of a block, and the text after
// it must still be read.
TEST(Json, StringScannerFindsEverySpecialByteAtEveryOffset) {
  const std::pair<std::string, std::string> specials[] = {{"\\n", "\n"}, {"\\\"", "\""}, {"\xc3\xa9", "\xc3\xa9"}, {"\\u0041", "A"}, {"", ""},
                                                          {"\x7f \x7e", "\x7f \x7e"}};
  for (std::size_t at = 0; at < 40; ++at)
    for (const auto& [raw, plain] : specials) {
      const std::string pre(at, 'a'), post(at % 11, 'z');
      const std::string good = "\"" + pre + raw + post + "\"", control = "\"" + pre + (at % 2 ? '\x1f' : '\x01') + post + "\"",
                        open = "\"" + pre + raw + post;
      EXPECT_EQ(json::Reader(good).string(), pre + plain + post) << "offset " << at << ", special " << raw;
      try {
        (void)json::Reader(control).string();
        ADD_FAILURE() << "control byte at offset " << at << " accepted";
      } catch (const InputError& e) {
        EXPECT_EQ(e.diag.code, "JSON-6");
      }
      EXPECT_THROW((void)json::Reader(open).string(), InputError) << "unterminated string accepted, offset " << at;
    }
}

// next_key_is() consumes a key only when the text spells it exactly as the canonical encoding
// does (`"name":`, after a comma unless first); a prefix, a longer key, an escape, whitespace or
// the object's end consume nothing, and next_key() then reads what is there.
TEST(Json, CanonicalKeyIsMatchedInPlaceAndAnythingElseFallsBack) {
  json::Reader r(R"({"ab":1,"abc":2, "d":3,"e\u0066":4,"g":5})");
  std::string_view key;
  r.begin_object();
  EXPECT_FALSE(r.next_key_is("a"));
  EXPECT_FALSE(r.next_key_is("abc"));
  ASSERT_TRUE(r.next_key_is("ab"));
  EXPECT_EQ(r.pointer(), "/ab");
  EXPECT_EQ(r.integer(), "1");
  EXPECT_FALSE(r.next_key_is("ab"));
  EXPECT_FALSE(r.next_key_is("abcd"));
  ASSERT_TRUE(r.next_key_is("abc"));
  EXPECT_EQ(r.integer(), "2");
  EXPECT_TRUE(r.canonical());
  EXPECT_FALSE(r.next_key_is("d"));  // whitespace after the comma
  ASSERT_TRUE(r.next_key(key));
  EXPECT_EQ(key, "d");
  EXPECT_EQ(r.integer(), "3");
  EXPECT_FALSE(r.next_key_is("ef"));  // an escape
  ASSERT_TRUE(r.next_key(key));
  EXPECT_EQ(key, "ef");
  EXPECT_EQ(r.pointer(), "/ef");
  EXPECT_EQ(r.integer(), "4");
  EXPECT_FALSE(r.canonical());
  ASSERT_TRUE(r.next_key_is("g"));
  EXPECT_EQ(r.integer(), "5");
  EXPECT_FALSE(r.next_key_is("g"));
  EXPECT_FALSE(r.next_key(key));
  r.finish();
  for (std::string_view cut : {R"({"ab")", R"({"ab":)", R"({"a)", "{"}) {  // at the end of the input: no match, no read past it
    json::Reader t(cut);
    t.begin_object();
    EXPECT_EQ(t.next_key_is("ab"), cut.size() == 6) << cut;
  }
}

// 64-bit integers: up to 18 digits are summed in place (no overflow possible), longer ones and
// negative ones go through from_chars, which rejects what does not fit with SCHEMA-8.
TEST(Json, Int64DecodesExactlyAtEveryLengthAndRejectsOverflow) {
  auto dec = [](std::string_view text) -> std::string {
    json::Reader r(text);
    std::int64_t v = -1;
    try { codec::decode(r, v); } catch (const InputError& e) { return e.diag.code; }
    return std::to_string(v);
  };
  std::string digits;
  for (int k = 1; k <= 19; ++k) {
    digits += static_cast<char>('0' + k % 10);
    EXPECT_EQ(dec(digits), digits);
    EXPECT_EQ(dec("-" + digits), "-" + digits);
  }
  EXPECT_EQ(dec("0"), "0");
  EXPECT_EQ(dec("999999999999999999"), "999999999999999999");
  EXPECT_EQ(dec("9223372036854775807"), "9223372036854775807");
  EXPECT_EQ(dec("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(dec("9223372036854775808"), "SCHEMA-8");
  EXPECT_EQ(dec("-9223372036854775809"), "SCHEMA-8");
  EXPECT_EQ(dec("99999999999999999999"), "SCHEMA-8");
  for (std::string_view bad : {"-0", "-01", "00", "0123"}) EXPECT_EQ(dec(bad), "JSON-4") << bad;
  for (std::string_view bad : {"-", "-x", "-\"1\""}) EXPECT_EQ(dec(bad), "JSON-1") << bad;
  for (std::string_view bad : {"1.5", "2E3", "2e3", "-0.0"}) EXPECT_EQ(dec(bad), "JSON-3") << bad;
  EXPECT_EQ(dec("-10"), "-10");
  EXPECT_EQ(dec("10"), "10");
}

// SCHEMA-8 also bounds how many members an array or object has: at most 2^31 - 1, as indices
// are 32-bit (codec::check_size, called by the array, list and annotation decoders). No input
// within the size limit can reach it (that many members take more than 4 GB of text), so the
// bound itself is tested here: 2^31 - 1 passes, one more is SCHEMA-8.
TEST(Json, MemberCountsBeyondTheIndexRangeAreSchema8) {
  json::Reader r("[]");
  EXPECT_NO_THROW(codec::check_size(r, std::size_t{INT32_MAX}));
  std::string code = "none";
  try { codec::check_size(r, std::size_t{INT32_MAX} + 1); } catch (const InputError& e) { code = e.diag.code; }
  EXPECT_EQ(code, "SCHEMA-8");
}

// Indices are 32-bit (core/ir.h Index), alone and in lists: up to 9 digits are summed in place,
// and an index outside -2^31 .. 2^31-1 is SCHEMA-8 at its path, never truncated.
TEST(Json, Int32IndexListsDecodeExactlyAndRejectOverflow) {
  auto dec = [](std::string_view text) -> std::string {
    json::Reader r(text);
    Indices v;
    try { codec::decode(r, v); } catch (const InputError& e) { return e.diag.code + " " + e.diag.path; }
    std::string out;
    for (auto x : v) out += std::to_string(x) + ",";
    return out;
  };
  std::string digits;
  for (char d = '1'; d <= '9'; ++d) {
    digits += d;
    EXPECT_EQ(dec("[" + digits + ",-" + digits + "]"), digits + ",-" + digits + ",");
  }
  digits += '0';
  EXPECT_EQ(dec("[2147483647,-2147483648,0]"), "2147483647,-2147483648,0,");
  EXPECT_EQ(dec("[0,2147483648]"), "SCHEMA-8 /1");
  EXPECT_EQ(dec("[-2147483649]"), "SCHEMA-8 /0");
  EXPECT_EQ(dec("[" + digits + "]"), digits + ",");  // ten digits (1234567890): fits, by the checked way
  EXPECT_EQ(dec("[4294967296]"), "SCHEMA-8 /0");      // 2^32: would wrap to 0
  EXPECT_EQ(dec("[99999999999999999999]"), "SCHEMA-8 /0");
  auto lone = [](std::string_view text) -> std::string {  // a lone index (a device, a region, ...) too
    json::Reader r(text);
    Index one = 7;
    try { codec::decode(r, one); } catch (const InputError& e) { return e.diag.code; }
    return std::to_string(one);
  };
  EXPECT_EQ(lone("2147483647"), "2147483647");
  EXPECT_EQ(lone("-2147483648"), "-2147483648");
  for (std::string_view text : {"2147483648", "-2147483649", "4294967296"}) EXPECT_EQ(lone(text), "SCHEMA-8") << text;
}

// What decoding `text` into the list `v` gives: its elements and the rest of the input (and
// whether that read was canonical), or the error's code and path.
template <class V>
std::string list_outcome(std::string_view text, V v) {
  json::Reader r(text);
  try { codec::decode(r, v); } catch (const InputError& e) { return e.diag.code + " " + e.diag.path; }
  std::string s;
  for (const auto& x : v) {
    if constexpr (std::is_integral_v<typename V::value_type>) s += std::to_string(x) + ",";
    else s += "<" + std::string(x) + ">";
  }
  return s + "|" + std::string(r.rest()) + (r.canonical() ? "" : " (not canonical)");
}

// Reader::digit_list reads only the canonical form of an index list and consumes nothing
// otherwise; through it, an Indices list decodes to the same values, or fails with the same code
// at the same path, as the strict element-by-element path (which an int64 list takes) does.
TEST(Json, CanonicalIndexListsAreReadAtOnceAndAnythingElseFallsBack) {
  auto fast = [](std::string_view text) -> std::string {
    json::Reader r(text);
    std::vector<std::int32_t> out{7};  // appended to
    if (!r.digit_list(out)) return r.offset() == 0 ? "fallback" : "consumed on fallback";
    std::string s;
    for (auto x : out) s += std::to_string(x) + ",";
    return s + "|" + std::string(r.rest());
  };
  EXPECT_EQ(fast("[]"), "7,|");
  EXPECT_EQ(fast("[0]x"), "7,0,|x");
  EXPECT_EQ(fast("[0,1,22,333,999999999]]"), "7,0,1,22,333,999999999,|]");
  for (std::string_view text : {"[ ]", "[1 ]", "[ 1]", "[01]", "[00]", "[-0]", "[-1]", "[1,]", "[,1]", "[1,,2]", "[1", "[1,", "[", "", "1",
                                "[1.5]", "[1e3]", "[1E3]", "[1234567890]", "[2147483648]", "[\"1\"]", "[true]", "[1 2]", "[[1]]", "[1,2 ]"})
    EXPECT_EQ(fast(text), "fallback") << text;
  auto both = [](std::string_view text) {  // Indices (fast path first) and int64 (strict path only)
    return std::pair{list_outcome(text, Indices{}), list_outcome(text, std::vector<std::int64_t>{})};
  };
  for (std::string_view text : {"[]", "[0]", "[0,1,22,333]", "[3,1,2]]", "[ ]", "[1 ]", "[01]", "[-0]", "[-1,5]", "[1,]", "[,1]", "[1,,2]", "[1",
                                "[1,", "[", "[1.5]", "[7,1e3]", "[123456789,1234567890]", "[\"1\"]", "[true]", "[1 2]", "[9,[1]]", "{}"}) {
    const auto [indices, strict] = both(text);
    EXPECT_EQ(indices, strict) << text;
  }
}

// Reader::sole_plain_string reads only `["s"]` with `s` of plain printable ASCII (a lineage's
// sources) and consumes nothing otherwise; through it, a list of strings decodes to the same
// values, or fails with the same code at the same path, as the strict path (which a list of Names
// takes) does.
TEST(Json, ASoleCanonicalPlainStringIsReadAtOnceAndAnythingElseFallsBack) {
  auto fast = [](std::string_view text) -> std::string {
    json::Reader r(text);
    std::string_view s = "unchanged";
    if (!r.sole_plain_string(s)) return (r.offset() == 0 ? "fallback " : "consumed on fallback ") + std::string(s);
    return "<" + std::string(s) + ">|" + std::string(r.rest());
  };
  EXPECT_EQ(fast(R"(["pb0"])"), "<pb0>|");
  EXPECT_EQ(fast(R"([""]x)"), "<>|x");
  EXPECT_EQ(fast(R"([" ~!#/"]])"), "< ~!#/>|]");
  EXPECT_EQ(fast("[\"a\x7f\"]"), "<a\x7f>|");
  for (std::string_view text : {"[]", "[ \"a\"]", "[\"a\" ]", "[\"a\",\"b\"]", "[\"a\\\"b\"]", "[\"a\\u0041\"]", "[\"\xc3\xa9\"]", "[\"a\tb\"]",
                                "[\"a\"", "[\"a", "[\"", "[", "", "\"a\"", "[1]", "[[\"a\"]]", "{\"a\"]"})
    EXPECT_EQ(fast(text), "fallback unchanged") << text;
  auto both = [](std::string_view text) {  // strings (fast path first) and Names (strict path only)
    return std::pair{list_outcome(text, std::vector<std::string>{"old"}), list_outcome(text, std::vector<codec::Name>{"old"})};
  };
  for (std::string_view text : {"[\"pb0\"]", "[\"\"]", "[\"a\"]]", "[]", "[ \"a\"]", "[\"a\",\"b\"]", "[\"a\\u0041\"]", "[\"a\\\"b\"]", "[\"\xc3\xa9\"]",
                                "[\"\xc3\"]", "[\"a\tb\"]", "[\"a\"", "[\"a", "[1]", "[\"a\",]", "{}", "\"a\""}) {
    const auto [strings, names] = both(text);
    EXPECT_EQ(strings, names) << text;
  }
}

// SCHEMA-8's size limit, shared by every array and annotation object: an input that reaches it
// takes gigabytes, so its boundary is tested on the check that the decoders call.
TEST(Json, ArraysAndAnnotationObjectsHoldAtMostInt32MaxMembers) {
  json::Reader r("[]");
  EXPECT_NO_THROW(codec::check_size(r, 2147483647U));
  try {
    codec::check_size(r, 2147483648U);
    ADD_FAILURE() << "2^31 members accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diag.code, "SCHEMA-8");
  }
}

TEST(Json, SnapshotDecodeErrorsCarryCodeAndPointer) {
  EXPECT_EQ(code_of(kEmptyModel), "ok");
  EXPECT_EQ(code_of(""), "JSON-1 ");
  EXPECT_EQ(code_of("   "), "JSON-1 ");
  EXPECT_EQ(code_of(kEmptyModel.substr(0, 60)).substr(0, 6), "JSON-1");
  EXPECT_EQ(code_of(kEmptyModel + "x"), "JSON-1 ");
  EXPECT_EQ(code_of(with(R"("name":"m")", R"("name":"m","name":"n")")), "JSON-2 /payload/name");
  EXPECT_EQ(code_of(with(R"("name":"m")", R"("name":1.5)")), "JSON-3 /payload/name");
  EXPECT_EQ(code_of(with(R"("operations":[])", R"("operations":[01])")), "JSON-4 /payload/operations/0");
  // a malformed key: the pointer ends at its object, not at the key before it
  EXPECT_EQ(code_of(with(R"("operations":[])", R"("oper\qations":[])")), "JSON-6 /payload");
  EXPECT_EQ(code_of(with(R"("name":"m")", "\"name\":\"\xff\"")), "JSON-6 /payload/name");
  EXPECT_EQ(code_of(with(R"("name":"m")", R"("name":"\ud800")")), "JSON-6 /payload/name");
  EXPECT_EQ(code_of(with(R"("ModelIR")", R"("ModelIRx")")), "SCHEMA-1 /schema");
  EXPECT_EQ(code_of(with(R"("1.0.0")", R"("2.0.0")")), "SCHEMA-2 /version");
  EXPECT_EQ(code_of(with(R"("name":"m",)", "")), "SCHEMA-3 /payload");
  EXPECT_EQ(code_of(with(R"("name":"m")", R"("name":"m","extra":1)")), "SCHEMA-4 /payload/extra");
  // keys out of order after canonical ones (read in place), then key by key: accepted, strictly
  EXPECT_EQ(code_of(with(R"("operations":[],"rules":[])", R"("rules":[],"operations":[])")), "ok");
  EXPECT_EQ(code_of(with(R"("operations":[],"rules":[])", R"("rules":[],"operations":[],"rules":[])")), "JSON-2 /payload/rules");
  EXPECT_EQ(code_of(with(R"("operations":[],"rules":[])", R"("rules":[],"extra":[])")), "SCHEMA-4 /payload/extra");
  EXPECT_EQ(code_of(with(R"("operations":[],"rules":[])", R"("rules":[])")), "SCHEMA-3 /payload");
  EXPECT_EQ(code_of(with(R"("name":"m")", R"("name":7)")), "SCHEMA-5 /payload/name");
  EXPECT_EQ(code_of(with(R"("symbols":[])", R"("symbols":[{"axis":"nope","divisible_by":"1","integer":true,"max":null,"min":"1","name":"B"}])")),
            "SCHEMA-6 /payload/symbols/0/axis");
  EXPECT_EQ(code_of(with(R"("symbols":[])", R"("symbols":[{"axis":"workload","divisible_by":"01","integer":true,"max":null,"min":"1","name":"B"}])")),
            "SCHEMA-7 /payload/symbols/0/divisible_by");
  EXPECT_EQ(code_of(with(R"("operations":[])", R"("operations":[{"attrs":{},"effects":[{"kind":"read","value":99999999999999999999}]}])")),
            "SCHEMA-8 /payload/operations/0/effects/0/value");
}

// skip() returns one value's extent, read strictly and iteratively: strings with escaped
// quotes are skipped whole, and an error deep inside has its JSON Pointer.
TEST(Json, SkipReturnsTheExtentOfOneValueReadStrictly) {
  auto skip = [](std::string_view text) {
    json::Reader r(text);
    try {
      std::string out(r.skip());
      return out + "|" + std::string(text.substr(r.offset()));
    } catch (const InputError& e) {
      return e.diag.code + " " + e.diag.path;
    }
  };
  EXPECT_EQ(skip(R"( [1,{"a":"]}\"\\"}],2)"), R"([1,{"a":"]}\"\\"}]|,2)");
  EXPECT_EQ(skip(R"("abc" 7)"), R"("abc"| 7)");
  EXPECT_EQ(skip("7,"), "7|,");
  EXPECT_EQ(skip("[1,2"), "JSON-1 /1");
  EXPECT_EQ(skip(R"({"a":"x)"), "JSON-1 /a");
  EXPECT_EQ(skip("[1}"), "JSON-1 /0");
  EXPECT_EQ(skip("[1,+2]"), "JSON-1 /1");  // a byte that starts no value: peek's table says so
  EXPECT_EQ(skip(R"({"a":x})"), "JSON-1 /a");
  EXPECT_EQ(skip(R"({"a":[1,01]})"), "JSON-4 /a/1");
  EXPECT_EQ(skip(std::string(600, '[')).substr(0, 9), "JSON-5 /0");
}

// An integer array decodes into reused scratch and is then allocated once at its exact size,
// short or long (no doubling, no estimate from the text); a malformed one fails with its JSON
// code at the element, and the next array decodes cleanly from the same scratch.
TEST(Json, IntegerArraysDecodeAtTheirExactSize) {
  auto decoded = [](const std::string& text) {
    json::Reader r(text);  // the reader views the text: it must outlive the reader
    std::vector<std::int64_t> v{9, 9, 9, 9, 9, 9, 9, 9, 9};  // previous contents do not leak in
    codec::decode(r, v);
    return v;
  };
  EXPECT_TRUE(decoded("[]").empty());
  EXPECT_TRUE(decoded("[ \n]").empty());
  EXPECT_EQ(decoded("[7]"), std::vector<std::int64_t>{7});
  EXPECT_EQ(decoded("[5046, 9996,9999]"), (std::vector<std::int64_t>{5046, 9996, 9999}));
  std::string ints = "[";
  for (int i = 0; i < 100000; ++i) ints += std::to_string(i) + ",";
  ints += "100000]";
  std::vector<std::int64_t> fresh;
  json::Reader r(ints);
  codec::decode(r, fresh);
  ASSERT_EQ(fresh.size(), 100001u);
  EXPECT_EQ(fresh.capacity(), fresh.size());
  EXPECT_EQ(fresh[77777], 77777);
  EXPECT_EQ(fresh.back(), 100000);
  std::string commas = "[1" + std::string(1 << 20, ',');  // malformed, no ']'
  try {
    decoded(commas);
    ADD_FAILURE() << "a malformed array decoded";
  } catch (const InputError& e) {
    EXPECT_EQ(e.diag.code, "JSON-1");
    EXPECT_EQ(e.diag.path, "/1");
  }
  EXPECT_EQ(decoded("[3,1,2]"), (std::vector<std::int64_t>{3, 1, 2}));
}

// codec::same compares short strings as overlapping words: every length up to 40 with a
// difference at every position (and none) agrees with std::string_view's ==.
TEST(Json, SameAgreesWithStringEqualityAtEveryLengthAndPosition) {
  for (std::size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + (i * 7) % 26);
    EXPECT_TRUE(codec::same(a, a)) << n;
    EXPECT_TRUE(codec::same(a, std::string(a))) << n;
    EXPECT_FALSE(codec::same(a, a + "y")) << n;
    for (std::size_t i = 0; i < n; ++i) {
      std::string b = a;
      b[i] = static_cast<char>(b[i] ^ 0x20);
      EXPECT_FALSE(codec::same(a, b)) << n << " " << i;
      EXPECT_FALSE(codec::same(b, a)) << n << " " << i;
    }
  }
}

// Attrs is a flat map, whose keys (unlike std::map's) can be changed through an iterator. The
// encoder refuses keys out of order or repeated, so no digest is computed over such a map and
// the gate never commits one.
TEST(Json, AnnotationKeysOutOfOrderOrRepeatedAreNeverEncoded) {
  ModelIR m;
  m.name = "m";
  auto& attrs = m.operations.emplace_back().attrs;
  attrs = {{"b", "2"}, {"a", "1"}, {"c", "3"}};  // inserted out of order: the map sorts them
  const std::string d = digest_of(m);
  EXPECT_EQ(attrs.begin()->first, "a");
  attrs.begin()->first = "d";  // now out of order
  EXPECT_THROW(digest_of(m), std::logic_error);
  attrs.begin()->first = "b";  // now repeated
  EXPECT_THROW(digest_of(m), std::logic_error);
  attrs.begin()->first = "a";
  EXPECT_EQ(digest_of(m), d);
}

// The canonical empty object `{}` is taken at once: it clears what the map held, consumes exactly
// those two bytes and keeps the reader canonical; `{ }` takes the general path and is marked
// non-canonical; an object with entries is not mistaken for an empty one.
TEST(Json, EmptyAnnotationsAreTakenAtOnceAndExactly) {
  Attrs a{{"stale", "1"}};
  json::Reader r(R"({}],"next")");
  codec::decode(r, a);
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(r.rest(), R"(],"next")");
  EXPECT_TRUE(r.canonical());
  json::Reader spaced("{ }");
  a = {{"stale", "1"}};
  codec::decode(spaced, a);
  EXPECT_TRUE(a.empty());
  EXPECT_FALSE(spaced.canonical());
  json::Reader full(R"({"a":"1"})");
  codec::decode(full, a);
  ASSERT_EQ(a.size(), 1U);
  EXPECT_EQ(a.begin()->second, "1");
  EXPECT_TRUE(full.rest().empty());
  json::Reader open("{");
  EXPECT_THROW(codec::decode(open, a), InputError);
}

// Annotations in any order decode to the sorted map (marked non-canonical, so the digest comes
// from re-encoding); a key repeated anywhere in the object is JSON-2. The entries are sorted
// once, not inserted one by one, so a long object in descending order stays n log n.
TEST(Json, AnnotationsInAnyOrderDecodeSortedAndRepeatsAnywhereAreRejected) {
  std::string attrs;
  for (int i = 20000; i-- > 0;) attrs += (attrs.empty() ? "" : ",") + std::string("\"k") + std::to_string(100000 + i) + "\":\"" + std::to_string(i) + "\"";
  Snapshot<ModelIR> s;
  s.payload.name = "m";
  s.payload.operations.emplace_back().id = "o";
  const std::string base = encode_snapshot(s);
  auto model = [&](const std::string& a) { std::string t = base; return t.replace(t.find(R"("attrs":{})"), 10, R"("attrs":{)" + a + "}"); };
  std::string digest;
  auto snap = decode_snapshot(model(attrs), &digest);
  const auto& m = std::get<Snapshot<ModelIR>>(snap).payload;
  ASSERT_EQ(m.operations.at(0).attrs.size(), 20000u);
  EXPECT_EQ(m.operations[0].attrs.begin()->first, "k100000");
  EXPECT_EQ(m.operations[0].attrs.rbegin()->second, "19999");
  EXPECT_TRUE(std::is_sorted(m.operations[0].attrs.begin(), m.operations[0].attrs.end(), [](const auto& a, const auto& b) { return a.first < b.first; }));
  EXPECT_EQ(digest, digest_of(m));
  EXPECT_EQ(code_of(model(attrs + R"(,"k110000":"again")")), "JSON-2 /payload/operations/0/attrs");
  EXPECT_EQ(code_of(model(R"("b":"1","a":"2","b":"3")")), "JSON-2 /payload/operations/0/attrs");
}

// A shared Work (a command's) whose text equals one decoded recently is that one's value
// (codec::Shared): the same text gives the same value, one copy, the reader continues after it,
// and a text that differs anywhere, even in its last byte, is decoded (and rejected) in full.
// Non-canonical texts never enter.
TEST(Json, RepeatedWorkTextsAreSharedAndAnyOtherTextIsDecoded) {
  const std::string w = R"({"matrix_ops":"2*B*S","message_bytes":"0","persistent_bytes":"0","read_bytes":"7","temporary_bytes":"0","vector_ops":"0","write_bytes":"9"})";
  auto decode_works = [](const std::string& text) {
    json::Reader r(text, "/w");
    std::vector<codec::Shared<Work>> v;
    codec::decode(r, v);
    r.finish();
    return std::pair{v, r.canonical()};
  };
  auto code = [&](const std::string& text) {
    try { decode_works(text); } catch (const InputError& e) { return e.diag.code + " " + e.diag.path; }
    return std::string("ok");
  };
  auto other = [&](std::string_view from, std::string_view to) { std::string t = w; return t.replace(t.find(from), from.size(), to); };
  const auto [v, canonical] = decode_works("[" + w + "," + w + "," + other(R"("9")", R"("8")") + "," + w + "]");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_TRUE(canonical);
  EXPECT_EQ(codec::to_canonical(v[0]), w);
  EXPECT_EQ(codec::to_canonical(v[1]), w);
  EXPECT_EQ(v[2]->write_bytes, Expr(8));
  EXPECT_EQ(codec::to_canonical(v[3]), w);
  EXPECT_EQ(v[1]->matrix_ops, Expr(2) * Expr::symbol("B") * Expr::symbol("S"));
  EXPECT_EQ(&*v[0], &*v[1]);  // one value for the repeated text
  EXPECT_EQ(&*v[0], &*v[3]);
  EXPECT_NE(&*v[0], &*v[2]);
  // After the same text, anything that is not that text is read as usual.
  EXPECT_EQ(code("[" + w + "," + other(R"("9")", R"("9.")") + "]"), "SCHEMA-7 /w/1/write_bytes");
  EXPECT_EQ(code("[" + w + "," + other(R"("9"})", R"("9","x":"1"})") + "]"), "SCHEMA-4 /w/1/x");
  EXPECT_EQ(code("[" + w + "," + w.substr(0, w.size() - 1) + "]"), "JSON-1 /w/1/write_bytes");
  EXPECT_EQ(code("[" + w + "," + w + "x]"), "JSON-1 /w/1");
  EXPECT_EQ(code("[" + w + "," + w + "," + other("2*B*S", "S*B*2") + "]"), "SCHEMA-7 /w/2/matrix_ops");
  // A text with whitespace decodes to the same value and leaves the reader non-canonical.
  const auto [spaced, canon] = decode_works("[" + other(R"(,"write_bytes")", R"(, "write_bytes")") + "," + w + "]");
  EXPECT_FALSE(canon);
  EXPECT_EQ(codec::to_canonical(spaced.at(0)), w);
  EXPECT_EQ(codec::to_canonical(spaced.at(1)), w);
  EXPECT_NE(&*spaced.at(0), &*spaced.at(1));  // the spaced text did not enter
  // Keys out of order: the value is the same, the text is not canonical, every time it is read
  // (were it cached, a later reader would take it as canonical and hash it as read).
  const std::string unordered = R"({"message_bytes":"0","persistent_bytes":"0","read_bytes":"7","temporary_bytes":"0","vector_ops":"0","write_bytes":"9","matrix_ops":"2*B*S"})";
  for (int i = 0; i < 2; ++i) {
    const auto [u, c] = decode_works("[" + unordered + "]");
    EXPECT_FALSE(c);
    EXPECT_EQ(codec::to_canonical(u.at(0)), w);
  }
}

// codec::Shared: empty, it holds T{} (and encodes as T{} does); a copy is the same value; a new
// value is another; for_each_expr reaches the Exprs inside (and refuses plain pointers).
// The cache of repeated works is direct-mapped by a hash of the whole text: 32 works that differ
// only in their last quantity's digits (the last bytes before the `}`), read twice, are
// nearly all taken from the cache the second time. A hash that left out the tail would send
// them all to one slot and miss every time (checked against that mistake). It does not judge
// which bits pick the slot: the low 10 bits of this hash pass it too; the 100k plan's miss
// count (bench/PERFORMANCE_LOG.md, session 45) is what chose the top ones.
TEST(Json, WorksThatDifferOnlyInTheirLastBytesStillHitTheCache) {
  std::string text = "[";
  for (int round = 0; round < 2; ++round)
    for (int k = 0; k < 32; ++k)
      text += std::string(round + k ? "," : "") + R"({"matrix_ops":"2*B*S","message_bytes":"0","persistent_bytes":"0","read_bytes":"7","temporary_bytes":"0","vector_ops":"0","write_bytes":")" +
              std::to_string(1000 + k) + "\"}";
  text += "]";
  json::Reader r(text);  // the reader views the text: it must outlive the reader
  std::vector<codec::Shared<Work>> v;
  codec::decode(r, v);
  ASSERT_EQ(v.size(), 64u);
  int shared = 0;
  for (int k = 0; k < 32; ++k) {
    EXPECT_EQ(v[32 + k]->write_bytes, Expr(1000 + k));
    shared += &*v[k] == &*v[32 + k];
  }
  EXPECT_GE(shared, 28) << "of 32 repeated works";
}

TEST(Json, SharedValuesAreImmutableAndCopiesShareThem) {
  const codec::Shared<Work> empty;
  EXPECT_EQ(codec::to_canonical(empty), codec::to_canonical(Work{}));
  EXPECT_EQ(empty->read_bytes, Expr());
  Work w;
  w.read_bytes = Expr::symbol("B");
  const codec::Shared<Work> a = w, b = a, c = w;
  EXPECT_EQ(&*a, &*b);
  EXPECT_NE(&*a, &*c);
  EXPECT_EQ(codec::to_canonical(a), codec::to_canonical(w));
  w.read_bytes = Expr(1);  // the shared values are copies: unchanged
  EXPECT_EQ(a->read_bytes, Expr::symbol("B"));
  int n = 0;
  codec::for_each_expr(a, [&](const Expr& e) { n += e == Expr::symbol("B") ? 100 : 1; });
  EXPECT_EQ(n, 106);
  // Only shared values are followed, not anything that dereferences (a pointer, an iterator):
  // for_each_expr refuses those at compile time (Codec.ForEachExprRefusesUnknownTypes, which
  // compiles tests/unit/for_each_expr_refuses.cpp), as it refuses every type it does not know.
  static_assert(codec::ExprFree<Attrs> && codec::ExprFree<Int> && codec::ExprFree<Storage> && codec::ExprFree<std::int64_t>);
  static_assert(!codec::ExprFree<const Expr*> && !codec::ExprFree<std::map<std::string, Expr>> && !codec::ExprFree<std::pair<int, Expr>>);
}

// decode_snapshot decodes the payload where it stands when it knows the schema (read before the
// payload, or guessed from the text's last `,"schema":"`); otherwise, or when that fails, it
// finds the payload's extent first. Either way the result, the digest and the errors agree.
TEST(Json, PayloadDecodedInPlaceOrAfterItsExtentAlike) {
  Snapshot<ModelIR> s;
  s.payload.name = "m";
  s.payload.operations.emplace_back().attrs = {{"a", "x"}, {"schema", "ConcretePlanIR"}};  // spells `,"schema":"` in the payload
  s.digest = digest_of(s.payload);
  const std::string canon = encode_snapshot(s), want = "ModelIR " + s.digest + " " + canon;
  auto decoded = [](const std::string& t) {
    std::string d;
    auto x = decode_snapshot(t, &d);
    return std::string(schema_of(x)) + " " + d + " " + encode_snapshot(std::get<Snapshot<ModelIR>>(x));
  };
  EXPECT_EQ(decoded(canon), want);
  const std::size_t at = canon.rfind(",\"schema\":");
  std::string spaced = canon;  // the last `,"schema":"` is now the payload's: a wrong guess
  spaced.replace(at, 10, ", \"schema\" :");
  EXPECT_EQ(decoded(spaced), want);
  const std::string tail = canon.substr(at + 1, canon.size() - at - 2);  // "schema":"ModelIR","version":"1.0.0"
  EXPECT_EQ(decoded("{" + tail + "," + canon.substr(1, at - 1) + "}"), want);  // schema and version first
  EXPECT_EQ(code_of(canon.substr(0, at) + "}"), "SCHEMA-3 ");  // no schema, no version
  EXPECT_EQ(code_of(canon.substr(0, at) + ",\"schema\":\"ModelIR\",\"version\":\"2.0.0\"}"), "SCHEMA-2 /version");
  EXPECT_EQ(code_of(canon.substr(0, at) + ",\"schema\":\"ConcretePlanIR\",\"version\":\"1.0.0\"}").substr(0, 10), "SCHEMA-4 /");
}

// A long array of structs is reserved once, when it reaches 4,096 elements, sized from their
// length; all such reservations of one reader stay within 4 bytes of capacity per input byte.
// A short array is never reserved, even when a long text follows it. A reservation more than
// twice what the array used is shrunk to fit when the array ends.
TEST(Json, LongArraysAreReservedOnceWithinTheBudget) {
  auto tokens = [](int n) {
    std::string a = "[";
    for (int i = 0; i < n; ++i) a += std::string(i ? "," : "") + "{\"id\":\"\"}";
    return a + "]";
  };
  constexpr std::size_t kFirst = 4096 * 10 - 1;  // the first 4,096 elements: "{"id":""}" is 9 bytes, each after the first with its comma
  const std::string one = tokens(6000);
  std::vector<Token> v;
  json::Reader r(one);
  codec::decode(r, v);
  EXPECT_EQ(v.size(), 6000u);
  EXPECT_EQ(v.capacity(), (one.size() - 1) * 4096 / kFirst);  // 6,000: one growth from 4,096, no doubling to 8,192
  EXPECT_EQ(v.capacity(), 6000u);
  // an array of two arrays of n and m elements, decoded
  auto pair = [&](int n, int m) {
    const std::string text = "[" + tokens(n) + "," + tokens(m) + "]";
    std::vector<std::vector<Token>> w;
    json::Reader rw(text);
    codec::decode(rw, w);
    EXPECT_EQ(w.size(), 2u);
    return std::pair{std::move(w), text.size()};  // moved: a copy would not keep the capacities
  };
  // the first array takes 32 bytes per 9 input bytes: too little budget is left for the second
  const auto [two, two_size] = pair(6000, 5000);
  EXPECT_EQ(two[0].capacity(), (two_size - 2) * 4096 / kFirst);  // the estimate runs to the end of the input
  EXPECT_LE(two[0].capacity() * sizeof(Token), 4 * two_size);
  EXPECT_EQ(two[1].capacity(), 8192u);  // grown by doubling, not reserved
  // a short array at the start of a long input: before, its first element's length made it
  // reserve for the whole input (on huge pages, a 2 MiB page touched for each such array)
  const auto [short_first, short_size] = pair(100, 6000);
  EXPECT_EQ(short_first[0].size(), 100u);
  EXPECT_LT(short_first[0].capacity(), 4096u);
  EXPECT_EQ(short_first[1].capacity(), 6000u);
  // an estimate more than twice the array (a long array follows it) is handed back once the
  // array ends: a 1M-command plan's buffers array held 519 MB of address space it never used,
  // which failed the run under `ulimit -v` or strict overcommit
  const auto [overshoot, overshoot_size] = pair(6000, 30000);
  EXPECT_EQ(overshoot[0].capacity(), 6000u);
  EXPECT_EQ(overshoot[1].size(), 30000u);
}

TEST(Json, DeepNestingIsRejectedWithoutRecursion) {
  std::string deep(200000, '[');
  deep += std::string(200000, ']');
  // not an object, but too deep to be JSON this reader accepts: the lexical error comes first
  EXPECT_EQ(code_of(deep).substr(0, 9), "JSON-5 /0");
  EXPECT_EQ(code_of(with(R"("name":"m")", "\"name\":" + deep)).substr(0, 8), "JSON-5 /");
  std::string deepobj;
  for (int i = 0; i < 200000; ++i) deepobj += "{\"a\":";
  EXPECT_EQ(code_of(with(R"("name":"m")", "\"name\":" + deepobj)).substr(0, 6), "JSON-5");
}

TEST(Json, RoundTripIsByteIdentical) {
  ModelIR m;
  m.name = "t\n\"q\"";
  m.rules = {"frontend"};
  Symbol s;
  s.name = "B";
  s.max = Int(64);
  m.symbols.push_back(s);
  ModelValue v;
  v.id = "x";
  v.dtype = "bf16";
  v.role = ValueRole::input;
  v.lineage.rule = "frontend";
  v.shape = {Expr::symbol("B"), Expr(Int("123456789012345678901234567890"))};
  m.values.push_back(v);
  auto snap = make_snapshot(m, {});
  std::string bytes = encode_snapshot(snap);
  auto back = decode_snapshot(bytes);
  EXPECT_EQ(encode_snapshot(std::get<Snapshot<ModelIR>>(back)), bytes);
  EXPECT_EQ(recompute_digest(back), snap.digest);
  // whitespace and key order do not change the digest (it is over the canonical payload)
  std::string pretty = bytes;
  pretty.insert(1, "\n  ");
  EXPECT_EQ(recompute_digest(decode_snapshot(pretty)), snap.digest);
}

}  // namespace
}  // namespace plancert
