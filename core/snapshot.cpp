// SPDX-License-Identifier: Apache-2.0
#include "core/snapshot.h"

#include <sodium.h>

#include <algorithm>
#include <array>
#include <new>
#include <optional>
#include <stdexcept>

namespace plancert {
namespace {

class Hasher {
 public:
  explicit Hasher(std::string_view schema) {
    // No sodium_init() here: hashing needs no initialisation (its only global, the compression
    // function, starts as the portable code). Which code is faster depends on the CPU, so the
    // driver picks it by measuring (cli::use_faster_blake2b, README, Performance). Every
    // variant gives the same digest.
    crypto_generichash_init(&st_, nullptr, 0, crypto_generichash_BYTES);
    update("plancert/");
    update(schema);
    update(std::string_view("\0", 1));
  }
  void update(std::string_view b) { crypto_generichash_update(&st_, reinterpret_cast<const unsigned char*>(b.data()), b.size()); }
  std::string hex() {
    std::array<unsigned char, crypto_generichash_BYTES> out{};
    crypto_generichash_final(&st_, out.data(), out.size());
    std::array<char, 2 * crypto_generichash_BYTES + 1> h{};  // lowercase hex digits and a NUL
    sodium_bin2hex(h.data(), h.size(), out.data(), out.size());
    return h.data();
  }

