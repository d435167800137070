// SPDX-License-Identifier: Apache-2.0
// bench_verify: how long `plancert verify` takes on huge ConcretePlanIR snapshots, and where
// the time goes.
//
// For each size N (commands; 3N dependency edges) a valid plan is generated once, written to
// a temporary file and checked to pass verify_snapshot with zero diagnostics before anything
// is timed. Then:
//   e2e_plancert/N  the real `plancert verify FILE` as a subprocess (if the binary exists):
//                   wall time, and peak RSS / CPU time from wait4()'s rusage;
//   e2e_child/N     the same path (read, decode_snapshot, verify_snapshot) in a fresh
//                   process of this program (`bench_verify --verify-child FILE`), so the
//                   end-to-end figures exist even when the CLI is not built;
//   read/N, decode/N, digest/N, verify/N, free/N
//                   the in-process breakdown: read the file, decode it (with the payload
//                   digest, hashed from the canonical bytes as read, as `plancert verify`
//                   does), recompute the digest by re-encoding (digest_of: the path for
//                   non-canonical input), verify_snapshot given the decoder's digest (the
//                   obligations), destroy the decoded snapshot;
//   encode/N        encode_snapshot into a string (the encoder alone, without hashing);
//   compact/N       not a plancert path: the prototype decoder of the compact command table
//                   (bench/compact_table.h) on the plan's commands array, canonical form only,
//                   into a struct of arrays (counter table_MiB); its result is compared with
//                   the commands decode_snapshot decoded, field by field, before it counts.
//   floor_scan/N, floor_hash/N
//                   lower bounds, not plancert code paths: find the payload's extent with a
//                   minimal string-aware bracket matcher, and BLAKE2b the raw payload bytes
//                   (digest_bytes; equal to the stored digest because the file is canonical).
//                   Both in the BLAKE2b code cli::use_faster_blake2b() picks, as plancert
//                   verify does for a large input (context `blake2b_code`).
//   floor_touch/N, floor_touch_huge/N
//                   a lower bound set by the machine, not by plancert: a fresh process (the
//                   --measure helper runs `bench_verify --touch-child MIB [huge]`) that prepares
//                   its heap as `plancert verify` does (cli::reserve_heap with
//                   PLANCERT_HEAP_PAGES=default, or with `huge` =huge: each page size, unprobed), allocates as much as the end-to-end run of N held
//                   (its peak RSS minus the mapped file) and touches every 4 KiB page of it once.
//                   With PLANCERT_BENCH_PAUSE this is what any program pays for that much fresh
//                   memory, on either page size, after the guest has handed it back to the host.
//   heap_probe/N    not a lower bound: a fresh process (`bench_verify --probe-child BYTES`) that
//                   only prepares its heap as `plancert verify` does for the plan's file, with
//                   the probe deciding (PLANCERT_HEAP_PAGES unset); counters: the probe's
//                   first-touch and second-touch costs (small_ms_per_MiB, refault_ms_per_MiB),
//                   the MiB it touched (probe_MiB) and the share of runs that chose huge pages
//                   (huge_share). Below 43 MiB of input no probe runs and all are 0.
// Every case reports ns_per_cmd (linearity check across sizes) and bytes_per_second.
//
// Environment:
//   PLANCERT_BENCH_SIZES   comma-separated command counts (default 10000,100000,1000000)
//   PLANCERT_BENCH_TARGET  queue (default) or slot
//   PLANCERT_BENCH_ITERS   iterations per case (default 3, and 2 for N >= 1000000)
//   PLANCERT_BENCH_DIR     where the plan files go (default: a fresh directory in $TMPDIR)
//   PLANCERT_BENCH_KEEP    if set, the plan files are kept
//   PLANCERT_BIN           the plancert binary (default: the build tree's cli/plancert)
//   PLANCERT_BENCH_PAUSE   seconds to wait, untimed, before each e2e_* run (default 0). Runs
//                          back to back reuse memory the previous run freed; after a pause
//                          of a few seconds this virtual machine has returned it to the host
//                          (free page reporting) and a run pays for fresh pages, as a single
//                          `plancert verify` does (README, Performance).
//   PLANCERT_BENCH_CHILD_TUNABLES  if set, GLIBC_TUNABLES of the measured runs only (not of
//                          this process, whose plans would take the pool first): with
//                          `glibc.malloc.hugetlb=2`, `plancert verify` uses a huge page pool
//                          (README, Performance, "A huge page pool"). Their peak_rss_MiB then
//                          leaves out the pool's pages, which the kernel does not count in RSS.
// Exit status 1 if a plan could not be generated or was rejected, or a verify run failed.
#include "bench/compact_table.h"
#include "bench/gen_plan.h"
#include "cli/io.h"
#include "passes/emit/emit.h"
#include "verifiers/verify.h"

