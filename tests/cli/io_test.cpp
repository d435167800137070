// SPDX-License-Identifier: Apache-2.0
// cli/io: the mapped input file (IO-1, IO-2) and atomic output.
#include "cli/io.h"
#include "core/diag.h"
#include "core/snapshot.h"

#include <gtest/gtest.h>
#include <sodium.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>
#include <unistd.h>

namespace plancert::cli {
namespace {

std::filesystem::path temp_file(const std::string& name, const std::string& bytes) {
  auto p = std::filesystem::temp_directory_path() / ("plancert-io-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string code_of(const std::filesystem::path& p, std::uintmax_t max = kDefaultMaxInputBytes) {
  try {
    (void)read_file(p, max);
  } catch (const InputError& e) {
    return e.diag.code;
  }
  return "";
}

TEST(FileBytes, MapsTheWholeFileWhateverItsSize) {
  // Sizes around page boundaries: the view must end exactly at the file's end.
  for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{3 * 4096}}) {
    std::string bytes(n, 'x');
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    auto p = temp_file("size" + std::to_string(n), bytes);
    FileBytes f = read_file(p);
    EXPECT_EQ(f.view(), bytes) << n;
    FileBytes g = std::move(f);  // moving keeps one owner of the mapping
    EXPECT_TRUE(f.view().empty());
    EXPECT_EQ(g.view(), bytes);
    FileBytes h = read_file(p);
    h = std::move(g);  // unmaps h's own mapping first
    EXPECT_TRUE(g.view().empty());
    EXPECT_EQ(h.view(), bytes);
    std::filesystem::remove(p);
  }
}

TEST(FileBytes, AnEmptyFileIsAnEmptyView) {
  auto p = temp_file("empty", "");
  EXPECT_TRUE(read_file(p).view().empty());
  std::filesystem::remove(p);
}

TEST(FileBytes, MissingDirectoryAndOversizedFilesAreInputErrors) {
  EXPECT_EQ(code_of("/nonexistent/plancert-io-missing.json"), "IO-1");
  EXPECT_EQ(code_of(std::filesystem::temp_directory_path()), "IO-1");
  auto p = temp_file("big", std::string(100, ' '));
  EXPECT_EQ(code_of(p, 99), "IO-2");
  EXPECT_EQ(code_of(p, 100), "");
  std::filesystem::remove(p);
}

TEST(FileBytesDeathTest, AFileThatShrinksWhileMappedIsBadInputNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto p = temp_file("shrinks", std::string(3 * 4096, 'y'));
  EXPECT_EXIT(
      {
        FileBytes f = read_file(p);
        std::filesystem::resize_file(p, 0);  // another process truncates it
        std::filesystem::remove(p);  // the child's own file (threadsafe style re-runs the test: another pid); the mapping stays
        volatile char c = f.view()[2 * 4096];  // a page that no longer exists
        (void)c;
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(2), "IO-1: an input file shrank");
  std::filesystem::remove(p);
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kOwnMalloc = false;  // AddressSanitizer replaces malloc: mallopt and the heap are not glibc's
#else
constexpr bool kOwnMalloc = true;
#endif

std::uintptr_t heap_top() { return reinterpret_cast<std::uintptr_t>(::sbrk(0)); }

// The VmFlags of the mapping that holds `addr`, from /proc/self/smaps ("" if none does).
std::string vm_flags_at(std::uintptr_t addr) {
  std::ifstream smaps("/proc/self/smaps");
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    std::uintptr_t lo = 0, hi = 0;
    char dash = 0;
    if (std::istringstream head(line); line.find(':') > line.find(' ') && head >> std::hex >> lo >> dash >> hi && dash == '-') {
      inside = lo <= addr && addr < hi;  // a mapping's header line: "lo-hi perms offset dev inode path"
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST(ReserveHeap, SmallInputsLeaveTheHeapAlone) {
  const auto before = heap_top();
  reserve_heap(std::uintmax_t{200} << 20);  // below the 256 MiB threshold
  EXPECT_LT(heap_top() - before, std::uintptr_t{16} << 20);
}

TEST(ReserveHeap, GrowsTheHeapOnceAndKeepsLargeBlocksOnIt) {
  if (!kOwnMalloc) GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc; reserve_heap does nothing there";
  ASSERT_EQ(::setenv("PLANCERT_HEAP_PAGES", "default", 1), 0);
  const auto before = heap_top();
  const HeapReserve r = reserve_heap(heap_for_input(std::uintmax_t{100} << 20));  // 100 MiB of text: 600 MiB of address space, not touched
  ASSERT_EQ(::unsetenv("PLANCERT_HEAP_PAGES"), 0);
  const auto after = heap_top();
  ASSERT_GE(after - before, std::uintptr_t{600} << 20);
  EXPECT_EQ(r.bytes, after - before);
  EXPECT_FALSE(r.huge_pages);  // with `default` the kernel's page size stays, unprobed
  EXPECT_EQ(r.small_page_ms_per_mib, 0.0);
  // A 300 MiB block (glibc would map it on its own) now comes from that heap: it may start in
  // the free space the heap had before, but it ends inside the reserve, below the top.
  constexpr std::size_t n = std::size_t{300} << 20;
  void* volatile block = std::malloc(n);
  const auto at = reinterpret_cast<std::uintptr_t>(block);
  EXPECT_TRUE(before < at + n && at + n <= after) << std::hex << before << " " << at << " " << after;
  EXPECT_EQ(heap_top(), after);  // and the heap did not have to grow for it
  const std::string flags = vm_flags_at(at + n / 2);
  ASSERT_FALSE(flags.empty()) << "no mapping in /proc/self/smaps holds the block";  // else the next check proves nothing
  EXPECT_EQ(flags.find(" hg"), std::string::npos) << flags;
  std::free(block);
  EXPECT_EQ(heap_top(), after);  // freeing keeps the reserve (no trimming)
}

TEST(ReserveHeap, MarksTheReserveForHugePagesOnRequest) {
  if (!kOwnMalloc) GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc; reserve_heap does nothing there";
  ASSERT_EQ(::setenv("PLANCERT_HEAP_PAGES", "huge", 1), 0);
  const HeapReserve h = reserve_heap(heap_for_input(std::uintmax_t{100} << 20));
  ASSERT_EQ(::unsetenv("PLANCERT_HEAP_PAGES"), 0);
  // ctest runs each case in its own process; run together, the case before left a free top
  // larger than the one allocation that grows the heap.
  if (h.bytes == 0) GTEST_SKIP() << "an earlier reserve in this process already covers the request";
  ASSERT_GE(h.bytes, std::uintmax_t{600} << 20);
  if (std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) {  // a kernel with THP records the advice
    EXPECT_TRUE(h.huge_pages);
    EXPECT_NE(vm_flags_at(heap_top() - (std::uintptr_t{100} << 20)).find(" hg"), std::string::npos);
  }
}

// The probe's stopping rule on the three kinds of machine measured (cli/io.h, kSmallPageProbeMax).
TEST(ReserveHeap, SmallPageProbeStopsOnceTheWindowIsCheapOrAtItsLimit) {
  const std::vector<double> dear(200, 3.0), cheap(200, 0.6);
  EXPECT_EQ(small_page_window_median(std::span(dear).first(15)), -1);  // not a full window yet
  EXPECT_EQ(small_page_window_median(std::span(dear).first(16)), 3.0);
  // 4 KiB pages cheap from the start: the first full window decides, as the 16 MiB probe did.
  for (std::size_t n = 1; n < 16; ++n) EXPECT_FALSE(small_page_probe_done(std::span(cheap).first(n), 128)) << n;
  EXPECT_TRUE(small_page_probe_done(std::span(cheap).first(16), 128));
  // Dear throughout: the probe goes on to its limit, and then the window's median chooses huge pages.
  for (std::size_t n = 16; n < 128; ++n) EXPECT_FALSE(small_page_probe_done(std::span(dear).first(n), 128)) << n;
  EXPECT_TRUE(small_page_probe_done(std::span(dear).first(128), 128));
  EXPECT_TRUE(small_page_probe_done(std::span(dear).first(40), 40));  // a smaller limit (less heap the run surely touches)
  EXPECT_GE(small_page_window_median(std::span(dear).first(128)), kHugePagesPayFrom);
  // Session 36's machine: dear for the first 40 MiB after a pause, cheap from then on. The 16 MiB
  // probe chose huge pages there (2.9 ms per MiB); now the probe stops once 9 cheap MiB (the
  // median of 16) are in its window, and 4 KiB pages stay.
  std::vector<double> warming(40, 4.0);
  warming.resize(200, 0.5);
  std::size_t stop = 0;
  while (!small_page_probe_done(std::span(warming).first(++stop), 128)) {
  }
  EXPECT_EQ(stop, 49u);
  EXPECT_LT(small_page_window_median(std::span(warming).first(stop)), kHugePagesPayFrom);
  // A single dear MiB in the window, or one cheap MiB among dear ones, does not move the median.
  std::vector<double> spike(cheap.begin(), cheap.begin() + 16);
  spike[7] = 40.0;
  EXPECT_TRUE(small_page_probe_done(spike, 128));
  std::vector<double> dip(dear.begin(), dear.begin() + 16);
  dip[15] = 0.1;
  EXPECT_FALSE(small_page_probe_done(dip, 128));
}

// The second touches (kRefaultProbeMiB): where a 4 KiB fault is dear in itself, as on session
// 50's PVM guest, the probe stops after them and chooses huge pages; where only fresh memory is
// dear (session 36), the second touches should be cheap and the probe goes on as before.
TEST(ReserveHeap, SmallPageProbeStopsAtOnceWhenFaultsAreDearInThemselves) {
  const std::vector<double> dear(200, 3.0), cheap(200, 0.6);
  const std::span<const double> dear_again(dear.data(), kRefaultProbeMiB), cheap_again(cheap.data(), kRefaultProbeMiB);
  static_assert(kRefaultProbeMiB < kSmallPageProbe >> 20);  // it decides before a full window could
  for (std::size_t n = 1; n < kRefaultProbeMiB; ++n) {  // not before every second touch is timed
    EXPECT_FALSE(small_page_faults_dear(std::span(dear).first(n), dear_again.first(n))) << n;
    EXPECT_FALSE(small_page_probe_done(std::span(dear).first(n), 128, dear_again.first(n))) << n;
  }
  EXPECT_TRUE(small_page_faults_dear(std::span(dear).first(kRefaultProbeMiB), dear_again));
  EXPECT_TRUE(small_page_probe_done(std::span(dear).first(kRefaultProbeMiB), 128, dear_again));
  // Both touches must be dear: cheap second touches after dear first ones (fresh memory is dear,
  // the fault is not: session 36's first MiB) go on; so does the converse.
  std::vector<double> warming(40, 4.0);
  warming.resize(200, 0.5);
  EXPECT_FALSE(small_page_faults_dear(std::span(warming).first(kRefaultProbeMiB), cheap_again));
  EXPECT_FALSE(small_page_faults_dear(std::span(cheap).first(kRefaultProbeMiB), dear_again));
  std::size_t stop = 0;
  while (!small_page_probe_done(std::span(warming).first(++stop), 128, cheap_again)) {
  }
  EXPECT_EQ(stop, 49u);  // exactly where it stopped without them (above)
  // The median decides: two cheap second touches of five do not move it, three do; likewise for
  // the first touches.
  std::vector<double> again(dear_again.begin(), dear_again.end());
  again[0] = again[3] = 0.1;
  EXPECT_TRUE(small_page_faults_dear(std::span(dear).first(kRefaultProbeMiB), again));
  again[4] = 0.1;
  EXPECT_FALSE(small_page_faults_dear(std::span(dear).first(kRefaultProbeMiB), again));
  std::vector<double> first(dear.begin(), dear.begin() + kRefaultProbeMiB);
  first[1] = first[2] = first[4] = 0.2;
  EXPECT_FALSE(small_page_faults_dear(first, dear_again));
  // Only the first kRefaultProbeMiB first touches count: later cheap ones do not undo the decision.
  std::vector<double> later(dear.begin(), dear.begin() + kRefaultProbeMiB);
  later.resize(12, 0.3);
  EXPECT_TRUE(small_page_faults_dear(later, dear_again));
  // Without second touches (MADV_DONTNEED refused), the probe is the one above.
  for (std::size_t n = 1; n < 128; ++n) EXPECT_FALSE(small_page_probe_done(std::span(dear).first(n), 128, {})) << n;
}

// The probe's limit: a run that cannot say how much heap it surely touches (binding to a target:
// sure_bytes 0) keeps the 16 MiB probe, whatever the pages cost; `plancert verify` passes half its
// input; never past 128 MiB nor half the reserve (too small a reserve: no probe).
TEST(ReserveHeap, SmallPageProbeTouchesNoMoreThanTheRunSurelyDoes) {
  constexpr std::uintmax_t MiB = std::uintmax_t{1} << 20;
  EXPECT_EQ(small_page_probe_limit(0, kLargeRunHeap), kSmallPageProbe);
  EXPECT_EQ(small_page_probe_limit(40 * MiB, 600 * MiB), 40 * MiB);
  EXPECT_EQ(small_page_probe_limit(230 * MiB, 2048 * MiB), kSmallPageProbeMax);
  EXPECT_EQ(small_page_probe_limit(230 * MiB, 100 * MiB), 50 * MiB);
  EXPECT_LT(small_page_probe_limit(230 * MiB, 20 * MiB), kSmallPageProbe);
}

// Unset (auto), the reserve's first pages are timed on 4 KiB pages (16 to 128 MiB) and the rest
// goes on huge pages exactly when the last 16 MiB cost kHugePagesPayFrom ms per MiB or more.
TEST(ReserveHeap, AutoTimesSmallPagesAndDecidesByTheThreshold) {
  if (!kOwnMalloc) GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc; reserve_heap does nothing there";
  ASSERT_EQ(::unsetenv("PLANCERT_HEAP_PAGES"), 0);
  const auto before = heap_top();
  const HeapReserve r = reserve_heap(heap_for_input(std::uintmax_t{100} << 20), std::uintmax_t{40} << 20);
  if (r.bytes == 0) GTEST_SKIP() << "an earlier reserve in this process already covers the request";
  const auto after = heap_top();
  ASSERT_GT(r.small_page_ms_per_mib, 0.0);  // the probe ran
  EXPECT_LT(r.small_page_ms_per_mib, 1000.0);
  ASSERT_GT(r.small_page_refault_ms_per_mib, 0.0);  // and touched its first MiB twice
  EXPECT_LT(r.small_page_refault_ms_per_mib, 1000.0);
  // A full window, unless 4 KiB faults were dear in themselves: then its first MiB decided.
  if (r.small_page_probe_bytes == kRefaultProbeMiB << 20) {
    EXPECT_GE(r.small_page_refault_ms_per_mib, kHugePagesPayFrom);
    EXPECT_GE(r.small_page_ms_per_mib, kHugePagesPayFrom);
  } else {
    EXPECT_GE(r.small_page_probe_bytes, kSmallPageProbe);
  }
  EXPECT_LE(r.small_page_probe_bytes, std::uintmax_t{40} << 20);  // no more than the run surely touches
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage")) return;
  EXPECT_EQ(r.huge_pages, r.small_page_ms_per_mib >= kHugePagesPayFrom) << r.small_page_ms_per_mib;
  const std::uintptr_t first = (before + (std::uintptr_t{2} << 20) - 1) & ~((std::uintptr_t{2} << 20) - 1);
  const std::string probed = vm_flags_at(first + (std::uintptr_t{2} << 20)), rest = vm_flags_at(after - (std::uintptr_t{100} << 20));
  ASSERT_FALSE(probed.empty() || rest.empty()) << "no mapping in /proc/self/smaps holds the reserve";
  EXPECT_NE(probed.find(" nh"), std::string::npos) << probed;  // the probe's pages are 4 KiB pages whatever the system default
  EXPECT_EQ(rest.find(" hg") != std::string::npos, r.huge_pages) << rest;
}

// A value that is none of `auto`, `huge` and `default` is not silently taken for one.
TEST(ReserveHeap, WarnsAboutAnUnknownPageSetting) {
  const auto warning = [](const char* value) {
    EXPECT_EQ(::setenv("PLANCERT_HEAP_PAGES", value, 1), 0);
    testing::internal::CaptureStderr();
    (void)reserve_heap(std::uintmax_t{1} << 20);  // below the threshold: nothing else happens
    EXPECT_EQ(::unsetenv("PLANCERT_HEAP_PAGES"), 0);
    return testing::internal::GetCapturedStderr();
  };
  EXPECT_EQ(warning("2M"), "plancert: PLANCERT_HEAP_PAGES=2M ignored (expected auto, huge or default)\n");
  EXPECT_EQ(warning("default"), "");
  EXPECT_EQ(warning("auto"), "");
  EXPECT_EQ(warning("huge"), "");
  EXPECT_EQ(warning(""), "");
}

TEST(WriteFileAtomic, ReplacesTheFileWithExactlyTheBytes) {
  auto p = temp_file("out", "old");
  write_file_atomic(p, "new bytes");
  EXPECT_EQ(read_file(p).view(), "new bytes");
  std::filesystem::remove(p);
}

// use_faster_blake2b only chooses which code hashes: every digest stays as it was, the choice
// is made once, and the child that timed the other code has been reaped.
TEST(Io, FasterBlake2bKeepsEveryDigest) {
  std::string text(std::size_t{3} << 20, 'x');
  for (std::size_t i = 0; i < text.size(); ++i) text[i] = static_cast<char>('a' + i * 7 % 26);
  const std::string small = digest_bytes("ModelIR", "{}"), large = digest_bytes("ConcretePlanIR", text);
  const HashCode code = use_faster_blake2b();
  EXPECT_EQ(use_faster_blake2b(), code);
  EXPECT_EQ(digest_bytes("ModelIR", "{}"), small);
  EXPECT_EQ(digest_bytes("ConcretePlanIR", text), large);
  errno = 0;
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
  // The answer is what the process does: libsodium was initialised (1: already) exactly when
  // the code it selects was chosen.
  EXPECT_EQ(::sodium_init(), code == HashCode::simd ? 1 : 0);
}


// GLIBC_TUNABLES holds name=value entries separated by ':'; glibc takes a tunable's last
// setting. Only glibc.malloc.hugetlb=2 maps blocks from the huge page pool (1 is transparent
// huge pages, which the reserve already uses).
TEST(HugePool, OnlyHugetlb2InTheTunablesAsksForThePool) {
  EXPECT_TRUE(tunables_request_huge_pool("glibc.malloc.hugetlb=2"));
  EXPECT_TRUE(tunables_request_huge_pool("glibc.malloc.arena_max=1:glibc.malloc.hugetlb=2"));
  EXPECT_TRUE(tunables_request_huge_pool("glibc.malloc.hugetlb=1:glibc.malloc.hugetlb=2"));
  EXPECT_FALSE(tunables_request_huge_pool("glibc.malloc.hugetlb=2:glibc.malloc.hugetlb=0"));
  EXPECT_FALSE(tunables_request_huge_pool("glibc.malloc.hugetlb=1"));
  EXPECT_FALSE(tunables_request_huge_pool("glibc.malloc.hugetlb=20"));
  EXPECT_FALSE(tunables_request_huge_pool("xglibc.malloc.hugetlb=2"));
  EXPECT_FALSE(tunables_request_huge_pool("glibc.malloc.hugetlb"));
  EXPECT_FALSE(tunables_request_huge_pool(""));
  EXPECT_FALSE(tunables_request_huge_pool(":"));
}

TEST(HugePool, AvailableBytesAreUnreservedFreePagesTimesThePageSize) {
  const std::string meminfo = "MemTotal:       24563916 kB\nHugePages_Total:     512\nHugePages_Free:      300\nHugePages_Rsvd:        0\nHugepagesize:       2048 kB\n";
  EXPECT_EQ(huge_pool_available_bytes(meminfo), std::uintmax_t{300} * 2048 * 1024);
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Free: 300\nHugePages_Rsvd: 100\nHugepagesize: 2048 kB\n"), std::uintmax_t{200} * 2048 * 1024);  // reserved: not available
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Free: 300\nHugePages_Rsvd: 300\nHugepagesize: 2048 kB\n"), 0u);
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Free: 300\n"), 0u);                                       // no page size
  EXPECT_EQ(huge_pool_available_bytes("Hugepagesize: 2048 kB\n"), 0u);                                      // no pool
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Freed: 3\nHugepagesize: 2048 kB\n"), 0u);                 // another field
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Free: x\nHugepagesize: 2048 kB\n"), 0u);                  // not a number
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Free: 99999999999999999999\nHugepagesize: 2048 kB\n"), 0u);  // beyond 64 bits
  EXPECT_EQ(huge_pool_available_bytes("HugePages_Free: 9223372036854775807\nHugepagesize: 2048 kB\n"), 0u);   // bytes beyond 64 bits
  EXPECT_EQ(huge_pool_available_bytes(""), 0u);
}

TEST(AddressLimit, MeminfoFieldIsTheNumberAfterTheNameAtALineStart) {
  const std::string meminfo = "MemTotal:       24683744 kB\nMemFree:  100 kB\nMemAvailable:   23000000 kB\nSwapFree: 0 kB\n";
  EXPECT_EQ(meminfo_field(meminfo, "MemTotal"), 24683744u);
  EXPECT_EQ(meminfo_field(meminfo, "MemAvailable"), 23000000u);
  EXPECT_EQ(meminfo_field(meminfo, "MemFree"), 100u);
  EXPECT_EQ(meminfo_field(meminfo, "Mem"), 0u);         // a prefix of a name is not the name
  EXPECT_EQ(meminfo_field(meminfo, "Available"), 0u);   // nor a suffix
  EXPECT_EQ(meminfo_field(meminfo, "SwapTotal"), 0u);   // missing
  EXPECT_EQ(meminfo_field("X: y kB\n", "X"), 0u);       // not a number
  EXPECT_EQ(meminfo_field("", "X"), 0u);
}

TEST(AddressLimit, CapIsAvailableMemoryAndSwapOrTheLowerControlGroupLimit) {
  const std::string meminfo = "MemTotal: 24683744 kB\nMemAvailable: 20000000 kB\nSwapTotal: 4000000 kB\nSwapFree: 1000000 kB\n";
  const std::uintmax_t machine = std::uintmax_t{21000000} * 1024;  // available memory and free swap, not the totals
  EXPECT_EQ(address_space_cap(meminfo, 0), machine);
  EXPECT_EQ(address_space_cap(meminfo, std::uintmax_t{8} << 30), std::uintmax_t{8} << 30);  // a container's smaller limit
  EXPECT_EQ(address_space_cap(meminfo, machine + 1), machine);                              // a larger one changes nothing
  EXPECT_EQ(address_space_cap("MemAvailable: 1000 kB\n", 0), 1000u * 1024);                // no swap line: none
  EXPECT_EQ(address_space_cap("MemTotal: 24683744 kB\n", 0), 0u);                          // no MemAvailable: no cap
  EXPECT_EQ(address_space_cap("MemAvailable: 99999999999999999 kB\n", 0), 0u);             // bytes beyond 64 bits: no cap
  EXPECT_EQ(address_space_cap("", std::uintmax_t{1} << 30), 0u);
}

TEST(HugePool, IsUsedOnlyWhenAskedForAndLargeEnough) {
  constexpr std::uintmax_t heap = heap_for_input(std::uintmax_t{440} << 20);  // the 1M-command plan: a pool of 880 MiB
  EXPECT_TRUE(use_huge_pool("glibc.malloc.hugetlb=2", std::uintmax_t{1} << 30, heap));
  EXPECT_TRUE(use_huge_pool("glibc.malloc.hugetlb=2", heap / 3, heap));
  EXPECT_FALSE(use_huge_pool("glibc.malloc.hugetlb=2", heap / 3 - 1, heap));
  EXPECT_FALSE(use_huge_pool("glibc.malloc.hugetlb=1", std::uintmax_t{1} << 30, heap));
  EXPECT_FALSE(use_huge_pool("", std::uintmax_t{1} << 30, heap));
  EXPECT_FALSE(use_huge_pool("glibc.malloc.hugetlb=2", 0, 0));  // no pool at all
}

// reserve_heap follows use_huge_pool with this machine's pool: on a machine without one (CI's)
// it reserves heap as before even when the tunable asks for the pool. Last in this file: the
// malloc options it sets last for the rest of the process.
TEST(HugePool, ReserveHeapTakesThePoolExactlyWhenItQualifies) {
  if (!kOwnMalloc) GTEST_SKIP() << "a sanitizer's allocator replaces glibc malloc; reserve_heap does nothing there";
  const std::uintmax_t heap = heap_for_input(std::uintmax_t{100} << 20);
  std::ifstream in("/proc/meminfo");
  const std::string meminfo((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const bool qualifies = use_huge_pool("glibc.malloc.hugetlb=2", huge_pool_available_bytes(meminfo), heap);
  ASSERT_EQ(::setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=2", 1), 0);
  const HeapReserve r = reserve_heap(heap);
  ASSERT_EQ(::unsetenv("GLIBC_TUNABLES"), 0);
  EXPECT_EQ(r.huge_pool, qualifies);
  EXPECT_EQ(r.bytes == 0, qualifies);  // the pool, or a reserve: never both
}

}  // namespace
}  // namespace plancert::cli
