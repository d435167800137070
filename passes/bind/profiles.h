// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief TargetProfile and DeploymentProfile: what a target offers and how many devices a
/// deployment has, built from a Calculon system description and a strategy.
#pragma once

#include "core/ir.h"
#include "passes/frontend/configs.h"

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace plancert::bind {

/// Thrown by a binding pass that cannot bind a plan at all (a structure it does not support,
/// or a symbol without a value). Requirements the target cannot meet are not thrown: the pass
/// binds them as well as it can and the gate rejects the plan naming the requirement.
class BindError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One engine of every device of the target and the capabilities it runs.
struct EngineProfile {
  std::string name;                      ///< engine name, e.g. "matrix"
  std::vector<Capability> capabilities;  ///< what it runs (kind, dtype, collective, reduction)
};

/// A catalogued implementation (kernel or runtime routine) and the capability it provides.
struct ImplementationProfile {
  std::string name;     ///< e.g. "gemm.fp16", "ring.all_reduce.sum"
  Capability provides;  ///< the capability
};

/// A memory space of a device.
struct MemorySpace {
  std::string name;            ///< e.g. "hbm"
  Int capacity_bytes;          ///< bytes per device
  std::int64_t alignment = 1;  ///< alignment of every buffer placed in it (a power of two)
};

/// TargetProfile: the device kind, its engines with their dtypes and collectives, its memory
/// spaces with capacity and alignment, and the implementations the target provides.
struct TargetProfile {
  std::string name;                                     ///< target name (the system's)
  std::string device_kind = "gpu";                      ///< Device::kind
  std::vector<EngineProfile> engines;                   ///< engines of every device
  std::vector<ImplementationProfile> implementations;  ///< implementation catalog
  std::vector<MemorySpace> spaces;                      ///< spaces[0]: device memory, where buffers are bound
};

/// DeploymentProfile: the number of devices (the world size), the topology tiers and the
/// tier each mesh axis communicates over.
struct DeploymentProfile {
  std::int64_t devices = 1;                       ///< world size
  std::vector<std::int64_t> tier_sizes;           ///< ranks reachable on each network tier
  std::map<std::string, std::int64_t> axis_tier;  ///< mesh axis ("tp", "pp", "dp") -> tier index
};

/// A target that runs everything (fp8/fp16/bf16/fp32 matrix and vector, every collective with
/// every reduction, transfers, host, memory) with `capacity` bytes of memory per device: the
/// target of the binders' property tests and of mutation campaigns, where the plan, not the
/// target, is under test.
TargetProfile permissive_target(const Int& capacity = Int(1) << 40);

/// A deployment of `devices` devices on one network tier.
DeploymentProfile deployment(std::int64_t devices);

/// The IR dtype name of a Calculon dtype key ("float16" -> "fp16", "bfloat16" -> "bf16",
/// "float32" -> "fp32", "float8" -> "fp8").
std::string ir_dtype(std::string_view calculon_key);

/// TargetProfile of a Calculon system. Engines: "matrix" runs the dtypes of the system's
/// matrix table; "vector" the dtypes of its vector table and fp32 (a programmable vector unit
/// computes in fp32, e.g. an optimizer step; the tables list dtypes with measured peaks);
/// "collective" runs all_gather (reduction none) and reduce_scatter / all_reduce (sum) when
/// every network tier lists them; "transfer" runs point-to-point transfers when every tier
/// lists p2p; "host" runs host steps; "memory" runs copies, of no particular dtype and of every
/// dtype of the matrix and vector tables. Implementations: one per engine
/// capability (gemm.D, vector.D, ring.KIND[.REDUCTION], p2p, host.call, memcpy[.D]). Spaces:
/// "hbm" (mem1 capacity, alignment 256) and "host" (mem2 capacity, alignment 64).
TargetProfile target_profile(const frontend::SystemConfig& system);

/// DeploymentProfile of a strategy on a system: devices = tp * pp * dp (the strategy's
/// num_procs), the system's network tier sizes, and the strategy's tp_net / pp_net / dp_net.
DeploymentProfile deployment_profile(const frontend::SystemConfig& system, const frontend::StrategyConfig& strategy);

/// Requirements of the deployment the system cannot meet, one sentence each: more devices
/// than the largest tier reaches, or a mesh axis wider than the tier it communicates over
/// (empty when none).
std::vector<std::string> deployment_problems(const DeploymentProfile& d, const frontend::StrategyConfig& strategy);

}  // namespace plancert::bind