#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifndef PLANCERT_CLI_BINARY
#define PLANCERT_CLI_BINARY ""
#endif

extern char** environ;

namespace {
using namespace plancert;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool g_failed = false;
fs::path g_dir;
fs::path g_self;  // this program (runs the --measure helper and the --verify-child path)
TargetKind g_target = TargetKind::queue;
constexpr std::size_t kEdgesPerCommand = 3;
constexpr double kMiB = 1024.0 * 1024.0;
std::map<std::size_t, double> g_anon_mib;  // per size: peak RSS of the last end-to-end run minus the mapped file

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Bytes currently allocated through malloc (arena + mmap'd blocks).
double heap_in_use() {
  struct mallinfo2 mi = mallinfo2();
  return static_cast<double>(mi.uordblks + mi.hblkhd);
}

std::string first_diagnostics(const Diagnostics& d) {
  std::string s = std::to_string(d.count()) + " diagnostic(s):";
  for (std::size_t i = 0; i < d.all().size() && i < 5; ++i) { s += ' '; s += to_text(d.all()[i]); }
  return s;
}

// ---- the plan of the current size (one at a time, to bound memory) ----------------------

struct Plan {
  std::size_t n = 0, e = 0;
  fs::path file;
  std::uint64_t bytes = 0;
  std::string error;                // set when generation or validation failed
  std::string text;                 // file contents
  std::optional<AnySnapshot> snap;  // decoded from `text`
  std::string payload_digest;       // as decode_snapshot computed it
  double decoded_bytes = 0;         // heap growth of one decode
};

std::unique_ptr<Plan> g_plan;

void drop_plan() {
  if (!g_plan) return;
  if (!env("PLANCERT_BENCH_KEEP") && !g_plan->file.empty()) {
    std::error_code ec;
    fs::remove(g_plan->file, ec);
  }
  g_plan.reset();
  malloc_trim(0);
}

Plan& plan(std::size_t n) {
  if (g_plan && g_plan->n == n) return *g_plan;
  drop_plan();
  g_plan = std::make_unique<Plan>();
  Plan& p = *g_plan;
  p.n = n;
  p.e = kEdgesPerCommand * n;
  p.file = g_dir / bench::cat("plan-", std::to_string(n), g_target == TargetKind::slot ? "-slot" : "", ".json");
  try {
    auto t0 = Clock::now();
    bench::GenOptions o;
    o.commands = n;
    o.edges = p.e;
    o.target = g_target;
    bench::GenStats st;
    std::string bytes;
    {
      auto snap = bench::generate_plan(o, &st);
      bytes = encode_snapshot(snap);
    }
    bench::write_atomic(p.file, bytes);
    p.bytes = bytes.size();
    p.text = std::move(bytes);
    double gen = since(t0);
    t0 = Clock::now();
    double before = heap_in_use();
    p.snap = decode_snapshot(p.text, &p.payload_digest);
    p.decoded_bytes = heap_in_use() - before;
    Diagnostics d = verify_snapshot(*p.snap);  // recomputes the digest: checks the decoder's
    std::cerr << "plan " << n << " commands / " << st.edges << " edges (" << st.cross_device_edges << " cross-device), " << st.tokens << " tokens, "
              << st.buffers << " buffers: " << p.bytes << " bytes in " << p.file.string() << "; generated+written in " << gen
              << " s, validated in " << since(t0) << " s: " << (d.ok() ? "accepted" : "REJECTED") << "\n";
    if (!d.ok()) p.error = bench::cat("the generated plan is rejected: ", first_diagnostics(d));
    // verify_snapshot just checked the stored digest against digest_of: compare with that
    else if (p.payload_digest != std::get<Snapshot<ConcretePlanIR>>(*p.snap).digest) p.error = "decode_snapshot's payload digest differs from digest_of";
  } catch (const InputError& e) {
    p.error = bench::cat("the generated plan does not decode: ", to_text(e.diag));
  } catch (const std::exception& e) {
    p.error = std::string("cannot generate the plan: ") + e.what();
  }
  if (!p.error.empty()) g_failed = true;
  return p;
}

bool usable(benchmark::State& state, const Plan& p) {
  if (p.error.empty()) return true;
  state.SkipWithError(p.error.c_str());
  return false;
}

// Seconds of the timed iterations: their sum and the fastest (the least disturbed by other load).
struct Times {
  double sum = 0, min = 0;
  int count = 0;
  void add(double s) {
    min = count++ ? std::min(min, s) : s;
    sum += s;
  }
};

void common_counters(benchmark::State& state, const Plan& p, const Times& t) {
  auto iters = static_cast<double>(state.iterations());
  state.counters["ns_per_cmd"] = iters > 0 ? t.sum * 1e9 / iters / static_cast<double>(p.n) : 0.0;
  state.counters["min_s"] = t.min;
  state.counters["file_MiB"] = static_cast<double>(p.bytes) / kMiB;
  state.SetBytesProcessed(static_cast<std::int64_t>(p.bytes) * state.iterations());
  state.SetItemsProcessed(static_cast<std::int64_t>(p.n) * state.iterations());
}

// ---- end to end, in a subprocess ----------------------------------------------------------

// Peak RSS needs care: ru_maxrss of a child includes the high-water mark of the memory
// image it started from (its parent's, shared by vfork/posix_spawn, or copied by fork) until
// it execs. This process holds the big plans, so it never starts the measured program itself:
// it spawns a fresh copy of itself, `bench_verify --measure OUT CMD...` (a few MiB), which
// forks and execs CMD, waits for it with wait4() and prints wall time and rusage.

struct RunResult {
  double wall_s = 0, user_s = 0, sys_s = 0;
  double maxrss_kib = 0;
  std::string error;
};

double tv_seconds(const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; }

// `--measure OUT CMD ARGS...`: runs CMD (stdout and stderr to OUT) and prints
// "wall_s user_s sys_s maxrss_kib wait_status".
int measure_main(int argc, char** argv) {
  if (argc < 4) return 2;
  int fd = ::open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 3;
  auto t0 = Clock::now();
  pid_t pid = ::fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    if (const char* t = std::getenv("PLANCERT_BENCH_CHILD_TUNABLES")) ::setenv("GLIBC_TUNABLES", t, 1);  // one thread: safe after fork
    ::execv(argv[3], argv + 3);
    ::_exit(127);
  }
  int status = 0;
  rusage ru{};
  pid_t w;
  do w = ::wait4(pid, &status, 0, &ru);
  while (w < 0 && errno == EINTR);
  double wall = since(t0);
  ::close(fd);
  if (w != pid) return 3;
  std::printf("%.9f %.6f %.6f %ld %d\n", wall, tv_seconds(ru.ru_utime), tv_seconds(ru.ru_stime), static_cast<long>(ru.ru_maxrss), status);
  return 0;
}

// Where run_measured() puts the last child's standard output and error.
fs::path child_output() { return g_dir / "child-output.txt"; }

RunResult run_measured(const std::vector<std::string>& cmd) {
  RunResult r;
  fs::path out = child_output(), res = g_dir / "child-rusage.txt";
  std::vector<std::string> args{g_self.string(), "--measure", out.string()};
  args.insert(args.end(), cmd.begin(), cmd.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, res.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.error = bench::cat("cannot start ", args[0], ": ", std::strerror(rc));
    return r;
  }
  int hs = 0;
  while (::waitpid(pid, &hs, 0) < 0 && errno == EINTR) {
  }
  int status = -1;
  long rss = 0;
  std::istringstream line;
  try {
    line.str(bench::read_whole_file(res));
  } catch (const std::exception&) {
  }
  if (!WIFEXITED(hs) || WEXITSTATUS(hs) != 0 || !(line >> r.wall_s >> r.user_s >> r.sys_s >> rss >> status)) {
    r.error = "the --measure helper failed";
    return r;
  }
  r.maxrss_kib = static_cast<double>(rss);  // KiB on Linux
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string output;
    try {
      output = bench::read_whole_file(out).substr(0, 2000);
    } catch (const std::exception&) {
    }
    r.error = bench::cat(cmd[0], " ", cmd[1], " failed (", WIFEXITED(status) ? "exit " : "signal ",
                         std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status)), "): ", output);
  }
  return r;
}

