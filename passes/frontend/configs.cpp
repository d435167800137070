// SPDX-License-Identifier: Apache-2.0
#include "passes/frontend/configs.h"

namespace plancert::frontend {

std::string_view to_string(SourceFormat f) {
  switch (f) {
    case SourceFormat::NativeToml: return "toml";
    case SourceFormat::HuggingFace: return "huggingface";
    case SourceFormat::Calculon: return "calculon";
    case SourceFormat::MegatronFlags: return "megatron";
  }
  return "?";
}

std::string_view to_string(ModelFamily f) {
  switch (f) {
    case ModelFamily::Gpt: return "gpt";
    case ModelFamily::Llama: return "llama";
    case ModelFamily::Opt: return "opt";
    case ModelFamily::Generic: return "generic";
  }
  return "?";
}

std::string_view to_string(NormKind n) { return n == NormKind::LayerNorm ? "layernorm" : "rmsnorm"; }

std::string_view to_string(Activation a) {
  switch (a) {
    case Activation::Gelu: return "gelu";
    case Activation::Relu: return "relu";
    case Activation::Silu: return "silu";
    case Activation::SwiGlu: return "swiglu";
  }
  return "?";
}

std::string_view to_string(Recompute r) {
  switch (r) {
    case Recompute::None: return "none";
    case Recompute::Selective: return "selective";
    case Recompute::Full: return "full";
  }
  return "?";
}

std::string_view to_string(Schedule s) { return s == Schedule::OneFOneB ? "1f1b" : "interleaved"; }

std::string_view to_string(DType d) {
  switch (d) {
    case DType::BF16: return "bf16";
    case DType::FP16: return "fp16";
    case DType::FP32: return "fp32";
  }
  return "?";
}

std::string_view to_string(TpCommType c) {
  switch (c) {
    case TpCommType::AllReduce: return "ar";
    case TpCommType::RsAg: return "rs_ag";
    case TpCommType::P2pRsAg: return "p2p_rs_ag";
  }
  return "?";
}

std::string_view to_string(TpOverlap o) {
  switch (o) {
    case TpOverlap::None: return "none";
    case TpOverlap::Ring: return "ring";
    case TpOverlap::Pipe: return "pipe";
  }
  return "?";
}

std::string_view to_string(AttentionType a) { return a == AttentionType::Multihead ? "multihead" : "multiquery"; }

std::string_view to_string(ProcessingMode m) { return m == ProcessingMode::Roofline ? "roofline" : "no_overlap"; }

std::int64_t bytes_per_element(DType d) { return d == DType::FP32 ? 4 : 2; }

std::string_view system_dtype_key(DType d) {
  switch (d) {
    case DType::BF16: return "bfloat16";
    case DType::FP16: return "float16";
    case DType::FP32: return "float32";
  }
  return "?";
}

}  // namespace plancert::frontend
