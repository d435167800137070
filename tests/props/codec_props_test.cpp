// SPDX-License-Identifier: Apache-2.0
// Laws of the canonical encoding: decode(encode(s)) re-encodes to identical bytes; the
// digest survives the round trip; and it equals an independent BLAKE2b-256 (computed here
// with libsodium directly) of "plancert/" + schema + NUL + the canonical payload bytes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "props/any.h"

#include <sodium.h>

#include <array>

namespace plancert::props {
namespace {

std::string reference_digest(std::string_view schema, std::string_view payload) {
  std::string msg = "plancert/";
  msg += schema;
  msg.push_back('\0');
  msg += payload;
  std::array<unsigned char, 32> out{};
  crypto_generichash(out.data(), out.size(), reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), nullptr, 0);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned char ch : out) {
    hex += kHex[ch >> 4];
    hex += kHex[ch & 15];
  }
  return hex;
}

std::string payload_bytes(const AnySnapshot& s) {
  return std::visit([](const auto& x) { return codec::to_canonical(x.payload); }, s);
}

TEST(Reference, LibsodiumInitialises) { ASSERT_GE(sodium_init(), 0); }

RC_GTEST_PROP(Canonical, RoundTripReencodesToIdenticalBytes, ()) {
  const Chain c = *full_chain();
  for (std::size_t i = 0; i < 7; ++i) {
    const AnySnapshot s = c.at(static_cast<Layer>(i));
    const std::string bytes = encode_any(s);
    const AnySnapshot back = decode_snapshot(bytes);
    RC_ASSERT(back.index() == s.index());
    const std::string again = encode_any(back);
    if (again != bytes) RC_FAIL("re-encoding differs:\n  " + bytes + "\n  " + again);
    RC_ASSERT(payload_bytes(back) == payload_bytes(s));
    RC_ASSERT(verify_snapshot(back).ok());
  }
}

RC_GTEST_PROP(Canonical, DigestIsStableAndMatchesIndependentBlake2b, ()) {
  const Chain c = *full_chain();
  for (std::size_t i = 0; i < 7; ++i) {
    const AnySnapshot s = c.at(static_cast<Layer>(i));
    const std::string stored = digest_of_any(s);
    const std::string payload = payload_bytes(s);
    RC_ASSERT(stored == recompute_digest(s));
    RC_ASSERT(stored == reference_digest(schema_of(s), payload));
    RC_ASSERT(stored == digest_bytes(schema_of(s), payload));
    const AnySnapshot back = decode_snapshot(encode_any(s));
    RC_ASSERT(recompute_digest(back) == stored);
    RC_ASSERT(digest_of_any(back) == stored);
    // the payload bytes appear verbatim in the snapshot file
    RC_ASSERT(encode_any(s).find("\"payload\":" + payload + ",\"schema\":") != std::string::npos);
  }
}

// Canonical JSON has no insignificant whitespace and no floats, and keys are sorted: a
// structural scan of the bytes (outside strings).
RC_GTEST_PROP(Canonical, BytesHaveNoWhitespaceOrFloatsOutsideStrings, ()) {
  const Chain c = *full_chain();
  for (std::size_t i = 0; i < 7; ++i) {
    const std::string b = encode_any(c.at(static_cast<Layer>(i)));
    bool in_str = false;
    for (std::size_t k = 0; k < b.size(); ++k) {
      const char ch = b[k];
      if (in_str) {
        if (ch == '\\') ++k;
        else if (ch == '"') in_str = false;
        continue;
      }
      RC_ASSERT(ch != ' ' && ch != '\n' && ch != '\t' && ch != '\r' && ch != '.');
      if (ch >= '0' && ch <= '9' && k + 1 < b.size()) RC_ASSERT(b[k + 1] != 'e' && b[k + 1] != 'E');
      if (ch == '"') in_str = true;
    }
  }
}

// Distinct payloads (of one chain) have distinct digests; a one-character payload change
// changes the digest.
RC_GTEST_PROP(Canonical, PayloadChangeChangesDigest, ()) {
  Chain c = *chain(Layer::model);
  const std::string before = c.model.digest;
  c.model.payload.name += "x";
  RC_ASSERT(digest_of(c.model.payload) != before);
}

}  // namespace
}  // namespace plancert::props
