// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Frontend lowering: a ModelConfig to the ModelIR of the whole Transformer.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"

#include <optional>
#include <string>
#include <vector>

namespace plancert::passes {

/// Workload dimensions of one microbatch: concrete numbers or declared symbols.
struct Workload {
  Expr batch;                   ///< B: sequences per microbatch
  Expr seq;                     ///< s: tokens per sequence
  std::vector<Symbol> symbols;  ///< declarations of the symbols used by `batch` and `seq`
};

/// Element size in bytes of the dtype names used in ModelIR ("bf16", "fp16", "fp32", "u8").
std::int64_t dtype_bytes(std::string_view dtype);

/// Number of elements of a value (product of its shape).
Expr elements(const ModelValue& v);

/// Appends values and operations to a ModelIR, every entity introduced by one lineage rule;
/// shared by the training and inference lowerings. An operation's byte counts follow from its
/// operands: it reads its inputs (weights are also its persistent bytes) and writes its
/// outputs; an operation with a write effect (a cache write) also writes what it reads.
class ModelIrBuilder {
 public:
  /// A builder of values of element type `dtype` (unless given), introduced by `rule`.
  ModelIrBuilder(std::string rule, std::string dtype);
  /// Adds a value and returns its index.
  Index value(const std::string& id, std::vector<Expr> shape, ValueRole role = ValueRole::activation, std::string dtype = {});
  /// Adds a weight value.
  Index weight(const std::string& id, std::vector<Expr> shape);
  /// Bytes of value `v`.
  [[nodiscard]] Expr bytes(Index v) const;
  /// Elements of value `v`.
  [[nodiscard]] Expr elems(Index v) const;
  /// Adds an operation with the given matrix and vector work and returns it; `read`, when
  /// given, replaces the read bytes derived from the inputs.
  Operation& op(const std::string& id, const std::string& kind, Indices in, Indices out, Expr matrix, Expr vector, Attrs attrs,
                std::vector<Effect> effects = {}, std::optional<Expr> read = std::nullopt);

  ModelIR m;  ///< the model built so far

 private:
  std::string rule_, dt_;
};

/// BuildModelIR: lowers a model configuration to the forward semantics of the whole model for
/// one microbatch: embeddings (token; learned positions where the model has them), every block
/// (norm, attention with MHA/GQA, output projection, dropout where the model has it, residual,
/// norm, plain or gated MLP, residual), the final norm, the LM head (tied or not) and the loss.
///
/// Each operation carries its exact unsharded forward work. A matrix product
/// \f$[m,n]\times[n,k]\f$ costs \f$W_{\mathrm{gemm}} = 2mnk\f$, so for a block with
/// \f$a\f$ query heads, \f$k\f$ KV heads of size \f$d\f$ (MHA: \f$k=a,\ ad=h\f$):
/// \f[ W_{\mathrm{QKV}} = 2Bsh(a+2k)d = 6Bsh^2,\quad W_{\mathrm{score}}+W_{\mathrm{context}} = 4Bs^2ad,\quad
///     W_{\mathrm{proj}} = 2Bsh\,ad,\quad W_{\mathrm{MLP}} = 4BshF\ (\text{gated: } 6BshF), \f]
/// and the LM head \f$2BshV\f$. A model that says `causal` counts only the lower triangle of
/// each score matrix: \f$W_{\mathrm{score}}+W_{\mathrm{context}} = 4Ba\,d\,\frac{s(s+1)}{2}\f$,
/// and the softmax and attention dropout work on \f$Ba\frac{s(s+1)}{2}\f$ elements (the
/// stored score tensors stay \f$s\times s\f$, as Megatron-LM's fused kernels keep them).
/// Vector-engine work follows one published per-element
/// convention (forward): layer norm \f$9E\f$, RMS norm \f$7E\f$, softmax \f$5E\f$, dropout
/// \f$E\f$, GeLU \f$8E\f$, SiLU \f$5E\f$, element-wise product \f$E\f$, residual add \f$E\f$,
/// rotary embedding \f$6E\f$, cross entropy \f$6E\f$, with \f$E\f$ the output elements.
///
/// Operation attributes record what later passes need without model names: `layer`
/// (block index, or `embedding` / `head`), `tp` (how tensor parallelism splits it:
/// `column`, `row`, `head`, `replicated`, `vocab`, and `kv` for the KV projection and its
/// rotary embedding of a model with fewer KV heads than query heads, which carry `kv_heads`),
/// `region` (`attention_core` for the
/// score, softmax, dropout and context operations that selective recomputation redoes) and
/// `saves` (indices of the values its backward needs, which the planner stores unless they
/// can be recomputed).
///
/// A model with \f$k < a\f$ KV heads (GQA, MQA) has a column-parallel query projection
/// `q_proj` \f$[h, ad]\f$ and a KV projection `kv` \f$[h, 2kd]\f$ of layout `kv` instead of the
/// fused QKV projection; the work is the same \f$2Bsh(a+2k)d\f$.
///
/// References: Vaswani et al. 2017; Shoeybi et al. 2019 (Megatron-LM); Narayanan et al. 2021;
/// Korthikanti et al. 2022.
ModelIR build_model_ir(const frontend::ModelConfig& model, const Workload& w, frontend::DType dtype);

/// CONFIG-8 (passes/frontend/room.h) at the model's `layers`, called once the first layer is
/// built (the model had `operations_before` operations and `values_before` values before it):
/// every layer adds as many operations and values as the first, so the ModelIR holds at least
/// \f$l\,(o_1 \cdot \mathrm{sizeof(Operation)} + v_1 \cdot \mathrm{sizeof(ModelValue)})\f$ bytes
/// for \f$l\f$ layers of \f$o_1\f$ operations and \f$v_1\f$ values each (their strings and
/// expressions not counted). Both model builders (training, inference) call it.
void require_layers_room(const ModelIR& model, std::size_t operations_before, std::size_t values_before, const frontend::ModelConfig& config);

/// CONFIG-8's lower bound of the bytes of `tasks` distributed tasks, each with a rank list of
/// `ranks` ranks: \f$n\,(\mathrm{sizeof(DistTask)} + r \cdot \mathrm{sizeof(Index)})\f$, saturating.
/// Both distribution passes (training, inference) ask it before building their tasks.
std::uintmax_t rank_list_bytes(std::uintmax_t tasks, std::uintmax_t ranks);

/// KV-head groups of an operation over t tensor-parallel ranks: \f$t_{kv} = \min(k, t)\f$ for
/// an operation of layout `kv` (its attribute `kv_heads` is k), t for any other. With
/// \f$k \ge t\f$ (t divides k) the KV heads split over the t ranks; with \f$k < t\f$ (k divides
/// t) every rank computes the \f$k/t_{kv} = 1\f$ KV head its query heads use, \f$t/t_{kv}\f$ ranks
/// compute the same head, and every rank holds the whole KV projection.
std::int64_t kv_groups(const Operation& op, std::int64_t t);

/// The values an operation's backward needs: its `saves` attribute, as build_model_ir writes it
/// (comma-separated value indices; none without the attribute). Throws std::out_of_range for an
/// index that is not a value of the model (at least `values`, or not an Index) and
/// std::invalid_argument for an entry that is not decimal digits: the gate does not check this
/// attribute, so a foreign ModelIR's bad index is refused here, not read out of bounds by the
/// pass that follows.
Indices saved_values(const Operation& op, std::size_t values);

}  // namespace plancert::passes
