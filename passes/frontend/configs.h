// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Plain configuration records produced by the untrusted frontends (loaders).
///
/// The loaders in loaders.h read a model, a parallel strategy and a system
/// description from native TOML files or from foreign formats (Hugging Face
/// `config.json`, Calculon JSON, Megatron-LM command-line flags) and fill these
/// records. Every record is *validated* on construction by its loader: a value
/// that reaches a consumer has the type, range and internal consistency that
/// docs/formats.rst promises. No field holds a binary floating-point number:
/// decimal inputs are converted exactly to `cpp_rational`.
#pragma once

#include <boost/multiprecision/cpp_int.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace plancert::frontend {

/// Exact integer (arbitrary precision).
using Int = boost::multiprecision::cpp_int;
/// Exact rational number (arbitrary precision).
using Rational = boost::multiprecision::cpp_rational;

/// The format a configuration was read from.
enum class SourceFormat {
  NativeToml,     ///< plancert's own TOML format (docs/formats.rst)
  HuggingFace,    ///< a Hugging Face transformers `config.json`
  Calculon,       ///< a Calculon model / execution / system JSON file
  MegatronFlags,  ///< Megatron-LM command-line flags
};

/// Where one canonical field came from: the field as the source spells it
/// (e.g. `attn_heads`, `model.heads`, `--tensor-model-parallel-size`) and the
/// JSON Pointer of that value in the source (for flags: `/INDEX` of the flag in
/// the argument vector). Used by cross-checks so that messages name the field
/// the user actually wrote.
struct FieldOrigin {
  std::string label;    ///< the field's name in the source (dotted for nested tables)
  std::string pointer;  ///< RFC 6901 JSON Pointer of the value in the source
  /// Member-wise equality.
  friend bool operator==(const FieldOrigin&, const FieldOrigin&) = default;
};

/// Provenance of a configuration record: the file (or "command line") it was
/// read from, its format, and the origin of each canonical field by name
/// (`"heads"`, `"tp"`, ...). A field the source did not give has no entry.
struct Provenance {
  std::string file;                           ///< path as given to the loader, or "command line"
  SourceFormat format = SourceFormat::NativeToml;  ///< the input format
  std::map<std::string, FieldOrigin> fields;  ///< canonical field name -> its origin
  /// Member-wise equality.
  friend bool operator==(const Provenance&, const Provenance&) = default;
};

/// Model family. Selects architecture defaults; it is metadata, not a
/// per-model correction factor (passes never branch on a model's name).
enum class ModelFamily {
  Gpt,      ///< GPT-2/GPT-3/Megatron-GPT style (Calculon models, HF `gpt2`)
  Llama,    ///< HF `llama`
  Opt,      ///< HF `opt`
  Generic,  ///< any other (HF: read with llama-style field names)
};

/// Normalisation layer kind.
enum class NormKind {
  LayerNorm,  ///< LayerNorm (mean and variance, scale and bias)
  RmsNorm,    ///< RMSNorm (root mean square, scale only)
};

/// Activation of the feed-forward block.
enum class Activation {
  Gelu,    ///< GeLU (any of the HF `gelu*` variants)
  Relu,    ///< ReLU
  Silu,    ///< SiLU / swish, ungated
  SwiGlu,  ///< SiLU-gated linear unit (requires `gated_mlp`)
};

