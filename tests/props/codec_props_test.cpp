// SPDX-License-Identifier: Apache-2.0
// Laws of the canonical encoding: decode(encode(s)) re-encodes to identical bytes; the
// digest survives the round trip; and it equals an independent BLAKE2b-256 (computed here
// with libsodium directly) of "plancert/" + schema + NUL + the canonical payload bytes.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "passes/emit/emit.h"
#include "props/any.h"

#include <nlohmann/json.hpp>
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

// decode_snapshot's payload digest is digest_of the decoded payload whichever way it got it:
// hashing the bytes as read (canonical text) or re-encoding (anything else). Texts with the
// meaning of a snapshot but with whitespace, an escape or two keys swapped must give the stored
// digest, not a hash of their own bytes: this fails if the reader misses any of the three.
RC_GTEST_PROP(Canonical, DecoderDigestIsTheDigestOfTheDecodedPayload, ()) {
  const Chain c = *full_chain();
  const AnySnapshot s = c.at(static_cast<Layer>(*rc::gen::inRange(0, 7)));
  const std::string stored = digest_of_any(s);
  const std::string bytes = encode_any(s);
  std::string got;
  decode_snapshot(bytes, &got);
  RC_ASSERT(got == stored);
  const std::size_t from = bytes.find("\"payload\":"), to = bytes.rfind(",\"schema\":");
  std::string text;
  switch (*rc::gen::inRange(0, 3)) {
    case 0: {  // whitespace somewhere inside the payload (outside strings)
      std::vector<std::size_t> spots;
      bool in_str = false;
      for (std::size_t k = from + 10; k < to; ++k) {
        if (in_str) {
          if (bytes[k] == '\\') ++k;
          else in_str = bytes[k] != '"';
          continue;
        }
        if (bytes[k] == '"') in_str = true;
        if (bytes[k] == ',' || bytes[k] == ':' || bytes[k] == '{' || bytes[k] == '[') spots.push_back(k + 1);
      }
      const std::size_t at = *rc::gen::elementOf(spots);
      text = bytes.substr(0, at) + *rc::gen::element<std::string>(" ", "\n", "\t", "\r\n  ") + bytes.substr(at);
      break;
    }
    case 1: {  // one plain character of a string (a key or a value) written as a \u escape
      std::vector<std::size_t> spots;
      bool in_str = false;
      for (std::size_t k = from + 10; k < to; ++k) {
        if (!in_str) { in_str = bytes[k] == '"'; continue; }
        if (bytes[k] == '\\') { ++k; continue; }
        if (bytes[k] == '"') in_str = false;
        else if (static_cast<unsigned char>(bytes[k]) < 0x80) spots.push_back(k);
      }
      RC_PRE(!spots.empty());
      const std::size_t at = *rc::gen::elementOf(spots);
      char u[7];
      std::snprintf(u, sizeof u, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(bytes[at])));
      text = bytes.substr(0, at) + u + bytes.substr(at + 1);
      break;
    }
    default: {  // two keys of one object of the payload swapped
      auto doc = nlohmann::ordered_json::parse(bytes);
      std::vector<nlohmann::ordered_json*> objects, todo{&doc["payload"]};
      while (!todo.empty()) {
        auto* v = todo.back();
        todo.pop_back();
        if (v->is_object() && v->size() >= 2) objects.push_back(v);
        if (v->is_structured())
          for (auto& x : *v) todo.push_back(&x);
      }
      RC_PRE(!objects.empty());
      auto& obj = **rc::gen::elementOf(objects);
      const auto i = *rc::gen::inRange<std::size_t>(0, obj.size() - 1);
      nlohmann::ordered_json swapped = nlohmann::ordered_json::object();
      std::vector<std::pair<std::string, nlohmann::ordered_json>> items;
      for (auto it = obj.begin(); it != obj.end(); ++it) items.emplace_back(it.key(), *it);
      std::swap(items[i], items[i + 1]);
      for (auto& [k, v] : items) swapped[k] = std::move(v);
      obj = std::move(swapped);
      text = doc.dump();
    }
  }
  RC_ASSERT(text != bytes);
  got.clear();
  const AnySnapshot back = decode_snapshot(text, &got);
  RC_ASSERT(recompute_digest(back) == stored);
  RC_ASSERT(got == stored);
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
