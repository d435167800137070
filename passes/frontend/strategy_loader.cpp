// SPDX-License-Identifier: Apache-2.0
// Strategy loaders: native TOML and Calculon execution JSON, plus the shared checks.
#include "passes/frontend/checks.h"
#include "passes/frontend/document.h"
#include "passes/frontend/loaders.h"

#include <string>

namespace plancert::frontend {

using detail::fail_field;
using detail::field_ref;
using detail::Location;
using detail::Node;
using detail::Object;
using detail::Value;
namespace code = detail::code;

namespace detail {

void check_strategy(const StrategyConfig& s) {
  const Provenance& p = s.source;
  const Int ranks = Int(s.tp) * s.pp * s.dp;
  if (ranks != s.num_procs)
    fail_field(p, "num_procs", code::kConsistency,
               std::to_string(s.num_procs) + " != tp * pp * dp = " + std::to_string(s.tp) + " * " +
                   std::to_string(s.pp) + " * " + std::to_string(s.dp) + " = " + ranks.str() + " (" +
                   field_ref(p, "tp") + ", " + field_ref(p, "pp") + ", " + field_ref(p, "dp") + ")");
  if (s.num_procs > kMaxRanks)
    fail_field(p, "num_procs", code::kRange,
               "tp * pp * dp = " + std::to_string(s.num_procs) + " ranks, more than 2^31 - 1: every IR numbers ranks with 32-bit indices (" +
                   field_ref(p, "tp") + ", " + field_ref(p, "pp") + ", " + field_ref(p, "dp") + ")");
  const Int per_step = Int(s.microbatch) * s.dp;
  if (Int(s.global_batch) % per_step != 0)
    fail_field(p, "global_batch", code::kConsistency,
               std::to_string(s.global_batch) + " is not divisible by microbatch * dp = " +
                   std::to_string(s.microbatch) + " * " + std::to_string(s.dp) + " = " + per_step.str() + " (" +
                   field_ref(p, "microbatch") + ", " + field_ref(p, "dp") + ")");
  if (s.schedule == Schedule::Interleaved && s.interleave < 2)
    fail_field(p, "schedule", code::kConsistency,
               "the interleaved schedule needs at least 2 chunks per stage, but " + field_ref(p, "interleave") +
                   " = " + std::to_string(s.interleave));
  if (s.schedule == Schedule::OneFOneB && s.interleave != 1)
    fail_field(p, "interleave", code::kConsistency,
               std::to_string(s.interleave) + " chunks per stage need the interleaved schedule, but " +
                   field_ref(p, "schedule") + " is \"1f1b\"");
  if (s.interleave > 1 && s.pp < 2)
    fail_field(p, "interleave", code::kConsistency,
               "pipeline interleaving " + std::to_string(s.interleave) + " needs pipeline parallelism, but " +
                   field_ref(p, "pp") + " = " + std::to_string(s.pp));
  if (s.sequence_parallel != (s.tp_comm_type == TpCommType::RsAg))
    fail_field(p, "sequence_parallel", code::kConsistency,
               std::string("sequence parallelism is ") + (s.sequence_parallel ? "on" : "off") + " but " +
                   field_ref(p, "tp_comm_type") + " is \"" + std::string(to_string(s.tp_comm_type)) +
                   "\" (sequence parallelism is exactly \"rs_ag\")");
  if (s.recompute != Recompute::None && !s.training)
    fail_field(p, "recompute", code::kConsistency, "recomputation needs training, but " + field_ref(p, "training") + " is false");
  if (s.tp_overlap != TpOverlap::None && s.tp < 2)
    fail_field(p, "tp_overlap", code::kConsistency,
               "TP communication overlap needs tensor parallelism, but " + field_ref(p, "tp") + " = 1");
  if (s.seq_par_ag_redo && !s.sequence_parallel)
    fail_field(p, "seq_par_ag_redo", code::kConsistency, "redoing the all-gather needs sequence parallelism");
  if (s.seq_par_ag_redo && s.recompute == Recompute::Full)
    fail_field(p, "seq_par_ag_redo", code::kConsistency,
               "redoing the all-gather is not combined with full recomputation (" + field_ref(p, "recompute") + ")");
  if (s.data_par_overlap && (!s.training || s.dp < 2))
    fail_field(p, "data_par_overlap", code::kConsistency, "DP communication overlap needs training and dp > 1");
  if (s.optimizer_offload && !s.training)
    fail_field(p, "optimizer_offload", code::kConsistency, "optimizer offload needs training");
}

}  // namespace detail

namespace {

// ---------------------------------------------------------------------------
// Native TOML

StrategyConfig read_native_strategy(const Node& root, const std::string& display, const std::filesystem::path& path) {
  const Object t = detail::native_section(root, display, "strategy");
  StrategyConfig s;
  s.source.file = display;
  s.source.format = SourceFormat::NativeToml;

  const detail::Fields f(t, s.source);
  if (const auto v = f.optional("name")) s.name = v->nonempty_string();
  else s.name = detail::stem_without(path, {".toml", ".strategy"});
  auto flag = [&](const char* key, bool& out) { f.opt(key, out, &Value::boolean); };

  for (auto [key, out] : {std::pair{"tp", &s.tp}, {"pp", &s.pp}, {"dp", &s.dp}, {"microbatch", &s.microbatch}, {"global_batch", &s.global_batch}})
    f.req(key, *out, &Value::positive);
  s.dtype = static_cast<DType>(f.required("dtype").choice({"bf16", "fp16", "fp32"}));
  if (const auto v = f.optional("num_procs")) {
    s.num_procs = v->positive();
  } else {
    const Int ranks = Int(s.tp) * s.pp * s.dp;
    if (ranks >= detail::kMaxDimension)
      Location(display).key("strategy").fail(code::kRange, "tp * pp * dp = " + ranks.str() + " is not below 2^40");
    s.num_procs = static_cast<std::int64_t>(ranks);
  }
  f.opt("seq_length", s.seq_length, &Value::positive);
  f.opt("num_layers", s.num_layers, &Value::positive);
  f.opt("interleave", s.interleave, &Value::positive);
  if (const auto v = f.optional("schedule")) {
    s.schedule = static_cast<Schedule>(v->choice({"1f1b", "interleaved"}));
  } else {
    s.schedule = s.interleave > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
    s.source.fields["schedule"] = detail::origin_of(s.source, "interleave");
  }
  const auto seq_par = f.optional("sequence_parallel");
  const auto comm = f.optional("tp_comm_type");
  if (seq_par) s.sequence_parallel = seq_par->boolean();
  if (comm) {
    s.tp_comm_type = static_cast<TpCommType>(comm->choice({"ar", "rs_ag", "p2p_rs_ag"}));
    if (!seq_par) {
      s.sequence_parallel = s.tp_comm_type == TpCommType::RsAg;
      s.source.fields["sequence_parallel"] = comm->where().origin();
    }
  } else {
    s.tp_comm_type = s.sequence_parallel ? TpCommType::RsAg : TpCommType::AllReduce;
    if (seq_par) s.source.fields["tp_comm_type"] = seq_par->where().origin();
  }
  if (const auto v = f.optional("recompute")) s.recompute = static_cast<Recompute>(v->choice({"none", "selective", "full"}));
  flag("distributed_optimizer", s.distributed_optimizer);
  flag("training", s.training);
  for (auto [key, out] : {std::pair{"tp_net", &s.tp_net}, {"pp_net", &s.pp_net}, {"dp_net", &s.dp_net}}) f.opt(key, *out, &Value::non_negative);
  flag("fused_activation", s.fused_activation);
  if (const auto v = f.optional("attention_type")) s.attention_type = static_cast<AttentionType>(v->choice({"multihead", "multiquery"}));
  if (const auto v = f.optional("tp_overlap")) s.tp_overlap = static_cast<TpOverlap>(v->choice({"none", "ring", "pipe"}));
  for (auto [key, out] : {std::pair{"seq_par_ag_redo", &s.seq_par_ag_redo}, {"data_par_overlap", &s.data_par_overlap}, {"weight_offload", &s.weight_offload},
                          {"activations_offload", &s.activations_offload}, {"optimizer_offload", &s.optimizer_offload}})
    flag(key, *out);
  t.reject_unknown();
  detail::check_strategy(s);
  return s;
}

// ---------------------------------------------------------------------------
// Calculon execution JSON

StrategyConfig read_calculon_strategy(const Node& root, const std::string& display, const std::filesystem::path& path) {
  const Object o(root, Location(display));
  StrategyConfig s;
  s.source.file = display;
  s.source.format = SourceFormat::Calculon;
  s.name = detail::stem_without(path, {".json"});

  const detail::Fields f(o, s.source);
  auto pos = [&](const char* key, const char* field, std::int64_t& out) { f.req(key, out, &Value::positive, field); };
  auto net = [&](const char* key, const char* field, std::optional<std::int64_t>& out) { f.req(key, out, &Value::non_negative, field); };
  auto flag = [&](const char* key, const char* field, bool& out) { f.req(key, out, &Value::boolean, field); };
  auto pick = [&](const char* key, const char* field, std::initializer_list<std::string_view> choices) { return f.required(key, field).choice(choices); };

  pos("num_procs", "num_procs", s.num_procs);
  pos("tensor_par", "tp", s.tp);
  pos("pipeline_par", "pp", s.pp);
  pos("data_par", "dp", s.dp);
  net("tensor_par_net", "tp_net", s.tp_net);
  net("pipeline_par_net", "pp_net", s.pp_net);
  net("data_par_net", "dp_net", s.dp_net);
  pos("batch_size", "global_batch", s.global_batch);
  pos("microbatch_size", "microbatch", s.microbatch);
  {
    static constexpr DType kTypes[] = {DType::BF16, DType::FP16, DType::FP32};
    s.dtype = kTypes[pick("datatype", "dtype", {"bfloat16", "float16", "float32"})];
  }
  flag("fused_activation", "fused_activation", s.fused_activation);
  s.attention_type = static_cast<AttentionType>(pick("attention_type", "attention_type", {"multihead", "multiquery"}));
  s.recompute = static_cast<Recompute>(pick("activation_recompute", "recompute", {"none", "attn_only", "full"}));
  pos("pipeline_interleaving", "interleave", s.interleave);
  s.schedule = s.interleave > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  s.source.fields["schedule"] = detail::origin_of(s.source, "interleave");
  flag("optimizer_sharding", "distributed_optimizer", s.distributed_optimizer);
  s.tp_comm_type = static_cast<TpCommType>(pick("tensor_par_comm_type", "tp_comm_type", {"ar", "rs_ag", "p2p_rs_ag"}));
  s.sequence_parallel = s.tp_comm_type == TpCommType::RsAg;
  s.source.fields["sequence_parallel"] = detail::origin_of(s.source, "tp_comm_type");
  s.tp_overlap = static_cast<TpOverlap>(pick("tensor_par_overlap", "tp_overlap", {"none", "ring", "pipe"}));
  flag("seq_par_ag_redo", "seq_par_ag_redo", s.seq_par_ag_redo);
  flag("data_par_overlap", "data_par_overlap", s.data_par_overlap);
  flag("weight_offload", "weight_offload", s.weight_offload);
  flag("activations_offload", "activations_offload", s.activations_offload);
  flag("optimizer_offload", "optimizer_offload", s.optimizer_offload);
  flag("training", "training", s.training);
  o.reject_unknown();
  detail::check_strategy(s);
  return s;
}

}  // namespace

StrategyConfig parse_strategy(std::string_view text, const std::string& file_name) {
  const std::filesystem::path path(file_name);
  if (detail::is_toml_path(path)) return read_native_strategy(detail::parse_toml(text, file_name), file_name, path);
  const Node root = detail::parse_json(text, file_name);
  if (root.kind != Node::Kind::Object)
    Location(file_name).fail(code::kType, "a strategy file must hold a JSON object, got " + detail::describe(root));
  return read_calculon_strategy(root, file_name, path);
}

StrategyConfig load_strategy(const std::filesystem::path& path) {
  const std::string display = path.string();
  return parse_strategy(detail::read_text_file(path, display), display);
}

}  // namespace plancert::frontend
