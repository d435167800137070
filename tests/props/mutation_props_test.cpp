// SPDX-License-Identifier: Apache-2.0
// Law: every mutation operator's mutant is rejected by the trusted core with exactly the
// obligation code the operator names (plus the codes the catalog declares as necessarily
// implied), and the catalog covers every obligation code the trusted core can emit.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "props/harness.h"
#include "props/mutations.h"

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#ifndef PLANCERT_SOURCE_DIR
#error "PLANCERT_SOURCE_DIR must name the repository root"
#endif

namespace plancert::props {
namespace {

// An operator must produce at least this many mutants in a run, so that an operator that
// never applies to generated chains fails instead of passing vacuously.
constexpr std::size_t kMinMutants = 5;

std::string join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ", ") + x;
  return "{" + out + "}";
}

class Mutations : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Mutations, MutantIsRejectedWithItsCode) {
  const Mutation& m = catalog().at(GetParam());
  std::size_t produced = 0;
  const bool ok = rc::check(m.name + " must trip " + m.code, [&] {
    const Chain c = *chain_for(m);
    const auto pick = *rc::gen::arbitrary<std::uint64_t>();
    const auto parent = c.parent();
    // the input is valid: any rejection below comes from the mutation
    RC_ASSERT(verify_pair(parent ? &*parent : nullptr, c.child()).ok());
    const auto mutant = m.apply(parent ? &*parent : nullptr, c.child(), pick);
    RC_PRE(mutant.has_value());
    ++produced;
    const Verdict v = judge(c, *mutant);
    if (v.codes.empty() && m.valid && m.valid(parent ? &*parent : nullptr, mutant->child)) {
      RC_TAG("harmless (oracle)");
      return;
    }
    if (!v.codes.count(m.code)) RC_FAIL(m.name + ": expected " + m.code + ", got " + join(v.codes) + "\n" + v.text);
    std::set<std::string> allowed(m.implied.begin(), m.implied.end());
    allowed.insert(m.code);
    for (const auto& code : v.codes)
      if (!allowed.count(code)) RC_FAIL(m.name + ": expected only " + join(allowed) + ", got " + join(v.codes) + "\n" + v.text);
    // payload mutants: the Gate agrees (it stops after the snapshot obligations if they fail)
    if (!mutant->bytes && !mutant->parent && !mutant->topological_order) {
      const Verdict g = judge_gate(c, *mutant);
      if (g.codes.empty()) RC_FAIL(m.name + ": the Gate committed a mutant the verifiers reject\n" + v.text);
      for (const auto& code : g.codes)
        if (!allowed.count(code)) RC_FAIL(m.name + ": the Gate reported " + join(g.codes) + "\n" + g.text);
      if (v.codes.size() == 1 && g.codes != v.codes) RC_FAIL(m.name + ": the Gate reported " + join(g.codes) + " instead of " + join(v.codes));
    }
    // byte mutants: the unmutated bytes decode
    if (mutant->bytes) RC_ASSERT(decode_snapshot(encode_any(c.child())).index() == c.child().index());
  });
  EXPECT_TRUE(ok) << m.name;
  EXPECT_GE(produced, kMinMutants) << m.name << " produced only " << produced << " mutants: it is (nearly) never applicable";
}

INSTANTIATE_TEST_SUITE_P(Catalog, Mutations, ::testing::Range<std::size_t>(0, catalog().size()), [](const ::testing::TestParamInfo<std::size_t>& info) {
  const Mutation& m = catalog()[info.param];
  std::string n = m.code + "__" + m.name;
  for (char& ch : n)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return n;
});

TEST(MutationCatalog, NamesAreUniqueAndEntriesWellFormed) {
  std::set<std::string> names;
  const std::regex code_re("[A-Z][A-Z0-9]*-[0-9]+");
  for (const auto& m : catalog()) {
    EXPECT_TRUE(names.insert(m.name).second) << "duplicate operator name " << m.name;
    EXPECT_TRUE(std::regex_match(m.code, code_re)) << m.name << ": " << m.code;
    EXPECT_TRUE(m.layer == "*" || layer_from_name(m.layer).has_value()) << m.name << ": " << m.layer;
    EXPECT_TRUE(m.apply) << m.name;
    for (const auto& c : m.implied) EXPECT_NE(c, m.code) << m.name;
  }
}

// The codes a string literal in the trusted sources can carry ("DAG-2", ...).
std::set<std::string> emitted_codes() {
  namespace fs = std::filesystem;
  const std::regex lit("\"([A-Z][A-Z0-9]*-[0-9]+)\"");  // P2P-1 has a digit in its family
  std::set<std::string> codes;
  for (const char* dir : {"core", "verifiers"}) {
    const fs::path root = fs::path(PLANCERT_SOURCE_DIR) / dir;
    for (const auto& e : fs::recursive_directory_iterator(root)) {
      const auto ext = e.path().extension();
      if (!e.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
      std::ifstream in(e.path());
      std::stringstream ss;
      ss << in.rdbuf();
      const std::string text = ss.str();
      for (std::sregex_iterator it(text.begin(), text.end(), lit), end; it != end; ++it) {
        const std::string code = (*it)[1];
        if (code.rfind("CONFIG-", 0) == 0 || code.rfind("IO-", 0) == 0) continue;
        codes.insert(code);
      }
    }
  }
  return codes;
}

TEST(MutationCatalog, CoversExactlyTheCodesTheTrustedCoreEmits) {
  const std::set<std::string> emitted = emitted_codes();
  ASSERT_GT(emitted.size(), 40u) << "the source scan found too few codes: is PLANCERT_SOURCE_DIR right? " << PLANCERT_SOURCE_DIR;
  std::set<std::string> covered;
  for (const auto& m : catalog()) covered.insert(m.code);
  for (const auto& c : emitted) EXPECT_TRUE(covered.count(c)) << "no mutation operator trips " << c;
  for (const auto& c : covered) EXPECT_TRUE(emitted.count(c)) << "the catalog names " << c << ", which core/ and verifiers/ never emit";
}

}  // namespace
}  // namespace plancert::props
