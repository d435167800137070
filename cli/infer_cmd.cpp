// SPDX-License-Identifier: Apache-2.0
// `plancert certify --phase ...`: one inference phase through the gate, per-rank memory, and
// the exact largest batch / context that fits.
#include "cli/infer_cmd.h"

#include "cli/bind_cmd.h"

#include "cli/embedded.h"
#include "cli/io.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/infer/pipeline.h"
#include "passes/train/model_builder.h"
#include "spec/checked.h"

#include <nlohmann/json.hpp>

#include <iomanip>
#include <iostream>
#include <sstream>

namespace plancert::cli {
namespace {

using frontend::ModelConfig;

const Int kMaxDimension = Int(1) << 40;

Int positive(const std::string& flag, const std::string& text) {
  auto v = parse_int(text);
  if (!v) throw InputError("CONFIG-3", "", flag + " \"" + text.substr(0, 64) + "\": not an integer");
  if (*v < 1 || *v >= kMaxDimension) throw InputError("CONFIG-4", "", flag + " " + text + ": must be a positive integer below 2^40");
  return *v;
}

void print_rejection(const passes::InferenceChain& c) {
  std::cout << "rejected: the gate refused the output of " << c.rejected_pass << " (" << c.rejection.count() << " finding(s))\n";
  for (const auto& x : c.rejection.all()) std::cout << to_text(x) << "\n";
}

// The inference deployment as a strategy record, as the shared cross-checks and the
// binders' DeploymentProfile read it (t x p ranks, no data parallelism).
frontend::StrategyConfig inference_strategy(const passes::InferenceRequest& r) {
  frontend::StrategyConfig s;
  s.name = "command line";
  s.tp = r.par.tp;
  s.pp = r.par.pp;
  s.num_procs = r.par.tp * r.par.pp;
  s.training = false;
  s.seq_length = 1;
  s.source.file = "command line";
  s.source.format = frontend::SourceFormat::MegatronFlags;
  s.source.fields = {{"tp", {"--tp", ""}}, {"pp", {"--pp", ""}}, {"seq_length", {"--context", ""}}};
  return s;
}

// Checks the phase against the model and the degrees: CONFIG-5 with the fields named.
void validate(const passes::InferenceRequest& r, bool context_given) {
  const ModelConfig& m = r.model;
  if (context_given && m.max_positions && r.context > *m.max_positions)
    throw InputError("CONFIG-5", "", "--context " + to_string(r.context) + " exceeds the model's maximum positions (" + m.source.file + ": " +
                                         std::to_string(*m.max_positions) + ")");
  frontend::validate(m, inference_strategy(r));
}

struct Figures {
  nlohmann::json per_rank = nlohmann::json::array();
  Expr matrix, kv_per_token;
};

Figures figures(const passes::InferenceChain& c, const passes::InferenceRequest& r) {
  Figures f;
  for (const auto& op : c.model->payload().operations) f.matrix += op.work.matrix_ops;
  for (const auto& v : c.model->payload().values)
    if (v.role == ValueRole::state) f.kv_per_token += passes::elements(v) * Expr(passes::dtype_bytes(v.dtype));
  f.kv_per_token = f.kv_per_token / Rat(r.batch * r.context);
  std::map<std::int64_t, std::map<MemoryCategory, Expr>> mem;
  for (const auto& m : c.plan->payload().memory) mem[m.stage][m.category] = m.bytes;
  for (std::int64_t rank = 0; rank < r.par.tp * r.par.pp; ++rank) {
    auto& s = mem[rank / r.par.tp];
    f.per_rank.push_back({{"rank", rank}, {"stage", rank / r.par.tp}, {"weights_bytes", s[MemoryCategory::weights].str()},
                          {"kv_cache_bytes", s[MemoryCategory::kv_cache].str()}, {"workspace_bytes", s[MemoryCategory::workspace].str()},
                          {"total_bytes", s[MemoryCategory::total].str()}, {"capacity_bytes", s[MemoryCategory::capacity].str()}});
  }
  return f;
}

}  // namespace

int run_certify_inference(const InferOptions& o) {
  using namespace frontend;
  // ---- inputs (exit 2 on anything malformed) -----------------------------------------------
  if (o.phase.empty()) throw InputError("CONFIG-2", "", "inference options need --phase prefill|decode");
  if (o.phase != "prefill" && o.phase != "decode") throw InputError("CONFIG-6", "", "--phase \"" + o.phase.substr(0, 64) + "\": expected prefill or decode");
  if (!o.strategy.empty() || !o.extra.empty()) throw InputError("CONFIG-6", "", "--phase certifies inference: a training strategy (--strategy or Megatron-LM flags) does not apply");
  if (!o.target.empty() && !is_bind_target(o.target))
    throw InputError("CONFIG-6", "/target", "--target " + o.target + ": expected reference-queue, reference-slot or queue");
  if (o.max_batch && o.max_context) throw InputError("CONFIG-5", "", "give --max-batch or --max-context, not both");
  if (o.max_batch && !o.batch.empty()) throw InputError("CONFIG-5", "", "--max-batch finds the batch: do not give --batch too");
  if (o.max_context && !o.context.empty()) throw InputError("CONFIG-5", "", "--max-context finds the context: do not give --context too");
  if (!o.max_batch && o.batch.empty()) throw InputError("CONFIG-2", "", "--phase needs --batch B (or --max-batch)");
  if (!o.max_context && o.context.empty()) throw InputError("CONFIG-2", "", "--phase needs --context C (or --max-context)");
  passes::InferenceRequest r;
  r.model = o.model.empty() ? parse_model(kDefault_model.text, std::string(kDefault_model.name)) : load_model(o.model);
  const SystemConfig system = o.system.empty() ? parse_system(kDefault_system.text, std::string(kDefault_system.name)) : load_system(o.system);
  r.dtype = passes::inference_dtype(r.model);
  r.phase = o.phase == "prefill" ? passes::InferPhase::prefill : passes::InferPhase::decode;
  r.batch = o.batch.empty() ? Int(1) : positive("--batch", o.batch);
  r.context = o.context.empty() ? Int(1) : positive("--context", o.context);
  r.par.tp = o.tp.empty() ? 1 : static_cast<std::int64_t>(positive("--tp", o.tp));
  r.par.pp = o.pp.empty() ? 1 : static_cast<std::int64_t>(positive("--pp", o.pp));
  if (Int(r.par.tp) * r.par.pp > frontend::kMaxRanks) throw InputError("CONFIG-4", "", "--tp x --pp must be at most 2^31 - 1: every IR numbers ranks with 32-bit indices");
  r.capacity = system.mem1.capacity_bytes;
  // The embedding and the LM head split the vocabulary over the tp ranks: padded as in training.
  const auto unpadded_vocab = pad_vocabulary(r.model, r.par.tp);
  validate(r, !o.context.empty());

  // ---- the exact largest batch / context, confirmed through the gate --------------------------
  nlohmann::json search;
  if (o.max_batch || o.max_context) {
    const auto unknown = o.max_batch ? passes::Unknown::batch : passes::Unknown::context;
    const char* what = o.max_batch ? "batch" : "context";
    const Int limit = o.max_context && r.model.max_positions ? Int(*r.model.max_positions) : kMaxDimension - 1;
    const passes::Largest best = passes::largest_inference(r, unknown, limit);
    Int& x = o.max_batch ? r.batch : r.context;
    if (best.value < 1) {
      x = 1;
      auto c = passes::derive_inference(r);
      std::cout << "no " << what << " fits: even " << what << " 1 exceeds the device memory\n";
      if (!c.certified()) print_rejection(c);
      return static_cast<int>(c.certified() ? Exit::Internal : Exit::Rejected);
    }
    x = best.value + 1;
    nlohmann::json next = {{"value", to_string(x)}};
    if (x > limit) {
      next["limit"] = "maximum positions of the model";
    } else {
      auto c = passes::derive_inference(r);
      if (c.certified() || !c.rejection.has("CAPM-2")) {
        std::cerr << "internal error: the exact " << what << " bound " << best.value << " disagrees with the gate at " << x << "\n";
        if (!c.certified()) print_rejection(c);
        return static_cast<int>(Exit::Internal);
      }
      next["rejected_by"] = "CAPM-2";
      for (const auto& d : c.rejection.all())
        if (d.code == "CAPM-2") { next["message"] = d.message; break; }
    }
    x = best.value;
    search = {{"unknown", what}, {"value", to_string(x)}, {"bound", best.by_limit ? "maximum positions" : "memory"}, {"next", next}};
  }

  // ---- the phase through the gate -------------------------------------------------------------
  const auto c = passes::derive_inference(r);
  std::cout << "plancert certify: " << r.model.name << " " << o.phase << ", batch " << r.batch << ", context " << r.context << ", tp=" << r.par.tp << " pp=" << r.par.pp
            << ", " << to_string(r.dtype) << " / " << system.name << "\n";
  if (unpadded_vocab)
    std::cout << "  vocabulary padded from " << *unpadded_vocab << " to " << *r.model.vocab << " (a multiple of 128 t, as Megatron-LM)\n";
  if (!c.certified()) {
    print_rejection(c);
    return static_cast<int>(Exit::Rejected);
  }
  const Figures f = figures(c, r);
  nlohmann::json stages = nlohmann::json::array();
  auto stage = [&](const char* ir, const std::string& digest, const std::vector<std::string_view>& obligations) {
    nlohmann::json ob = nlohmann::json::array();
    for (auto id : obligations) ob.push_back(std::string(id));
    stages.push_back({{"ir", ir}, {"digest", digest}, {"obligations_checked", ob}});
    std::cout << "  " << std::left << std::setw(18) << ir << " " << digest.substr(0, 16) << "  committed, " << obligations.size() << " obligations checked\n";
  };
  stage("ModelIR", c.model->digest(), obligations_checked(0, false));
  stage("DistributedTaskIR", c.dist->digest(), obligations_checked(1, true));
  stage("PortablePlanIR", c.plan->digest(), obligations_checked(2, true));
  // Stage 4 (optional): bind to a target; nothing is written unless it is committed too.
  BindOutcome bound;
  if (!o.target.empty()) {
    std::ostringstream bind_log;
    bound = bind_and_commit(*c.plan, &c.dist->payload(), system, inference_strategy(r), o.target, "", bind_log);
    if (bound.exit != 0) {
      std::cout << bind_log.str();
      return bound.exit;
    }
    stage("ConcretePlanIR", bound.digest, bound.obligations);
    std::cout << bind_log.str();
  }
  std::cout << "  matrix FLOPs " << f.matrix.str() << ", KV cache per token " << f.kv_per_token.str() << " bytes\n";
  std::cout << "  memory per rank (GiB), device capacity " << gib_text(Expr(r.capacity)) << ":\n";
  std::cout << "    stage  ranks      weights  kv_cache  workspace    total\n";
  for (std::int64_t s = 0; s < r.par.pp; ++s) {
    const auto& pr = f.per_rank[static_cast<std::size_t>(s * r.par.tp)];
    auto g = [&](const char* k) { return gib_text(*Expr::parse(pr[k].get<std::string>(), nullptr)); };
    std::ostringstream ranks;
    ranks << s * r.par.tp << "-" << (s + 1) * r.par.tp - 1;
    std::cout << "    " << std::right << std::setw(5) << s << "  " << std::left << std::setw(9) << ranks.str() << std::right << std::setw(9) << g("weights_bytes")
              << std::setw(10) << g("kv_cache_bytes") << std::setw(11) << g("workspace_bytes") << std::setw(9) << g("total_bytes") << "\n";
  }
  if (!search.is_null())
    std::cout << "  largest " << search["unknown"].get<std::string>() << " that fits: " << search["value"].get<std::string>() << " (bound by "
              << search["bound"].get<std::string>() << "; " << search["next"]["value"].get<std::string>() << " "
              << (search["next"].contains("rejected_by") ? "is rejected by CAPM-2" : "exceeds the model's maximum positions") << ")\n";

  nlohmann::json inference = {{"phase", o.phase},
                              {"batch", to_string(r.batch)},
                              {"context", to_string(r.context)},
                              {"query_tokens", r.phase == passes::InferPhase::prefill ? to_string(r.context) : std::string("1")},
                              {"tp", r.par.tp},
                              {"pp", r.par.pp},
                              {"dtype", std::string(to_string(r.dtype))},
                              {"per_rank", f.per_rank},
                              {"matrix_flops", f.matrix.str()},
                              {"kv_bytes_per_token", f.kv_per_token.str()}};
  if (!search.is_null()) inference[o.max_batch ? "max_batch" : "max_context"] = search;
  Expr params;
  for (const auto& v : c.model->payload().values)
    if (v.role == ValueRole::weight) params += passes::elements(v);
  nlohmann::json report = {{"model", {{"name", r.model.name}, {"parameters", params.str()}}},
                           {"system", {{"name", system.name}, {"device_memory_bytes", to_string(r.capacity)}}},
                           {"stages", stages},
                           {"inference", inference},
                           {"verdict", "certified"}};
  if (!o.target.empty()) report["concrete"] = bound.report["concrete"];
  return write_certified(o.out, o.report, report, *c.model, *c.dist, *c.plan, bound);
}

}  // namespace plancert::cli
