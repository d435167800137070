// SPDX-License-Identifier: Apache-2.0
#include "cli/io.h"

#include "core/diag.h"

#include <cstdio>
#include <csignal>
#include <fcntl.h>
#include <malloc.h>
#include <sodium.h>
#include <sys/wait.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

namespace plancert::cli {

namespace {

// SIGBUS on a mapped input means the file shrank under us: report it as bad input (exit 2).
void on_sigbus(int) {
  static constexpr char kMsg[] = "IO-1: an input file shrank while it was being read (changed by another process)\n";
  [[maybe_unused]] auto n = ::write(STDERR_FILENO, kMsg, sizeof kMsg - 1);
  ::_exit(2);
}

}  // namespace

FileBytes& FileBytes::operator=(FileBytes&& o) noexcept {
  if (this != &o) {
    if (data_) ::munmap(const_cast<char*>(data_), size_);
    data_ = std::exchange(o.data_, nullptr), size_ = std::exchange(o.size_, 0);
  }
  return *this;
}

FileBytes::~FileBytes() {
  if (data_) ::munmap(const_cast<char*>(data_), size_);
}

FileBytes read_file(const std::filesystem::path& p, std::uintmax_t max_bytes) {
  std::error_code ec;
  auto st = std::filesystem::status(p, ec);
  if (ec || !std::filesystem::exists(st)) throw InputError("IO-1", "", p.string() + ": no such file");
  if (!std::filesystem::is_regular_file(st)) throw InputError("IO-1", "", p.string() + ": not a regular file");
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("IO-1", "", p.string() + ": cannot open: " + std::error_code(errno, std::generic_category()).message());
  struct stat info {};
  const bool stat_ok = ::fstat(fd, &info) == 0;  // the size of what was opened, not of what the path names now
  const auto size = static_cast<std::uintmax_t>(info.st_size);
  if (!stat_ok || size > max_bytes) {
    ::close(fd);
    if (!stat_ok) throw InputError("IO-1", "", p.string() + ": cannot read its size");
    throw InputError("IO-2", "", p.string() + ": file is " + std::to_string(size) + " bytes, over the limit of " + std::to_string(max_bytes) + " (raise it with --max-bytes)");
  }
  if (size == 0) { ::close(fd); return {}; }
  static const bool handler = [] {
    struct sigaction sa {};
    sa.sa_handler = on_sigbus;
    return ::sigaction(SIGBUS, &sa, nullptr) == 0;
  }();
  void* m = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (!handler) throw InputError("IO-1", "", p.string() + ": cannot install the SIGBUS handler that guards the mapping");
  if (m == MAP_FAILED) throw InputError("IO-1", "", p.string() + ": cannot map: " + std::error_code(err, std::generic_category()).message());
  return {static_cast<const char*>(m), static_cast<std::size_t>(size)};
}

namespace {
// The median of `ms` (the upper middle one of an even count), -1 for none.
double median_of(std::span<const double> ms) {
  if (ms.empty()) return -1;
  std::array<double, kSmallPageProbeMax / (std::size_t{1} << 20)> w{};
  const std::size_t n = std::min(ms.size(), w.size());
  std::copy(ms.end() - static_cast<std::ptrdiff_t>(n), ms.end(), w.begin());
  std::nth_element(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(n / 2), w.begin() + static_cast<std::ptrdiff_t>(n));
  return w[n / 2];
}
}  // namespace

double small_page_window_median(std::span<const double> ms_per_mib) {
  constexpr std::size_t kWindow = kSmallPageProbe >> 20;
  return ms_per_mib.size() < kWindow ? -1 : median_of(ms_per_mib.last(kWindow));
}

bool small_page_faults_dear(std::span<const double> ms_per_mib, std::span<const double> refault_ms_per_mib) {
  return refault_ms_per_mib.size() >= kRefaultProbeMiB && ms_per_mib.size() >= kRefaultProbeMiB &&
         median_of(refault_ms_per_mib.first(kRefaultProbeMiB)) >= kHugePagesPayFrom && median_of(ms_per_mib.first(kRefaultProbeMiB)) >= kHugePagesPayFrom;
}

bool small_page_probe_done(std::span<const double> ms_per_mib, std::size_t max_mib, std::span<const double> refault_ms_per_mib) {
  const double median = small_page_window_median(ms_per_mib);
  return ms_per_mib.size() >= max_mib || (median >= 0 && median < kHugePagesPayFrom) || small_page_faults_dear(ms_per_mib, refault_ms_per_mib);
}

std::uintmax_t small_page_probe_limit(std::uintmax_t sure_bytes, std::uintmax_t reserve_bytes) {
  return std::min({kSmallPageProbeMax, std::max(sure_bytes, kSmallPageProbe), reserve_bytes / 2});
}

namespace {
// First touches of the 4 KiB pages from `at`, MiB by MiB (one written zero per page: the heap's
// free top reads as zero either way), the first kRefaultProbeMiB MiB also a second time after
// MADV_DONTNEED (if that fails, no second touch is timed and the probe goes on), until
// small_page_probe_done() for at most `max_bytes`: the last window's median (of all MiB timed, if
// fewer), in ms per MiB, the bytes touched and the second touches' median (0: none).
std::tuple<double, std::uintmax_t, double> probe_small_pages(std::uintptr_t at, std::uintmax_t max_bytes) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  std::array<double, kSmallPageProbeMax / kMiB> ms{};  // on the stack: a heap block would sit in the pages timed
  std::array<double, kRefaultProbeMiB> again{};
  const std::size_t max_mib = std::clamp<std::size_t>(max_bytes / kMiB, kSmallPageProbe / kMiB, ms.size());
  const auto touch_ms = [](std::uintptr_t mib) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t o = 0; o < kMiB; o += 4096) *reinterpret_cast<volatile char*>(mib + o) = 0;
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  std::size_t n = 0, m = 0;
  do {
    ms[n] = touch_ms(at + n * kMiB);
    if (m == n && n < kRefaultProbeMiB && ::madvise(reinterpret_cast<void*>(at + n * kMiB), kMiB, MADV_DONTNEED) == 0) again[m++] = touch_ms(at + n * kMiB);
    ++n;
  } while (!small_page_probe_done(std::span(ms.data(), n), max_mib, std::span(again.data(), m)));
  // The last window (all MiB timed, if fewer): small_page_window_median() once it is full.
  return {median_of(std::span(ms.data(), n).last(std::min(n, kSmallPageProbe / kMiB))), std::uintmax_t{n} * kMiB, m > 0 ? median_of(std::span(again.data(), m)) : 0.0};
}
}  // namespace

