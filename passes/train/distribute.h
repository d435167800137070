// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief DistributeTransformerTrainingPass: ModelIR to the DistributedTaskIR of one whole
/// training iteration on a (pp, dp, tp) mesh.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"

#include <limits>

namespace plancert::passes {

static_assert(frontend::kMaxRanks == std::numeric_limits<Index>::max(), "a strategy's ranks must fit an Index");

/// Layer placement of a pipeline: global virtual stage g = chunk * p + stage holds layers
/// [g * l / (p v), (g + 1) * l / (p v)).
struct Placement {
  std::int64_t stages = 1;  ///< p
  std::int64_t chunks = 1;  ///< v (model chunks per stage)
  std::int64_t layers = 0;  ///< l
  /// Pipeline stage of layer `l`.
  [[nodiscard]] std::int64_t stage_of(std::int64_t layer) const { return (layer / (layers / (stages * chunks))) % stages; }
  /// Model chunk (within its stage) of layer `l`.
  [[nodiscard]] std::int64_t chunk_of(std::int64_t layer) const { return (layer / (layers / (stages * chunks))) / stages; }
};

/// Builds the per-stage pipeline schedule (Megatron-LM's 1F1B, and its interleaved variant
/// when v > 1). Stage s of p warms up with
/// \f$w_s = \min\big((p-s-1)\cdot 2 + (v-1)p,\; mv\big)\f$ forward steps (\f$p-s-1\f$ when
/// \f$v = 1\f$), then alternates one forward and one backward step, then drains the
/// backward steps. Forward step k runs chunk \f$\lfloor (k \bmod pv)/p \rfloor\f$ of
/// microbatch \f$\lfloor k/(pv)\rfloor p + k \bmod p\f$; backward steps run the chunks in
/// reverse. The stage-0 peak of in-flight chunk-microbatches is therefore \f$vp + p - 1\f$
/// (\f$p\f$ for 1F1B), which gives Korthikanti et al.'s
/// \f$l\cdot(1 + \frac{p-1}{pv})\f$ layers of stored activations when \f$m \ge p\f$.
std::vector<StageSchedule> pipeline_schedule(std::int64_t stages, std::int64_t chunks, std::int64_t microbatches);

/// DistributeTransformerTrainingPass. Emits, for every pipeline stage and every model chunk,
/// the forward, recompute, activation-gradient and weight-gradient task of every operation,
/// the tensor-parallel collectives, the pipeline send/receive pairs, the data-parallel
/// gradient collectives and the optimizer step. Tasks that every rank of a stage runs
/// identically carry the whole rank set; repetition over the \f$m\f$ microbatches is
/// compact (`repeat` = m) and the order over microbatches is the explicit per-stage schedule.
///
/// Per rank and microbatch a sharded operation does \f$W/t\f$ of the model's work \f$W\f$; a
/// replicated one (norms, residuals, dropout without sequence parallelism) does \f$W\f$ on
/// each of the \f$t\f$ ranks (`replication` = t). Backward matrix work: a linear layer
/// \f$[m,n]\times[n,k]\f$ costs \f$2mnk\f$ for the activation gradient and \f$2mnk\f$ for the
/// weight gradient; a product of two activations costs \f$2\cdot 2mnk\f$ (both operand
/// gradients). Recomputation repeats the forward of the attention core (selective) or of
/// every block operation (full). Per-element vector conventions, forward / activation
/// gradient / weight gradient: layer norm \f$9E/14E/7E\f$, RMS norm \f$7E/10E/4E\f$, softmax
/// \f$5E/8E\f$, dropout \f$E/E\f$, GeLU \f$8E/13E\f$, SiLU \f$5E/8E\f$, product and residual
/// \f$E/2E\f$, Adam \f$11\f$ per parameter.
///
/// At a tensor-parallel boundary the logical payload is \f$M_{\mathrm{TP}} = Bshe\f$; a ring
/// all-reduce sends \f$2M(t-1)/t\f$ per rank and reduces \f$W_{\mathrm{reduce}} = Bsh(t-1)/t\f$
/// elements; all-gather and reduce-scatter send \f$M(t-1)/t\f$. Without sequence parallelism
/// each block all-reduces after the output projection and the second MLP projection (and the
/// activation gradients at the block's two column-parallel inputs in backward); with it, each
/// of those becomes an all-gather / reduce-scatter pair. Data parallelism all-reduces the
/// stage's gradients (or reduce-scatters gradients and all-gathers parameters with a
/// distributed optimizer).
///
/// Before that reduction, two gradient syncs keep replicated copies equal. A weight used on
/// several stages (the word embedding tied to the LM head) is exchanged between them, as
/// Megatron-LM's embedding group does: one send/receive pair per ordered pair of stages
/// carrying the stage's gradient shard, \f$\frac{Vh}{t}\,g\f$ bytes per rank with \f$g\f$ the
/// gradient bytes per parameter (COLL-5). The gradients of the \f$P_w\f$ parameters of a stage
/// that every tp rank holds whole but computes only in part are all-reduced over tp: payload
/// \f$P_w g\f$, \f$2P_w g(t-1)/t\f$ bytes sent per rank (COLL-6). Under sequence parallelism
/// these are the norms, row-parallel biases and learned positions (each rank saw its sequence
/// shard; Megatron-LM's layer-norm all-reduce); with fewer KV heads than t, the KV projection.
///
/// KV heads: an operation of layout `kv` (the KV projection and its rotary embedding when
/// \f$k < a\f$) splits over \f$t_{kv} = \min(k, t)\f$ groups. With \f$k \ge t\f$ that is the
/// column split; with \f$k < t\f$ (replicated KV heads) each rank does \f$W/k\f$ (its one KV
/// head, `replication` = t/k), holds the whole \f$[h, 2kd]\f$ projection, and stores
/// \f$1/k\f$ of K and V.
///
/// References: Shoeybi et al. 2019; Narayanan et al. 2021; Korthikanti et al. 2022;
/// Rajbhandari et al. 2020 (ZeRO).
DistributedTaskIR distribute_training(const ModelIR& model, const std::string& model_digest, const frontend::StrategyConfig& strategy);

/// Bytes per parameter of (weights, weight gradients, optimizer state) under Megatron-LM's
/// mixed precision: bf16 \f$(2, 4, 12)\f$, fp16 \f$(2, 2, 16)\f$, fp32 \f$(4, 4, 8)\f$; the
/// optimizer state is divided by \f$d_p\f$ with a distributed optimizer.
std::array<Rat, 3> bytes_per_parameter(frontend::DType dtype, bool distributed_optimizer, std::int64_t dp);

}  // namespace plancert::passes