// Runs `cmd` once per iteration through the --measure helper, after an untimed pause of
// PLANCERT_BENCH_PAUSE seconds, timing its wall clock; `each(r)` sees every run. A failed run
// marks the case skipped with its error (state.error_occurred()).
template <class Each>
void measured_runs(benchmark::State& state, const std::vector<std::string>& cmd, Times& total, Each&& each) {
  const double pause = env("PLANCERT_BENCH_PAUSE") ? std::max(0.0, std::atof(env("PLANCERT_BENCH_PAUSE"))) : 0.0;
  for (auto _ : state) {
    if (pause > 0) std::this_thread::sleep_for(std::chrono::duration<double>(pause));  // manual time: not counted
    RunResult r = run_measured(cmd);
    if (!r.error.empty()) {
      g_failed = true;
      state.SkipWithError(r.error.c_str());
      break;
    }
    state.SetIterationTime(r.wall_s);
    total.add(r.wall_s);
    each(r);
  }
}

// MiB a run of plan p held beyond the mapped file: its heap, given its peak RSS in KiB.
double heap_mib(const Plan& p, double maxrss_kib) { return std::max(0.0, maxrss_kib / 1024.0 - static_cast<double>(p.bytes) / kMiB); }

void bm_e2e(benchmark::State& state, std::size_t n, std::vector<std::string> cmd, std::string label) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  cmd.push_back(p.file.string());
  Times total;
  double user = 0, sys = 0, peak = 0;
  measured_runs(state, cmd, total, [&](const RunResult& r) { user += r.user_s, sys += r.sys_s, peak = std::max(peak, r.maxrss_kib); });
  if (state.error_occurred()) return;
  auto iters = static_cast<double>(state.iterations());
  common_counters(state, p, total);
  state.counters["wall_s"] = total.sum / iters;
  state.counters["user_s"] = user / iters;
  state.counters["sys_s"] = sys / iters;
  state.counters["peak_rss_MiB"] = peak / 1024.0;
  state.counters["rss_per_file_byte"] = peak * 1024.0 / static_cast<double>(p.bytes);
  g_anon_mib[n] = heap_mib(p, peak);
  state.SetLabel(label);
}