bool tunables_request_huge_pool(std::string_view tunables) {
  bool on = false;
  for (std::size_t at = 0; at <= tunables.size();) {  // name=value entries separated by ':'
    const std::size_t end = std::min(tunables.find(':', at), tunables.size());
    const std::string_view entry = tunables.substr(at, end - at);
    if (entry.rfind("glibc.malloc.hugetlb=", 0) == 0) on = entry == "glibc.malloc.hugetlb=2";
    at = end + 1;
  }
  return on;
}

std::uintmax_t meminfo_field(std::string_view meminfo, std::string_view name) {
  for (std::size_t at = 0; at < meminfo.size();) {
    const std::size_t end = std::min(meminfo.find('\n', at), meminfo.size());
    if (const std::string_view line = meminfo.substr(at, end - at); line.size() > name.size() && line.rfind(name, 0) == 0 && line[name.size()] == ':') {
      std::string_view rest = line.substr(name.size() + 1);
      rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
      std::uintmax_t v = 0;
      const auto [p, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), v);
      return ec == std::errc() ? v : 0;
    }
    at = end + 1;
  }
  return 0;
}

std::uintmax_t huge_pool_available_bytes(std::string_view meminfo) {
  const std::uintmax_t unused = meminfo_field(meminfo, "HugePages_Free"), reserved = meminfo_field(meminfo, "HugePages_Rsvd"),
                       kib = meminfo_field(meminfo, "Hugepagesize");
  const std::uintmax_t pages = unused > reserved ? unused - reserved : 0;  // free pages already promised to a mapping are not available
  return kib != 0 && pages <= UINTMAX_MAX / 1024 / kib ? pages * kib * 1024 : 0;
}

std::uintmax_t address_space_cap(std::string_view meminfo, std::uintmax_t cgroup_bytes) {
  const std::uintmax_t avail = meminfo_field(meminfo, "MemAvailable"), swap = meminfo_field(meminfo, "SwapFree");
  if (avail == 0 || avail > UINTMAX_MAX / 2048 || swap > UINTMAX_MAX / 2048) return 0;
  const std::uintmax_t machine = (avail + swap) * 1024;
  return cgroup_bytes != 0 && cgroup_bytes < machine ? cgroup_bytes : machine;
}

