// SPDX-License-Identifier: Apache-2.0
// BindQueueTargetPass (see bind.h): instances, issue order, queues, tokens, memory planner.
#include "passes/bind/common.h"
#include "passes/frontend/room.h"

#include <algorithm>
#include <charconv>
#include <limits>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <tuple>

namespace plancert::bind {
namespace {

using detail::pinned;
constexpr std::uint64_t kNoStep = std::numeric_limits<std::uint64_t>::max();

// The last access on each queue of the buffers that used a block of memory.
using Release = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // (queue, command), one per queue

void merge_into(Release& a, const Release& b) {
  for (const auto& [q, v] : b) {
    // q is captured by copy: clang before 16 cannot capture a structured binding.
    auto it = std::find_if(a.begin(), a.end(), [q = q](const auto& x) { return x.first == q; });
    if (it == a.end()) a.emplace_back(q, v);
    else it->second = std::max(it->second, v);
  }
}

std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

// Best-fit allocator over one device's memory with release sets.
class Arena {
 public:
  explicit Arena(std::uint64_t start) { free_[start] = Block{kInf, {}}; }
  // Returns (offset, release set of the bytes it reused).
  std::pair<std::uint64_t, Release> alloc(std::uint64_t size, std::uint64_t align) {
    auto best = free_.end();
    std::uint64_t best_left = kInf, best_off = 0;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const std::uint64_t off = align_up(it->first, align);
      if (it->second.end == kInf || off + size > it->second.end) continue;
      const std::uint64_t left = it->second.end - it->first - size;
      if (left < best_left) { best = it; best_left = left; best_off = off; }
    }
    if (best == free_.end()) {  // the open block at the top
      best = std::prev(free_.end());
      best_off = align_up(best->first, align);
    }
    const std::uint64_t start = best->first;
    Block blk = best->second;
    free_.erase(best);
    if (best_off > start) free_[start] = Block{best_off, blk.rel};
    if (best_off + size < blk.end || blk.end == kInf) free_[best_off + size] = Block{blk.end, blk.rel};
    peak_ = std::max(peak_, best_off + size);
    return {best_off, blk.rel};
  }
  void release(std::uint64_t off, std::uint64_t size, const Release& rel) {
    if (size == 0) return;
    Block blk{off + size, rel};
    auto next = free_.find(off + size);
    if (next != free_.end()) { blk.end = next->second.end; merge_into(blk.rel, next->second.rel); free_.erase(next); }
    auto it = free_.lower_bound(off);
    if (it != free_.begin() && std::prev(it)->second.end == off) {
      auto prev = std::prev(it);
      merge_into(prev->second.rel, blk.rel);
      prev->second.end = blk.end;
      return;
    }
    free_[off] = std::move(blk);
  }
  [[nodiscard]] std::uint64_t peak() const { return peak_; }

 private:
  static constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();
  struct Block {
    std::uint64_t end;
    Release rel;
  };
  std::map<std::uint64_t, Block> free_;
  std::uint64_t peak_ = 0;
};

std::uint64_t to_u64(const Int& v, const std::string& what) {
  if (v < 0 || v > Int(std::numeric_limits<std::uint64_t>::max() / 4)) throw BindError(what + " does not fit the memory planner");
  return static_cast<std::uint64_t>(v);
}

}  // namespace

