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
//               has accepted both. Its custom mutator (LLVMFuzzerCustomMutator) is
//               structure-aware half the time: it decodes the pair and applies an operator
//               of the props mutation catalog (props/mutations.h) that fits the child's
//               layer, so mutants stay near-valid and reach the transition checks; the other
//               half, and whenever that fails, it mutates bytes as libFuzzer does
//               (always, when the environment has PLANCERT_FUZZ_BYTES_ONLY).
// Every rejection must be an InputError (a diagnostic with a code); anything else that
// escapes (another exception, a crash, a sanitizer report) is a finding.
#include "core/diag.h"
#include "core/snapshot.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "verifiers/verify.h"
#if PLANCERT_FUZZ_TARGET == 7
#include "props/any.h"
#include "props/mutations.h"
#endif

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
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

// Target 7's pair: the parent and the child decoded from `in` (parent text, 0x1E, child
// text), both resealed and the child re-pointed at the parent; false without a separator.
// Throws InputError for text that does not decode.
bool decode_pair(std::string_view in, plancert::AnySnapshot& parent, plancert::AnySnapshot& child) {
  using namespace plancert;
  const std::size_t cut = in.find('\x1e');
  if (cut == std::string_view::npos) return false;
  std::string parent_digest, child_digest;
  parent = decode_snapshot(in.substr(0, cut), &parent_digest);
  child = decode_snapshot(in.substr(cut + 1), &child_digest);
  digest_of_any(parent) = parent_digest;
  digest_of_any(child) = child_digest;
  std::visit([&](auto& c) {
    if (c.parents.size() == 1) c.parents[0] = parent_digest;
  }, child);
  return true;
}

// Target 7: see the header comment.
void run_transition(std::string_view in) {
  using namespace plancert;
  AnySnapshot parent, child;
  if (!decode_pair(in, parent, child)) return;
  if (verify_snapshot(parent, digest_of_any(parent)).ok() && verify_snapshot(child, digest_of_any(child)).ok()) (void)verify_transition(parent, child);
}

#if PLANCERT_FUZZ_TARGET == 7
// Target 7's structure-aware mutation (see the header comment): the mutant pair's text, or ""
// when the input does not decode or no operator of the catalog applies to it.
std::string mutate_pair(std::string_view in, std::uint64_t seed) {
  using namespace plancert;
  AnySnapshot parent, child;
  try {
    if (!decode_pair(in, parent, child)) return "";
  } catch (const InputError&) {
    return "";
  }
  // The operators' contract: a valid chain (as the props generators build). Mutants of a pair
  // that is not valid come from bytes only, so that a finding is always the verifiers'.
  if (!verify_snapshot(parent, digest_of_any(parent)).ok() || !verify_snapshot(child, digest_of_any(child)).ok() || !verify_transition(parent, child).ok())
    return "";
  std::mt19937_64 rng(seed);
  const auto& ops = props::catalog();
  const std::string_view layer = schema_of(child);
  const auto* concrete = std::get_if<Snapshot<ConcretePlanIR>>(&child);
  for (int attempt = 0; attempt < 8; ++attempt) {  // operators that fit the layer but find nothing to mutate return nullopt
    const props::Mutation& m = ops[rng() % ops.size()];
    if ((m.layer != "*" && m.layer != layer) || m.derived || m.inference) continue;  // chains of the training passes or inference: not assumed
    if (m.target && (concrete == nullptr || concrete->payload.target != *m.target)) continue;
    std::optional<props::Mutant> mutant;
    try {
      mutant = m.apply(&parent, child, rng());
    } catch (const std::exception&) {  // an operator's precondition the input does not meet
      continue;
    }
    if (!mutant || mutant->bytes || mutant->topological_order) continue;  // byte and witness mutants do not reach the transition
    const AnySnapshot& p = mutant->parent ? *mutant->parent : parent;
    if (!verify_snapshot(p, props::digest_of_any(p)).ok() || !verify_snapshot(mutant->child, props::digest_of_any(mutant->child)).ok()) continue;  // only mutants that reach it
    return props::encode_any(p) + '\x1e' + props::encode_any(mutant->child);
  }
  return "";
}
#endif

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

#if PLANCERT_FUZZ_TARGET == 7
extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size, unsigned int seed) {
  static const bool bytes_only = std::getenv("PLANCERT_FUZZ_BYTES_ONLY") != nullptr;  // for comparing the two
  if (!bytes_only && seed % 2 == 0) {
    const std::string m = mutate_pair(std::string_view(reinterpret_cast<const char*>(data), size), seed);
    if (!m.empty() && m.size() <= max_size) {
      std::memcpy(data, m.data(), m.size());
      return m.size();
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
#endif

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    run(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const plancert::InputError&) {
    // a clear diagnostic: the expected outcome for bad input
  }
  return 0;
}
