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
#include <vector>

namespace {

// The first byte picks the file name, and so the format, of a loader input.
std::string file_name(std::uint8_t b) {
  static const char* kNames[] = {"fuzz.toml", "config.json", "calculon.json"};
  return kNames[b % 3];
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
