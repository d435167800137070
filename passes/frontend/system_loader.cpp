// SPDX-License-Identifier: Apache-2.0
// System loaders: native TOML and Calculon system JSON.
#include "passes/frontend/document.h"
#include "passes/frontend/exact_number.h"
#include "passes/frontend/loaders.h"

#include <string>

namespace plancert::frontend {

using detail::Location;
using detail::Node;
using detail::Object;
using detail::Value;
namespace code = detail::code;

namespace {

/// Differences between the two system formats: key names, pair vs table rows.
struct SystemDialect {
  bool native = false;          // native TOML (strings allowed for exact numbers)
  const char* tflops = "tflops";
  const char* gflops_table = "gflops_efficiency";
  const char* gib = "GiB";
  const char* gbps = "GBps";
  const char* mb_table = "MB_efficiency";
  const char* bandwidth = "bandwidth";
  const char* latency = "latency";
  const char* row_gflop = "min_gflop";  // native rows only
  const char* row_mb = "min_mb";        // native rows only
};

constexpr SystemDialect kCalculon{};
constexpr SystemDialect kNative{true, "tflops", "gflops_efficiency", "capacity_gib", "bandwidth_gbps",
                                "mb_efficiency", "bandwidth_gbps", "latency_s", "min_gflop", "min_mb"};

Rational positive_rational(const Value& v, bool allow_string) {
  const Rational r = v.rational(allow_string);
  if (r <= 0) v.fail(code::kRange, "must be positive, got " + detail::describe(v.node()));
  return r;
}

Rational fraction_in_0_1(const Value& v, bool allow_string) {
  const Rational r = v.rational(allow_string);
  if (r <= 0 || r > 1) v.fail(code::kRange, "must be in (0, 1], got " + detail::describe(v.node()));
  return r;
}

/// An efficiency table: Calculon rows are [threshold, efficiency] pairs,
/// native rows are { <row_key> = threshold, efficiency = e } tables.
std::vector<EfficiencyPoint> read_table(const Value& v, const SystemDialect& d, const char* row_key) {
  std::vector<EfficiencyPoint> out;
  const auto rows = v.array();
  if (rows.empty()) v.fail(code::kRange, "must have at least one row");
  for (const Value& row : rows) {
    EfficiencyPoint p;
    Value threshold = row;
    if (d.native) {
      const Object o = row.object();
      threshold = o.required(row_key);
      p.efficiency = fraction_in_0_1(o.required("efficiency"), true);
      o.reject_unknown();
    } else {
      const auto pair = row.array();
      if (pair.size() != 2)
        row.fail(code::kType, "must be a [threshold, efficiency] pair, got " + std::to_string(pair.size()) + " items");
      threshold = pair[0];
      p.efficiency = fraction_in_0_1(pair[1], false);
    }
    p.threshold = threshold.rational(d.native);
    if (p.threshold < 0) threshold.fail(code::kRange, "must be non-negative, got " + detail::describe(threshold.node()));
    if (!out.empty() && !(p.threshold < out.back().threshold))
      threshold.fail(code::kConsistency, "thresholds must decrease strictly from row to row, got " +
                                             to_text(p.threshold) + " after " + to_text(out.back().threshold));
    out.push_back(std::move(p));
  }
  if (out.back().threshold != 0)
    v.fail(code::kConsistency, "the last row must have threshold 0 so that every size is covered, got " +
                                   to_text(out.back().threshold));
  return out;
}

std::map<std::string, EnginePeak> read_engine(const Value& v, const SystemDialect& d) {
  std::map<std::string, EnginePeak> out;
  const Object o = v.object();
  const auto members = o.members();
  if (members.empty()) v.fail(code::kRange, "must give the peak of at least one dtype");
  for (const auto& [dtype, spec] : members) {
    static constexpr std::string_view kDtypes[] = {"float8", "float16", "bfloat16", "float32"};
    bool known = false;
    for (std::string_view k : kDtypes) known = known || k == dtype;
    if (!known)
      spec.fail(code::kUnsupported,
                "unknown dtype '" + dtype + "' (expected one of \"float8\", \"float16\", \"bfloat16\", \"float32\")");
    const Object e = spec.object();
    EnginePeak peak;
    peak.tflops = positive_rational(e.required(d.tflops), d.native);
    peak.gflops_efficiency = read_table(e.required(d.gflops_table), d, d.row_gflop);
    e.reject_unknown();
    out.emplace(dtype, std::move(peak));
  }
  return out;
}

MemoryTier read_memory(const Value& v, const SystemDialect& d) {
  const Object o = v.object();
  MemoryTier m;
  const Value gib = o.required(d.gib);
  const Rational bytes = positive_rational(gib, d.native) * Rational(Int(1) << 30);
  if (!is_integer(bytes))
    gib.fail(code::kRange, "must be a whole number of bytes (GiB * 2^30), got " + detail::describe(gib.node()) +
                               " GiB = " + to_text(bytes) + " bytes");
  m.capacity_bytes = boost::multiprecision::numerator(bytes);
  m.bandwidth_gbps = positive_rational(o.required(d.gbps), d.native);
  m.mb_efficiency = read_table(o.required(d.mb_table), d, d.row_mb);
  o.reject_unknown();
  return m;
}

NetworkOp read_op(const Object& ops, const char* name, bool collective, const SystemDialect& d) {
  const Value v = ops.required(name);
  NetworkOp op;
  std::optional<Value> offset;
  if (d.native) {
    const Object o = v.object();
    op.multiplier = positive_rational(o.required("multiplier"), true);
    if (collective) {
      offset = o.required("offset");
    } else if (const auto off = o.optional("offset")) {
      off->fail(code::kConsistency, "p2p has no participant offset");
    }
    o.reject_unknown();
  } else {
    const auto pair = v.array();
    if (pair.size() != 2)
      v.fail(code::kType, "must be a [multiplier, offset] pair, got " + std::to_string(pair.size()) + " items");
    op.multiplier = positive_rational(pair[0], false);
    if (collective) {
      if (pair[1].is_null()) pair[1].fail(code::kType, "a collective needs an integer participant offset, got null");
      offset = pair[1];
    } else if (!pair[1].is_null()) {
      pair[1].fail(code::kType, "must be null (p2p has no participant offset), got " + detail::describe(pair[1].node()));
    }
  }
  if (offset) op.offset = offset->integer_in(-detail::kMaxDimension, detail::kMaxDimension);
  return op;
}

NetworkTier read_network(const Value& v, const SystemDialect& d) {
  const Object o = v.object();
  NetworkTier n;
  n.bandwidth_gbps = positive_rational(o.required(d.bandwidth), d.native);
  n.efficiency = fraction_in_0_1(o.required("efficiency"), d.native);
  n.size = o.required("size").non_negative();
  {
    const Value lat = o.required(d.latency);
    n.latency_s = lat.rational(d.native);
    if (n.latency_s < 0) lat.fail(code::kRange, "must be non-negative, got " + detail::describe(lat.node()));
  }
  {
    const Object ops = o.required("ops").object();
    n.ops.emplace("p2p", read_op(ops, "p2p", false, d));
    for (const char* c : {"reduce_scatter", "all_gather", "all_reduce"}) n.ops.emplace(c, read_op(ops, c, true, d));
    ops.reject_unknown();
  }
  n.must_be_filled = o.required("must_be_filled").boolean();
  {
    const Value pu = o.required("processor_usage");
    n.processor_usage = pu.rational(d.native);
    if (n.processor_usage < 0 || n.processor_usage >= 1)
      pu.fail(code::kRange, "must be in [0, 1), got " + detail::describe(pu.node()));
  }
  o.reject_unknown();
  return n;
}

SystemConfig read_system(const Object& o, const SystemDialect& d, const std::string& display) {
  SystemConfig s;
  s.source.file = display;
  s.source.format = d.native ? SourceFormat::NativeToml : SourceFormat::Calculon;
  auto note = [&](const char* field, const Value& v) { detail::note(s.source, field, v.where()); };
  {
    const Value v = o.required("matrix");
    s.matrix = read_engine(v, d);
    note("matrix", v);
  }
  {
    const Value v = o.required("vector");
    s.vector = read_engine(v, d);
    note("vector", v);
  }
  s.mem1 = read_memory(o.required("mem1"), d);
  s.mem2 = read_memory(o.required("mem2"), d);
  {
    const Value v = o.required("processing_mode");
    s.processing_mode = static_cast<ProcessingMode>(v.choice({"roofline", "no_overlap"}));
  }
  {
    const Value v = o.required("networks");
    for (const Value& n : v.array()) s.networks.push_back(read_network(n, d));
    if (s.networks.empty()) v.fail(code::kRange, "must list at least one network tier");
    note("networks", v);
  }
  return s;
}

}  // namespace

SystemConfig parse_system(std::string_view text, const std::string& file_name) {
  const std::filesystem::path path(file_name);
  if (detail::is_toml_path(path)) {
    const Node root = detail::parse_toml(text, file_name);
    const Object t = detail::native_section(root, file_name, "system");
    std::string name = detail::stem_without(path, {".toml", ".system"});
    if (const auto v = t.optional("name")) name = v->nonempty_string();
    SystemConfig s = read_system(t, kNative, file_name);
    s.name = std::move(name);
    t.reject_unknown();
    return s;
  }
  const Node root = detail::parse_json(text, file_name);
  if (root.kind != Node::Kind::Object)
    Location(file_name).fail(code::kType, "a system file must hold a JSON object, got " + detail::describe(root));
  const Object o(root, Location(file_name));
  SystemConfig s = read_system(o, kCalculon, file_name);
  s.name = detail::stem_without(path, {".json"});
  o.reject_unknown();
  return s;
}

SystemConfig load_system(const std::filesystem::path& path) {
  const std::string display = path.string();
  return parse_system(detail::read_text_file(path, display), display);
}

}  // namespace plancert::frontend
