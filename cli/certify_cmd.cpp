// SPDX-License-Identifier: Apache-2.0
// `plancert certify`: loads the inputs, runs the untrusted passes and commits every snapshot
// through the gate. Nothing is written unless every stage is committed.
#include "cli/bind_cmd.h"
#include "cli/commands.h"
#include "cli/embedded.h"
#include "cli/io.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"
#include "spec/checked.h"
#include "verifiers/gate.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace plancert::cli {
namespace {

struct StageRecord {
  std::string ir, digest;
  std::vector<std::string_view> obligations;
  double seconds;
};

template <class P>
const Committed<P>* require(const CommitResult<P>& r, const char* pass) {
  if (const auto* c = std::get_if<Committed<P>>(&r)) return c;
  const auto& d = std::get<Rejection>(r).diagnostics;
  std::cout << "rejected: the gate refused the output of " << pass << " (" << d.count() << " finding(s))\n";
  for (const auto& x : d.all()) std::cout << to_text(x) << "\n";
  return nullptr;
}

std::string sci(const Expr& e) {
  auto v = e.constant();
  if (!v) return e.str();
  std::string digits = to_string(plancert::floor(*v));
  if (digits.size() <= 6) return digits;
  return digits.substr(0, 1) + "." + digits.substr(1, 3) + "e" + std::to_string(digits.size() - 1);
}

}  // namespace

