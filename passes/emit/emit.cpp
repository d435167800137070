// SPDX-License-Identifier: Apache-2.0
#include "passes/emit/emit.h"

#include "core/json.h"

namespace plancert {

template <class P>
std::string encode_snapshot(const Snapshot<P>& s) {
  std::string out;
  {
    json::Writer w([&](std::string_view chunk) { out.append(chunk); });
    w.begin_object();
    w.key("digest"); w.string(s.digest);
    w.key("parents"); codec::encode(w, s.parents);
    w.key("payload"); codec::encode(w, s.payload);
    w.key("schema"); w.string(P::kSchema);
    w.key("version"); w.string(s.version);
    w.end_object();
  }
  return out;
}

template std::string encode_snapshot<ModelIR>(const Snapshot<ModelIR>&);
template std::string encode_snapshot<DistributedTaskIR>(const Snapshot<DistributedTaskIR>&);
template std::string encode_snapshot<PortablePlanIR>(const Snapshot<PortablePlanIR>&);
template std::string encode_snapshot<ConcretePlanIR>(const Snapshot<ConcretePlanIR>&);
template std::string encode_snapshot<TimelineBundle>(const Snapshot<TimelineBundle>&);
template std::string encode_snapshot<MachineIR>(const Snapshot<MachineIR>&);
template std::string encode_snapshot<ObservationSet>(const Snapshot<ObservationSet>&);

std::string to_text(const Diagnostic& d) {
  std::string s = "error[" + d.code + "] " + (d.path.empty() ? std::string("/") : d.path) + ": " + d.message;
  for (const auto& n : d.notes) s += "\n  note: " + n;
  if (!d.hint.empty()) s += "\n  hint: " + d.hint;
  return s;
}

std::string to_json(const Diagnostic& d) {
  std::string s = "{\"code\":" + json::quote(d.code) + ",\"hint\":" + json::quote(d.hint) + ",\"message\":" + json::quote(d.message) + ",\"notes\":[";
  for (std::size_t i = 0; i < d.notes.size(); ++i) s += (i ? "," : "") + json::quote(d.notes[i]);
  return s + "],\"path\":" + json::quote(d.path) + "}";
}

std::string recompute_digest(const AnySnapshot& s) {
  return std::visit([](const auto& x) { return digest_of(x.payload); }, s);
}

std::string json::quote(std::string_view s) { return codec::to_canonical(std::string(s)); }

}  // namespace plancert