// `--touch-child MIB [huge]`: prepares the heap for MIB MiB as cli::reserve_heap does for
// plancert's, on 4 KiB pages (PLANCERT_HEAP_PAGES=default) or huge pages (`huge`: =huge), allocates MIB MiB from it and writes
// one byte per 4 KiB page.
int touch_child(const char* mib_text, bool huge) {
  const auto bytes = static_cast<std::size_t>(std::strtoull(mib_text, nullptr, 10)) << 20;
  if (bytes == 0) return 2;
  if (huge) ::setenv("PLANCERT_HEAP_PAGES", "huge", 1);
  else ::setenv("PLANCERT_HEAP_PAGES", "default", 1);  // 4 KiB pages, unprobed
  // Below reserve_heap's threshold plancert reserves nothing either, on either page size; above
  // it, a refused MADV_HUGEPAGE would time 4 KiB pages under the _huge case's name.
  if (const cli::HeapReserve r = cli::reserve_heap(bytes); huge && r.bytes > 0 && !r.huge_pages) {
    std::fprintf(stderr, "--touch-child: huge pages requested, but the kernel refused MADV_HUGEPAGE\n");
    return 4;
  }
  auto* b = static_cast<volatile unsigned char*>(std::malloc(bytes));
  if (b == nullptr) return 3;
  for (std::size_t i = 0; i < bytes; i += 4096) b[i] = 1;
  std::free(const_cast<unsigned char*>(b));
  return 0;
}

