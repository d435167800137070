// SPDX-License-Identifier: Apache-2.0
#include "bench/gen_plan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "passes/bind/common.h"
#include "passes/emit/emit.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <map>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <vector>

namespace plancert::bench {
namespace {

using bind::detail::queue_kind;


// SplitMix64: tiny, fast and identical on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// In [0, n) for n >= 1 (the modulo bias, below 2^-40 for the n used here, is irrelevant).
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t s_;
};

std::string id(std::string_view prefix, std::size_t i) { return cat(prefix, std::to_string(i)); }

Lineage derived(std::string rule, std::string source) { return Lineage{LineageKind::derived, std::move(rule), {std::move(source)}}; }

// The works drawn so far, by command kind and the dimensions the work uses: a plan repeats few distinct
// works, and its commands share them (core/ir.h, Command::work), as a decoded plan's do.
using WorkCache = std::map<std::array<long long, 4>, codec::Shared<Work>>;

// Exact work of one command (constants: a concrete plan is bound to its symbol values).
codec::Shared<Work> work_of(CommandKind k, Rng& rng, WorkCache& cache) {
  constexpr std::array<long long, 3> dims{1024, 2048, 4096};
  long long m = dims[rng.below(3)], nn = dims[rng.below(3)], kk = dims[rng.below(3)];
  const std::array<long long, 4> key{static_cast<long long>(k), m, nn, k == CommandKind::launch ? kk : 0};  // only a launch's work uses k
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  Work w;
  switch (k) {
    case CommandKind::launch:
      w.matrix_ops = Expr(2 * m * nn * kk);
      w.read_bytes = Expr(2 * (m * kk + kk * nn));
      w.write_bytes = Expr(2 * m * nn);
      w.vector_ops = Expr(m * nn);
      break;
    case CommandKind::collective:
      w.message_bytes = Expr(2 * m * nn);
      w.vector_ops = Expr(m * nn);
      w.read_bytes = w.write_bytes = Expr(2 * m * nn);
      break;
    default:
      w.message_bytes = w.read_bytes = w.write_bytes = Expr(2 * m * nn);
      break;
  }
  return cache.emplace(key, std::move(w)).first->second;
}

bool contains(const Indices& v, Index x) { return std::find(v.begin(), v.end(), x) != v.end(); }

constexpr std::int64_t kRegionsPerDevice = 2;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kDeviceMemory = 80 * kGiB;
constexpr std::uint64_t kRegionCapacity = 32 * kGiB;
constexpr std::array<std::int64_t, 2> kRegionAlignment{256, 4096};
constexpr std::array<std::int64_t, 4> kBufferAlignment{64, 128, 256, 512};
constexpr std::size_t kDeviceBlock = 32;  // consecutive commands per device before rotating
constexpr std::array<const char*, 4> kLaunchImpl{"gemm_bf16", "softmax_f32", "layernorm_bf16", "gelu_bf16"};

}  // namespace

