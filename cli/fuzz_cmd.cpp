// SPDX-License-Identifier: Apache-2.0
#include "cli/fuzz_cmd.h"

#include "cli/io.h"
#include "core/diag.h"
#include "props/harness.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>

namespace plancert::cli {

CLI::App* add_fuzz_command(CLI::App& app, FuzzOptions& o) {
  auto* f = app.add_subcommand("fuzz", "Property-based fuzzing of a registered pass against the gate, or the mutation-soundness campaign");
  f->add_option("--pass", o.pass, "registered pass (see --list)");
  f->add_option("--runs", o.runs, "successful cases to run (per operator with --mutations; default 100)")->check(CLI::Range(1, 1000000));
  f->add_option("--seed", o.seed, "RapidCheck seed (default 0); the same seed reproduces the same run");
  f->add_option("--max-size", o.max_size, "RapidCheck's maximum size (default 100)")->check(CLI::Range(1, 100000));
  f->add_option("--out", o.out, "write the shrunk counterexample's snapshots and reproduce.txt into this directory");
  f->add_flag("--list", o.list, "name the registered passes");
  f->add_flag("--mutations", o.mutations, "run the mutation-soundness campaign over every operator of the catalog");
  return f;
}

int run_fuzz(const FuzzOptions& o) {
  // RapidCheck announces its configuration once; make it name the seed this run uses.
  ::setenv("RC_PARAMS", ("seed=" + std::to_string(o.seed)).c_str(), 1);
  if (o.list) {
    for (const auto& p : props::registry())
      std::cout << std::left << std::setw(36) << p.name << " " << p.input << " -> " << p.output << "\n    " << p.contract << "\n";
    return static_cast<int>(Exit::Accepted);
  }
  if (o.mutations) {
    const auto reports = props::mutation_campaign(o.runs, o.seed, &std::cerr);
    int bad = 0, mutants = 0, harmless = 0, idle = 0;
    std::cout << std::left << std::setw(48) << "operator" << std::setw(12) << "code" << std::right << std::setw(8) << "mutants" << std::setw(10) << "declared"
              << std::setw(8) << "other" << std::setw(10) << "harmless" << std::setw(10) << "accepted" << "\n";
    for (const auto& r : reports) {
      std::cout << std::left << std::setw(48) << r.name << std::setw(12) << r.code << std::right << std::setw(8) << r.mutants << std::setw(10) << r.rejected_declared
                << std::setw(8) << r.rejected_other << std::setw(10) << r.accepted_valid << std::setw(10) << r.accepted << (!r.ok() ? "  FAIL" : r.mutants == 0 ? "  (no mutant)" : "") << "\n";
      idle += r.mutants == 0;
      mutants += r.mutants;
      harmless += r.accepted_valid;
      if (!r.ok()) {
        ++bad;
        if (!r.example.empty()) std::cout << "    " << r.example.substr(0, 600) << "\n";
      }
    }
    std::cout << reports.size() << " operators, " << mutants << " mutants, " << harmless << " harmless (by the oracle), " << idle
              << " operator(s) without a mutant in this run, " << bad << " operator(s) failing\n";
    return static_cast<int>(bad == 0 ? Exit::Accepted : Exit::Rejected);
  }
  const props::RegisteredPass* pass = props::find_pass(o.pass);
  if (!pass) {
    std::string names;
    for (const auto& p : props::registry()) names += (names.empty() ? "" : ", ") + p.name;
    throw InputError("CONFIG-6", "/pass", "--pass \"" + o.pass.substr(0, 64) + "\": not a registered pass (" + names + ")");
  }
  const auto r = props::fuzz(*pass, props::FuzzOptions{o.runs, o.seed, o.max_size, &std::cerr});
  if (r.passed) {
    std::cout << "fuzz " << pass->name << ": " << o.runs << " cases passed (" << r.cases << " run, " << r.discarded << " discarded, seed " << o.seed << ")\n";
    return static_cast<int>(Exit::Accepted);
  }
  std::cout << "fuzz " << pass->name << ": FAILED" << (r.first_failure > 0 ? " at case " + std::to_string(r.first_failure) : "") << " (seed " << o.seed << ")\n"
            << r.failure << "\n";
  if (!o.out.empty() && !r.counterexample.empty()) {
    std::filesystem::create_directories(o.out);
    for (const auto& [name, text] : r.counterexample) write_file_atomic(std::filesystem::path(o.out) / name, text + "\n");
    write_file_atomic(std::filesystem::path(o.out) / "reproduce.txt",
                      "plancert fuzz --pass " + pass->name + " --seed " + std::to_string(o.seed) + " --runs " + std::to_string(o.runs) + " --max-size " +
                          std::to_string(o.max_size) + "\n");
    std::cout << "shrunk counterexample written to " << o.out << "\n";
  }
  return static_cast<int>(Exit::Rejected);
}

}  // namespace plancert::cli