void bm_floor_touch(benchmark::State& state, std::size_t n, std::vector<std::string> probe, bool huge) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  if (!g_anon_mib.count(n)) {  // no end-to-end case ran for this size (filtered out): measure the amount once, untimed
    probe.push_back(p.file.string());
    RunResult r = run_measured(probe);
    if (!r.error.empty()) {
      g_failed = true;
      state.SkipWithError(r.error.c_str());
      return;
    }
    g_anon_mib[n] = heap_mib(p, r.maxrss_kib);
  }
  const auto mib = static_cast<std::size_t>(g_anon_mib[n]) + 1;
  Times total;
  double sys = 0;
  std::vector<std::string> child{g_self.string(), "--touch-child", std::to_string(mib)};
  if (huge) child.push_back("huge");
  measured_runs(state, child, total, [&](const RunResult& r) { sys += r.sys_s; });
  if (state.error_occurred()) return;
  common_counters(state, p, total);
  state.counters["fresh_MiB"] = static_cast<double>(mib);
  state.counters["sys_s"] = sys / static_cast<double>(state.iterations());
  state.counters["ms_per_MiB"] = total.sum * 1e3 / static_cast<double>(state.iterations()) / static_cast<double>(mib);
}

// `--probe-child BYTES`: prepares the heap as `plancert verify` does for an input of BYTES bytes
// (cli::reserve_heap(heap_for_input(BYTES), BYTES / 2), with PLANCERT_HEAP_PAGES unset: the
// probe decides) and prints what it measured and chose: "small_ms_per_MiB refault_ms_per_MiB
// probe_bytes huge".
int probe_child(const char* bytes_text) {
  const auto bytes = static_cast<std::uintmax_t>(std::strtoull(bytes_text, nullptr, 10));
  if (bytes == 0) return 2;
  ::unsetenv("PLANCERT_HEAP_PAGES");
  const cli::HeapReserve r = cli::reserve_heap(cli::heap_for_input(bytes), bytes / 2);
  std::printf("%.4f %.4f %ju %d\n", r.small_page_ms_per_mib, r.small_page_refault_ms_per_mib, r.small_page_probe_bytes, r.huge_pages ? 1 : 0);
  return 0;
}

void bm_heap_probe(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  Times total;
  double small = 0, again = 0, mib = 0, huge = 0;
  bool parsed = true;
  measured_runs(state, {g_self.string(), "--probe-child", std::to_string(p.bytes)}, total, [&](const RunResult&) {
    std::istringstream in(bench::read_whole_file(child_output()));
    double s = 0, a = 0, b = 0;
    int h = 0;
    parsed = parsed && static_cast<bool>(in >> s >> a >> b >> h);
    small += s, again += a, mib += b / kMiB, huge += h;
  });
  if (state.error_occurred()) return;
  if (!parsed) {
    g_failed = true;
    state.SkipWithError("--probe-child printed no result");
    return;
  }
  common_counters(state, p, total);
  const auto iters = static_cast<double>(state.iterations());
  state.counters["small_ms_per_MiB"] = small / iters;     // first touches: the last window's median (of the MiB timed, if fewer)
  state.counters["refault_ms_per_MiB"] = again / iters;   // the second touches' median (kRefaultProbeMiB)
  state.counters["probe_MiB"] = mib / iters;              // 4 KiB pages the probe touched
  state.counters["huge_share"] = huge / iters;            // runs that put the rest on huge pages
}

// ---- in-process breakdown -----------------------------------------------------------------

void bm_read(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    cli::FileBytes text = cli::read_file(p.file, std::uintmax_t{1} << 40);  // as plancert verify reads it: mapped
    double dt = since(t0);
    benchmark::DoNotOptimize(text.view().data());
    state.SetIterationTime(dt);
    total.add(dt);
  }
  common_counters(state, p, total);
}

