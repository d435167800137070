// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Frontend lowering for inference: a ModelConfig to the ModelIR of one prefill or
/// decode phase, with the KV cache as state values.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"

#include <string_view>
#include <vector>

namespace plancert::passes {

/// The two phases of autoregressive inference.
enum class InferPhase {
  prefill,  ///< the prompt: q = c query tokens, the cache is written for all c of them
  decode,   ///< one new token per sequence: q = 1 query token attending to c cached tokens
};

/// "prefill" or "decode".
std::string_view to_string(InferPhase p);

/// Workload of one phase: b sequences with c visible context tokens each (concrete numbers or
/// declared symbols, as for training's Workload).
struct InferenceWorkload {
  InferPhase phase = InferPhase::decode;  ///< prefill or decode
  Expr batch{1};                          ///< b
  Expr context{1};                        ///< c: tokens the KV cache holds after the phase
  std::vector<Symbol> symbols;            ///< declarations of the symbols used by batch / context
  /// q: query tokens per sequence (prefill c, decode 1).
  [[nodiscard]] Expr query() const { return phase == InferPhase::prefill ? context : Expr(1); }
};

/// The dtype a model is served in: its stored dtype when it names a 16- or 32-bit float
/// type (`float16`, `bfloat16`, `float32` and their short forms), else bf16.
frontend::DType inference_dtype(const frontend::ModelConfig& model);

/// BuildInferenceModelIR: lowers a model configuration to the semantics of one inference
/// phase: the token embedding (and learned positions where the model has them), every block
/// (norm; fused QKV projection for MHA, separate Q and KV projections for GQA/MQA; RoPE on
/// queries and keys where the model has it; the KV-cache write; attention scores, softmax and
/// context; output projection; residual; norm; plain or gated MLP; residual), the final norm
/// and the LM head applied to the last position of each sequence (the token the phase
/// generates; prefill selects it with a `slice`).
///
/// Each layer has two state values, its key and value caches of shape \f$[b, c, k, d]\f$.
/// The cache write has the effects `write K`, `write V`; the score and context products read
/// the caches (`read K`, `read V`), so the new tokens' keys and values are written before
/// attention reads the c cached tokens. Exact unsharded work with \f$W_{\mathrm{gemm}} = 2mnk\f$:
/// \f[ W_{\mathrm{QKV}} = 2bqH(a + 2k)d,\quad W_{\mathrm{score}} + W_{\mathrm{context}} = 4bqcad,\quad
///     W_{\mathrm{proj}} = 2bq\,ad\,H,\quad W_{\mathrm{MLP}} = 4bqHF\ (\text{gated: } 6bqHF),\quad
///     W_{\mathrm{head}} = 2bHV, \f]
/// so with \f$ad = H\f$ and MHA the per-layer work is the seed's \f$6bqH^2 + 4bqcH + 2bqH^2 + 4bqHF\f$
/// and a decoded token costs \f$2\times\f$(weights of every matrix product) \f$+\ 4cH\f$ per layer,
/// independent of k. Vector work per element E of the output: layer norm \f$9E\f$, RMS norm
/// \f$7E\f$, softmax \f$5E\f$ (hence \f$5baqc\f$), GeLU \f$8E\f$, SiLU \f$5E\f$, ReLU \f$E\f$,
/// product and residual \f$E\f$, rotary embedding \f$6E\f$. Bytes: an operation reads its inputs
/// (the score and context products read the whole cache, \f$bckde\f$ each) and writes its
/// outputs; the cache write reads and writes the new keys and values (\f$2bqkde\f$).
///
/// Attributes (no model names): `layer` (block index, `embedding` or `head`) and `tp`: how
/// tensor parallelism splits the operation (`column`, `row`, `head`, `vocab`, `replicated`,
/// or `kv` for the KV projection, key rotation and cache write, which run on
/// \f$\max(k/t, 1)\f$ KV heads per rank).
///
/// References: Vaswani et al. 2017; Shoeybi et al. 2019; Ainslie et al. 2023 (GQA);
/// Su et al. 2021 (RoPE); Pope et al. 2022 (Efficiently Scaling Transformer Inference).
ModelIR build_inference_model_ir(const frontend::ModelConfig& model, const InferenceWorkload& w, frontend::DType dtype);

}  // namespace plancert::passes
