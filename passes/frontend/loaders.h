// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Untrusted configuration frontends: model, strategy and system loaders.
///
/// Every loader either returns a fully validated record (configs.h) or throws
/// plancert::InputError whose diagnostic carries an obligation ID of the
/// CONFIG family, a JSON Pointer into the input, and a message naming the
/// file, the field and the reason, e.g.
/// `models/x.json: field 'hidden': must be a positive integer, got -5`.
///
/// | code     | meaning |
/// |----------|---------|
/// | CONFIG-1 | unreadable file, syntax error, duplicate key |
/// | CONFIG-2 | missing required field (or flag) |
/// | CONFIG-3 | wrong type |
/// | CONFIG-4 | non-positive or out-of-range value |
/// | CONFIG-5 | divisibility / consistency violation |
/// | CONFIG-6 | unknown or unsupported value, unknown field in a strict format |
/// | CONFIG-7 | bad command-line flag (unknown, missing value, not an integer) |
///
/// The formats are documented field by field in docs/formats.rst.
#pragma once

#include "core/diag.h"
#include "passes/frontend/configs.h"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::frontend {

/// Loads a model. A `.toml` file is read as native TOML (`[model]` table);
/// any other file as JSON, which is a Hugging Face `config.json` when it has
/// `model_type` or `architectures`, and a Calculon model when it has
/// `num_blocks`. Throws InputError (CONFIG-1..6).
ModelConfig load_model(const std::filesystem::path& path);

/// Parses model text as load_model() would read a file named `file_name`
/// (the name selects TOML vs JSON and appears in messages).
ModelConfig parse_model(std::string_view text, const std::string& file_name);

/// Loads a strategy: native TOML (`[strategy]` table) or a Calculon execution
/// JSON file. Throws InputError (CONFIG-1..6).
StrategyConfig load_strategy(const std::filesystem::path& path);

/// Parses strategy text as load_strategy() would read a file named `file_name`.
StrategyConfig parse_strategy(std::string_view text, const std::string& file_name);

/// Loads a system: native TOML (`[system]` table) or a Calculon system JSON
/// file. Throws InputError (CONFIG-1..6).
SystemConfig load_system(const std::filesystem::path& path);

/// Parses system text as load_system() would read a file named `file_name`.
SystemConfig parse_system(std::string_view text, const std::string& file_name);

/// Builds a strategy from Megatron-LM command-line flags (the flags only, no
/// program name). Both `--flag value` and `--flag=value` are accepted.
///
/// Accepted flags: `--tensor-model-parallel-size N`,
/// `--pipeline-model-parallel-size N`, `--data-parallel-size N` and/or
/// `--world-size N` (dp = world / (tp * pp)), `--micro-batch-size N`
/// (required), `--global-batch-size N` (default micro * dp), `--seq-length N`,
/// `--num-layers N`, `--sequence-parallel`, `--recompute-granularity
/// full|selective`, `--recompute-activations` (= selective),
/// `--num-layers-per-virtual-pipeline-stage N` (needs the layer count: from
/// `--num-layers` or `num_layers`), `--virtual-pipeline-size V` (aliases
/// `--virtual-pipeline-model-parallel-size`, `--num-virtual-stages-per-pipeline-rank`),
/// `--use-distributed-optimizer`, `--bf16`, `--fp16` (neither: fp32).
///
/// `num_layers` is the model's layer count when known (checked against
/// `--num-layers` if both are given). Throws InputError: CONFIG-7 for an
/// unknown or repeated flag, a missing value, a value given to a switch, or a
/// non-integer value; CONFIG-2 for a missing required flag; CONFIG-4 for a
/// non-positive value; CONFIG-5 for inconsistent values; CONFIG-6 for an
/// unknown `--recompute-granularity`. Message paths are `/INDEX` of the
/// offending argument.
StrategyConfig parse_megatron_flags(const std::vector<std::string>& args,
                                    std::optional<std::int64_t> num_layers = std::nullopt);

/// The sequence length a model and strategy run with: the strategy's
/// override, else the model's default; nullopt when neither gives one.
std::optional<std::int64_t> effective_seq_length(const ModelConfig& model, const StrategyConfig& strategy);

/// Cross-checks a model against a strategy (CONFIG-5 unless noted), with
/// messages that name the fields of both files:
///   - a sequence length is known (CONFIG-2 otherwise) and is at most the
///     model's `max_positions` when that is known;
///   - \f$t \mid a\f$; for the KV heads, \f$t \mid k\f$ when \f$k \ge t\f$,
///     else \f$k \mid t\f$ (KV heads replicated); \f$t \mid F\f$;
///   - \f$p \mid l\f$ and, with interleaving, \f$v \mid l/p\f$;
///   - \f$B \cdot d_p \mid B_g\f$;
///   - with sequence parallelism \f$t \mid s\f$;
///   - a strategy `num_layers` equals the model's layer count;
///   - Calculon `attention_type = "multiquery"` needs exactly one KV head.
void validate(const ModelConfig& model, const StrategyConfig& strategy);

/// The vocabulary as Megatron-LM pads it (`--make-vocab-size-divisible-by 128`): when the
/// tensor-parallel degree \f$t\f$ does not divide \f$V\f$, \f$V\f$ becomes the least multiple of
/// \f$128\,t\f$ not below it, so the vocabulary-parallel embedding and LM head split evenly
/// (SHARD-1). A \f$V\f$ that \f$t\f$ divides, or no vocabulary, is left as published. Returns the
/// original size when it padded, for the summary.
std::optional<std::int64_t> pad_vocabulary(ModelConfig& model, std::int64_t tp);

/// Cross-checks a strategy against a system (CONFIG-5): the network tiers the
/// strategy names exist, and the system has matrix and vector peaks for the
/// strategy's dtype.
void validate(const StrategyConfig& strategy, const SystemConfig& system);

}  // namespace plancert::frontend