void bm_decode(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    std::string digest;
    auto s = std::make_unique<AnySnapshot>(decode_snapshot(p.text, &digest));
    double dt = since(t0);
    benchmark::DoNotOptimize(s.get());
    state.SetIterationTime(dt);
    total.add(dt);
    s.reset();  // untimed (see free/N)
  }
  common_counters(state, p, total);
  state.counters["decoded_MiB"] = p.decoded_bytes / kMiB;
  state.counters["decoded_per_file_byte"] = p.decoded_bytes / static_cast<double>(p.bytes);
}

void bm_digest(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  const std::string& stored = std::visit([](const auto& s) -> const std::string& { return s.digest; }, *p.snap);
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    std::string d = recompute_digest(*p.snap);
    double dt = since(t0);
    if (d != stored) {
      g_failed = true;
      state.SkipWithError("recomputed digest differs from the stored one");
      break;
    }
    state.SetIterationTime(dt);
    total.add(dt);
  }
  if (!state.error_occurred()) common_counters(state, p, total);
}

void bm_verify(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    Diagnostics d = verify_snapshot(*p.snap, p.payload_digest);
    double dt = since(t0);
    if (!d.ok()) {
      g_failed = true;
      state.SkipWithError(bench::cat("verify_snapshot rejected the plan: ", first_diagnostics(d)).c_str());
      break;
    }
    state.SetIterationTime(dt);
    total.add(dt);
  }
  if (!state.error_occurred()) common_counters(state, p, total);
}

void bm_encode(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  const auto& snap = std::get<Snapshot<ConcretePlanIR>>(*p.snap);
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    std::string bytes = encode_snapshot(snap);
    double dt = since(t0);
    if (bytes.size() != p.bytes) {
      g_failed = true;
      state.SkipWithError("re-encoding the decoded plan does not give the file's bytes back");
      break;
    }
    state.SetIterationTime(dt);
    total.add(dt);
  }
  if (!state.error_occurred()) common_counters(state, p, total);
}

// End of the JSON container that starts at s[i], skipping string contents; npos if unbalanced.
// Table-driven outside strings, memchr inside them: a rough lower bound for finding the extent.
std::size_t match_brackets(std::string_view s, std::size_t i) {
  static const auto kind = [] {
    std::array<std::uint8_t, 256> t{};
    t[static_cast<unsigned char>('"')] = 1;
    t[static_cast<unsigned char>('{')] = t[static_cast<unsigned char>('[')] = 2;
    t[static_cast<unsigned char>('}')] = t[static_cast<unsigned char>(']')] = 3;
    return t;
  }();
  std::size_t depth = 0;
  const char* d = s.data();
  const std::size_t n = s.size();
  while (i < n) {
    switch (kind[static_cast<unsigned char>(d[i])]) {
      case 1: {  // string: find the closing quote that is not escaped
        std::size_t j = i + 1;
        for (;;) {
          const void* q = std::memchr(d + j, '"', n - j);
          if (!q) return std::string_view::npos;
          std::size_t k = static_cast<std::size_t>(static_cast<const char*>(q) - d), b = k;
          while (b > j && d[b - 1] == '\\') --b;
          j = k + 1;
          if ((k - b) % 2 == 0) break;
        }
        i = j;
        continue;
      }
      case 2: ++depth; break;
      case 3:
        if (--depth == 0) return i + 1;
        break;
      default: break;
    }
    ++i;
  }
  return std::string_view::npos;
}

// The raw payload span of a canonical snapshot file (found with match_brackets).
std::string_view payload_span(std::string_view text) {
  constexpr std::string_view key = "\"payload\":";
  std::size_t k = text.find(key);
  if (k == std::string_view::npos) return {};
  std::size_t b = k + key.size(), e = match_brackets(text, b);
  return e == std::string_view::npos ? std::string_view() : text.substr(b, e - b);
}

void bm_floor_scan(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    std::string_view span = payload_span(p.text);
    double dt = since(t0);
    if (span.empty()) {
      g_failed = true;
      state.SkipWithError("no payload found");
      break;
    }
    benchmark::DoNotOptimize(span.data());
    state.SetIterationTime(dt);
    total.add(dt);
  }
  if (!state.error_occurred()) common_counters(state, p, total);
}

