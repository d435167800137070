// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief File input with size limits and atomic output (temporary file + rename).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace plancert::cli {

/// Default largest input file read (bytes); `--max-bytes` raises it.
inline constexpr std::uintmax_t kDefaultMaxInputBytes = std::uintmax_t{1} << 30;

/// The bytes of a whole input file, mapped read-only (no copy, no per-page faults: the
/// mapping is populated from the page cache at once). Move-only; unmaps on destruction.
///
/// If another process shrinks the file while it is mapped, touching the lost pages raises
/// SIGBUS: the handler installed by read_file() then prints an IO-1 line on stderr and exits
/// with code 2 (bad input), never a crash.
class FileBytes {
 public:
  FileBytes() = default;
  /// Takes over a mapping of `size` bytes at `data` (nullptr for an empty file).
  FileBytes(const char* data, std::size_t size) : data_(data), size_(size) {}
  FileBytes(FileBytes&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}  ///< moves
  FileBytes& operator=(FileBytes&& o) noexcept;  ///< moves
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();
  /// The file's bytes.
  [[nodiscard]] std::string_view view() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

/// Maps a whole file read-only. Throws InputError IO-1 (missing / unreadable / not a regular
/// file) or IO-2 (larger than `max_bytes`, checked before reading).
FileBytes read_file(const std::filesystem::path& p, std::uintmax_t max_bytes = kDefaultMaxInputBytes);

/// Heap that decoding `input_bytes` of snapshot text may reserve: a decoded plan touches about
/// 1.5 times its text, and the decoder reserves capacity for long arrays from estimates (up to
/// 4 bytes per input byte of address space, never touched beyond what is used).
constexpr std::uintmax_t heap_for_input(std::uintmax_t input_bytes) { return 6 * input_bytes; }

/// Heap for a run whose size is not known in advance but may be large (binding a plan to a
/// target): as much as reserve_heap() reserves at most.
inline constexpr std::uintmax_t kLargeRunHeap = std::uintmax_t{2} << 30;

/// Heap from which a run counts as large: reserve_heap() reserves, and prepare_large_run()
/// also picks the faster BLAKE2b code (an input of about 43 MiB, by heap_for_input()).
inline constexpr std::uintmax_t kLargeRunMinHeap = std::uintmax_t{256} << 20;

/// The window of reserve_heap()'s probe: the median of the last 16 MiB of 4 KiB first touches,
/// timed MiB by MiB (4,096 page faults, about 10-50 ms), decides. The probe touches at least
/// this much, on pages the heap then uses first.
inline constexpr std::uintmax_t kSmallPageProbe = std::uintmax_t{16} << 20;
/// The most reserve_heap()'s probe touches on 4 KiB pages (128 MiB, and no more than the run
/// surely touches, its `sure_bytes`; at least the window): it stops earlier once the window's
/// median falls below kHugePagesPayFrom. On session 36's machine 4 KiB pages cost 2-5 ms per MiB
/// for the first 16-60 MiB after a pause and 0.4-0.6 from then on, with huge pages at 2.9
/// throughout: a 16 MiB probe alone chose huge pages there, and the run took 0.5 s longer.
inline constexpr std::uintmax_t kSmallPageProbeMax = std::uintmax_t{128} << 20;
/// First-touch cost of 4 KiB pages, in ms per MiB, from which reserve_heap() puts the rest of the
/// reserve on transparent huge pages. The project's machines fall in two groups (README,
/// Performance): 4 KiB pages at 0.5-0.7 ms per MiB, with fresh huge pages at 2.3-2.9 (slower),
/// or 4 KiB pages at 2.7-3.4 ms per MiB, with fresh huge pages at 0.6-2.0 (faster). 1.5 lies
/// between the groups.
inline constexpr double kHugePagesPayFrom = 1.5;

/// How many of reserve_heap()'s probe's first MiB it touches twice: once, then again right after
/// handing their pages back (`MADV_DONTNEED`). The kernel gives the same pages again, which the
/// host has backed by then, so the second touch times a 4 KiB fault itself, not the host's price
/// for fresh memory. On session 50's PVM guest it stayed at 2.5-3.4 ms per MiB (about 10 us a
/// fault; sessions 37 and 49 saw first touches as dear back to back as after a pause), and huge
/// pages, one fault per 2 MiB, cost 0.05-1.8: the probe then decides after these MiB instead of
/// timing 128 MiB (about 0.1 s a run there, README, Performance). Where 4 KiB pages are dear only
/// at first (session 36), the second touches should be cheap, and the probe goes on as before.
inline constexpr std::size_t kRefaultProbeMiB = 5;

/// The median of the last kSmallPageProbe / 1 MiB entries of `ms_per_mib` (first-touch times of
/// successive MiB of 4 KiB pages, in ms), or -1 while there are fewer.
double small_page_window_median(std::span<const double> ms_per_mib);

/// Whether 4 KiB faults are dear in themselves (kRefaultProbeMiB): all kRefaultProbeMiB second
/// touches are timed (`refault_ms_per_mib`), and their median and that of the same MiB's first
/// touches (the first entries of `ms_per_mib`) are both kHugePagesPayFrom or more.
bool small_page_faults_dear(std::span<const double> ms_per_mib, std::span<const double> refault_ms_per_mib);

/// Whether reserve_heap()'s probe stops after the times `ms_per_mib` (see
/// small_page_window_median()): the window is full and its median is below kHugePagesPayFrom
/// (4 KiB pages stay), or `max_mib` MiB are timed (from a median of kHugePagesPayFrom on, the rest
/// of the reserve goes on huge pages), or small_page_faults_dear() holds for the second touches
/// `refault_ms_per_mib` (huge pages at once).
bool small_page_probe_done(std::span<const double> ms_per_mib, std::size_t max_mib, std::span<const double> refault_ms_per_mib = {});

/// How much reserve_heap()'s probe may time on 4 KiB pages, of a reserve of `reserve_bytes` for a
/// run that surely touches `sure_bytes`: kSmallPageProbeMax, but no more than `sure_bytes`
/// (at least one window, kSmallPageProbe) nor half the reserve. Below kSmallPageProbe no probe runs.
std::uintmax_t small_page_probe_limit(std::uintmax_t sure_bytes, std::uintmax_t reserve_bytes);

/// What reserve_heap() did.
struct HeapReserve {
  std::uintmax_t bytes = 0;           ///< address space added to the heap (0: nothing was done)
  bool huge_pages = false;            ///< the reserve (or all of it after the probe) was marked for transparent huge pages (`MADV_HUGEPAGE`)
  double small_page_ms_per_mib = 0;   ///< the probe's last window's median first-touch cost of 4 KiB pages, ms per MiB (0: no probe); of all MiB timed when 4 KiB faults were dear (small_page_faults_dear()) before a full window
  double small_page_refault_ms_per_mib = 0;  ///< the median cost of the probe's second touches (kRefaultProbeMiB), ms per MiB (0: none timed)
  std::uintmax_t small_page_probe_bytes = 0;  ///< how much of the reserve the probe touched on 4 KiB pages (0: no probe)
  bool huge_pool = false;             ///< no reserve: blocks of 2 MiB and more are left to glibc, which maps them from the huge page pool
};

/// Whether `tunables`, the value of `GLIBC_TUNABLES`, tells glibc's malloc to map its large
/// blocks from the kernel's huge page pool: it sets `glibc.malloc.hugetlb` to 2 (glibc 2.35 and
/// later; the last setting of a tunable counts, as in glibc).
bool tunables_request_huge_pool(std::string_view tunables);

/// The number after "`name`:" at the start of a line of `meminfo` (the text of `/proc/meminfo`:
/// kB for sizes, a count for `HugePages_*`); 0 when the line is missing or malformed.
std::uintmax_t meminfo_field(std::string_view meminfo, std::string_view name);

/// The address-space limit limit_address_space() sets by default: the memory and swap the
/// machine can give without taking them from other processes (`MemAvailable` + `SwapFree` of
/// `meminfo`, in bytes: free memory and reclaimable caches), or `cgroup_bytes` (the memory limit
/// of the process's control group; 0: none) when that is lower; 0 when `meminfo` has no
/// `MemAvailable` (kernels before 3.14).
std::uintmax_t address_space_cap(std::string_view meminfo, std::uintmax_t cgroup_bytes);

/// Caps this process's address space (`RLIMIT_AS`) so that a plan which outgrows the machine
/// ends in `internal error: out of memory` (exit 3, nothing written) instead of the kernel's
/// OOM killer (SIGKILL: no diagnostic, and other processes at risk). `plancert certify` and
/// `prove` call it: they build plans whose size follows from a few numbers of a configuration
/// file (a model of 9,600,000 layers was killed at 24.3 GB on session 41's 24 GB machine, and
/// ends in exit 3 at 23.4 GB with the cap), while `verify` reads at most `--max-bytes`.
///
/// The environment variable `PLANCERT_ADDRESS_LIMIT` chooses the cap: `auto` (also when unset
/// or empty) address_space_cap() of `/proc/meminfo` and the control group's `memory.max` (v2)
/// or `memory.limit_in_bytes` (v1); a number of bytes; or `off` (no cap). Anything else is
/// ignored with a one-line warning on stderr. A lower limit already set (`ulimit -v`) stays,
/// and sanitizer builds set none (their shadow memory takes terabytes of address space). The
/// cap is taken once, at the start: memory that other processes take later can still bring
/// the OOM killer first, and address space reserved but never touched counts against it (the
/// heap reserve of cli::prepare_large_run() is the heap's first part, so it is touched before
/// the heap grows past it). Returns the memory room (passes/frontend/room.h, CONFIG-8): the limit
/// now in force (the cap set, or a lower one already in place; in sanitizer builds the cap that
/// was not set), or 0 when there is none.
std::uintmax_t limit_address_space();

/// Available bytes of the kernel's huge page pool, `HugePages_Free` less `HugePages_Rsvd` (free
/// pages promised to mappings already) times `Hugepagesize`, read from `meminfo` (the text of
/// `/proc/meminfo`); 0 when the free count or the page size is missing or malformed.
std::uintmax_t huge_pool_available_bytes(std::string_view meminfo);

/// Whether reserve_heap() leaves large blocks to a huge page pool instead of reserving heap:
/// glibc is told to use the pool (`tunables`, see tunables_request_huge_pool()), and the pool
/// has at least a third of `heap_bytes` available (heap_for_input() is six times the input; a 1M-command
/// plan's run takes about 1.7 times its input from the pool). A block the pool cannot take is
/// mapped on ordinary pages by glibc, so a smaller pool is correct, only slower.
bool use_huge_pool(std::string_view tunables, std::uintmax_t pool_available_bytes, std::uintmax_t heap_bytes);

/// Prepares the heap for a run that will allocate up to about `heap_bytes`. Below 256 MiB
/// (kLargeRunMinHeap) it does nothing. Above, on glibc, it grows the heap once by that much
/// (at most 2 GiB minus 128 MiB, where glibc would trim it; address space only: pages are
/// committed when first touched) and keeps every later block, large ones included, on the heap
/// (`M_MMAP_MAX` 0, no trimming); growth beyond the reserve continues in 64 MiB steps.
///
/// Which page size backs the reserve follows the environment variable `PLANCERT_HEAP_PAGES`:
/// - `auto` (also when unset or empty): the reserve's first pages are touched on 4 KiB pages, MiB
///   by MiB, until the median cost of the last 16 MiB (kSmallPageProbe) falls below 1.5 ms per
///   MiB (kHugePagesPayFrom), and then the kernel's default page size stays, or until 128 MiB
///   (kSmallPageProbeMax), at most `sure_bytes` and at least 16 MiB, are timed, and then the
///   rest of the reserve is marked for transparent huge pages (`MADV_HUGEPAGE`); the first 5 MiB
///   (kRefaultProbeMiB) are also touched again after handing them back, and when both touches
///   cost 1.5 ms per MiB or more (small_page_faults_dear()), the rest goes on huge pages at once;
/// - `huge`: the whole reserve is marked for huge pages, without a probe;
/// - `default`: the kernel's default page size stays, without a probe.
/// Any other value is ignored with a one-line warning on stderr (and acts as unset).
///
/// With `auto`, a huge page pool comes first: when `GLIBC_TUNABLES` sets
/// `glibc.malloc.hugetlb=2` and use_huge_pool() holds (the pool is `vm.nr_hugepages`, configured
/// by the machine's administrator), nothing is reserved; blocks of 2 MiB and more are mapped by
/// glibc one by one (`M_MMAP_THRESHOLD` 2 MiB), from the pool, and returned to it when freed.
/// Pages of the pool stay allocated to it between runs, so on a virtual machine whose host
/// reclaims freed memory they are not fresh again for the next run (README, Performance).
///
/// Why: first touches of fresh memory dominate decoding or building a large plan, and every
/// allocation taken from the top of the heap, without trimming or a fresh mapping per large
/// block, touches fresh memory once at most. Which page size backs fresh memory faster depends
/// on the machine, not on plancert: on bare metal a 2 MiB page takes one fault instead of 512,
/// but on the project's virtual machines it has gone either way (README, Performance;
/// `bench_verify`'s `floor_touch` cases measure both). The probe times 4 KiB pages, not huge
/// ones: the first tens of MiB of huge pages can come from the kernel's per-CPU free lists,
/// still backed by the host, at a twentieth of the price of the rest or less (measured: 0.07
/// against 1.8 ms per MiB), so timing them says nothing about the rest; on the machine where
/// that was measured, 4 KiB faults showed no such effect (2.8-3.0 ms per MiB back to back as
/// after a pause). Where 4 KiB pages are cheap, their first tens of MiB after a pause can still
/// be dear (session 36: 2-5 ms per MiB, then 0.4-0.6), so the probe goes on while the window's
/// median stays high, up to kSmallPageProbeMax; where they are dear throughout because the fault
/// itself is dear, the second touches of the first MiB tell so at once (kRefaultProbeMiB), which
/// saves about 0.1 s against timing 128 MiB. The probed pages are the ones the heap hands out first,
/// and beyond its first 16 MiB the probe touches no more than `sure_bytes`, what the caller knows
/// the run will touch (`plancert verify`: half its input; binding, whose size is not known in
/// advance: 0), so it wastes no memory. Purely a
/// performance measure: if the heap cannot grow (glibc then falls back to mmap), allocation
/// works exactly as before. Under AddressSanitizer (its own allocator) it has no effect.
HeapReserve reserve_heap(std::uintmax_t heap_bytes, std::uintmax_t sure_bytes = 0);

/// Which of libsodium's BLAKE2b codes hashes in this process.
enum class HashCode {
  portable,  ///< the portable C code libsodium starts with
  simd       ///< the code `sodium_init()` selects for the CPU (AVX2 where present)
};

/// Makes this process hash with whichever of libsodium's two BLAKE2b codes is faster on this
/// CPU, measured, and returns it. The first call times the portable code on a 256 KiB block
/// (best of three), then times the code `sodium_init()` selects in a forked child (the choice
/// is process-wide and cannot be undone, so the parent commits to it only if it won) and calls
/// `sodium_init()` if that was faster; later calls return the first answer. About 3 ms; worth
/// it only before hashing tens of MB. Every code gives the same digest, so this is purely a
/// performance measure: if the child cannot be forked the portable code stays.
///
/// Why: which is faster depends on the CPU. On one of the project's AMD EPYC machines the
/// portable code hashed at 1.14 GB/s and the AVX2 code at 0.62 GB/s; on another, 0.58 GB/s
/// and 0.90 GB/s (README, Performance). Hashing a 440 MB plan takes 0.4-0.75 s of either.
HashCode use_faster_blake2b();

/// Prepares this process for a run that decodes, builds or hashes a plan needing about
/// `heap_bytes` of heap, of which it surely touches `sure_bytes`: reserve_heap(heap_bytes,
/// sure_bytes) and, from kLargeRunMinHeap on, also use_faster_blake2b(). What `plancert verify`
/// and binding to a target call first.
HeapReserve prepare_large_run(std::uintmax_t heap_bytes, std::uintmax_t sure_bytes = 0);

/// Writes `bytes` to `p` atomically: a temporary file in the same directory, flushed, then
/// renamed over `p`. A failed or interrupted run leaves no partial file. Throws
/// std::runtime_error on failure.
void write_file_atomic(const std::filesystem::path& p, std::string_view bytes);

}  // namespace plancert::cli