ConcretePlanIR bind_queue(const PortablePlanIR& p, const TargetProfile& t, const DeploymentProfile& dep, const QueueOptions& opt) {
  using namespace detail;
  const std::size_t nt = p.tasks.size();
  // Topological order of the tasks (smallest index first) and their instance levels: a task
  // starts at the level of its dependencies (after the last instance of one with another repeat).
  std::vector<std::uint32_t> indeg(nt, 0), order, tpos(nt);
  std::vector<std::vector<std::uint32_t>> succ(nt);
  for (std::size_t i = 0; i < nt; ++i)
    for (Index u : p.tasks[i].dependencies) { ++indeg[i]; succ[static_cast<std::size_t>(u)].push_back(static_cast<std::uint32_t>(i)); }
  std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nt; ++i)
    if (indeg[i] == 0) ready.push(static_cast<std::uint32_t>(i));
  while (!ready.empty()) {
    const std::uint32_t u = ready.top();
    ready.pop();
    tpos[u] = static_cast<std::uint32_t>(order.size());
    order.push_back(u);
    for (std::uint32_t s : succ[u])
      if (--indeg[s] == 0) ready.push(s);
  }
  if (order.size() != nt) throw BindError("the portable plan's dependencies have a cycle");
  std::vector<std::int64_t> level(nt, 0);
  for (std::uint32_t i : order)
    for (Index u : p.tasks[i].dependencies) {
      const auto& pu = p.tasks[static_cast<std::size_t>(u)];
      level[i] = std::max(level[i], level[static_cast<std::size_t>(u)] + (pu.repeat == p.tasks[i].repeat ? 0 : pu.repeat - 1));
    }

  ConcretePlanIR c;
  c.target = TargetKind::queue;
  c.rules = {"bind.queue.buffer", "bind.queue.task"};
  c.world_size = dep.devices;
  c.bindings = binding_list(p, opt.bindings);
  const Placement pl = class_devices(p, t);
  // CONFIG-8 (passes/frontend/room.h): a command for each instance of each task on each of its
  // devices, before any per-instance table is allocated.
  std::uintmax_t commands = 0;
  for (std::size_t i = 0; i < nt; ++i)
    commands = frontend::saturating_sum({commands, frontend::saturating_product({pl.of_task[i].size(), static_cast<std::uintmax_t>(p.tasks[i].repeat)})});
  frontend::require_room(frontend::saturating_product({commands, sizeof(Command)}), "",
                         "binding to queues: a ConcretePlanIR of " + std::to_string(commands) + " commands (each portable task's repeat count on each of its devices)");
  c.devices = pl.devices;
  const std::int64_t space_align = t.spaces.empty() ? 1 : t.spaces[0].alignment;
  add_regions(c, t, space_align);
  const std::vector<std::string> impl = add_engines_and_implementations(c, p, t);
  const std::vector<Int> sizes = buffer_sizes(p, opt.bindings);

  // Instances: node base[t] + j * repeat + i is instance i of task t on its j-th device.
  std::vector<std::size_t> base(nt + 1, 0);
  for (std::size_t i = 0; i < nt; ++i) base[i + 1] = base[i] + pl.of_task[i].size() * static_cast<std::size_t>(p.tasks[i].repeat);
  const std::size_t n = base[nt];
  std::vector<std::uint32_t> ntask(n), ninst(n);
  std::vector<Index> ndev(n);
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j < pl.of_task[i].size(); ++j)
      for (std::int64_t k = 0; k < p.tasks[i].repeat; ++k) {
        const std::size_t v = base[i] + j * static_cast<std::size_t>(p.tasks[i].repeat) + static_cast<std::size_t>(k);
        ntask[v] = static_cast<std::uint32_t>(i);
        ninst[v] = static_cast<std::uint32_t>(k);
        ndev[v] = pl.of_task[i][j];
      }
  // Instance dependencies: instance i of each dependency with the same repeat, else its last
  // instance, on every device of the dependency (a task completes when all its ranks have).
  auto deps_of = [&](std::size_t v, auto&& fn) {
    const auto& pt = p.tasks[ntask[v]];
    for (Index u : pt.dependencies) {
      const auto uu = static_cast<std::size_t>(u);
      const std::int64_t r = p.tasks[uu].repeat;
      const std::size_t inst = r == pt.repeat ? ninst[v] : static_cast<std::size_t>(r - 1);
      for (std::size_t j = 0; j < pl.of_task[uu].size(); ++j) fn(base[uu] + j * static_cast<std::size_t>(r) + inst);
    }
  };
  // Issue keys: a device follows its stage's pipeline schedule when there is one, else the
  // instance levels; ties in task order.
  std::vector<std::uint64_t> step(n, kNoStep);
  const DistributedTaskIR* dist = opt.distributed;
  if (dist && !dist->schedule.empty()) {
    std::int64_t stride = 1, stages = 1;
    for (auto it = dist->mesh.axes.rbegin(); it != dist->mesh.axes.rend(); ++it) {
      if (it->name == "pp") { stages = it->size; break; }
      stride *= it->size;
    }
    const std::int64_t m = dist->microbatches;
    std::map<std::int64_t, std::pair<std::int64_t, std::vector<std::uint64_t>>> steps;  // stage -> (chunks, index)
    for (const auto& s : dist->schedule) {
      auto& [chunks, idx] = steps[s.stage];
      chunks = s.chunks;
      idx.assign(static_cast<std::size_t>(s.chunks * m * 2), kNoStep);
      for (std::size_t k = 0; k < s.steps.size(); ++k) {
        const auto& st = s.steps[k];
        idx[static_cast<std::size_t>((st.chunk * m + st.microbatch) * 2 + (st.kind == StepKind::backward))] = k;
      }
    }
    std::vector<int> dir(nt, -1);  // 0 forward, 1 backward, -1 none (phase none inherits from its first dependency that has one)
    for (std::uint32_t i : order) {
      const Phase ph = p.tasks[i].phase;
      if (ph == Phase::forward) dir[i] = 0;
      else if (ph == Phase::recompute || ph == Phase::backward_activation || ph == Phase::backward_weight) dir[i] = 1;
      else if (ph == Phase::none)
        for (Index u : p.tasks[i].dependencies)
          if (dir[i] < 0) dir[i] = dir[static_cast<std::size_t>(u)];
    }
    for (std::size_t v = 0; v < n; ++v) {
      const auto& pt = p.tasks[ntask[v]];
      auto chunk_it = pt.attrs.find("chunk");
      const auto& ranks = c.devices[static_cast<std::size_t>(ndev[v])].ranks;
      if (dir[ntask[v]] < 0 || chunk_it == pt.attrs.end() || ranks.empty()) continue;
      auto st = steps.find((ranks.front() / stride) % stages);
      std::int64_t chunk = -1;
      std::from_chars(chunk_it->second.data(), chunk_it->second.data() + chunk_it->second.size(), chunk);
      if (st == steps.end() || chunk < 0 || chunk >= st->second.first || ninst[v] >= static_cast<std::uint64_t>(m)) continue;
      step[v] = st->second.second[static_cast<std::size_t>((chunk * m + ninst[v]) * 2 + dir[ntask[v]])];
    }
  }
  auto key = [&](std::size_t v) { return std::make_tuple(step[v], static_cast<std::uint64_t>(level[ntask[v]]) + ninst[v], tpos[ntask[v]], ninst[v]); };

  // Issue order: merge the devices' key-sorted lists, taking ready heads; if the lists
  // contradict the dependencies, fall back to a global ready list by key.
  std::vector<std::uint32_t> waiting(n, 0), off(n + 1, 0), out;
  for (std::size_t v = 0; v < n; ++v) {
    deps_of(v, [&](std::size_t u) { ++off[u + 1]; ++waiting[v]; });
    if (ninst[v] > 0) { ++off[v]; ++waiting[v]; }  // the previous instance: node v - 1
  }
  std::partial_sum(off.begin(), off.end(), off.begin());
  std::vector<std::uint32_t> nxt(off[n]), fill(off.begin(), off.end() - 1);
  for (std::size_t v = 0; v < n; ++v) {
    deps_of(v, [&](std::size_t u) { nxt[fill[u]++] = static_cast<std::uint32_t>(v); });
    if (ninst[v] > 0) nxt[fill[v - 1]++] = static_cast<std::uint32_t>(v);
  }
  std::vector<std::uint32_t> emitted_at(n, 0);
  auto emit = [&](std::uint32_t v) {
    emitted_at[v] = static_cast<std::uint32_t>(out.size());
    out.push_back(v);
    for (std::uint32_t k = off[v]; k < off[v + 1]; ++k) --waiting[nxt[k]];
  };
  {
    std::vector<std::vector<std::uint32_t>> lists(c.devices.size());
    for (std::size_t v = 0; v < n; ++v) lists[static_cast<std::size_t>(ndev[v])].push_back(static_cast<std::uint32_t>(v));
    for (auto& l : lists) std::sort(l.begin(), l.end(), [&](std::uint32_t a, std::uint32_t b) { return key(a) < key(b); });
    std::vector<std::size_t> at(lists.size(), 0);
    const std::vector<std::uint32_t> saved = waiting;
    for (bool progress = true; progress && out.size() < n;) {
      progress = false;
      for (std::size_t d = 0; d < lists.size(); ++d)
        while (at[d] < lists[d].size() && waiting[lists[d][at[d]]] == 0) { emit(lists[d][at[d]++]); progress = true; }
    }
    if (out.size() < n) {  // fallback
      out.clear();
      waiting = saved;
      auto later = [&](std::uint32_t a, std::uint32_t b) { return key(b) < key(a); };
      std::priority_queue<std::uint32_t, std::vector<std::uint32_t>, decltype(later)> rq(later);
      for (std::size_t v = 0; v < n; ++v)
        if (waiting[v] == 0) rq.push(static_cast<std::uint32_t>(v));
      while (!rq.empty()) {
        const std::uint32_t v = rq.top();
        rq.pop();
        emitted_at[v] = static_cast<std::uint32_t>(out.size());
        out.push_back(v);
        for (std::uint32_t k = off[v]; k < off[v + 1]; ++k)
          if (--waiting[nxt[k]] == 0) rq.push(nxt[k]);
      }
    }
  }

  // Commands in issue order, with their instance dependencies.
  c.commands.resize(n);
  const std::vector<codec::Shared<Work>> works = shared_works(p);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t v = out[k];
    const auto& pt = p.tasks[ntask[v]];
    Command& cmd = c.commands[k];
    cmd.id = "c:" + pt.id + "#" + std::to_string(ninst[v]) + "@" + c.devices[static_cast<std::size_t>(ndev[v])].id;
    cmd.kind = command_kind(pt.kind);
    cmd.device = ndev[v];
    cmd.implementation = impl[ntask[v]];
    cmd.lineage = Lineage{LineageKind::derived, "bind.queue.task", {pt.id}};
    cmd.work = works[ntask[v]];
    deps_of(v, [&](std::size_t u) { cmd.dependencies.push_back(static_cast<Index>(emitted_at[u])); });
    std::sort(cmd.dependencies.begin(), cmd.dependencies.end());
    cmd.dependencies.erase(std::unique(cmd.dependencies.begin(), cmd.dependencies.end()), cmd.dependencies.end());
  }
  // Queues: per device and kind, in issue order.
  std::map<std::pair<Index, QueueKind>, std::uint32_t> qindex;
  std::vector<std::uint32_t> queue_of(n);
  c.queue.emplace();
  for (std::size_t k = 0; k < n; ++k) {
    const auto qk = std::make_pair(c.commands[k].device, queue_kind(c.commands[k].kind));
    auto [it, fresh] = qindex.try_emplace(qk, static_cast<std::uint32_t>(qindex.size()));
    if (fresh) c.queue->queues.push_back(Queue{{}, qk.first, "q:" + c.devices[static_cast<std::size_t>(qk.first)].id + ":" + std::string(codec::enum_name(qk.second)), qk.second});
    c.queue->queues[it->second].commands.push_back(static_cast<Index>(k));
    queue_of[k] = it->second;
  }
  // Tokens: the earlier command of a cross-queue ordering signals one token; the later waits.
  std::vector<std::int64_t> token_of(n, -1);
  std::vector<Indices> waits(n);
  auto order_before = [&](std::size_t a, std::size_t b) {  // a is issued before b
    if (a == b || queue_of[a] == queue_of[b]) return;
    if (token_of[a] < 0) {
      token_of[a] = static_cast<std::int64_t>(c.tokens.size());
      c.tokens.push_back(Token{"k:" + c.commands[a].id});
      c.commands[a].signals.push_back(static_cast<Index>(token_of[a]));
    }
    waits[b].push_back(static_cast<Index>(token_of[a]));
  };
  for (std::size_t k = 0; k < n; ++k)
    for (Index u : c.commands[k].dependencies) order_before(static_cast<std::size_t>(u), k);

  // Buffers: a copy on every device of the producer (else of the consumers, else on the home
  // task's device); the transient buffers of repeated tasks get one instance per repeat.
  const auto by_source = tasks_by_source(p);
  std::vector<std::vector<Index>> copies(p.buffers.size());
  std::vector<std::int64_t> instances(p.buffers.size(), 1);
  std::vector<std::size_t> first_cb(p.buffers.size() + 1, 0);
  for (std::size_t b = 0; b < p.buffers.size(); ++b) {
    const auto& pb = p.buffers[b];
    std::set<Index> ds;
    std::set<std::int64_t> repeats;
    if (pb.producer) { for (Index d : pl.of_task[static_cast<std::size_t>(*pb.producer)]) ds.insert(d); repeats.insert(p.tasks[static_cast<std::size_t>(*pb.producer)].repeat); }
    for (Index u : pb.consumers) {
      if (!pb.producer) for (Index d : pl.of_task[static_cast<std::size_t>(u)]) ds.insert(d);
      repeats.insert(p.tasks[static_cast<std::size_t>(u)].repeat);
    }
    if (ds.empty()) {
      const std::int64_t home = home_task(p, b, by_source);
      ds.insert(home < 0 ? 0 : pl.of_task[static_cast<std::size_t>(home)].front());
    }
    copies[b].assign(ds.begin(), ds.end());
    if (!pinned(pb.storage) && repeats.size() == 1 && *repeats.begin() > 1) instances[b] = *repeats.begin();
    first_cb[b + 1] = first_cb[b] + copies[b].size() * static_cast<std::size_t>(instances[b]);
    for (Index d : copies[b])
      for (std::int64_t i = 0; i < instances[b]; ++i) {
        const std::int64_t a = std::max(pb.alignment, space_align);
        std::string id = "cb:" + pb.id + "@" + c.devices[static_cast<std::size_t>(d)].id + (instances[b] > 1 ? "#" + std::to_string(i) : "");
        c.buffers.push_back(ConcreteBuffer{a, std::move(id), Lineage{LineageKind::derived, "bind.queue.buffer", {pb.id}}, Int(0), d, sizes[b], pb.storage});
      }
  }
  auto binding = [&](std::size_t b, Index dev, std::uint32_t inst) {
    auto it = std::find(copies[b].begin(), copies[b].end(), dev);
    const std::size_t j = it == copies[b].end() ? 0 : static_cast<std::size_t>(it - copies[b].begin());
    return static_cast<Index>(first_cb[b] + j * static_cast<std::size_t>(instances[b]) + (instances[b] > 1 ? inst : 0));
  };
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t v = out[k];
    const auto& pt = p.tasks[ntask[v]];
    for (Index b : pt.inputs) c.commands[k].reads.push_back(binding(static_cast<std::size_t>(b), ndev[v], ninst[v]));
    for (Index b : pt.outputs) c.commands[k].writes.push_back(binding(static_cast<std::size_t>(b), ndev[v], ninst[v]));
  }
  // Accesses of each buffer in issue order: order every access after the write before it and
  // every write after the reads since that write (RACE-1), with tokens across queues.
  const std::size_t nb = c.buffers.size();
  std::vector<std::vector<std::pair<std::uint32_t, bool>>> acc(nb);
  for (std::size_t k = 0; k < n; ++k) {
    for (Index b : c.commands[k].writes) acc[static_cast<std::size_t>(b)].emplace_back(static_cast<std::uint32_t>(k), true);
    for (Index b : c.commands[k].reads)
      if (std::find(c.commands[k].writes.begin(), c.commands[k].writes.end(), b) == c.commands[k].writes.end())
        acc[static_cast<std::size_t>(b)].emplace_back(static_cast<std::uint32_t>(k), false);
  }
  for (std::size_t b = 0; b < nb; ++b) {
    std::int64_t w = -1;
    Release reads;
    for (auto [k, wr] : acc[b]) {
      if (w >= 0) order_before(static_cast<std::size_t>(w), k);
      if (!wr) { merge_into(reads, {{queue_of[k], k}}); continue; }
      for (const auto& [q, r] : reads) order_before(r, k);
      reads.clear();
      w = k;
    }
  }
  // Memory planner per device: pinned buffers at the bottom; the others placed at their first
  // access and freed after their last; reused bytes wait for their previous users.
  std::vector<std::vector<std::size_t>> alloc_at(n), free_at(n);
  std::vector<std::uint64_t> bottom(c.devices.size(), 0);
  for (std::size_t b = 0; b < nb; ++b) {
    auto& cb = c.buffers[b];
    const auto d = static_cast<std::size_t>(cb.region);
    if (pinned(cb.storage)) {
      const std::uint64_t off = align_up(bottom[d], static_cast<std::uint64_t>(cb.alignment));
      cb.offset = off;
      bottom[d] = off + to_u64(cb.size, "buffer " + cb.id);
    } else if (!acc[b].empty()) {
      alloc_at[acc[b].front().first].push_back(b);
      free_at[acc[b].back().first].push_back(b);
    }
  }
  std::vector<Arena> arenas;
  for (std::size_t d = 0; d < c.devices.size(); ++d) arenas.emplace_back(bottom[d]);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t b : alloc_at[k]) {
      auto& cb = c.buffers[b];
      auto [off, rel] = arenas[static_cast<std::size_t>(cb.region)].alloc(to_u64(cb.size, "buffer " + cb.id), static_cast<std::uint64_t>(cb.alignment));
      cb.offset = off;
      for (auto [a, wr] : acc[b]) {  // the leading accesses: reads before the first write, and it
        for (const auto& [q, x] : rel) order_before(x, a);
        if (wr) break;
      }
    }
    for (std::size_t b : free_at[k]) {
      Release rel;
      for (auto [a, wr] : acc[b]) merge_into(rel, {{queue_of[a], a}});
      const auto& cb = c.buffers[b];
      arenas[static_cast<std::size_t>(cb.region)].release(static_cast<std::uint64_t>(cb.offset), to_u64(cb.size, "buffer " + cb.id), rel);
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    std::sort(waits[k].begin(), waits[k].end());
    waits[k].erase(std::unique(waits[k].begin(), waits[k].end()), waits[k].end());
    c.commands[k].waits = std::move(waits[k]);
  }
  fill_memory(c);
  return c;
}

}  // namespace plancert::bind