void bm_floor_hash(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  const std::string& stored = std::get<Snapshot<ConcretePlanIR>>(*p.snap).digest;
  std::string_view span = payload_span(p.text);
  Times total;
  for (auto _ : state) {
    auto t0 = Clock::now();
    std::string d = digest_bytes(ConcretePlanIR::kSchema, span);
    double dt = since(t0);
    if (d != stored) {
      g_failed = true;
      state.SkipWithError("the raw payload bytes do not hash to the stored digest");
      break;
    }
    state.SetIterationTime(dt);
    total.add(dt);
  }
  if (!state.error_occurred()) common_counters(state, p, total);
}

void bm_compact(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  constexpr std::string_view key = "\"commands\":";
  const std::size_t from = p.text.find(std::string(key) + "[");  // the payload's: no key before it holds one
  std::string why;
  Times total;
  double table = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    bench::CompactCommands t;
    const std::size_t end = from == std::string::npos ? SIZE_MAX : bench::decode_compact_commands(p.text, from + key.size(), t, why);
    const double dt = since(t0);
    const auto& plan_ir = std::get<Snapshot<ConcretePlanIR>>(*p.snap).payload;
    if (end == SIZE_MAX || (total.count == 0 && !bench::same_commands(t, p.text, plan_ir, why))) {
      g_failed = true;
      state.SkipWithError(("the compact decoder: " + (why.empty() ? std::string("no commands array") : why)).c_str());
      break;
    }
    auto bytes = [](const auto& v) { return static_cast<double>(v.capacity() * sizeof(v[0])); };
    table = bytes(t.pool) + bytes(t.at) + bytes(t.device) + bytes(t.kind) + bytes(t.id) + bytes(t.implementation) + bytes(t.lineage_kind) + bytes(t.rule) +
            bytes(t.sources) + bytes(t.sources_at) + bytes(t.repeat) + bytes(t.work) + bytes(t.attrs);
    state.SetIterationTime(dt);
    total.add(dt);
  }
  if (!state.error_occurred()) {
    common_counters(state, p, total);
    state.counters["table_MiB"] = table / kMiB;
  }
}

void bm_free(benchmark::State& state, std::size_t n) {
  Plan& p = plan(n);
  if (!usable(state, p)) return;
  Times total;
  for (auto _ : state) {
    state.PauseTiming();
    auto copy = std::make_unique<AnySnapshot>(*p.snap);
    state.ResumeTiming();
    auto t0 = Clock::now();
    copy.reset();
    double dt = since(t0);
    state.SetIterationTime(dt);
    total.add(dt);
  }
  common_counters(state, p, total);
}

// ---- the child: exactly the path of `plancert verify` ------------------------------------

int verify_child(const char* file) {
  try {
    std::string digest;
    cli::FileBytes text = cli::read_file(file, std::uintmax_t{1} << 40);  // mapped, as plancert verify reads it
    cli::prepare_large_run(cli::heap_for_input(text.view().size()));     // and the heap and BLAKE2b code prepared as it does
    AnySnapshot s = decode_snapshot(text.view(), &digest);
    Diagnostics d = verify_snapshot(s, digest);
    if (!d.ok()) {
      std::cout << first_diagnostics(d) << "\n";
      return 1;
    }
    std::cout << "accepted\n";
    return 0;
  } catch (const InputError& e) {
    std::cout << to_text(e.diag) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cout << "error: " << e.what() << "\n";
    return 3;
  }
}

std::vector<std::size_t> sizes() {
  std::vector<std::size_t> out;
  std::string s = env("PLANCERT_BENCH_SIZES") ? env("PLANCERT_BENCH_SIZES") : "10000,100000,1000000";
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(static_cast<std::size_t>(std::stoull(item)));
  return out;
}

