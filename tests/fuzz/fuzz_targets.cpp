// SPDX-License-Identifier: Apache-2.0
// libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined), one per input path; the
// target is selected at compile time by PLANCERT_FUZZ_TARGET:
//   1 decode    the canonical JSON decoder (decode_snapshot; its payload digest must be
//               digest_of the payload it decoded)
//   2 verify    decode + verify_snapshot (plancert verify on arbitrary bytes)
//   3 model     the model loaders (TOML, Hugging Face config.json, Calculon JSON)
//   4 strategy  the strategy loaders (TOML, Calculon execution JSON)
//   5 system    the system loaders (TOML, Calculon system JSON)
//   6 megatron  Megatron-LM flag parsing (arguments split at NUL bytes)
//   7 transition  verify_transition on a parent and a child (`plancert verify --parent`): the
//               input is the parent's text, a record separator byte (0x1E, which JSON text
//               cannot hold unescaped), then the child's. Both are resealed
//               (the digest each decoded from its bytes replaces the stated one, and a child
//               with one parent lists the parent's), so a mutated payload still reaches the
//               transition checks instead of stopping at DIGEST-1 or DIGEST-3; as the
//               contract in verify.h requires, the transition runs only once verify_snapshot
//               has accepted both.
// Every rejection must be an InputError (a diagnostic with a code); anything else that
// escapes (another exception, a crash, a sanitizer report) is a finding.
#include "core/diag.h"
#include "core/snapshot.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "verifiers/verify.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace {

// The first byte picks the file name, and so the format, of a loader input.
std::string file_name(std::uint8_t b) {
  static const char* kNames[] = {"fuzz.toml", "config.json", "calculon.json"};
  return kNames[b % 3];
}

// The digest a snapshot of any layer carries.
std::string& digest_of_any(plancert::AnySnapshot& s) {
  return std::visit([](auto& x) -> std::string& { return x.digest; }, s);
}

// Target 7: see the header comment.
void run_transition(std::string_view in) {
  using namespace plancert;
  const std::size_t cut = in.find('\x1e');
  if (cut == std::string_view::npos) return;
  std::string parent_digest, child_digest;
  AnySnapshot parent = decode_snapshot(in.substr(0, cut), &parent_digest);
  AnySnapshot child = decode_snapshot(in.substr(cut + 1), &child_digest);
  digest_of_any(parent) = parent_digest;
  digest_of_any(child) = child_digest;
  std::visit([&](auto& c) {
    if (c.parents.size() == 1) c.parents[0] = parent_digest;
  }, child);
  if (verify_snapshot(parent, parent_digest).ok() && verify_snapshot(child, child_digest).ok()) (void)verify_transition(parent, child);
}

void run(std::string_view in) {
  using namespace plancert;
  switch (PLANCERT_FUZZ_TARGET) {
    case 1: {  // and the digest it reports is digest_of what it decoded (the bytes-as-read proof)
      std::string digest;
      if (recompute_digest(decode_snapshot(in, &digest)) != digest) std::abort();
      break;
    }
    case 2: (void)verify_snapshot(decode_snapshot(in)); break;
    case 3:
      if (!in.empty()) (void)frontend::parse_model(in.substr(1), file_name(static_cast<std::uint8_t>(in[0])));
      break;
    case 4:
      if (!in.empty()) (void)frontend::parse_strategy(in.substr(1), file_name(static_cast<std::uint8_t>(in[0])));
      break;
    case 5:
      if (!in.empty()) (void)frontend::parse_system(in.substr(1), file_name(static_cast<std::uint8_t>(in[0])));
      break;
    case 7: run_transition(in); break;
    default: {
      std::vector<std::string> args(1);
      for (char c : in) {
        if (c == '\0') args.emplace_back();
        else args.back() += c;
      }
      (void)frontend::parse_megatron_flags(args, in.size() % 2 ? std::optional<std::int64_t>(96) : std::nullopt);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const plancert::InputError&) {
    // a clear diagnostic: the expected outcome for bad input
  }
  return 0;
}