namespace {
// The memory limit of this process's control group, in bytes (0: none found). cgroup v2's
// memory.max ("max": none), else cgroup v1's memory.limit_in_bytes (2^62 and more: none).
std::uintmax_t cgroup_memory_limit() {
  for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    std::string text;
    if (!(in >> text)) continue;
    std::uintmax_t v = 0;
    const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    return ec == std::errc() && p == text.data() + text.size() && v < (std::uintmax_t{1} << 62) ? v : 0;
  }
  return 0;
}
}  // namespace

std::uintmax_t limit_address_space() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  constexpr bool sanitized = true;  // the sanitizers' shadow memory takes terabytes of address space
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  constexpr bool sanitized = true;
#else
  constexpr bool sanitized = false;
#endif
#else
  constexpr bool sanitized = false;
#endif
  const char* env = std::getenv("PLANCERT_ADDRESS_LIMIT");
  const std::string_view setting = env != nullptr ? env : "";
  std::uintmax_t cap = 0;
  if (setting.empty() || setting == "auto") {
    std::ifstream in("/proc/meminfo");
    const std::string meminfo((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    cap = address_space_cap(meminfo, cgroup_memory_limit());
  } else if (const auto [p, ec] = std::from_chars(setting.data(), setting.data() + setting.size(), cap);
             setting != "off" && (ec != std::errc() || p != setting.data() + setting.size() || cap == 0)) {
    std::fprintf(stderr, "plancert: PLANCERT_ADDRESS_LIMIT=%.64s ignored (expected auto, off or a number of bytes)\n", env);
    cap = 0;
  }
  rlimit now{};
  const bool known = ::getrlimit(RLIMIT_AS, &now) == 0;
  const std::uintmax_t current = known && now.rlim_cur != RLIM_INFINITY ? static_cast<std::uintmax_t>(now.rlim_cur) : 0;
  if (cap == 0 || (current != 0 && current <= cap)) return current;  // a lower limit stays, and is the room
  if (sanitized) return cap;                                          // the room, without the limit
  const rlimit want{static_cast<rlim_t>(cap), now.rlim_max};
  return known && ::setrlimit(RLIMIT_AS, &want) == 0 ? cap : current;
}

bool use_huge_pool(std::string_view tunables, std::uintmax_t pool_available_bytes, std::uintmax_t heap_bytes) {
  return tunables_request_huge_pool(tunables) && pool_available_bytes > 0 && pool_available_bytes >= heap_bytes / 3;
}

HeapReserve reserve_heap(std::uintmax_t heap_bytes, std::uintmax_t sure_bytes) {
  HeapReserve out;
  const char* env = std::getenv("PLANCERT_HEAP_PAGES");
  const std::string_view pages = env != nullptr ? env : "";
  if (!pages.empty() && pages != "huge" && pages != "default" && pages != "auto")
    std::fprintf(stderr, "plancert: PLANCERT_HEAP_PAGES=%.64s ignored (expected auto, huge or default)\n", env);
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
  constexpr std::uintmax_t kMin = std::uintmax_t{64} << 20, kHuge = std::uintmax_t{2} << 20;
  // glibc hands the heap's free top back to the system once it reaches the trim threshold,
  // at most INT32_MAX: the reserve stays below that.
  constexpr std::uintmax_t kMax = INT32_MAX - 2 * kMin;
  static_assert(kLargeRunMinHeap == 4 * kMin && kSmallPageProbe < kLargeRunMinHeap / 4);
  if (heap_bytes < kLargeRunMinHeap) return out;
  if (const char* tunables = std::getenv("GLIBC_TUNABLES"); (pages.empty() || pages == "auto") && tunables != nullptr) {  // use_huge_pool() reads the tunables
    std::ifstream in("/proc/meminfo");
    const std::string meminfo((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (use_huge_pool(tunables, huge_pool_available_bytes(meminfo), heap_bytes)) {
      ::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHuge));  // blocks of 2 MiB and more: each mapped by glibc, from the pool
      ::mallopt(M_TRIM_THRESHOLD, INT32_MAX);                // the small blocks' heap keeps its pages
      out.huge_pool = true;
      return out;
    }
  }
  const auto top = [] { return reinterpret_cast<std::uintptr_t>(::sbrk(0)); };
  ::mallopt(M_MMAP_MAX, 0);  // large blocks (the command array) come from the heap too
  ::mallopt(M_TRIM_THRESHOLD, INT32_MAX);
  ::mallopt(M_TOP_PAD, static_cast<int>(std::min(heap_bytes, kMax)));
  const std::uintmax_t from = top();
  void* volatile block = ::malloc(kMin);  // more than the heap's free top: the heap grows by it plus the pad
  ::free(block);                          // (volatile: the compiler may not elide the pair)
  ::mallopt(M_TOP_PAD, static_cast<int>(kMin));  // later growth, if the estimate was short, in steps of 64 MiB
  const std::uintmax_t first = (from + kHuge - 1) / kHuge * kHuge, end = top();
  out.bytes = end - from;
  if (pages == "huge") {
    out.huge_pages = end > first && ::madvise(reinterpret_cast<void*>(first), end - first, MADV_HUGEPAGE) == 0;  // a hint: refusal is harmless
  } else if (const std::uintmax_t most = small_page_probe_limit(sure_bytes, end > first ? end - first : 0);  // the reserve's first pages,
             pages != "default" && most >= kSmallPageProbe &&                                                // which the heap uses first
             ::madvise(reinterpret_cast<void*>(first), most, MADV_NOHUGEPAGE) == 0) {
    std::tie(out.small_page_ms_per_mib, out.small_page_probe_bytes, out.small_page_refault_ms_per_mib) = probe_small_pages(first, most);
    const std::uintmax_t rest = first + out.small_page_probe_bytes;  // [first, first + most) stays on 4 KiB pages, but for this rest
    out.huge_pages = out.small_page_ms_per_mib >= kHugePagesPayFrom && ::madvise(reinterpret_cast<void*>(rest), end - rest, MADV_HUGEPAGE) == 0;
  }
#else
  (void)heap_bytes;
#endif
  return out;
}

namespace {
// Best of three times of hashing `block`, in seconds.
double hash_seconds(const std::vector<unsigned char>& block) {
  double best = 1e9;
  unsigned char out[crypto_generichash_BYTES];
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    crypto_generichash(out, sizeof out, block.data(), block.size(), nullptr, 0);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}
}  // namespace

HashCode use_faster_blake2b() {
  static const HashCode chosen = [] {
    std::vector<unsigned char> block(std::size_t{256} << 10);
    for (std::size_t i = 0; i < block.size(); ++i) block[i] = static_cast<unsigned char>(i * 131 + (i >> 9));
    const double portable = hash_seconds(block);
    int fds[2];
    if (::pipe(fds) != 0) return HashCode::portable;
    const pid_t pid = ::fork();
    if (pid == 0) {  // the child: only async-signal-safe calls besides libsodium's, then _exit
      ::close(fds[0]);
      const double t = ::sodium_init() < 0 ? 1e9 : hash_seconds(block);
      [[maybe_unused]] auto n = ::write(fds[1], &t, sizeof t);
      ::_exit(0);
    }
    ::close(fds[1]);
    double simd = 1e9;
    if (pid > 0) {
      if (::read(fds[0], &simd, sizeof simd) != static_cast<ssize_t>(sizeof simd)) simd = 1e9;
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    ::close(fds[0]);
    return simd < portable && ::sodium_init() >= 0 ? HashCode::simd : HashCode::portable;
  }();
  return chosen;
}

HeapReserve prepare_large_run(std::uintmax_t heap_bytes, std::uintmax_t sure_bytes) {
  if (heap_bytes >= kLargeRunMinHeap) use_faster_blake2b();
  return reserve_heap(heap_bytes, sure_bytes);
}

void write_file_atomic(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + p.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error(p.string() + ": cannot create a temporary file: " + std::error_code(errno, std::generic_category()).message());
  std::size_t put = 0;
  while (put < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + put, bytes.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    put += static_cast<std::size_t>(n);
  }
  bool ok = put == bytes.size() && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (ok) ok = std::rename(tmpl.c_str(), p.c_str()) == 0;
  if (!ok) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error(p.string() + ": cannot write: " + std::error_code(e, std::generic_category()).message());
  }
}

}  // namespace plancert::cli