fs::path self_exe() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--verify-child") return verify_child(argv[2]);
  if (argc >= 2 && std::string(argv[1]) == "--measure") return measure_main(argc, argv);
  if ((argc == 3 || (argc == 4 && std::string(argv[3]) == "huge")) && std::string(argv[1]) == "--touch-child") return touch_child(argv[2], argc == 4);
  if (argc == 3 && std::string(argv[1]) == "--probe-child") return probe_child(argv[2]);

  if (const char* t = env("PLANCERT_BENCH_TARGET")) {
    if (std::string(t) == "slot") g_target = TargetKind::slot;
    else if (std::string(t) != "queue") { std::cerr << "PLANCERT_BENCH_TARGET must be queue or slot\n"; return 2; }
  }
  std::vector<std::size_t> ns;
  try {
    ns = sizes();
  } catch (const std::exception&) {
    std::cerr << "PLANCERT_BENCH_SIZES must be a comma-separated list of command counts\n";
    return 2;
  }
  bool own_dir = false;
  if (const char* d = env("PLANCERT_BENCH_DIR")) {
    g_dir = d;
    fs::create_directories(g_dir);
  } else {
    std::string tmpl = (fs::path(env("TMPDIR") ? env("TMPDIR") : "/tmp") / "plancert-bench-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) { std::cerr << "cannot create a temporary directory: " << std::strerror(errno) << "\n"; return 2; }
    g_dir = tmpl;
    own_dir = true;
  }

  std::string plancert = env("PLANCERT_BIN") ? env("PLANCERT_BIN") : PLANCERT_CLI_BINARY;
  bool have_cli = !plancert.empty() && ::access(plancert.c_str(), X_OK) == 0;
  g_self = self_exe();
  // In-process cases hash with the code plancert verify picks for a large input (floor_hash, verify).
  benchmark::AddCustomContext("blake2b_code", cli::use_faster_blake2b() == cli::HashCode::simd ? "simd (sodium_init)" : "portable");
  benchmark::AddCustomContext("plancert_binary", have_cli ? plancert : "(not found: e2e_plancert not registered)");
  benchmark::AddCustomContext("target", g_target == TargetKind::slot ? "slot" : "queue");
  benchmark::AddCustomContext("edges_per_command", std::to_string(kEdgesPerCommand));
  if (!have_cli) std::cerr << "note: no plancert binary at \"" << plancert << "\"; only e2e_child measures the end-to-end path\n";

  for (std::size_t n : ns) {
    int iters = n >= 1'000'000 ? 2 : 3;
    if (const char* it = env("PLANCERT_BENCH_ITERS")) iters = std::max(1, std::atoi(it));
    auto reg = [&](const std::string& name, auto&& fn, auto... extra) {
      benchmark::RegisterBenchmark(bench::cat(name, "/", std::to_string(n)).c_str(), fn, n, extra...)
          ->UseManualTime()
          ->Iterations(iters)
          ->Unit(benchmark::kMillisecond);
    };
    if (have_cli && !g_self.empty()) reg("e2e_plancert", bm_e2e, std::vector<std::string>{plancert, "verify"}, std::string("plancert verify FILE"));
    if (!g_self.empty()) reg("e2e_child", bm_e2e, std::vector<std::string>{g_self.string(), "--verify-child"}, std::string("read+decode+verify, fresh process"));
    reg("read", bm_read);
    reg("decode", bm_decode);
    reg("digest", bm_digest);
    reg("verify", bm_verify);
    reg("free", bm_free);
    reg("encode", bm_encode);
    reg("compact", bm_compact);
    reg("floor_scan", bm_floor_scan);
    reg("floor_hash", bm_floor_hash);
    if (!g_self.empty()) {
      const auto probe = have_cli ? std::vector<std::string>{plancert, "verify"} : std::vector<std::string>{g_self.string(), "--verify-child"};
      reg("floor_touch", bm_floor_touch, probe, false);
      reg("floor_touch_huge", bm_floor_touch, probe, true);
      reg("heap_probe", bm_heap_probe);
    }
  }

  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  drop_plan();
  if (own_dir && !env("PLANCERT_BENCH_KEEP")) {
    std::error_code ec;
    fs::remove_all(g_dir, ec);
  } else {
    std::cerr << "plan files kept in " << g_dir.string() << "\n";
  }
  return g_failed ? 1 : 0;
}