Snapshot<ConcretePlanIR> generate_plan(const GenOptions& o, GenStats* stats) {
  const std::size_t n = o.commands, nd = o.devices;
  if (nd < 2) throw std::invalid_argument("generate_plan: at least 2 devices are needed (routes and tokens cross devices)");
  if (n >= (std::size_t{1} << 32)) throw std::invalid_argument("generate_plan: at most 2^32 - 1 commands");
  if (o.edges > (n < 2 ? 0 : n * (n - 1) / 2))
    throw std::invalid_argument(cat("generate_plan: ", std::to_string(o.edges), " edges do not fit an acyclic graph of ", std::to_string(n), " commands"));
  const std::size_t nb = o.buffers ? o.buffers : std::clamp<std::size_t>(n / 10, 64, 100'000);
  if (nb < 4 * nd) throw std::invalid_argument("generate_plan: at least 4 buffers per device are needed");

  Rng rng(o.seed);
  WorkCache works;
  GenStats st;
  ConcretePlanIR p;
  p.target = o.target;
  p.rules = {"bind-buffer", "bind-task"};

  // Devices (device d runs deployment rank d), their engines, and the implementations used.
  p.world_size = static_cast<std::int64_t>(nd);
  for (std::size_t d = 0; d < nd; ++d) p.devices.push_back(Device{id("d", d), "gpu", Int(kDeviceMemory), {static_cast<Index>(d)}});
  const Capability matrix{std::nullopt, "bf16", CapabilityKind::matrix, std::nullopt}, vector{std::nullopt, "f32", CapabilityKind::vector, std::nullopt},
      transfer{std::nullopt, "", CapabilityKind::transfer, std::nullopt}, allreduce{CollectiveKind::all_reduce, "bf16", CapabilityKind::collective, Reduction::sum};
  for (std::size_t d = 0; d < nd; ++d) {
    auto dev = static_cast<Index>(d);
    p.engines.push_back(Engine{{matrix}, dev, cat("e", std::to_string(d), ".matrix")});
    p.engines.push_back(Engine{{vector}, dev, cat("e", std::to_string(d), ".vector")});
    p.engines.push_back(Engine{{transfer}, dev, cat("e", std::to_string(d), ".dma")});
    p.engines.push_back(Engine{{allreduce}, dev, cat("e", std::to_string(d), ".collective")});
  }
  p.implementations = {Implementation{"dma_copy", {transfer}},       Implementation{"gelu_bf16", {vector}},       Implementation{"gemm_bf16", {matrix}},
                       Implementation{"layernorm_bf16", {vector}},   Implementation{"nccl_all_reduce", {allreduce}}, Implementation{"p2p_recv", {transfer}},
                       Implementation{"p2p_send", {transfer}},       Implementation{"softmax_f32", {vector}}};

  // Regions: per device an "hbm" region and a "workspace" region, disjoint.
  for (std::size_t d = 0; d < nd; ++d)
    for (std::int64_t j = 0; j < kRegionsPerDevice; ++j)
      p.regions.push_back(Region{kRegionAlignment[static_cast<std::size_t>(j)], Int(kRegionCapacity), static_cast<Index>(d),
                                 id("r", d * kRegionsPerDevice + static_cast<std::size_t>(j)), Int(static_cast<std::uint64_t>(j) * kRegionCapacity),
                                 j == 0 ? "hbm" : "workspace"});

  // Buffers: buffer b lives on device b % nd, packed at aligned offsets in its region. Of the
  // buffers of a device, the first fifth are weights (persistent, only ever read); the others
  // are activations (transient), each written once by its producer and then read only by
  // commands that depend on the producer: every access is ordered by the dependencies, so
  // the plan is race-free (RACE) on both targets by construction.
  const std::size_t per_device = nb / nd;  // buffers dev, dev + nd, ... (the first per_device of them)
  const std::size_t weights_per_device = std::max<std::size_t>(3, per_device / 5);
  std::vector<std::uint64_t> cursor(p.regions.size(), 0);
  p.buffers.reserve(nb);
  for (std::size_t b = 0; b < nb; ++b) {
    std::size_t dev = b % nd;
    std::size_t reg = dev * kRegionsPerDevice + (b / nd) % kRegionsPerDevice;
    std::int64_t align = kBufferAlignment[rng.below(kBufferAlignment.size())];
    auto a = static_cast<std::uint64_t>(std::max(align, p.regions[reg].alignment));
    std::uint64_t size = (1 + rng.below(4096)) * 64;
    std::uint64_t off = (cursor[reg] + a - 1) / a * a;
    if (off + size > kRegionCapacity) throw std::invalid_argument("generate_plan: too many buffers for the region capacity");
    cursor[reg] = off + size;
    Storage storage = b / nd < weights_per_device ? Storage::persistent : Storage::transient;
    p.buffers.push_back(ConcreteBuffer{align, id("b", b), derived("bind-buffer", id("pb", b)), Int(off), static_cast<Index>(reg), Int(size), storage});
  }
  auto weight = [&](std::size_t dev) { return static_cast<Index>(dev + nd * rng.below(weights_per_device)); };
  std::vector<std::size_t> next_activation(nd, weights_per_device);  // per device: the next unwritten activation
  std::vector<std::int64_t> produced(n, -1);                          // the activation a command writes, if any
  // Writes are spread over the whole plan so that the activations last (about one each).
  const double write_rate = std::min(1.0, static_cast<double>(per_device - weights_per_device) * static_cast<double>(nd) / std::max<double>(1.0, static_cast<double>(n)));

  // Commands.
  p.commands.resize(n);
  std::vector<std::vector<Index>> on_device(nd);  // commands of each device so far
  std::vector<Index> sends;                       // send commands so far
  std::vector<std::int64_t> token_of(n, -1);      // the token a command signals, if any
  std::size_t carry = 0;
  const std::size_t per_command = n ? o.edges / n : 0, extra = n ? o.edges % n : 0;
  for (std::size_t i = 0; i < n; ++i) {
    Command& c = p.commands[i];
    const std::size_t dev = (i / kDeviceBlock) % nd;
    c.device = static_cast<Index>(dev);
    c.id = id("c", i);
    c.lineage = derived("bind-task", id("t", i));
    std::size_t r = rng.below(100);
    c.kind = r < 70 ? CommandKind::launch : r < 80 ? CommandKind::collective : r < 87 ? CommandKind::send : r < 94 ? CommandKind::recv : CommandKind::copy;
    switch (c.kind) {
      case CommandKind::launch: c.implementation = kLaunchImpl[rng.below(kLaunchImpl.size())]; break;
      case CommandKind::collective: c.implementation = "nccl_all_reduce"; break;
      case CommandKind::send: c.implementation = "p2p_send"; break;
      case CommandKind::recv: c.implementation = "p2p_recv"; break;
      default: c.implementation = "dma_copy"; break;
    }
    c.repeat = 1;
    c.work = work_of(c.kind, rng, works);
    if (i % 8 == 0) c.attrs = {{"layer", std::to_string(i / 1024)}, {"phase", (i / 4096) % 3 == 2 ? "bwd" : "fwd"}};

    // How many dependencies: an exact share of the edges, deficits carried forward.
    // share = floor((i+1)E/n) - floor(iE/n), computed as q + floor((i+1)r/n) - floor(ir/n) (no overflow).
    std::size_t share = per_command + ((i + 1) * extra) / n - (i * extra) / n;
    std::size_t want = std::min(i, share + carry);
    carry = share + carry - want;
    Indices& deps = c.dependencies;
    deps.reserve(want);
    const auto& mine = on_device[dev];
    for (std::size_t k = 0; k < want; ++k) {
      Index u = -1;
      for (int attempt = 0; attempt < 8 && u < 0; ++attempt) {
        std::size_t t = rng.below(100);
        Index cand = -1;
        if (t < 50 && !mine.empty()) cand = mine[mine.size() - 1 - rng.below(std::min<std::size_t>(8, mine.size()))];  // near
        else if (t < 85 && !mine.empty()) cand = mine[rng.below(mine.size())];                                           // far, same device
        else if (!sends.empty()) {                                                                                          // cross-device, via a send
          cand = sends[sends.size() - 1 - rng.below(std::min<std::size_t>(4096, sends.size()))];
          if (p.commands[static_cast<std::size_t>(cand)].device == c.device) cand = -1;
        }
        if (cand >= 0 && !contains(deps, cand)) u = cand;
      }
      for (Index back = static_cast<Index>(i) - 1; u < 0; --back)  // fallback: the latest unused earlier command
        if (!contains(deps, back)) u = back;
      deps.push_back(u);
    }
    std::sort(deps.begin(), deps.end());
    st.edges += deps.size();

    // Every cross-device dependency is mirrored by a token wait.
    for (Index u : deps) {
      auto& src = p.commands[static_cast<std::size_t>(u)];
      if (src.device == c.device) continue;
      ++st.cross_device_edges;
      auto& t = token_of[static_cast<std::size_t>(u)];
      if (t < 0) {
        t = static_cast<std::int64_t>(p.tokens.size());
        p.tokens.push_back(Token{id("k", p.tokens.size())});
        src.signals.push_back(t);
      }
      c.waits.push_back(t);
    }
    st.waits += c.waits.size();

    // Buffers of the command's own device: 1-3 reads (first the activations written by its
    // same-device dependencies, then weights) and, for some commands, one fresh activation.
    std::size_t nreads = 1 + rng.below(3);
    for (Index u : deps) {
      std::int64_t b = produced[static_cast<std::size_t>(u)];
      if (c.reads.size() < nreads && b >= 0 && p.commands[static_cast<std::size_t>(u)].device == c.device && rng.below(10) < 7) c.reads.push_back(b);
    }
    while (c.reads.size() < nreads) {
      Index b = weight(dev);
      if (!contains(c.reads, b)) c.reads.push_back(b);
    }
    if (c.kind != CommandKind::send && next_activation[dev] < per_device && static_cast<double>(rng.below(1u << 20)) < write_rate * (1u << 20)) {
      Index b = static_cast<Index>(dev + nd * next_activation[dev]++);
      c.writes.push_back(b);
      produced[i] = b;
    }
    st.reads += c.reads.size();
    st.writes += c.writes.size();

    on_device[dev].push_back(static_cast<Index>(i));
    if (c.kind == CommandKind::send) sends.push_back(static_cast<Index>(i));
  }
  if (carry != 0) throw std::invalid_argument("generate_plan: could not place every edge");

  if (o.target == TargetKind::queue) {
    // Three in-order queues per device; issue order = index order (consistent with every edge).
    QueueSchedule qs;
    constexpr std::array<QueueKind, 3> kinds{QueueKind::compute, QueueKind::collective, QueueKind::transfer};
    for (std::size_t d = 0; d < nd; ++d)
      for (std::size_t j = 0; j < kinds.size(); ++j) qs.queues.push_back(Queue{{}, static_cast<Index>(d), id("q", d * kinds.size() + j), kinds[j]});
    for (std::size_t i = 0; i < n; ++i) {
      const auto& c = p.commands[i];
      std::size_t j = static_cast<std::size_t>(std::find(kinds.begin(), kinds.end(), queue_kind(c.kind)) - kinds.begin());
      qs.queues[static_cast<std::size_t>(c.device) * kinds.size() + j].commands.push_back(static_cast<Index>(i));
    }
    st.queues = qs.queues.size();
    p.queue = std::move(qs);
  } else {
    // Slot target: command i issues at (i / S, i % S), strictly after everything it depends on.
    SlotDataflow sd;
    sd.slots_per_cycle = 8;
    sd.issue.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      sd.issue.push_back(Issue{static_cast<std::int64_t>(i / 8), static_cast<std::int64_t>(i % 8)});
      const auto& c = p.commands[i];
      auto dev = static_cast<std::size_t>(c.device);
      if (c.kind == CommandKind::recv) sd.routes.push_back(Route{static_cast<Index>(i), c.device, static_cast<Index>((dev + nd - 1) % nd)});
      else if (c.kind == CommandKind::send || c.kind == CommandKind::copy)
        sd.routes.push_back(Route{static_cast<Index>(i), static_cast<Index>((dev + 1) % nd), c.device});
    }
    p.slot = std::move(sd);
  }

  st.commands = n;
  st.tokens = p.tokens.size();
  st.buffers = p.buffers.size();
  st.regions = p.regions.size();
  if (stats) *stats = st;
  // The (synthetic) parent PortablePlanIR is named by a well-formed digest that depends on the options.
  std::string parent = digest_bytes("PortablePlanIR", cat("plancert-bench:", std::to_string(n), ":", std::to_string(o.edges), ":", std::to_string(nd), ":",
                                                              std::to_string(nb), ":", std::to_string(o.seed)));
  return make_snapshot(std::move(p), {std::move(parent)});
}

