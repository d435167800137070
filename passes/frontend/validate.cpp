// SPDX-License-Identifier: Apache-2.0
// Cross-checks between a model, a strategy and a system.
#include "passes/frontend/document.h"
#include "passes/frontend/loaders.h"

#include <string>
#include <utility>

namespace plancert::frontend {

using detail::fail_field;
using detail::field_ref;
namespace code = detail::code;

std::optional<std::int64_t> effective_seq_length(const ModelConfig& model, const StrategyConfig& strategy) {
  return strategy.seq_length ? strategy.seq_length : model.seq_length;
}

std::optional<std::int64_t> pad_vocabulary(ModelConfig& model, std::int64_t tp) {
  if (!model.vocab || tp <= 0 || *model.vocab % tp == 0) return std::nullopt;
  const std::int64_t unit = 128 * tp, original = *model.vocab;
  model.vocab = (original + unit - 1) / unit * unit;
  return original;
}

void validate(const ModelConfig& m, const StrategyConfig& s) {
  const Provenance& mp = m.source;
  const Provenance& sp = s.source;
  const auto n = [](std::int64_t v) { return std::to_string(v); };

  const auto seq = effective_seq_length(m, s);
  if (!seq)
    throw InputError(code::kMissing, "",
                     sp.file + ": no sequence length: give seq_length in the strategy or in the model (" + mp.file + ")");
  const Provenance& seq_src = s.seq_length ? sp : mp;
  if (m.max_positions && *seq > *m.max_positions)
    fail_field(seq_src, "seq_length", code::kConsistency,
               n(*seq) + " exceeds " + field_ref(mp, "max_positions") + " = " + n(*m.max_positions));

  if (m.heads % s.tp != 0)
    fail_field(sp, "tp", code::kConsistency, n(s.tp) + " does not divide " + field_ref(mp, "heads") + " = " + n(m.heads));
  if (m.kv_heads >= s.tp ? m.kv_heads % s.tp != 0 : s.tp % m.kv_heads != 0)
    fail_field(sp, "tp", code::kConsistency,
               n(s.tp) + " and " + field_ref(mp, "kv_heads") + " = " + n(m.kv_heads) +
                   ": one must divide the other (KV heads are split over TP ranks, or replicated when fewer)");
  if (m.ffn % s.tp != 0)
    fail_field(sp, "tp", code::kConsistency, n(s.tp) + " does not divide " + field_ref(mp, "ffn") + " = " + n(m.ffn));
  if (m.layers % s.pp != 0)
    fail_field(sp, "pp", code::kConsistency,
               n(s.pp) + " does not divide " + field_ref(mp, "layers") + " = " + n(m.layers));
  if ((m.layers / s.pp) % s.interleave != 0)
    fail_field(sp, "interleave", code::kConsistency,
               n(s.interleave) + " chunks per stage do not divide the " + n(m.layers / s.pp) +
                   " layers per stage (" + field_ref(mp, "layers") + " = " + n(m.layers) + ", " + field_ref(sp, "pp") +
                   " = " + n(s.pp) + ")");
  if (Int(s.global_batch) % (Int(s.microbatch) * s.dp) != 0)
    fail_field(sp, "global_batch", code::kConsistency,
               n(s.global_batch) + " is not divisible by microbatch * dp = " + n(s.microbatch) + " * " + n(s.dp));
  if (s.sequence_parallel && *seq % s.tp != 0)
    fail_field(seq_src, "seq_length", code::kConsistency,
               n(*seq) + " is not divisible by " + field_ref(sp, "tp") + " = " + n(s.tp) +
                   " (sequence parallelism splits the sequence over TP ranks)");
  if (s.num_layers && *s.num_layers != m.layers)
    fail_field(sp, "num_layers", code::kConsistency,
               n(*s.num_layers) + " != " + field_ref(mp, "layers") + " = " + n(m.layers));
  if (s.attention_type == AttentionType::Multiquery && m.kv_heads != 1)
    fail_field(sp, "attention_type", code::kConsistency,
               "\"multiquery\" needs one KV head, but " + field_ref(mp, "kv_heads") + " = " + n(m.kv_heads));
}

void validate(const StrategyConfig& s, const SystemConfig& sys) {
  const Provenance& sp = s.source;
  const auto tiers = static_cast<std::int64_t>(sys.networks.size());
  const std::pair<const char*, const std::optional<std::int64_t>*> axes[] = {
      {"tp_net", &s.tp_net}, {"pp_net", &s.pp_net}, {"dp_net", &s.dp_net}};
  for (const auto& [axis, tier_ptr] : axes) {
    const std::optional<std::int64_t>& tier = *tier_ptr;
    if (tier && *tier >= tiers)
      fail_field(sp, axis, code::kConsistency,
                 "network tier " + std::to_string(*tier) + " does not exist: " + sys.source.file + " has " +
                     std::to_string(tiers) + " tier(s) in " + detail::origin_of(sys.source, "networks").label);
  }
  const std::string key(system_dtype_key(s.dtype));
  for (const auto* engine : {&sys.matrix, &sys.vector}) {
    if (engine->find(key) == engine->end())
      fail_field(sp, "dtype", code::kConsistency,
                 std::string(to_string(s.dtype)) + " needs a '" + key + "' peak in " + sys.source.file + ": field '" +
                     detail::origin_of(sys.source, engine == &sys.matrix ? "matrix" : "vector").label + "'");
  }
}

}  // namespace plancert::frontend
