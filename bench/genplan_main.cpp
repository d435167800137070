// SPDX-License-Identifier: Apache-2.0
// plancert-genplan N_COMMANDS N_EDGES OUT.json [--target queue|slot] [--seed S] [--devices D]
//                  [--buffers B] [--check]
// Writes a valid ConcretePlanIR snapshot (canonical bytes, atomically). With --check, reads
// the file back and runs the trusted verifier on it (exit 1 on any diagnostic).
#include "bench/gen_plan.h"
#include "passes/emit/emit.h"
#include "verifiers/verify.h"

#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <string>

namespace {

int usage(const char* why) {
  if (why) std::cerr << "error: " << why << "\n";
  (why ? std::cerr : std::cout) << "usage: plancert-genplan N_COMMANDS N_EDGES OUT.json [--target queue|slot] [--seed S] [--devices D] [--buffers B] [--check]\n"
            << "       (defaults: 1000000 commands, 3000000 edges, 8 devices, queue target)\n";
  return 2;
}

bool parse_size(const std::string& s, std::size_t& out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19) return false;
  out = static_cast<std::size_t>(std::stoull(s));
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point t0) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
  using namespace plancert;
  bench::GenOptions o;
  std::string out;
  bool check = false;
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::size_t& v) {
      if (i + 1 >= argc || !parse_size(argv[i + 1], v)) return false;
      ++i;
      return true;
    };
    if (a == "--target") {
      if (i + 1 >= argc) return usage("--target needs queue or slot");
      std::string t = argv[++i];
      if (t == "queue") o.target = TargetKind::queue;
      else if (t == "slot") o.target = TargetKind::slot;
      else return usage("--target must be queue or slot");
    } else if (a == "--seed") {
      std::size_t s = 0;
      if (!value(s)) return usage("--seed needs a non-negative integer");
      o.seed = s;
    } else if (a == "--devices") {
      if (!value(o.devices)) return usage("--devices needs a positive integer");
    } else if (a == "--buffers") {
      if (!value(o.buffers)) return usage("--buffers needs a positive integer");
    } else if (a == "--check") {
      check = true;
    } else if (a == "-h" || a == "--help") {
      usage(nullptr);
      return 0;
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + a).c_str());
    } else {
      bool ok = true;
      if (positional == 0) ok = parse_size(a, o.commands);
      else if (positional == 1) ok = parse_size(a, o.edges);
      else if (positional == 2) out = a;
      else return usage("too many arguments");
      if (!ok) return usage(("not a count: " + a).c_str());
      ++positional;
    }
  }
  if (out.empty()) return usage("missing OUT.json");
  try {
    auto t0 = std::chrono::steady_clock::now();
    bench::GenStats st;
    auto snap = bench::generate_plan(o, &st);
    double t_gen = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    std::string bytes = encode_snapshot(snap);
    double t_enc = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    bench::write_atomic(out, bytes);
    double t_write = seconds_since(t0);
    std::cout << "wrote " << out << ": " << bytes.size() << " bytes, digest " << snap.digest << "\n"
              << "  commands " << st.commands << ", edges " << st.edges << " (cross-device " << st.cross_device_edges << "), tokens " << st.tokens
              << ", waits " << st.waits << ", buffers " << st.buffers << ", regions " << st.regions << ", queues " << st.queues << ", reads "
              << st.reads << ", writes " << st.writes << "\n"
              << "  generate " << t_gen << " s, encode " << t_enc << " s, write " << t_write << " s\n";
    if (check) {
      t0 = std::chrono::steady_clock::now();
      AnySnapshot back = decode_snapshot(bench::read_whole_file(out));
      Diagnostics d = verify_snapshot(back);
      std::cout << "  check (read + decode + verify) " << seconds_since(t0) << " s: " << (d.ok() ? "accepted" : "REJECTED") << "\n";
      if (!d.ok()) {
        for (const auto& x : d.all()) std::cerr << to_text(x) << "\n";
        std::cerr << d.count() << " finding(s)\n";
        return 1;
      }
    }
  } catch (const std::invalid_argument& e) {
    return usage(e.what());
  } catch (const InputError& e) {
    std::cerr << to_text(e.diag) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  }
  return 0;
}
