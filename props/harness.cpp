// SPDX-License-Identifier: Apache-2.0
#include "props/harness.h"

#include "passes/bind/bind.h"
#include "passes/emit/emit.h"
#include "passes/frontend/loaders.h"
#include "passes/infer/pipeline.h"
#include "passes/train/distribute.h"
#include "passes/train/model_builder.h"
#include "passes/train/plan.h"
#include "props/any.h"
#include "verifiers/gate.h"

#include <rapidcheck.h>

#include <chrono>
#include <type_traits>
#include <iomanip>
#include <ostream>

namespace plancert::props {

std::optional<std::pair<frontend::ModelConfig, frontend::StrategyConfig>> train_configs(const TrainKnobs& k) {
  frontend::ModelConfig m;
  m.name = "tiny";
  m.family = frontend::ModelFamily::Gpt;
  m.hidden = 64;
  m.ffn = 256;
  m.heads = 4;
  m.kv_heads = k.kv_heads;
  m.head_dim = 16;
  m.layers = k.layers;
  if (k.vocabulary) m.vocab = 128;
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
  return std::pair{m, s};
}

rc::Gen<TrainKnobs> train_knobs() {
  return rc::gen::map(rc::gen::tuple(rc::gen::inRange(0, 128), rc::gen::inRange(0, 16), rc::gen::inRange(1, 5), rc::gen::inRange(0, 3)), [](const auto& t) {
    const auto& [a, b, m, rec] = t;
    TrainKnobs k;
    k.tp = 1 + (a & 1);
    k.pp = 1 + ((a >> 1) & 1);
    k.dp = 1 + ((a >> 2) & 1);
    k.layers = (a >> 3) & 1 ? 4 : 2;
    k.sequence_parallel = (a >> 4) & 1;
    k.distributed_optimizer = (a >> 5) & 1;
    k.vocabulary = !((a >> 6) & 1);
    k.microbatches = m;
    k.seq = b & 1 ? 16 : 8;
    k.interleave = (b >> 1) & 1 && k.pp > 1 ? 2 : 1;
    k.microbatch = 1 + ((b >> 2) & 1);
    k.kv_heads = (b >> 3) & 1 ? 1 : 4;
    k.recompute = static_cast<frontend::Recompute>(rec);
    return k;
  });
}

namespace {

template <class P>
std::string file_of(const Snapshot<P>& s) { return encode_snapshot(s); }

std::string rejection_text(const std::string& pass, const Diagnostics& d) {
  return "the gate refused the output of " + pass + ":\n" + render(d);
}

// Commits `s` under `parent` (or as a root); on rejection records the failure.
template <class P, class Q>
std::optional<Committed<P>> commit(const Committed<Q>* parent, Snapshot<P> s, const std::string& pass, CaseOutcome& out) {
  CommitResult<P> r = [&] {
    if constexpr (std::is_same_v<P, ModelIR>) return Gate::commit_root(std::move(s));
    else return Gate::commit(*parent, std::move(s));
  }();
  if (auto* c = std::get_if<Committed<P>>(&r)) return std::move(*c);
  out.failure = rejection_text(pass, std::get<Rejection>(r).diagnostics);
  return std::nullopt;
}

// Runs `derive` twice: the law of determinism, then the gate.
template <class P, class Q, class F>
std::optional<Committed<P>> run_pass(const Committed<Q>* parent, const std::vector<std::string>& parents, F&& derive, const std::string& pass,
                                     const std::string& file, CaseOutcome& out) {
  Snapshot<P> a = make_snapshot(derive(), parents), b = make_snapshot(derive(), parents);
  out.files.emplace_back(file, file_of(a));
  if (a.digest != b.digest) {
    out.failure = pass + " is not deterministic: two runs on the same input give digests " + a.digest + " and " + b.digest;
    out.files.emplace_back("second-run-" + file, file_of(b));
    return std::nullopt;
  }
  return commit<P>(parent, std::move(a), pass, out);
}

// The training stages up to `upto` (0 model, 1 distributed, 2 portable) on a generated tiny GPT.
struct TrainCase {
  std::optional<Committed<ModelIR>> model;
  std::optional<Committed<DistributedTaskIR>> dist;
  std::optional<Committed<PortablePlanIR>> portable;
  std::int64_t world = 1;
};

std::optional<TrainCase> train_case(int upto, CaseOutcome& out) {
  const TrainKnobs k = *train_knobs();
  auto cfg = train_configs(k);
  if (!cfg) {
    out.discarded = true;
    return std::nullopt;
  }
  // Plain references, not a structured binding: clang before 16 cannot capture bindings in lambdas.
  auto& model = cfg->first;
  auto& strategy = cfg->second;
  RC_TAG("t" + std::to_string(k.tp) + " p" + std::to_string(k.pp) + " d" + std::to_string(k.dp));
  TrainCase c;
  c.world = k.tp * k.pp * k.dp;
  const passes::Workload w{Expr(strategy.microbatch), Expr(*frontend::effective_seq_length(model, strategy)), {}};
  const Committed<ModelIR>* none = nullptr;
  c.model = run_pass<ModelIR>(none, {}, [&] { return passes::build_model_ir(model, w, strategy.dtype); }, "BuildModelIR", "model.json", out);
  if (!c.model || upto == 0) return c;
  const auto& m = *c.model;
  c.dist = run_pass<DistributedTaskIR>(&m, {m.digest()}, [&] { return passes::distribute_training(m.payload(), m.digest(), strategy); },
                                       "DistributeTransformerTrainingPass", "distributed.json", out);
  if (!c.dist || upto == 1) return c;
  const auto& d = *c.dist;
  c.portable = run_pass<PortablePlanIR>(&d, {d.digest()}, [&] { return passes::plan_training(m.payload(), d.payload(), strategy); },
                                        "PlanTransformerTrainingPass", "portable.json", out);
  return c;
}

CaseOutcome train_stage(int stage) {
  CaseOutcome out;
  train_case(stage, out);
  return out;
}

// The inference stages on a generated tiny model; `stage` names the pass under test (all
// three run, each committed; the first refusal is the failure).
// A generated serving request: a tiny Llama-style model (GQA with k in {1, 2, 4}), prefill or
// decode, batch 1-4, context 8-64, t in {1, 2, 4}, p in {1, 2}.
passes::InferenceRequest infer_request() {
  passes::InferenceRequest r;
  frontend::ModelConfig& m = r.model;
  m.name = "tiny-serve";
  m.family = frontend::ModelFamily::Llama;
  m.hidden = 64;
  m.ffn = 128;
  m.heads = 4;
  m.kv_heads = *rc::gen::element<std::int64_t>(1, 2, 4);
  m.head_dim = 16;
  m.layers = *rc::gen::element<std::int64_t>(2, 4);
  m.vocab = 128;
  m.max_positions = 512;
  m.norm = frontend::NormKind::RmsNorm;
  m.activation = frontend::Activation::Silu;
  m.gated_mlp = m.rope = true;
  r.phase = *rc::gen::element(passes::InferPhase::prefill, passes::InferPhase::decode);
  r.batch = *rc::gen::inRange(1, 5);
  r.context = 8 * *rc::gen::inRange(1, 9);
  r.par.tp = *rc::gen::element<std::int64_t>(1, 2, 4);
  r.par.pp = *rc::gen::element<std::int64_t>(1, 2);
  r.capacity = Int(1) << 40;
  return r;
}

CaseOutcome infer_stage() {
  CaseOutcome out;
  const passes::InferenceRequest r = infer_request();
  const frontend::ModelConfig& m = r.model;
  RC_TAG(std::string(passes::to_string(r.phase)) + " t" + std::to_string(r.par.tp) + " k" + std::to_string(m.kv_heads));
  try {
    const auto a = passes::derive_inference(r), b = passes::derive_inference(r);
    if (a.model) out.files.emplace_back("model.json", file_of(a.model->snapshot()));
    if (a.dist) out.files.emplace_back("distributed.json", file_of(a.dist->snapshot()));
    if (a.plan) out.files.emplace_back("portable.json", file_of(a.plan->snapshot()));
    if (!a.certified()) {
      out.failure = rejection_text(a.rejected_pass, a.rejection);
      return out;
    }
    if (a.plan->digest() != b.plan->digest()) out.failure = "the inference passes are not deterministic: " + a.plan->digest() + " vs " + b.plan->digest();
  } catch (const InputError& e) {
    out.discarded = true;
  }
  return out;
}

// A portable plan to bind: half the cases from the training passes, half arbitrary valid plans
// of the generator library (committed through the gate first).
struct BindInput {
  std::optional<TrainCase> train;                      // a plan of the training passes, or
  std::optional<passes::InferenceChain> infer;         // of the inference passes, or
  std::optional<Committed<PortablePlanIR>> generated;  // an arbitrary valid plan
  std::int64_t world = 1;
  [[nodiscard]] const Committed<PortablePlanIR>& portable() const { return train ? *train->portable : infer ? *infer->plan : *generated; }
  [[nodiscard]] const DistributedTaskIR* dist() const { return train ? &train->dist->payload() : infer ? &infer->dist->payload() : nullptr; }
};

std::optional<BindInput> bind_input(CaseOutcome& out) {
  BindInput in;
  const int source = *rc::gen::inRange(0, 3);
  if (source == 0) {
    in.train = train_case(2, out);
    if (!in.train || !in.train->portable) return std::nullopt;
    in.world = in.train->world;
    RC_TAG("training plan");
    return in;
  }
  if (source == 1) {
    const passes::InferenceRequest r = infer_request();
    in.infer = passes::derive_inference(r);
    if (!in.infer->certified()) {
      out.failure = rejection_text(in.infer->rejected_pass, in.infer->rejection);
      return std::nullopt;
    }
    out.files.emplace_back("portable.json", file_of(in.infer->plan->snapshot()));
    in.world = r.par.tp * r.par.pp;
    RC_TAG("inference plan");
    return in;
  }
  const Chain ch = *chain(Layer::portable);
  out.files.emplace_back("portable.json", file_of(*ch.portable));
  const Committed<ModelIR>* none = nullptr;
  auto m = commit<ModelIR>(none, ch.model, "the model generator", out);
  auto d = m ? commit<DistributedTaskIR>(&*m, *ch.distributed, "the distributed generator", out) : std::nullopt;
  in.generated = d ? commit<PortablePlanIR>(&*d, *ch.portable, "the portable generator", out) : std::nullopt;
  if (!in.generated) return std::nullopt;
  for (const auto& t : ch.portable->payload.tasks)
    for (Index r : t.ranks) in.world = std::max<std::int64_t>(in.world, r + 1);
  RC_TAG("generated plan");
  return in;
}

enum class Binder { reference_queue, reference_slot, queue };

CaseOutcome bind_stage(Binder b) {
  CaseOutcome out;
  auto in = bind_input(out);
  if (!in) return out;
  const Committed<PortablePlanIR>& parent = in->portable();
  const PortablePlanIR& pp = parent.payload();
  const auto target = bind::permissive_target();
  const auto deployment = bind::deployment(in->world);
  const auto values = bind::default_bindings(pp, 1);
  const std::string pass = b == Binder::queue ? "BindQueueTargetPass" : b == Binder::reference_queue ? "BindReferenceQueueTargetPass" : "BindReferenceSlotTargetPass";
  try {
    run_pass<ConcretePlanIR>(&parent, {parent.digest()}, [&] {
      switch (b) {
        case Binder::reference_queue: return bind::bind_reference_queue(pp, target, deployment, values);
        case Binder::reference_slot: return bind::bind_reference_slot(pp, target, deployment, values);
        default: return bind::bind_queue(pp, target, deployment, bind::QueueOptions{in->dist(), values});
      }
    }, pass, "concrete.json", out);
  } catch (const bind::BindError& e) {  // the binders' documented refusal (e.g. no peer device for a slot route)
    RC_TAG(std::string("refused: ") + (b == Binder::queue ? "queue" : "reference"));
    out.discarded = true;
  }
  return out;
}

}  // namespace

const std::vector<RegisteredPass>& registry() {
  static const std::vector<RegisteredPass> r = {
      {"BuildModelIR", "ModelConfig + Workload", "ModelIR", "the whole-model operator graph; committed by the gate (FLOW, ID, SYM)", [] { return train_stage(0); }},
      {"DistributeTransformerTrainingPass", "ModelIR + StrategyConfig", "DistributedTaskIR",
       "tp/pp/dp tasks and schedule conserving the model's work (WORK, SHARD, COLL, P2P, SCHED)", [] { return train_stage(1); }},
      {"PlanTransformerTrainingPass", "DistributedTaskIR", "PortablePlanIR", "buffers, exact work and per-stage memory (BUF, MEM, WORK)", [] { return train_stage(2); }},
      {"TransformerInferencePasses", "ModelConfig + InferenceRequest", "ModelIR, DistributedTaskIR, PortablePlanIR",
       "BuildInferenceModelIR, DistributeTransformerInferencePass and PlanTransformerInferencePass (KV, WS, EFFECT, CAPM)", [] { return infer_stage(); }},
      {"BindReferenceQueueTargetPass", "PortablePlanIR", "ConcretePlanIR (queue)", "the reference normal form (ALIGN-3, REFBIND-1) and every command-plan obligation",
       [] { return bind_stage(Binder::reference_queue); }},
      {"BindReferenceSlotTargetPass", "PortablePlanIR", "ConcretePlanIR (slot)", "the reference normal form with routes (ALIGN-3, REFBIND-1, ROUTE, SLOT)",
       [] { return bind_stage(Binder::reference_slot); }},
      {"BindQueueTargetPass", "PortablePlanIR", "ConcretePlanIR (queue)", "every instance bound, tokens, a race-free memory plan (RACE, CAP-5, DEADLOCK, IMPL)",
       [] { return bind_stage(Binder::queue); }},
  };
  return r;
}

rc::Gen<Chain> chain_for(const Mutation& m) {
  const auto inference = m.inference ? std::optional<bool>(true) : std::nullopt;
  if (m.derived)
    return rc::gen::exec([] {
      // t = 2: the derived operators (COLL-3, COLL-5, COLL-6) need tensor parallelism or pipeline stages
      const TrainKnobs k = *rc::gen::suchThat(train_knobs(), [](const TrainKnobs& x) { return x.tp > 1 && train_configs(x).has_value(); });
      const auto [model, strategy] = *train_configs(k);
      const passes::Workload w{Expr(strategy.microbatch), Expr(*frontend::effective_seq_length(model, strategy)), {}};
      Chain c;
      c.model = make_snapshot(passes::build_model_ir(model, w, strategy.dtype), {});
      c.distributed = make_snapshot(passes::distribute_training(c.model.payload, c.model.digest, strategy), {c.model.digest});
      c.top = Layer::distributed;
      return c;
    });
  if (m.layer != "*") return chain(layer_from_name(m.layer).value(), m.target, inference);
  return rc::gen::mapcat(rc::gen::element(Layer::model, Layer::distributed, Layer::portable, Layer::concrete, Layer::timeline, Layer::machine, Layer::observations),
                         [target = m.target, inference](Layer l) { return chain(l, target, inference); });
}

const RegisteredPass* find_pass(std::string_view name) {
  for (const auto& p : registry())
    if (p.name == name) return &p;
  return nullptr;
}

namespace {

// Throttled progress line on `os`: cases run, discarded, rate.
class Progress {
 public:
  Progress(std::ostream* os, std::string what) : os_(os), what_(std::move(what)), t0_(clock::now()), last_(t0_) {}
  void tick(int cases, int discarded, bool force = false) {
    if (!os_) return;
    const auto now = clock::now();
    if (!force && now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    const double secs = std::chrono::duration<double>(now - t0_).count();
    *os_ << "\r" << what_ << ": " << cases << " cases, " << discarded << " discarded, " << std::fixed << std::setprecision(1)
         << (secs > 0 ? cases / secs : 0.0) << " cases/s" << std::flush;
  }
  void done(int cases, int discarded) {
    if (!os_) return;
    tick(cases, discarded, true);
    *os_ << "\n";
  }

 private:
  using clock = std::chrono::steady_clock;
  std::ostream* os_;
  std::string what_;
  clock::time_point t0_, last_;
};

rc::detail::TestParams params(int runs, std::uint64_t seed, int max_size, bool shrink) {
  rc::detail::TestParams p;
  p.seed = seed;
  p.maxSuccess = runs;
  p.maxSize = max_size;
  p.disableShrinking = !shrink;
  return p;
}

}  // namespace

FuzzResult fuzz(const RegisteredPass& pass, const FuzzOptions& o) {
  FuzzResult res;
  Progress progress(o.progress, "fuzz " + pass.name);
  CaseOutcome last_failure;
  auto property = [&] {
    ++res.cases;
    CaseOutcome out = pass.run_case();
    progress.tick(res.cases, res.discarded);
    if (out.discarded) {
      ++res.discarded;
      RC_DISCARD("outside the pass's domain");
    }
    if (!out.failure.empty()) {
      if (res.first_failure < 0) res.first_failure = res.cases;
      last_failure = out;  // the last failing case is the shrunk one when RapidCheck stops
      RC_FAIL(out.failure);
    }
  };
  rc::detail::TestMetadata meta;
  meta.id = meta.description = "fuzz " + pass.name;
  const auto result = rc::detail::checkTestable(property, meta, params(o.runs, o.seed, o.max_size, true));
  progress.done(res.cases, res.discarded);
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  if (result.match(failure)) {
    res.failure = last_failure.failure;
    res.counterexample = std::move(last_failure.files);
  } else if (result.match(gave_up)) {
    res.gave_up = true;
    res.failure = "gave up: " + gave_up.description;
  } else {
    res.passed = true;
  }
  return res;
}

std::vector<OperatorReport> mutation_campaign(int runs, std::uint64_t seed, std::ostream* progress_os) {
  std::vector<OperatorReport> out;
  const auto& ops = catalog();
  std::size_t index = 0;
  for (const Mutation& m : ops) {
    ++index;
    OperatorReport rep;
    rep.name = m.name;
    rep.code = m.code;
    std::set<std::string> allowed(m.implied.begin(), m.implied.end());
    allowed.insert(m.code);
    if (progress_os) *progress_os << "\rmutations: " << index << "/" << ops.size() << " " << m.name << "                    " << std::flush;
    auto property = [&] {
      const Chain c = *chain_for(m);
      const auto pick = *rc::gen::arbitrary<std::uint64_t>();
      const auto parent = c.parent();
      const auto mutant = m.apply(parent ? &*parent : nullptr, c.child(), pick);
      RC_PRE(mutant.has_value());
      ++rep.mutants;
      const Verdict v = judge(c, *mutant);
      bool only_allowed = true;
      for (const auto& code : v.codes) only_allowed = only_allowed && allowed.count(code);
      if (v.codes.count(m.code) && only_allowed) {
        ++rep.rejected_declared;
      } else if (v.codes.empty()) {
        if (m.valid && m.valid(parent ? &*parent : nullptr, mutant->child)) ++rep.accepted_valid;
        else {
          ++rep.accepted;
          if (rep.example.empty()) rep.example = "accepted: " + encode_any(mutant->child).substr(0, 2000);
        }
      } else {
        ++rep.rejected_other;
        if (rep.example.empty()) rep.example = v.text;
      }
    };
    rc::detail::TestMetadata meta;
    meta.id = meta.description = "mutations " + m.name;
    (void)rc::detail::checkTestable(property, meta, params(runs, seed, 100, false));
    out.push_back(std::move(rep));
  }
  if (progress_os) *progress_os << "\n";
  return out;
}

}  // namespace plancert::props
