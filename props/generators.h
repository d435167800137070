// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief RapidCheck generators of valid IR snapshot chains (a compiled support library).
///
/// Every generator is valid by construction: it draws small integer "knobs" and builds the
/// snapshot from them with a pure function that respects every obligation the verifiers
/// check, whatever the knob values. Nothing is filtered (no gen::suchThat), so shrinking
/// removes entities and moves knobs towards 0 (the simplest choice) and stays valid.
///
/// The chain is Model -> DistributedTaskIR -> PortablePlanIR -> ConcretePlanIR (queue or
/// slot target) -> TimelineBundle | MachineIR | ObservationSet. Each child lists its
/// parent's digest in `parents`, declares its lineage rules and derives every entity from
/// ids of the parent ("derived"); the root ModelIR introduces its entities.
#pragma once

#include "core/snapshot.h"

#include <rapidcheck.h>

#include <iosfwd>
#include <optional>
#include <string_view>

namespace plancert::props {

/// The layers, in AnySnapshot variant order.
enum class Layer : std::size_t { model = 0, distributed, portable, concrete, timeline, machine, observations };

/// Schema name of a layer ("ModelIR", ...).
std::string_view layer_name(Layer l);
/// The layer with that schema name, if any.
std::optional<Layer> layer_from_name(std::string_view name);
/// The layer of the parent of a snapshot of layer `l` (nullopt for the root).
std::optional<Layer> parent_layer(Layer l);

/// A valid chain of snapshots, from the root ModelIR up to `top`. Only the ancestors of
/// `top` (and `top` itself) are present, except in chains made by full_chain(), which hold
/// all three ConcretePlanIR children.
struct Chain {
  Snapshot<ModelIR> model;                                ///< root
  std::optional<Snapshot<DistributedTaskIR>> distributed; ///< layer 1
  std::optional<Snapshot<PortablePlanIR>> portable;       ///< layer 2
  std::optional<Snapshot<ConcretePlanIR>> concrete;       ///< layer 3
  std::optional<Snapshot<TimelineBundle>> timeline;       ///< child of the concrete plan
  std::optional<Snapshot<MachineIR>> machine;             ///< child of the concrete plan
  std::optional<Snapshot<ObservationSet>> observations;   ///< child of the concrete plan
  Layer top = Layer::model;                               ///< the newest snapshot

  /// True when the chain holds a snapshot of layer `l`.
  [[nodiscard]] bool has(Layer l) const;
  /// The snapshot of layer `l` (must be present).
  [[nodiscard]] AnySnapshot at(Layer l) const;
  /// The top snapshot.
  [[nodiscard]] AnySnapshot child() const { return at(top); }
  /// The parent of the top snapshot (nullopt for a root).
  [[nodiscard]] std::optional<AnySnapshot> parent() const;
};

/// RapidCheck counterexample printer: the canonical bytes of every snapshot of the chain.
void showValue(const Chain& c, std::ostream& os);
/// RapidCheck counterexample printer for a layer (its schema name).
void showValue(Layer l, std::ostream& os);

/// \name Snapshot generators (a child generator is parameterised by its verified parent)
///@{
/// A model; `inference` forces (or forbids) a KV-cache state, which makes the chain an
/// inference plan (random when nullopt).
rc::Gen<Snapshot<ModelIR>> model(std::optional<bool> inference = std::nullopt);
rc::Gen<Snapshot<DistributedTaskIR>> distributed(const Snapshot<ModelIR>& parent);
rc::Gen<Snapshot<PortablePlanIR>> portable(const Snapshot<DistributedTaskIR>& parent);
/// A concrete plan for the given target (either target when nullopt).
rc::Gen<Snapshot<ConcretePlanIR>> concrete(const Snapshot<PortablePlanIR>& parent, std::optional<TargetKind> target = std::nullopt);
rc::Gen<Snapshot<TimelineBundle>> timeline(const Snapshot<ConcretePlanIR>& parent);
rc::Gen<Snapshot<MachineIR>> machine(const Snapshot<ConcretePlanIR>& parent);
rc::Gen<Snapshot<ObservationSet>> observations(const Snapshot<ConcretePlanIR>& parent);
///@}

/// A valid chain up to `top`; `target` fixes the concrete plan's target and `inference` the
/// kind of plan (random when nullopt).
rc::Gen<Chain> chain(Layer top, std::optional<TargetKind> target = std::nullopt, std::optional<bool> inference = std::nullopt);
/// A valid chain with every layer, including all three children of the concrete plan
/// (`top` is observations).
rc::Gen<Chain> full_chain(std::optional<TargetKind> target = std::nullopt, std::optional<bool> inference = std::nullopt);

}  // namespace plancert::props
