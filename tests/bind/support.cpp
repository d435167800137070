// SPDX-License-Identifier: Apache-2.0
#include "tests/bind/support.h"

#include "passes/frontend/loaders.h"
#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"
#include "verifiers/verify.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace plancert::bindtest {
namespace {

template <class P>
const Committed<P>& need(const CommitResult<P>& r, const char* what) {
  if (const auto* c = std::get_if<Committed<P>>(&r)) return *c;
  std::string text;
  for (const auto& d : std::get<Rejection>(r).diagnostics.all()) text += to_text(d) + "\n";
  throw std::runtime_error(std::string(what) + " rejected:\n" + text);
}

TrainChain run_passes(const frontend::ModelConfig& model, const frontend::StrategyConfig& s) {
  TrainChain c;
  c.strategy = s;
  const std::int64_t seq = *frontend::effective_seq_length(model, s);
  passes::Workload w{Expr(s.microbatch), Expr(seq), {}};
  c.model.emplace(need(Gate::commit_root(make_snapshot(passes::build_model_ir(model, w, s.dtype), {})), "ModelIR"));
  c.dist.emplace(need(Gate::commit(*c.model, make_snapshot(passes::distribute_training(c.model->payload(), c.model->digest(), s), {c.model->digest()})), "DistributedTaskIR"));
  c.portable.emplace(need(Gate::commit(*c.dist, make_snapshot(passes::plan_training(c.model->payload(), c.dist->payload(), s), {c.dist->digest()})), "PortablePlanIR"));
  return c;
}

}  // namespace

std::optional<TrainChain> train_chain(const TrainKnobs& k) {
  frontend::ModelConfig m;
  m.name = "tiny";
  m.family = frontend::ModelFamily::Gpt;
  m.hidden = 64;
  m.ffn = 256;
  m.heads = 4;
  m.kv_heads = 4;
  m.head_dim = 16;
  m.layers = k.layers;
  m.vocab = 128;
  m.max_positions = 256;
  m.seq_length = k.seq;
  m.learned_positions = m.biases = m.tied_embeddings = m.dropout = true;
  frontend::StrategyConfig s;
  s.name = "knobs";
  s.tp = k.tp;
  s.pp = k.pp;
  s.dp = k.dp;
  s.num_procs = k.tp * k.pp * k.dp;
  s.microbatch = k.microbatch;
  s.global_batch = k.microbatch * k.dp * k.microbatches;
  s.sequence_parallel = k.sequence_parallel && k.tp > 1;
  s.tp_comm_type = s.sequence_parallel ? frontend::TpCommType::RsAg : frontend::TpCommType::AllReduce;
  s.recompute = k.recompute;
  s.interleave = k.interleave;
  s.schedule = k.interleave > 1 ? frontend::Schedule::Interleaved : frontend::Schedule::OneFOneB;
  s.distributed_optimizer = k.distributed_optimizer && k.dp > 1;
  s.dtype = frontend::DType::FP16;
  try {
    frontend::validate(m, s);
  } catch (const InputError&) {
    return std::nullopt;
  }
  if (s.schedule == frontend::Schedule::Interleaved && s.num_microbatches() % s.pp != 0) return std::nullopt;
  return run_passes(m, s);
}

TrainChain default_chain(frontend::SystemConfig* system_out) {
  const std::string root = PLANCERT_SOURCE_DIR "/examples/calculon/";
  auto model = frontend::load_model(root + "models/gpt3-175B.json");
  auto strategy = frontend::load_strategy(root + "strategies/gpt3-175B_seqsel.json");
  auto system = frontend::load_system(root + "systems/a100_80g.json");
  frontend::validate(model, strategy);
  frontend::validate(strategy, system);
  if (system_out) *system_out = system;
  return run_passes(model, strategy);
}

namespace {
std::set<std::string> codes(const Diagnostics& d, std::string* text) {
  std::set<std::string> out;
  for (const auto& x : d.all()) {
    out.insert(x.code);
    if (text) *text += to_text(x) + "\n";
  }
  return out;
}
}  // namespace

std::set<std::string> snapshot_verdict(const ConcretePlanIR& child, std::string* text) {
  return codes(verify_snapshot(AnySnapshot(make_snapshot(child, {std::string(64, '0')}))), text);
}