 private:
  crypto_generichash_state st_{};
};

// Decodes one payload value from `r` (which is inside `text`) as a P, with its digest.
template <class P>
AnySnapshot decode_payload(json::Reader& r, std::string_view text, std::string* payload_digest) {
  Snapshot<P> s;
  const std::size_t begin = r.offset();
  codec::decode(r, s.payload);
  // Canonical text is the encoding of the decoded payload byte for byte: hash it as read.
  if (payload_digest) *payload_digest = r.canonical() ? digest_bytes(P::kSchema, text.substr(begin, r.offset() - begin)) : digest_of(s.payload);
  return s;
}

using Decoder = AnySnapshot (*)(json::Reader&, std::string_view, std::string*);
template <class P>
constexpr std::pair<std::string_view, Decoder> entry() { return {P::kSchema, &decode_payload<P>}; }
constexpr std::array kDecoders{entry<ModelIR>(), entry<DistributedTaskIR>(), entry<PortablePlanIR>(), entry<ConcretePlanIR>(),
                               entry<TimelineBundle>(), entry<MachineIR>(), entry<ObservationSet>()};
Decoder decoder_of(std::string_view schema) {
  auto it = std::find_if(kDecoders.begin(), kDecoders.end(), [&](const auto& e) { return e.first == schema; });
  return it == kDecoders.end() ? nullptr : it->second;
}

// `direct`: decode the payload where it stands, its type known from a schema read before it or
// guessed from the last `,"schema":"` of the text (canonical text names it after the payload).
// Otherwise the payload's extent is found first and it is decoded once the schema is known.
AnySnapshot decode_envelope(std::string_view text, std::string* payload_digest, bool direct) {
  json::Reader r(text);
  if (r.peek() == json::Kind::End) r.fail("JSON-1", "empty input");
  if (r.peek() != json::Kind::Object) r.fail("SCHEMA-5", "a snapshot must be a JSON object");
  r.begin_object();
  std::optional<std::string> schema, version, digest;
  std::optional<std::vector<std::string>> parents;
  std::optional<std::string_view> payload;
  std::optional<AnySnapshot> decoded;
  std::string_view guess;
  std::string_view key;
  auto once = [&](bool present) { if (present) r.fail("JSON-2", "duplicate key \"" + std::string(key) + "\""); };
  while (r.next_key(key)) {
    if (key == "schema") { once(schema.has_value()); schema = r.string(); }
    else if (key == "version") { once(version.has_value()); version = r.string(); }
    else if (key == "digest") { once(digest.has_value()); digest = r.string(); }
    else if (key == "parents") { once(parents.has_value()); codec::decode(r, parents.emplace()); }
    else if (key == "payload") {
      once(payload.has_value());
      if (r.peek() != json::Kind::Object) r.fail("SCHEMA-5", "payload must be an object");
      const std::size_t g = schema || !direct ? std::string_view::npos : text.rfind(",\"schema\":\"");  // the other path needs no guess
      guess = schema ? *schema : g == std::string_view::npos ? "" : text.substr(g + 11, text.find('"', g + 11) - (g + 11));
      if (Decoder fn = direct ? decoder_of(guess) : nullptr) decoded = fn(r, text, payload_digest), payload = "";
      else payload = r.skip();  // read strictly, decoded once the schema is known
    } else {
      r.fail("SCHEMA-4", "unknown field \"" + std::string(key.substr(0, 64)) + "\"");
    }
  }
  r.finish();
  for (auto [present, name] : {std::pair{schema.has_value(), "schema"}, {version.has_value(), "version"}, {digest.has_value(), "digest"},
                               {parents.has_value(), "parents"}, {payload.has_value(), "payload"}})
    if (!present) throw InputError("SCHEMA-3", "", std::string("missing field \"") + name + "\"");
  if (!version->starts_with("1.0.")) throw InputError("SCHEMA-2", "/version", "unsupported IR version \"" + version->substr(0, 32) + "\" (this build reads 1.0.x)");
  Decoder fn = decoder_of(*schema);
  if (!fn) throw InputError("SCHEMA-1", "/schema", "unknown schema \"" + schema->substr(0, 64) + "\" (expected ModelIR, DistributedTaskIR, PortablePlanIR, ConcretePlanIR, TimelineBundle, MachineIR or ObservationSet)");
  if (decoded && *schema != guess) throw std::logic_error("payload decoded as the wrong schema");  // decode_snapshot redoes it
  if (!decoded) {
    json::Reader pr(*payload, "/payload");
    decoded = fn(pr, *payload, payload_digest);
    pr.finish();
  }
  std::visit([&](auto& x) { x.parents = std::move(*parents), x.digest = std::move(*digest), x.version = std::move(*version); }, *decoded);
  return std::move(*decoded);
}

}  // namespace

std::string_view schema_of(const AnySnapshot& s) {
  return std::visit([](const auto& x) { return std::decay_t<decltype(x.payload)>::kSchema; }, s);
}

std::string digest_bytes(std::string_view schema, std::string_view canonical_payload) {
  Hasher h(schema);
  h.update(canonical_payload);
  return h.hex();
}

template <class P>
std::string digest_of(const P& payload) {
  Hasher h(P::kSchema);
  {
    json::Writer w([&](std::string_view chunk) { h.update(chunk); });
    codec::encode(w, payload);
  }
  return h.hex();
}

bool is_digest(std::string_view d) { return d.size() == 64 && d.find_first_not_of("0123456789abcdef") == std::string_view::npos; }

AnySnapshot decode_snapshot(std::string_view text, std::string* payload_digest) {
  try {
    return decode_envelope(text, payload_digest, true);
  } catch (const std::bad_alloc&) {
    throw;  // out of memory: the other path would only run out again
  } catch (const std::exception&) {  // only faster: the other path reports any failure
  }
  return decode_envelope(text, payload_digest, false);
}

#define PLANCERT_INSTANTIATE(P) template std::string digest_of<P>(const P&);
PLANCERT_INSTANTIATE(ModelIR)
PLANCERT_INSTANTIATE(DistributedTaskIR)
PLANCERT_INSTANTIATE(PortablePlanIR)
PLANCERT_INSTANTIATE(ConcretePlanIR)
PLANCERT_INSTANTIATE(TimelineBundle)
PLANCERT_INSTANTIATE(MachineIR)
PLANCERT_INSTANTIATE(ObservationSet)
#undef PLANCERT_INSTANTIATE

}  // namespace plancert
