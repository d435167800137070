// SPDX-License-Identifier: Apache-2.0
#include "props/any.h"

#include "passes/emit/emit.h"

#include <variant>

namespace plancert::props {

void reseal(AnySnapshot& s) {
  std::visit([](auto& x) { x.digest = digest_of(x.payload); }, s);
}

const std::string& digest_of_any(const AnySnapshot& s) {
  return std::visit([](const auto& x) -> const std::string& { return x.digest; }, s);
}

std::vector<std::string>& parents_of(AnySnapshot& s) {
  return std::visit([](auto& x) -> std::vector<std::string>& { return x.parents; }, s);
}

std::string encode_any(const AnySnapshot& s) {
  return std::visit([](const auto& x) { return encode_snapshot(x); }, s);
}

Diagnostics verify_pair(const AnySnapshot* parent, const AnySnapshot& child) {
  Diagnostics d = verify_snapshot(child);  // transition obligations hold once the snapshot's own do (as the gate)
  if (parent && d.ok()) d.merge(verify_transition(*parent, child));
  return d;
}

Diagnostics verify_chain(const Chain& c) {
  Diagnostics d;
  for (std::size_t i = 0; i < 7; ++i) {
    auto l = static_cast<Layer>(i);
    if (!c.has(l)) continue;
    AnySnapshot s = c.at(l);
    if (auto pl = parent_layer(l)) {
      AnySnapshot p = c.at(*pl);
      d.merge(verify_pair(&p, s));
    } else {
      d.merge(verify_pair(nullptr, s));
    }
  }
  return d;
}

namespace {

// Commits `s`, or the override when this is the top layer; appends a rejection to `out`.
template <class P, class Q>
std::optional<Committed<P>> commit_one(const Committed<Q>& parent, const Snapshot<P>& s, Layer l, const Chain& c,
                                       const std::optional<AnySnapshot>& top, const Witnesses& w, Diagnostics& out) {
  const bool is_top = l == c.top;
  Snapshot<P> x = is_top && top ? std::get<Snapshot<P>>(*top) : s;
  auto r = Gate::commit(parent, std::move(x), is_top ? w : Witnesses{});
  if (auto* rej = std::get_if<Rejection>(&r)) {
    out.merge(rej->diagnostics);
    return std::nullopt;
  }
  return std::get<Committed<P>>(std::move(r));
}

}  // namespace

Diagnostics commit_chain(const Chain& c, const std::optional<AnySnapshot>& top, const Witnesses& w) {
  Diagnostics out;
  Snapshot<ModelIR> root = c.top == Layer::model && top ? std::get<Snapshot<ModelIR>>(*top) : c.model;
  auto r0 = Gate::commit_root(std::move(root), c.top == Layer::model ? w : Witnesses{});
  if (auto* rej = std::get_if<Rejection>(&r0)) { out.merge(rej->diagnostics); return out; }
  const auto& m = std::get<Committed<ModelIR>>(r0);
  if (!c.distributed) return out;
  auto d = commit_one(m, *c.distributed, Layer::distributed, c, top, w, out);
  if (!d || !c.portable) return out;
  auto p = commit_one(*d, *c.portable, Layer::portable, c, top, w, out);
  if (!p || !c.concrete) return out;
  auto k = commit_one(*p, *c.concrete, Layer::concrete, c, top, w, out);
  if (!k) return out;
  if (c.timeline) commit_one(*k, *c.timeline, Layer::timeline, c, top, w, out);
  if (c.machine) commit_one(*k, *c.machine, Layer::machine, c, top, w, out);
  if (c.observations) commit_one(*k, *c.observations, Layer::observations, c, top, w, out);
  return out;
}

std::set<std::string> codes_of(const Diagnostics& d) {
  std::set<std::string> s;
  for (const auto& x : d.all()) s.insert(x.code);
  return s;
}

std::string render(const Diagnostics& d) {
  std::string out;
  for (const auto& x : d.all()) out += to_text(x) + "\n";
  return out;
}

}  // namespace plancert::props