std::set<std::string> verdict(const PortablePlanIR& parent, const ConcretePlanIR& child, std::string* text) {
  auto ps = make_snapshot(parent, {std::string(64, '0')});
  AnySnapshot c(make_snapshot(child, {ps.digest}));
  Diagnostics d = verify_snapshot(c);
  if (d.ok()) d = verify_transition(AnySnapshot(ps), c);
  return codes(d, text);
}

bool brute_force_race(const ConcretePlanIR& p, std::string* why) {
  const std::size_t n = p.commands.size();
  // Full reflexive-transitive closure of the happens-before edges.
  std::vector<std::vector<std::size_t>> succ(n);
  std::map<Index, std::size_t> signaller;
  for (std::size_t v = 0; v < n; ++v)
    for (Index t : p.commands[v].signals) signaller[t] = v;
  for (std::size_t v = 0; v < n; ++v) {
    for (Index u : p.commands[v].dependencies) succ[static_cast<std::size_t>(u)].push_back(v);
    for (Index t : p.commands[v].waits)
      if (signaller.count(t) && signaller[t] != v) succ[signaller[t]].push_back(v);
  }
  if (p.queue)
    for (const auto& q : p.queue->queues)
      for (std::size_t k = 1; k < q.commands.size(); ++k) succ[static_cast<std::size_t>(q.commands[k - 1])].push_back(static_cast<std::size_t>(q.commands[k]));
  std::vector<std::vector<char>> reach(n, std::vector<char>(n, 0));
  for (std::size_t s = 0; s < n; ++s) {
    std::vector<std::size_t> stack{s};
    reach[s][s] = 1;
    while (!stack.empty()) {
      std::size_t u = stack.back();
      stack.pop_back();
      for (std::size_t v : succ[u])
        if (!reach[s][v]) { reach[s][v] = 1; stack.push_back(v); }
    }
  }
  auto before = [&](std::size_t a, std::size_t b) { return reach[a][b] != 0; };
  // Accesses per buffer.
  const std::size_t nb = p.buffers.size();
  std::vector<std::vector<std::pair<std::size_t, bool>>> acc(nb);
  for (std::size_t v = 0; v < n; ++v) {
    for (Index b : p.commands[v].writes) acc[static_cast<std::size_t>(b)].emplace_back(v, true);
    for (Index b : p.commands[v].reads) {
      const auto& w = p.commands[v].writes;
      if (std::find(w.begin(), w.end(), b) == w.end()) acc[static_cast<std::size_t>(b)].emplace_back(v, false);
    }
  }
  auto pinned = [](Storage s) { return s != Storage::transient && s != Storage::workspace; };
  for (std::size_t b = 0; b < nb; ++b) {
    if (p.buffers[b].size <= 0) continue;
    for (const auto& [x, xw] : acc[b])
      for (const auto& [y, yw] : acc[b])
        if (x < y && (xw || yw) && !before(x, y) && !before(y, x)) {
          if (why) *why = "race on " + p.buffers[b].id + " between " + p.commands[x].id + " and " + p.commands[y].id;
          return true;
        }
  }
  for (std::size_t a = 0; a < nb; ++a)
    for (std::size_t b = a + 1; b < nb; ++b) {
      const auto &A = p.buffers[a], &B = p.buffers[b];
      const auto &ra = p.regions[static_cast<std::size_t>(A.region)], &rb = p.regions[static_cast<std::size_t>(B.region)];
      if (ra.device != rb.device || A.size <= 0 || B.size <= 0) continue;
      if (!(pinned(A.storage) || !acc[a].empty()) || !(pinned(B.storage) || !acc[b].empty())) continue;
      const Int sa = ra.offset + A.offset, sb = rb.offset + B.offset;
      if (!(sa < sb + B.size && sb < sa + A.size)) continue;
      auto all_before = [&](std::size_t x, std::size_t y) {
        for (const auto& [u, uw] : acc[x])
          for (const auto& [v, vw] : acc[y])
            if (!before(u, v)) return false;
        return true;
      };
      if (pinned(A.storage) || pinned(B.storage) || (!all_before(a, b) && !all_before(b, a))) {
        if (why) *why = "buffers " + A.id + " and " + B.id + " share memory with overlapping lifetimes";
        return true;
      }
    }
  return false;
}

std::size_t wait_count(const ConcretePlanIR& p) {
  std::size_t n = 0;
  for (const auto& c : p.commands) n += c.waits.size();
  return n;
}

}  // namespace plancert::bindtest
