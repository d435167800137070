// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief DistributeTransformerInferencePass: the ModelIR of one inference phase to a
/// DistributedTaskIR on a (pp, tp) mesh.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"
#include "passes/infer/model.h"

namespace plancert::passes {

/// Parallel degrees of an inference deployment.
struct InferenceParallelism {
  std::int64_t tp = 1;  ///< t: tensor-parallel degree
  std::int64_t pp = 1;  ///< p: pipeline stages (each holds l/p consecutive layers)
};

/// DistributeTransformerInferencePass. Expands one phase (prefill: \f$q = c\f$; decode:
/// \f$q = 1\f$) into TP-local compute tasks, tensor-parallel collectives and pipeline
/// transfers. Stage \f$s\f$ of \f$p\f$ runs layers \f$[sl/p, (s+1)l/p)\f$ on ranks
/// \f$[st, (s+1)t)\f$; the embedding runs on the first stage and the final norm and LM head
/// on the last.
///
/// Per rank an operation split over t ranks does \f$W/t\f$ of its model work \f$W\f$, so the
/// attention core does
/// \f[ W_{\mathrm{attention}} = \frac{4bqcH}{t} + 5b\frac{a}{t}qc \f]
/// (\f$QK^\top\f$ plus \f$PV\f$, and the softmax), the projections
/// \f$W_{\mathrm{QKV}} = 6bqH^2/t\f$ (MHA; with k KV heads \f$2bqH^2/t + 4bqH\,kd/t\f$),
/// \f$W_{\mathrm{out}} = 2bqH^2/t\f$ and the MLP \f$4bqHF/t\f$ (gated: \f$6bqHF/t\f$). Norms and
/// residuals are replicated (replication t). With \f$k < t\f$ KV heads the KV projection, the
/// key rotation and the cache write run on one KV head per rank, each computed by \f$t/k\f$
/// ranks (replication \f$t/k\f$), so that summed over ranks the matrix work is the model's
/// exactly (WORK-2): for a plain MLP and a vocabulary of V (LM head on the last position)
/// \f[ F_{\mathrm{phase}} = b\big(l\,q\,(2H(a + 2k)d + 4cad + 2adH + 4HF) + 2HV\big), \f]
/// i.e. per decoded token 2 operations per weight of every matrix product plus \f$4cad\f$ per
/// layer (Pope et al.). The cache write of a layer stores \f$2bq\max(k/t, 1)de\f$ bytes per
/// rank (the whole cache in the prefill, one token's keys and values in a decode step). Each
/// rank keeps its KV heads' cache,
/// \f[ C_{\mathrm{KV}} = 2bc\,\max(k/t, 1)\,d\,e \f]
/// bytes per layer (\f$2bc(H/t)e\f$ for MHA).
///
/// The cache write and the attention products carry the model's effects (`write` then
/// `read` of each layer's K and V caches), and every reading task depends directly on the
/// writing one (EFFECT). At a tensor-parallel boundary (after the output projection, the
/// second MLP projection and the vocabulary-parallel embedding) the partial sums are
/// all-reduced, payload \f$M = bqHe\f$, \f$2M(t-1)/t\f$ sent per rank; the vocabulary-parallel
/// logits are all-gathered. Consecutive stages exchange the \f$bqHe\f$ residual stream.
/// The record `inference` states b, q, c, H, F, a, k, d and the dtype for the KV and WS
/// obligations. Fused or paged attention are target implementation choices and are not
/// assumed here.
///
/// References: Vaswani et al. 2017; Shoeybi et al. 2019 (Megatron-LM); Dao et al. 2022
/// (FlashAttention); Pope et al. 2022.
DistributedTaskIR distribute_inference(const ModelIR& model, const frontend::ModelConfig& config, const InferenceWorkload& w,
                                       const InferenceParallelism& par);

}  // namespace plancert::passes
