// SPDX-License-Identifier: Apache-2.0
// Megatron-LM command-line flags -> StrategyConfig.
#include "passes/frontend/checks.h"
#include "passes/frontend/document.h"
#include "passes/frontend/loaders.h"

#include <map>
#include <string>

namespace plancert::frontend {

namespace code = detail::code;

namespace {

constexpr const char* kCommandLine = "command line";

enum class Kind { Integer, Switch, Word };

/// The flags this frontend understands; anything else is CONFIG-7.
const std::map<std::string, Kind, std::less<>>& known_flags() {
  static const std::map<std::string, Kind, std::less<>> flags = {
      {"--tensor-model-parallel-size", Kind::Integer},
      {"--pipeline-model-parallel-size", Kind::Integer},
      {"--data-parallel-size", Kind::Integer},
      {"--world-size", Kind::Integer},
      {"--micro-batch-size", Kind::Integer},
      {"--global-batch-size", Kind::Integer},
      {"--seq-length", Kind::Integer},
      {"--num-layers", Kind::Integer},
      {"--sequence-parallel", Kind::Switch},
      {"--recompute-granularity", Kind::Word},
      {"--recompute-activations", Kind::Switch},
      {"--num-layers-per-virtual-pipeline-stage", Kind::Integer},
      {"--virtual-pipeline-size", Kind::Integer},
      {"--virtual-pipeline-model-parallel-size", Kind::Integer},
      {"--num-virtual-stages-per-pipeline-rank", Kind::Integer},
      {"--use-distributed-optimizer", Kind::Switch},
      {"--bf16", Kind::Switch},
      {"--fp16", Kind::Switch},
  };
  return flags;
}

struct Given {
  std::size_t index = 0;    // position of the flag in args
  std::string text;         // the value (empty for switches)
  std::int64_t number = 0;  // Integer flags: the value
};

[[noreturn]] void fail_at(std::size_t index, const char* c, const std::string& flag, const std::string& reason) {
  throw InputError(c, "/" + std::to_string(index),
                   std::string(kCommandLine) + ": flag '" + flag + "': " + reason);
}

/// Strict decimal integer: optional sign and digits only. Leading zeros are
/// decimal, as for Megatron's argparse `int` ("08" is 8, "010" is 10): they are
/// stripped before the conversion, since cpp_int's string constructor reads a
/// leading 0 as an octal prefix (and throws std::runtime_error on "08").
bool parse_integer(const std::string& text, Int& out) {
  std::size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (i == text.size() || text.size() > 40) return false;
  for (std::size_t j = i; j < text.size(); ++j)
    if (text[j] < '0' || text[j] > '9') return false;
  while (i + 1 < text.size() && text[i] == '0') ++i;
  out = Int(text.substr(i));
  if (text[0] == '-') out = -out;
  return true;
}

}  // namespace

StrategyConfig parse_megatron_flags(const std::vector<std::string>& args, std::optional<std::int64_t> num_layers) {
  std::map<std::string, Given, std::less<>> given;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& tok = args[i];
    if (tok.rfind("--", 0) != 0 || tok.size() == 2)
      throw InputError(code::kFlag, "/" + std::to_string(i),
                       std::string(kCommandLine) + ": unexpected argument '" + tok + "' (expected a --flag)");
    const std::size_t eq = tok.find('=');
    const std::string name = tok.substr(0, eq);
    const auto spec = known_flags().find(name);
    if (spec == known_flags().end()) fail_at(i, code::kFlag, name, "unknown Megatron flag");
    if (const auto prev = given.find(name); prev != given.end())
      fail_at(i, code::kFlag, name, "given twice (first as argument " + std::to_string(prev->second.index) + ")");
    Given g;
    g.index = i;
    if (spec->second == Kind::Switch) {
      if (eq != std::string::npos) fail_at(i, code::kFlag, name, "takes no value, got '" + tok.substr(eq + 1) + "'");
    } else {
      if (eq != std::string::npos) {
        g.text = tok.substr(eq + 1);
      } else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) {
        g.text = args[++i];
      } else {
        fail_at(g.index, code::kFlag, name, "missing its value");
      }
      if (g.text.empty()) fail_at(g.index, code::kFlag, name, "missing its value");
      if (spec->second == Kind::Integer) {
        Int v;
        if (!parse_integer(g.text, v)) fail_at(g.index, code::kFlag, name, "must be an integer, got '" + g.text + "'");
        if (v <= 0) fail_at(g.index, code::kRange, name, "must be a positive integer, got " + g.text);
        if (v >= detail::kMaxDimension)
          fail_at(g.index, code::kRange, name, "must be a positive integer below 2^40, got " + g.text);
        g.number = static_cast<std::int64_t>(v);
      }
    }
    given.emplace(name, std::move(g));
  }

  StrategyConfig s;
  s.name = "megatron";
  s.source.file = kCommandLine;
  s.source.format = SourceFormat::MegatronFlags;
  s.training = true;

  auto origin = [&](const std::string& field, const std::string& flag) {
    const auto it = given.find(flag);
    s.source.fields[field] = FieldOrigin{flag, it == given.end() ? "" : "/" + std::to_string(it->second.index)};
  };
  auto integer = [&](const std::string& flag, const std::string& field) -> std::optional<std::int64_t> {
    const auto it = given.find(flag);
    if (it == given.end()) return std::nullopt;
    origin(field, flag);
    return it->second.number;
  };
  auto has = [&](const std::string& flag) { return given.find(flag) != given.end(); };
  auto at = [&](const std::string& flag) { return given.at(flag).index; };

  if (auto v = integer("--tensor-model-parallel-size", "tp")) s.tp = *v;
  else s.source.fields["tp"] = FieldOrigin{"--tensor-model-parallel-size (absent: 1)", ""};
  if (auto v = integer("--pipeline-model-parallel-size", "pp")) s.pp = *v;
  else s.source.fields["pp"] = FieldOrigin{"--pipeline-model-parallel-size (absent: 1)", ""};

  const auto dp_flag = integer("--data-parallel-size", "dp");
  const auto world = integer("--world-size", "num_procs");
  if (world) {
    const Int ranks = Int(s.tp) * s.pp;  // may exceed 64 bits; compared before narrowing
    if (ranks > *world || *world % static_cast<std::int64_t>(ranks) != 0)
      fail_at(at("--world-size"), code::kConsistency, "--world-size",
              std::to_string(*world) + " is not divisible by tp * pp = " + std::to_string(s.tp) + " * " +
                  std::to_string(s.pp));
    const std::int64_t derived = *world / static_cast<std::int64_t>(ranks);
    if (dp_flag && *dp_flag != derived)
      fail_at(at("--data-parallel-size"), code::kConsistency, "--data-parallel-size",
              std::to_string(*dp_flag) + " != --world-size / (tp * pp) = " + std::to_string(derived));
    s.dp = dp_flag ? *dp_flag : derived;
    if (!dp_flag) origin("dp", "--world-size");
    s.num_procs = *world;
  } else if (dp_flag) {
    s.dp = *dp_flag;
    const Int ranks = Int(s.tp) * s.pp * s.dp;
    if (ranks >= detail::kMaxDimension)
      fail_at(at("--data-parallel-size"), code::kRange, "--data-parallel-size",
              "tp * pp * dp = " + ranks.str() + " is not below 2^40");
    s.num_procs = static_cast<std::int64_t>(ranks);
    origin("num_procs", "--data-parallel-size");
  } else {
    throw InputError(code::kMissing, "",
                     std::string(kCommandLine) + ": missing --data-parallel-size or --world-size");
  }

  if (auto v = integer("--micro-batch-size", "microbatch")) s.microbatch = *v;
  else throw InputError(code::kMissing, "", std::string(kCommandLine) + ": missing --micro-batch-size");
  if (auto v = integer("--global-batch-size", "global_batch")) {
    s.global_batch = *v;
  } else {
    const Int product = Int(s.microbatch) * s.dp;
    if (product >= detail::kMaxDimension)
      throw InputError(code::kRange, "", std::string(kCommandLine) + ": micro batch * dp is not below 2^40");
    s.global_batch = static_cast<std::int64_t>(product);
    s.source.fields["global_batch"] = FieldOrigin{"--global-batch-size (absent: micro * dp)", ""};
  }
  s.seq_length = integer("--seq-length", "seq_length");

  const auto layers_flag = integer("--num-layers", "num_layers");
  if (layers_flag && num_layers && *layers_flag != *num_layers)
    fail_at(at("--num-layers"), code::kConsistency, "--num-layers",
            std::to_string(*layers_flag) + " != the model's layer count " + std::to_string(*num_layers));
  s.num_layers = layers_flag;
  const std::optional<std::int64_t> layers = layers_flag ? layers_flag : num_layers;

  if (has("--sequence-parallel")) {
    s.sequence_parallel = true;
    s.tp_comm_type = TpCommType::RsAg;
    origin("sequence_parallel", "--sequence-parallel");
    origin("tp_comm_type", "--sequence-parallel");
  }

  if (has("--recompute-granularity")) {
    const Given& g = given.at("--recompute-granularity");
    if (g.text == "full") s.recompute = Recompute::Full;
    else if (g.text == "selective") s.recompute = Recompute::Selective;
    else
      fail_at(g.index, code::kUnsupported, "--recompute-granularity",
              "unknown value '" + g.text + "' (expected \"full\" or \"selective\")");
    origin("recompute", "--recompute-granularity");
    if (has("--recompute-activations") && s.recompute != Recompute::Selective)
      fail_at(at("--recompute-activations"), code::kConsistency, "--recompute-activations",
              "means selective recomputation, but --recompute-granularity is '" + g.text + "'");
  } else if (has("--recompute-activations")) {
    s.recompute = Recompute::Selective;
    origin("recompute", "--recompute-activations");
  }

  // Virtual pipeline: at most one spelling.
  std::string vflag;
  for (const char* f : {"--num-layers-per-virtual-pipeline-stage", "--virtual-pipeline-size",
                        "--virtual-pipeline-model-parallel-size", "--num-virtual-stages-per-pipeline-rank"}) {
    if (!has(f)) continue;
    if (!vflag.empty())
      fail_at(at(f), code::kFlag, f, "conflicts with " + vflag + " (give the interleaving once)");
    vflag = f;
  }
  if (vflag == "--num-layers-per-virtual-pipeline-stage") {
    const Given& g = given.at(vflag);
    if (!layers)
      throw InputError(code::kMissing, "/" + std::to_string(g.index),
                       std::string(kCommandLine) + ": flag '" + vflag +
                           "': needs the model's layer count (give --num-layers or a model)");
    if (*layers % s.pp != 0)
      fail_at(g.index, code::kConsistency, vflag,
              "the layer count " + std::to_string(*layers) + " is not divisible by --pipeline-model-parallel-size " +
                  std::to_string(s.pp));
    const std::int64_t per_stage = *layers / s.pp;
    if (per_stage % g.number != 0)
      fail_at(g.index, code::kConsistency, vflag,
              std::to_string(g.number) + " does not divide the " + std::to_string(per_stage) +
                  " layers per pipeline stage");
    s.interleave = per_stage / g.number;
    origin("interleave", vflag);
  } else if (!vflag.empty()) {
    s.interleave = given.at(vflag).number;
    origin("interleave", vflag);
  }
  s.schedule = s.interleave > 1 ? Schedule::Interleaved : Schedule::OneFOneB;
  if (!vflag.empty()) origin("schedule", vflag);

  s.distributed_optimizer = has("--use-distributed-optimizer");
  if (s.distributed_optimizer) origin("distributed_optimizer", "--use-distributed-optimizer");
  if (has("--bf16") && has("--fp16"))
    fail_at(at("--fp16"), code::kConsistency, "--fp16", "conflicts with --bf16");
  if (has("--bf16")) {
    s.dtype = DType::BF16;
    origin("dtype", "--bf16");
  } else if (has("--fp16")) {
    s.dtype = DType::FP16;
    origin("dtype", "--fp16");
  } else {
    s.dtype = DType::FP32;
    s.source.fields["dtype"] = FieldOrigin{"--bf16/--fp16 (absent: fp32)", ""};
  }
  detail::check_strategy(s);
  return s;
}

}  // namespace plancert::frontend
