// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief PlanTransformerInferencePass: the DistributedTaskIR of one inference phase to a
/// target-neutral PortablePlanIR with exact memory facts and the target's capacity.
#pragma once

#include "core/ir.h"

namespace plancert::passes {

/// The conservative unfused workspace bound per rank of one phase,
/// \f[ C_{\mathrm{ws}} = D + e\max\Big(3bq\frac{H}{t},\ b\frac{a}{t}qc,\ bq\frac{F}{t}\Big),\qquad D = bqHe, \f]
/// the layer's boundary activation plus the largest local intermediate (the QKV outputs, the
/// score matrix, the MLP hidden activation) when every intermediate is materialised.
Expr workspace_bound(const InferenceShape& s, std::int64_t tp);

/// PlanTransformerInferencePass. Each distributed task is mapped homomorphically to a portable
/// task, \f$(F_i, V_i, R_i, W_i, M_i)_{\mathrm{distributed}} = (F_i, V_i, R_i, W_i, M_i)_{\mathrm{portable}}\f$,
/// with its dependencies, effects and capability requirements (matrix and vector engines in
/// the model's dtype, memory for pure data movement, the collective or transfer it runs).
///
/// Buffers per pipeline stage, all per rank: the stage's weights (constant; the layout's
/// share: \f$1/t\f$ when split, \f$1/\min(k,t)\f$ for KV projections), one KV-cache buffer per
/// state the stage writes (state; \f$bc\max(k/t,1)de\f$ bytes, so
/// \f$C_{\mathrm{KV}} = 2bc\,l_s\max(k/t,1)de\f$ for the stage's \f$l_s\f$ layers), one workspace
/// buffer of workspace_bound() bytes, which every compute task of the stage uses; and the
/// model's input (tokens) and output (logits). Memory facts per stage: weights, kv_cache,
/// workspace, their total, and the capacity of the target's device memory, which the CAPM
/// obligations compare with the total. The conservative workspace assumes unfused score
/// materialisation; a target implementation (e.g. tiled exact attention) may replace it only
/// in verified target binding and never changes the operation counts.
///
/// References: Vaswani et al. 2017; Dao et al. 2022 (FlashAttention).
PortablePlanIR plan_inference(const ModelIR& model, const DistributedTaskIR& dist, const Int& capacity_bytes);

}  // namespace plancert::passes
