// SPDX-License-Identifier: Apache-2.0
#include "tests/bind/support.h"

#include "passes/emit/emit.h"
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
  auto cfg = props::train_configs(k);
  if (!cfg) return std::nullopt;
  return run_passes(cfg->first, cfg->second);
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


std::size_t wait_count(const ConcretePlanIR& p) {
  std::size_t n = 0;
  for (const auto& c : p.commands) n += c.waits.size();
  return n;
}

}  // namespace plancert::bindtest
