// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief PlanTransformerTrainingPass: DistributedTaskIR to a target-neutral PortablePlanIR.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"

namespace plancert::passes {

/// The portable copy of distributed task `dt`, shared by the training and inference planners:
/// id `p:<dt.id>`, lineage `rule` from `dt`, the same kind, dependencies, ranks, work, phase,
/// repetition, replication, attributes and effects (WORK-1 compares them), and the concurrency
/// group of its kind (`compute`, `pp` for transfers, the collective's axis `dp`, else `tp`).
/// The capability requirements are the caller's.
PortableTask portable_task(const DistTask& dt, const std::string& rule);

/// PlanTransformerTrainingPass. A semantics-preserving reification, not a second estimator:
/// for every distributed invocation \f$i\f$ it copies the exact work vector
/// \f$\mathbf{w}_i = (F_i, V_i, R_i, W_i, M_i)\f$ (matrix and vector operations, bytes read,
/// written and sent) into the portable task, and its resource requirements are non-lossy
/// projections of it: \f$Q_{\mathrm{compute}} = F_i + V_i\f$, \f$Q_{\mathrm{memory}} = R_i + W_i\f$,
/// \f$Q_{\mathrm{network}} = M_i\f$.
///
/// Abstract buffers: every stage's weight, gradient and optimizer-state shards (bytes per
/// parameter from bytes_per_parameter()), and the activations each stage must keep from a
/// microbatch's forward until its backward. A tensor that an operation saves for its
/// backward is stored unless the operation is recomputed and the tensor's producer is
/// recomputed in the same unit (the attention core for selective recomputation, the layer
/// for full recomputation), so the stored bytes of a layer are
/// \f[ C_{\mathrm{act}} = \sum_{\ell} \Big(A_\ell - O_\ell\,[\neg\mathrm{storeOutput}_\ell]
///     - A_\ell\,[\neg\mathrm{storeActivation}_\ell]\Big), \f]
/// which for a GPT block with 16-bit activations and 1-byte dropout masks reproduces
/// Korthikanti et al.: \f$sbh(34 + 5as/h)\f$ without parallelism,
/// \f$sbh(10 + 24/t + 5as/(ht))\f$ with tensor parallelism,
/// \f$sbh(34/t + 5as/(ht))\f$ with sequence parallelism, \f$sbh(10 + 24/t)\f$ and
/// \f$34sbh/t\f$ with selective recomputation, and \f$2sbh\f$ with full recomputation.
/// The per-stage peak is the largest sum over the stage's schedule of the chunk activations
/// of the microbatches in flight.
///
/// References: Shoeybi et al. 2019; Korthikanti et al. 2022; Rajbhandari et al. 2020.
PortablePlanIR plan_training(const ModelIR& model, const DistributedTaskIR& dist, const frontend::StrategyConfig& strategy);

}  // namespace plancert::passes