/// A Transformer decoder model: the workload axis of a plan.
///
/// Dimensions are validated positive and below \f$2^{40}\f$; `kv_heads`
/// divides `heads`. `heads * head_dim` may differ from `hidden` only if the
/// source said so (Calculon `attn_size`, HF `head_dim`); otherwise `head_dim`
/// is `hidden / heads` and `heads` divides `hidden`.
struct ModelConfig {
  std::string name;                         ///< model name (from the file, or its file name)
  ModelFamily family = ModelFamily::Generic;  ///< family (architecture defaults)
  std::int64_t hidden = 0;                  ///< h: hidden width
  std::int64_t ffn = 0;                     ///< F: feed-forward width
  std::int64_t heads = 0;                   ///< a: attention (query) heads
  std::int64_t kv_heads = 0;                ///< k: key/value heads (= heads for MHA)
  std::int64_t head_dim = 0;                ///< d: size of one head
  std::int64_t layers = 0;                  ///< l: Transformer blocks
  std::optional<std::int64_t> vocab;        ///< V: vocabulary size (Calculon has none)
  std::optional<std::int64_t> max_positions;  ///< longest supported sequence, when known
  std::optional<std::int64_t> seq_length;   ///< default sequence length (Calculon `seq_size`)
  bool learned_positions = false;           ///< learned absolute position embeddings
  bool biases = false;                      ///< linear layers carry biases
  bool tied_embeddings = false;             ///< output projection shares the input embedding
  NormKind norm = NormKind::LayerNorm;      ///< normalisation kind
  Activation activation = Activation::Gelu;  ///< MLP activation
  bool gated_mlp = false;                   ///< gated MLP (three projections: gate, up, down)
  bool rope = false;                        ///< rotary position embeddings
  bool dropout = false;                     ///< dropout layers present (training)
  bool causal = false;                      ///< count attention causally (default: full s x s)
  std::optional<std::string> dtype;         ///< stored dtype as the source names it (e.g. "bfloat16")
  Provenance source;                        ///< where the record came from
  /// Member-wise equality (includes provenance).
  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

/// Activation recomputation policy.
enum class Recompute {
  None,       ///< store all activations
  Selective,  ///< recompute attention core only (Calculon `attn_only`)
  Full,       ///< store only block inputs, recompute the rest
};

/// Pipeline schedule.
enum class Schedule {
  OneFOneB,     ///< 1F1B (PipeDream-Flush), one chunk per stage
  Interleaved,  ///< interleaved 1F1B with `interleave` > 1 chunks per stage
};

/// Training arithmetic dtype.
enum class DType {
  BF16,  ///< bfloat16 (Calculon `bfloat16`)
  FP16,  ///< IEEE half (Calculon `float16`)
  FP32,  ///< IEEE single (Calculon `float32`)
};

/// Tensor-parallel communication style (Calculon `tensor_par_comm_type`).
enum class TpCommType {
  AllReduce,  ///< `ar`: all-reduce at block boundaries
  RsAg,       ///< `rs_ag`: reduce-scatter + all-gather (sequence parallelism)
  P2pRsAg,    ///< `p2p_rs_ag`: point-to-point reduce-scatter/all-gather
};

/// Tensor-parallel communication overlap (Calculon `tensor_par_overlap`).
enum class TpOverlap {
  None,  ///< no overlap
  Ring,  ///< ring overlap
  Pipe,  ///< pipelined overlap
};

/// Attention kind as a Calculon execution names it (`attention_type`).
enum class AttentionType {
  Multihead,   ///< multi-head attention
  Multiquery,  ///< multi-query attention (one KV head)
};

/// Most ranks of a strategy (tp * pp * dp, or tp * pp for inference): every IR numbers ranks
/// with 32-bit indices, `Index` of core/ir.h (passes/train/distribute.h asserts they agree).
inline constexpr std::int64_t kMaxRanks = INT32_MAX;

/// A parallel execution strategy: the strategy axis of a plan.
///
/// Validated by its loader: every degree and batch size is positive and below
/// \f$2^{40}\f$; \f$t \cdot p \cdot d_p = \f$ `num_procs` \f$\le 2^{31} - 1\f$ (ranks are 32-bit
/// indices in every IR); the global batch
/// is divisible by `microbatch * dp`; `interleave` > 1 exactly when the
/// schedule is interleaved and then \f$p > 1\f$; `sequence_parallel` exactly
/// when `tp_comm_type` is `RsAg`; recomputation, optimizer offload and DP
/// overlap only when training; the Calculon option constraints hold.
struct StrategyConfig {
  std::string name;                          ///< strategy name (from the file name)
  std::int64_t num_procs = 1;                ///< total ranks = tp * pp * dp
  std::int64_t tp = 1;                       ///< t: tensor-parallel degree
  std::int64_t pp = 1;                       ///< p: pipeline-parallel degree
  std::int64_t dp = 1;                       ///< d_p: data-parallel degree
  std::int64_t microbatch = 1;               ///< B: microbatch size (sequences)
  std::int64_t global_batch = 1;             ///< B_g: global batch size (sequences)
  std::optional<std::int64_t> seq_length;    ///< sequence length override (else the model's)
  std::optional<std::int64_t> num_layers;    ///< layer count the strategy was written for, if stated
  bool sequence_parallel = false;            ///< Megatron sequence parallelism
  TpCommType tp_comm_type = TpCommType::AllReduce;  ///< TP communication style
  Recompute recompute = Recompute::None;     ///< activation recomputation
  Schedule schedule = Schedule::OneFOneB;    ///< pipeline schedule
  std::int64_t interleave = 1;               ///< v: model chunks per pipeline stage
  bool distributed_optimizer = false;        ///< optimizer state sharded over DP (ZeRO-1)
  DType dtype = DType::BF16;                 ///< arithmetic dtype
  bool training = true;                      ///< training (true) or inference (false)
  std::optional<std::int64_t> tp_net;        ///< network tier index used by the TP axis
  std::optional<std::int64_t> pp_net;        ///< network tier index used by the PP axis
  std::optional<std::int64_t> dp_net;        ///< network tier index used by the DP axis
  bool fused_activation = false;             ///< Calculon `fused_activation`
  AttentionType attention_type = AttentionType::Multihead;  ///< Calculon `attention_type`
  TpOverlap tp_overlap = TpOverlap::None;    ///< Calculon `tensor_par_overlap`
  bool seq_par_ag_redo = false;              ///< Calculon `seq_par_ag_redo`
  bool data_par_overlap = false;             ///< Calculon `data_par_overlap`
  bool weight_offload = false;               ///< Calculon `weight_offload`
  bool activations_offload = false;          ///< Calculon `activations_offload`
  bool optimizer_offload = false;            ///< Calculon `optimizer_offload`
  Provenance source;                         ///< where the record came from
  /// \f$m = B_g / (B \cdot d_p)\f$: microbatches per iteration per pipeline.
  [[nodiscard]] std::int64_t num_microbatches() const { return global_batch / (microbatch * dp); }
  /// Member-wise equality (includes provenance).
  friend bool operator==(const StrategyConfig&, const StrategyConfig&) = default;
};

/// One row of an efficiency table: operations of at least `threshold` units
/// (GFLOP for processors, MB = 10^6 bytes for memories) run at `efficiency`.
/// Tables are ordered by strictly decreasing threshold and end at threshold 0,
/// so every operation size is covered; efficiencies lie in (0, 1].
struct EfficiencyPoint {
  Rational threshold;   ///< lower bound of the operation size (GFLOP or MB)
  Rational efficiency;  ///< fraction of peak, in (0, 1]
  /// Member-wise equality.
  friend bool operator==(const EfficiencyPoint&, const EfficiencyPoint&) = default;
};

/// Peak rate of one engine (matrix or vector) for one dtype.
struct EnginePeak {
  Rational tflops;                                ///< peak in 10^12 operations per second, > 0
  std::vector<EfficiencyPoint> gflops_efficiency;  ///< efficiency by operation size (GFLOP)
  /// Member-wise equality.
  friend bool operator==(const EnginePeak&, const EnginePeak&) = default;
};

/// A memory tier (mem1 = device HBM, mem2 = host / offload memory).
struct MemoryTier {
  Int capacity_bytes;                         ///< capacity = GiB * 2^30, an exact integer
  Rational bandwidth_gbps;                    ///< bandwidth in 10^9 bytes per second, > 0
  std::vector<EfficiencyPoint> mb_efficiency;  ///< efficiency by access size (MB)
  /// Member-wise equality.
  friend bool operator==(const MemoryTier&, const MemoryTier&) = default;
};

/// Cost model of one network operation (Calculon `ops` entry
/// `[multiplier, offset]`): the volume is scaled by `multiplier`; collectives
/// carry a participant `offset` (e.g. -1 for ring algorithms), `p2p` has none.
struct NetworkOp {
  Rational multiplier;                ///< volume multiplier, > 0
  std::optional<std::int64_t> offset;  ///< participant offset (absent for p2p)
  /// Member-wise equality.
  friend bool operator==(const NetworkOp&, const NetworkOp&) = default;
};

/// One network tier (Calculon `networks[i]`).
struct NetworkTier {
  Rational bandwidth_gbps;               ///< link bandwidth in 10^9 bytes per second, > 0
  Rational efficiency;                   ///< achievable fraction of bandwidth, in (0, 1]
  std::int64_t size = 0;                 ///< ranks reachable on this tier, >= 0
  Rational latency_s;                    ///< per-operation latency in seconds, >= 0
  std::map<std::string, NetworkOp> ops;  ///< exactly p2p, reduce_scatter, all_gather, all_reduce
  bool must_be_filled = false;           ///< Calculon: a group on this tier must use all `size` ranks
  Rational processor_usage;              ///< fraction of the processor used while communicating, in [0, 1)
  /// Member-wise equality.
  friend bool operator==(const NetworkTier&, const NetworkTier&) = default;
};

/// How compute and memory time combine (Calculon `processing_mode`).
enum class ProcessingMode {
  Roofline,   ///< max(compute, memory)
  NoOverlap,  ///< compute + memory
};

/// A system (target + evidence): peak rates and efficiency tables per dtype,
/// memory tiers and network tiers. Only cost views and simulation use the
/// rates and efficiencies; capacities also bound memory plans.
struct SystemConfig {
  std::string name;                          ///< system name (from the file, or its file name)
  std::map<std::string, EnginePeak> matrix;  ///< matrix engine by dtype name ("float16", ...)
  std::map<std::string, EnginePeak> vector;  ///< vector engine by dtype name
  MemoryTier mem1;                           ///< device memory
  MemoryTier mem2;                           ///< host / offload memory
  ProcessingMode processing_mode = ProcessingMode::NoOverlap;  ///< compute/memory combination
  std::vector<NetworkTier> networks;         ///< network tiers, index = tier id (at least one)
  Provenance source;                         ///< where the record came from
  /// Member-wise equality (includes provenance).
  friend bool operator==(const SystemConfig&, const SystemConfig&) = default;
};

/// Lower-case name of a source format ("toml", "huggingface", "calculon", "megatron").
std::string_view to_string(SourceFormat f);
/// Name of a family as the native TOML format spells it ("gpt", "llama", "opt", "generic").
std::string_view to_string(ModelFamily f);
/// "layernorm" or "rmsnorm".
std::string_view to_string(NormKind n);
/// "gelu", "relu", "silu" or "swiglu".
std::string_view to_string(Activation a);
/// "none", "selective" or "full".
std::string_view to_string(Recompute r);
/// "1f1b" or "interleaved".
std::string_view to_string(Schedule s);
/// "bf16", "fp16" or "fp32".
std::string_view to_string(DType d);
/// "ar", "rs_ag" or "p2p_rs_ag".
std::string_view to_string(TpCommType c);
/// "none", "ring" or "pipe".
std::string_view to_string(TpOverlap o);
/// "multihead" or "multiquery".
std::string_view to_string(AttentionType a);
/// "roofline" or "no_overlap".
std::string_view to_string(ProcessingMode m);

/// Bytes per element of a dtype: 2 for BF16 and FP16, 4 for FP32.
std::int64_t bytes_per_element(DType d);

/// The dtype key a system file uses for a strategy dtype
/// ("bfloat16", "float16", "float32").
std::string_view system_dtype_key(DType d);

}  // namespace plancert::frontend
