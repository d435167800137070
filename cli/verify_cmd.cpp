// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.h"
#include "cli/io.h"
#include "passes/emit/emit.h"
#include "spec/checked.h"
#include "verifiers/gate.h"
#include "verifiers/verify.h"

#include <iostream>

namespace plancert::cli {
namespace {

void print(const std::string& format, const std::string& verdict, const std::vector<Diagnostic>& diags, std::ostream& text_out) {
  if (format == "json") {
    std::string s = "{\"diagnostics\":[";
    for (std::size_t i = 0; i < diags.size(); ++i) s += (i ? "," : "") + to_json(diags[i]);
    std::cout << s << "],\"verdict\":" << json::quote(verdict) << "}\n";
    return;
  }
  for (const auto& d : diags) text_out << to_text(d) << "\n";
}

}  // namespace

int report_bad_input(const std::string& format, const std::string& code, const std::string& path, const std::string& message) {
  print(format, "rejected", {Diagnostic{code, message, path, {}, {}}}, std::cerr);
  return static_cast<int>(Exit::BadInput);
}

int run_verify(const VerifyOptions& o) {
  const std::uintmax_t max = o.max_bytes ? o.max_bytes : kDefaultMaxInputBytes;
  // Deliberately never freed (still reachable, so leak checkers stay quiet): the process ends
  // after this command, and freeing a million commands' allocations one by one takes ~0.5 s.
  static AnySnapshot& snap = *new AnySnapshot;
  static AnySnapshot& parent = *new AnySnapshot;
  std::string snap_digest, parent_digest;  // of the payloads, from the bytes as read
  bool has_parent = !o.parent.empty();
  try {
    FileBytes bytes = read_file(o.file, max);
    // A parent is usually about as large; decoding touches 0.7-0.8 bytes of heap per input byte.
    prepare_large_run(heap_for_input(bytes.view().size() * (has_parent ? 2 : 1)), bytes.view().size() / 2);
    codec::ListArena arena;  // the snapshots' lists are kept to the end: no per-list heap block
    snap = decode_snapshot(bytes.view(), &snap_digest);
    if (has_parent) parent = decode_snapshot(read_file(o.parent, max).view(), &parent_digest);
  } catch (const InputError& e) {
    return report_bad_input(o.format, e.diag.code, e.diag.path, e.diag.message);
  }
  if (needs_parent(snap) && !has_parent)
    return report_bad_input(o.format, "IO-3", "/parents/0",
                            "a " + std::string(schema_of(snap)) + " is checked against the ConcretePlanIR it references: pass it with --parent FILE");
  Diagnostics d;
  if (has_parent) {
    Diagnostics pd = verify_snapshot(parent, parent_digest);
    for (const auto& x : pd.all())
      d.error(x.code, "(parent)" + x.path, "the --parent snapshot is itself rejected: " + x.message, x.notes, x.hint);
  }
  if (d.ok()) d = verify_snapshot(snap, snap_digest);
  if (d.ok() && has_parent) d = verify_transition(parent, snap);
  if (!d.ok()) {
    print(o.format, "rejected", d.all(), std::cout);
    if (o.format != "json") std::cout << "rejected: " << schema_of(snap) << ", " << d.count() << " finding(s)\n";
    return static_cast<int>(Exit::Rejected);
  }
  print(o.format, "accepted", {}, std::cout);
  if (o.format != "json") {
    const auto& digest = std::visit([](const auto& s) -> const std::string& { return s.digest; }, snap);
    std::cout << "accepted: " << schema_of(snap) << " " << digest << " (" << obligations_checked(snap.index(), has_parent).size()
              << " obligations checked" << (has_parent ? ", including the transition from its parent" : "; transition not checked: no --parent") << ")\n";
  }
  return static_cast<int>(Exit::Accepted);
}

}  // namespace plancert::cli