int run_certify(const CertifyOptions& o) {
  using namespace frontend;
  // ---- inputs (exit 2 on anything malformed) -----------------------------------------------
  ModelConfig model = o.model.empty() ? parse_model(kDefault_model.text, std::string(kDefault_model.name)) : load_model(o.model);
  StrategyConfig strategy;
  if (!o.megatron.empty()) strategy = parse_megatron_flags(o.megatron, model.layers);
  else strategy = o.strategy.empty() ? parse_strategy(kDefault_strategy.text, std::string(kDefault_strategy.name)) : load_strategy(o.strategy);
  SystemConfig system = o.system.empty() ? parse_system(kDefault_system.text, std::string(kDefault_system.name)) : load_system(o.system);
  validate(model, strategy);
  const auto unpadded_vocab = pad_vocabulary(model, strategy.tp);
  validate(strategy, system);
  if (!strategy.training) throw InputError("CONFIG-6", "/training", "this strategy describes inference; training certification needs training = true");
  if (strategy.schedule == Schedule::Interleaved && strategy.num_microbatches() % strategy.pp != 0)
    throw InputError("CONFIG-5", "/pipeline_interleaving",
                     "the interleaved schedule needs the microbatch count (" + std::to_string(strategy.num_microbatches()) + ") to be a multiple of the pipeline degree (" +
                         std::to_string(strategy.pp) + ")");
  if (!o.target.empty() && !is_bind_target(o.target))
    throw InputError("CONFIG-6", "/target", "--target " + o.target + ": expected reference-queue, reference-slot or queue");
  const std::int64_t seq = *effective_seq_length(model, strategy);

  // ---- passes through the gate -------------------------------------------------------------
  std::vector<StageRecord> stages;
  auto clock = [] { return std::chrono::steady_clock::now(); };
  auto t0 = clock();
  passes::Workload w{Expr(strategy.microbatch), Expr(seq), {}};
  auto model_result = Gate::commit_root(unsealed_snapshot(passes::build_model_ir(model, w, strategy.dtype), {}));
  const auto* m = require(model_result, "BuildModelIR");
  if (!m) return static_cast<int>(Exit::Rejected);
  auto t1 = clock();
  stages.push_back({"ModelIR", m->digest(), obligations_checked(0, false), std::chrono::duration<double>(t1 - t0).count()});
  auto dist_result = Gate::commit(*m, unsealed_snapshot(passes::distribute_training(m->payload(), m->digest(), strategy), {m->digest()}));
  const auto* d = require(dist_result, "DistributeTransformerTrainingPass");
  if (!d) return static_cast<int>(Exit::Rejected);
  auto t2 = clock();
  stages.push_back({"DistributedTaskIR", d->digest(), obligations_checked(1, true), std::chrono::duration<double>(t2 - t1).count()});
  auto plan_result = Gate::commit(*d, unsealed_snapshot(passes::plan_training(m->payload(), d->payload(), strategy), {d->digest()}));
  const auto* p = require(plan_result, "PlanTransformerTrainingPass");
  if (!p) return static_cast<int>(Exit::Rejected);
  auto t3 = clock();
  stages.push_back({"PortablePlanIR", p->digest(), obligations_checked(2, true), std::chrono::duration<double>(t3 - t2).count()});
  // Stage 4 (optional): bind to a target; nothing is written unless it is committed too.
  std::ostringstream bind_log;
  BindOutcome bound;
  if (!o.target.empty()) {
    bound = bind_and_commit(*p, &d->payload(), system, strategy, o.target, "", bind_log);
    if (bound.exit != 0) { std::cout << bind_log.str(); return bound.exit; }
    stages.push_back({"ConcretePlanIR", bound.digest, bound.obligations, bound.seconds});
  }

  // ---- figures from the committed snapshots --------------------------------------------------
  Expr params, matrix, vector, message;
  for (const auto& v : m->payload().values)
    if (v.role == ValueRole::weight) params += passes::elements(v);
  for (const auto& t : d->payload().tasks) {
    Expr n(t.repeat * static_cast<std::int64_t>(t.ranks.size()));
    matrix += t.work.matrix_ops * n;
    vector += t.work.vector_ops * n;
    message += t.work.message_bytes * n;
  }
  passes::Placement pl{strategy.pp, strategy.schedule == Schedule::Interleaved ? strategy.interleave : 1, model.layers};
  nlohmann::json report;
  report["model"] = {{"name", model.name}, {"parameters", params.str()}};
  if (model.vocab) report["model"]["vocabulary"] = *model.vocab;
  report["strategy"] = {{"name", strategy.name}, {"tp", strategy.tp}, {"pp", strategy.pp}, {"dp", strategy.dp}, {"microbatch_size", strategy.microbatch},
                        {"global_batch_size", strategy.global_batch}, {"microbatches", strategy.num_microbatches()}, {"seq_length", seq},
                        {"sequence_parallel", strategy.sequence_parallel}, {"recompute", std::string(to_string(strategy.recompute))},
                        {"schedule", std::string(to_string(strategy.schedule))}, {"interleave", pl.chunks},
                        {"distributed_optimizer", strategy.distributed_optimizer}, {"dtype", std::string(to_string(strategy.dtype))}};
  report["stages"] = nlohmann::json::array();
  for (const auto& s : stages) {
    nlohmann::json ob = nlohmann::json::array();
    for (auto id : s.obligations) ob.push_back(std::string(id));
    report["stages"].push_back({{"ir", s.ir}, {"digest", s.digest}, {"obligations_checked", ob}});
  }
  report["totals"] = {{"matrix_flops_per_iteration", matrix.str()}, {"vector_flops_per_iteration", vector.str()}, {"message_bytes_per_iteration", message.str()}};
  report["pipeline_stages"] = nlohmann::json::array();
  const Int capacity = system.mem1.capacity_bytes;
  for (std::int64_t st = 0; st < strategy.pp; ++st) {
    std::int64_t first = -1, last = -1;
    for (std::int64_t l = 0; l < model.layers; ++l)
      if (pl.stage_of(l) == st) { if (first < 0) first = l; last = l; }
    nlohmann::json mem;
    for (const auto& f : p->payload().memory) {
      if (f.stage != st) continue;
      switch (f.category) {
        case MemoryCategory::weights: mem["weights"] = f.bytes.str(); break;
        case MemoryCategory::weight_gradients: mem["weight_gradients"] = f.bytes.str(); break;
        case MemoryCategory::optimizer_state: mem["optimizer_state"] = f.bytes.str(); break;
        case MemoryCategory::activations_peak: mem["activations"] = f.bytes.str(); break;
        case MemoryCategory::total: mem["total"] = f.bytes.str(); break;
        default: break;
      }
    }
    report["pipeline_stages"].push_back({{"stage", st}, {"layers", {first, last}}, {"memory_bytes", mem}});
  }
  report["system"] = {{"name", system.name}, {"device_memory_bytes", to_string(capacity)}};
  if (!o.target.empty()) report["concrete"] = bound.report["concrete"];
  report["verdict"] = "certified";

  // ---- summary -----------------------------------------------------------------------------
  std::cout << "plancert certify: " << model.name << " / " << strategy.name << " / " << system.name << "\n";
  std::cout << "  mesh tp=" << strategy.tp << " pp=" << strategy.pp << " dp=" << strategy.dp << ", microbatch " << strategy.microbatch << " x " << strategy.num_microbatches()
            << " microbatches, seq " << seq << ", " << to_string(strategy.recompute) << " recomputation" << (strategy.sequence_parallel ? ", sequence parallel" : "")
            << ", " << to_string(strategy.schedule) << (pl.chunks > 1 ? " v=" + std::to_string(pl.chunks) : "") << ", " << to_string(strategy.dtype) << "\n";
  if (unpadded_vocab)
    std::cout << "  vocabulary padded from " << *unpadded_vocab << " to " << *model.vocab << " (a multiple of 128 t, as Megatron-LM)\n";
  if (model.kv_heads < strategy.tp)
    std::cout << "  KV heads replicated: " << model.kv_heads << " KV heads over t = " << strategy.tp << ", each held by " << strategy.tp / model.kv_heads
              << " ranks; the KV projection is whole on every rank and its gradient is summed over tp\n";
  for (const auto& s : stages)
    std::cout << "  " << std::left << std::setw(18) << s.ir << " " << s.digest.substr(0, 16) << "  committed, " << s.obligations.size() << " obligations checked ("
              << std::fixed << std::setprecision(2) << s.seconds << " s)\n";
  std::cout << "  parameters " << params.str() << " (" << sci(params) << ")\n";
  std::cout << "  matrix FLOPs per iteration " << sci(matrix) << ", vector " << sci(vector) << ", message bytes " << sci(message) << "\n";
  std::cout << "  memory per rank (GiB), device capacity " << gib_text(Expr(capacity)) << ":\n";
  std::cout << "    stage  layers      weights  grads  optimizer  activations  total\n";
  for (const auto& ps : report["pipeline_stages"]) {
    const auto& mem = ps["memory_bytes"];
    auto g = [&](const char* k) { return gib_text(*Expr::parse(mem[k].get<std::string>(), nullptr)); };
    std::ostringstream layers;
    layers << ps["layers"][0].get<std::int64_t>() << "-" << ps["layers"][1].get<std::int64_t>();
    std::cout << "    " << std::right << std::setw(5) << ps["stage"].get<std::int64_t>() << "  " << std::left << std::setw(10) << layers.str() << std::right << std::setw(9)
              << g("weights") << std::setw(7) << g("weight_gradients") << std::setw(11) << g("optimizer_state") << std::setw(13) << g("activations") << std::setw(7)
              << g("total") << "\n";
  }
  std::cout << bind_log.str();

  // ---- outputs (atomic; only after every stage was committed) --------------------------------
  return write_certified(o.out, o.report, report, *m, *d, *p, bound);
}

}  // namespace plancert::cli