void write_atomic(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / cat(".", p.filename().string(), ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error(p.string() + ": cannot create a temporary file: " + std::error_code(errno, std::generic_category()).message());
  const mode_t mask = ::umask(0);  // a plain file (mkstemp creates it 0600)
  ::umask(mask);
  ::fchmod(fd, 0644 & ~mask);
  std::size_t put = 0;
  errno = 0;
  while (put < bytes.size()) {
    ssize_t k = ::write(fd, bytes.data() + put, bytes.size() - put);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    put += static_cast<std::size_t>(k);
  }
  int err = 0;
  if (put != bytes.size()) err = errno ? errno : EIO;
  else if (::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && std::rename(tmpl.c_str(), p.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmpl.c_str());
    throw std::runtime_error(p.string() + ": cannot write: " + std::error_code(err, std::generic_category()).message());
  }
}

std::string read_whole_file(const std::filesystem::path& p) {
  std::error_code ec;
  auto size = std::filesystem::file_size(p, ec);
  if (ec) throw std::runtime_error(p.string() + ": " + ec.message());
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(p.string() + ": cannot open: " + std::error_code(errno, std::generic_category()).message());
  std::string out;
  out.resize(static_cast<std::size_t>(size));
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t k = ::read(fd, out.data() + got, out.size() - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += static_cast<std::size_t>(k);
  }
  ::close(fd);
  if (got != out.size()) throw std::runtime_error(p.string() + ": short read");
  return out;
}

}  // namespace plancert::bench
