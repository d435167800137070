// SPDX-License-Identifier: Apache-2.0
#include "passes/frontend/document.h"

#include "passes/frontend/exact_number.h"

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace plancert::frontend::detail {

Node::~Node() = default;

const Node* Node::find(std::string_view key) const {
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Files

std::string read_text_file(const std::filesystem::path& path, const std::string& display) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status))
    throw InputError(code::kSyntax, "", display + ": cannot read file: no such file");
  if (std::filesystem::is_directory(status))
    throw InputError(code::kSyntax, "", display + ": cannot read file: it is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(code::kSyntax, "", display + ": cannot read file: permission denied or I/O error");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<std::size_t>(in.gcount()));
    if (text.size() > kMaxFileBytes)
      throw InputError(code::kSyntax, "",
                       display + ": cannot read file: larger than " + std::to_string(kMaxFileBytes) + " bytes");
  }
  if (in.bad()) throw InputError(code::kSyntax, "", display + ": cannot read file: I/O error");
  return text;
}

// ---------------------------------------------------------------------------
// JSON through nlohmann's SAX interface

namespace {

using json = nlohmann::json;

/// Builds a Node tree from SAX events, rejecting duplicate keys and deep nesting.
class JsonBuilder {
 public:
  explicit JsonBuilder(const std::string& display) : display_(display) {}

  bool null() { return put(Node{}); }
  bool boolean(bool b) {
    Node n;
    n.kind = Node::Kind::Boolean;
    n.boolean = b;
    return put(std::move(n));
  }
  bool number_integer(json::number_integer_t v) { return number(std::to_string(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return number(std::to_string(v)); }
  /// The binary value is ignored: only the literal text is used.
  bool number_float(json::number_float_t /*binary value: never used*/, const std::string& raw) {
    std::string text = raw;
    // The lexer stores the locale's decimal point; JSON's is '.'.
    for (char& c : text)
      if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == 'e' || c == 'E')) c = '.';
    return number(std::move(text));
  }
  bool string(std::string& s) {
    Node n;
    n.kind = Node::Kind::String;
    n.text = std::move(s);
    return put(std::move(n));
  }
  bool binary(json::binary_t& /*unused*/) {
    error_ = display_ + ": syntax error: binary values are not JSON";
    return false;
  }
  bool start_object(std::size_t /*unused*/) { return open(Node::Kind::Object); }
  bool key(std::string& k) {
    Frame& f = stack_.back();
    for (const auto& [existing, v] : f.node.members) {
      (void)v;
      if (existing == k) {
        std::string ptr = pointer();
        append_pointer(ptr, k);
        error_ = display_ + ": duplicate key '" + k + "' at " + (ptr.empty() ? "/" : ptr);
        error_pointer_ = ptr;
        return false;
      }
    }
    f.pending_key = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(std::size_t /*unused*/) { return open(Node::Kind::Array); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::detail::exception& ex) {
    (void)position;
    (void)last_token;
    std::string what = ex.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> drop the tag.
    if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
    if (ex.id == 406) {  // out_of_range.406: a number literal beyond the binary range the lexer checks
      code_ = code::kRange;
      error_ = display_ + ": number out of range: " + what;
    } else {
      error_ = display_ + ": syntax error: " + what;
    }
    return false;
  }

  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] const char* error_code() const { return code_; }
  [[nodiscard]] const std::string& error_pointer() const { return error_pointer_; }
  Node take() { return std::move(root_); }

 private:
  struct Frame {
    Node node;
    std::string pending_key;
  };

  static void append_pointer(std::string& out, std::string_view token) {
    out += '/';
    for (char c : token) {
      if (c == '~') out += "~0";
      else if (c == '/') out += "~1";
      else out += c;
    }
  }

  std::string pointer() const {
    std::string p;
    for (std::size_t i = 1; i < stack_.size(); ++i) {
      const Frame& parent = stack_[i - 1];
      if (parent.node.kind == Node::Kind::Object) append_pointer(p, parent.pending_key);
      else append_pointer(p, std::to_string(parent.node.items.size()));
    }
    return p;
  }

  bool number(std::string text) {
    Node n;
    n.kind = text.find_first_of(".eE") == std::string::npos ? Node::Kind::Integer : Node::Kind::Decimal;
    n.text = std::move(text);
    return put(std::move(n));
  }

  bool open(Node::Kind kind) {
    if (stack_.size() >= kMaxDepth) {
      error_ = display_ + ": syntax error: nesting deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    Frame f;
    f.node.kind = kind;
    stack_.push_back(std::move(f));
    return true;
  }

  bool close() {
    Node n = std::move(stack_.back().node);
    stack_.pop_back();
    return put(std::move(n));
  }

  bool put(Node n) {
    if (stack_.empty()) {
      root_ = std::move(n);
      return true;
    }
    Frame& f = stack_.back();
    if (f.node.kind == Node::Kind::Object) f.node.members.emplace_back(std::move(f.pending_key), std::move(n));
    else f.node.items.push_back(std::move(n));
    return true;
  }

  const std::string& display_;
  std::vector<Frame> stack_;
  Node root_;
  std::string error_;
  std::string error_pointer_;
  const char* code_ = code::kSyntax;
};

}  // namespace

Node parse_json(std::string_view text, const std::string& display) {
  JsonBuilder builder(display);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false);
  } catch (const std::exception& e) {  // defensive: the SAX parser reports through parse_error
    throw InputError(code::kSyntax, "", display + ": syntax error: " + e.what());
  }
  if (!ok) {
    std::string msg = builder.error().empty() ? display + ": syntax error" : builder.error();
    throw InputError(builder.error_code(), builder.error_pointer(), msg);
  }
  return builder.take();
}

// ---------------------------------------------------------------------------
// TOML through toml++

namespace {

/// Byte offset of (line, column) in `text`; toml++ counts columns in code points.
std::size_t offset_of(std::string_view text, std::uint32_t line, std::uint32_t column) {
  std::size_t pos = 0;
  for (std::uint32_t l = 1; l < line && pos < text.size(); ++l) {
    const auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return text.size();
    pos = nl + 1;
  }
  for (std::uint32_t c = 1; c < column && pos < text.size(); ++c) {
    ++pos;  // skip the lead byte, then any continuation bytes
    while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0U) == 0x80U) ++pos;
  }
  return pos;
}

/// The literal text of a TOML float starting at `begin`, without `_` and `+`.
std::string float_literal(std::string_view text, const toml::source_position& begin) {
  std::size_t pos = offset_of(text, begin.line, begin.column);
  std::string out;
  while (pos < text.size()) {
    const char c = text[pos];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' || c == '-')) break;
    if (c != '_' && !(c == '+' && (out.empty() || out.back() == 'e' || out.back() == 'E'))) out += c;
    ++pos;
  }
  if (out.empty() || out == "-") throw std::logic_error("toml float literal not found in source");
  return out;
}

Node convert(const toml::node& n, std::string_view text, std::size_t depth, const std::string& display) {
  if (depth > kMaxDepth)
    throw InputError(code::kSyntax, "", display + ": syntax error: nesting deeper than " + std::to_string(kMaxDepth) + " levels");
  Node out;
  switch (n.type()) {
    case toml::node_type::table: {
      out.kind = Node::Kind::Object;
      for (const auto& [k, v] : *n.as_table())
        out.members.emplace_back(std::string(k.str()), convert(v, text, depth + 1, display));
      break;
    }
    case toml::node_type::array: {
      out.kind = Node::Kind::Array;
      for (const auto& v : *n.as_array()) out.items.push_back(convert(v, text, depth + 1, display));
      break;
    }
    case toml::node_type::string:
      out.kind = Node::Kind::String;
      out.text = n.as_string()->get();
      break;
    case toml::node_type::integer:
      out.kind = Node::Kind::Integer;
      out.text = std::to_string(n.as_integer()->get());
      break;
    case toml::node_type::floating_point: {
      const std::string lit = float_literal(text, n.source().begin);
      const bool special = lit.find("inf") != std::string::npos || lit.find("nan") != std::string::npos;
      out.kind = (special || lit.find_first_of(".eE") != std::string::npos) ? Node::Kind::Decimal
                                                                              : Node::Kind::Integer;
      out.text = lit;
      break;
    }
    case toml::node_type::boolean:
      out.kind = Node::Kind::Boolean;
      out.boolean = n.as_boolean()->get();
      break;
    case toml::node_type::date:
      out.kind = Node::Kind::Other;
      out.text = "a date";
      break;
    case toml::node_type::time:
      out.kind = Node::Kind::Other;
      out.text = "a time";
      break;
    default:
      out.kind = Node::Kind::Other;
      out.text = "a date-time";
      break;
  }
  return out;
}

}  // namespace

Node parse_toml(std::string_view text, const std::string& display) {
  toml::table table;
  try {
    table = toml::parse(text, std::string_view{display});
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw InputError(code::kSyntax, "",
                     display + ": syntax error at line " + std::to_string(b.line) + ", column " +
                         std::to_string(b.column) + ": " + std::string(e.description()));
  }
  return convert(table, text, 0, display);
}

// ---------------------------------------------------------------------------
// Messages and locations

std::string describe(const Node& n) {
  switch (n.kind) {
    case Node::Kind::Null: return "null";
    case Node::Kind::Boolean: return n.boolean ? "true" : "false";
    case Node::Kind::Integer:
    case Node::Kind::Decimal:
      return n.text.size() > 40 ? n.text.substr(0, 40) + "..." : n.text;
    case Node::Kind::String: {
      std::string s = n.text.size() > 40 ? n.text.substr(0, 40) + "..." : n.text;
      return "\"" + s + "\"";
    }
    case Node::Kind::Array: return "an array";
    case Node::Kind::Object: return "an object";
    case Node::Kind::Other: return n.text;
  }
  return "a value";
}

Location Location::key(std::string_view k) const {
  Location l = *this;
  l.steps_.push_back(Step{std::string(k), 0, false});
  return l;
}

Location Location::index(std::size_t i) const {
  Location l = *this;
  l.steps_.push_back(Step{{}, i, true});
  return l;
}

std::string Location::pointer() const {
  std::string p;
  for (const Step& s : steps_) {
    p += '/';
    if (s.is_index) {
      p += std::to_string(s.index);
      continue;
    }
    for (char c : s.key) {
      if (c == '~') p += "~0";
      else if (c == '/') p += "~1";
      else p += c;
    }
  }
  return p;
}

std::string Location::label() const {
  std::string l;
  for (const Step& s : steps_) {
    if (s.is_index) {
      l += "[" + std::to_string(s.index) + "]";
    } else {
      if (!l.empty()) l += '.';
      l += s.key;
    }
  }
  return l;
}

void Location::fail(const char* code, const std::string& reason) const {
  if (steps_.empty()) throw InputError(code, "", file() + ": " + reason);
  throw InputError(code, pointer(), file() + ": field '" + label() + "': " + reason);
}

// ---------------------------------------------------------------------------
// Value

bool Value::boolean() const {
  if (node_->kind != Node::Kind::Boolean) fail(code::kType, "must be a boolean, got " + describe(*node_));
  return node_->boolean;
}

std::string Value::string() const {
  if (node_->kind != Node::Kind::String) fail(code::kType, "must be a string, got " + describe(*node_));
  return node_->text;
}

std::string Value::nonempty_string() const {
  std::string s = string();
  if (s.empty()) fail(code::kRange, "must not be empty");
  return s;
}

Int Value::integer() const {
  if (node_->kind != Node::Kind::Integer) fail(code::kType, "must be an integer, got " + describe(*node_));
  try {
    return Int(parse_exact_decimal(node_->text));
  } catch (const std::out_of_range&) {
    fail(code::kRange, "integer has too many digits");
  } catch (const std::exception&) {
    fail(code::kType, "must be an integer, got " + describe(*node_));
  }
}

std::int64_t Value::integer_in(std::int64_t lo, std::int64_t hi) const {
  const Int v = integer();
  if (v < lo || v > hi)
    fail(code::kRange, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                           describe(*node_));
  return static_cast<std::int64_t>(v);
}

std::int64_t Value::positive() const {
  if (node_->kind != Node::Kind::Integer) fail(code::kType, "must be a positive integer, got " + describe(*node_));
  const Int v = integer();
  if (v <= 0) fail(code::kRange, "must be a positive integer, got " + describe(*node_));
  if (v >= kMaxDimension) fail(code::kRange, "must be a positive integer below 2^40, got " + describe(*node_));
  return static_cast<std::int64_t>(v);
}

std::int64_t Value::non_negative() const {
  if (node_->kind != Node::Kind::Integer)
    fail(code::kType, "must be a non-negative integer, got " + describe(*node_));
  const Int v = integer();
  if (v < 0) fail(code::kRange, "must be a non-negative integer, got " + describe(*node_));
  if (v >= kMaxDimension) fail(code::kRange, "must be a non-negative integer below 2^40, got " + describe(*node_));
  return static_cast<std::int64_t>(v);
}

Rational Value::rational(bool allow_string) const {
  const bool numeric = node_->kind == Node::Kind::Integer || node_->kind == Node::Kind::Decimal;
  const bool text = allow_string && node_->kind == Node::Kind::String;
  if (!numeric && !text)
    fail(code::kType, std::string("must be a number") + (allow_string ? " or a string such as \"7/20\"" : "") +
                          ", got " + describe(*node_));
  if (numeric && (node_->text.find("inf") != std::string::npos || node_->text.find("nan") != std::string::npos))
    fail(code::kRange, "must be a finite number, got " + describe(*node_));
  try {
    return parse_exact_decimal(node_->text);
  } catch (const std::out_of_range&) {
    fail(code::kRange, "number out of range (exponent or digit count above " +
                           std::to_string(kMaxDecimalExponent) + "), got " + describe(*node_));
  } catch (const std::domain_error&) {
    fail(code::kRange, "zero denominator in " + describe(*node_));
  } catch (const std::exception&) {
    fail(code::kType, "must be an exact number such as \"0.35\" or \"7/20\", got " + describe(*node_));
  }
}

std::size_t Value::choice(std::initializer_list<std::string_view> choices) const {
  if (node_->kind != Node::Kind::String) fail(code::kType, "must be a string, got " + describe(*node_));
  std::size_t i = 0;
  std::string list;
  for (std::string_view c : choices) {
    if (c == node_->text) return i;
    if (!list.empty()) list += ", ";
    list += "\"" + std::string(c) + "\"";
    ++i;
  }
  fail(code::kUnsupported, "unknown value " + describe(*node_) + " (expected one of " + list + ")");
}

std::vector<Value> Value::array() const {
  if (node_->kind != Node::Kind::Array) fail(code::kType, "must be an array, got " + describe(*node_));
  std::vector<Value> out;
  out.reserve(node_->items.size());
  for (std::size_t i = 0; i < node_->items.size(); ++i) out.emplace_back(node_->items[i], where_.index(i));
  return out;
}

Object Value::object() const {
  if (node_->kind != Node::Kind::Object) fail(code::kType, "must be an object (table), got " + describe(*node_));
  return Object(*node_, where_);
}

// ---------------------------------------------------------------------------
// Object

Object::Object(const Node& node, Location where) : node_(&node), where_(std::move(where)) {
  if (node.kind != Node::Kind::Object) where_.fail(code::kType, "must be an object (table), got " + describe(node));
}

bool Object::has(std::string_view key) const { return node_->find(key) != nullptr; }

Value Object::required(std::string_view key) const {
  read_.emplace(key);
  const Node* n = node_->find(key);
  if (n == nullptr) where_.key(key).fail(code::kMissing, "missing required field");
  return Value(*n, where_.key(key));
}

std::optional<Value> Object::optional(std::string_view key, bool null_is_absent) const {
  read_.emplace(key);
  const Node* n = node_->find(key);
  if (n == nullptr || (null_is_absent && n->kind == Node::Kind::Null)) return std::nullopt;
  return Value(*n, where_.key(key));
}

std::vector<std::pair<std::string, Value>> Object::members() const {
  std::vector<std::pair<std::string, Value>> out;
  for (const auto& [k, v] : node_->members) {
    read_.insert(k);
    out.emplace_back(k, Value(v, where_.key(k)));
  }
  return out;
}

void Object::reject_unknown() const {
  for (const auto& [k, v] : node_->members) {
    (void)v;
    if (read_.find(k) == read_.end()) {
      std::string known;
      for (const auto& r : read_) known += (known.empty() ? "" : ", ") + r;
      where_.key(k).fail(code::kUnsupported, "unknown field (known fields here: " + known + ")");
    }
  }
}

// ---------------------------------------------------------------------------
// Native TOML sections

Object native_section(const Node& root, const std::string& display, const char* name) {
  const Object top(root, Location(display));
  for (const auto& [k, v] : root.members) {
    (void)v;
    if (k != "model" && k != "strategy" && k != "system")
      Location(display).key(k).fail(code::kUnsupported,
                                    "unknown top-level field (a native file holds [model], [strategy] and/or [system])");
  }
  return top.required(name).object();
}

// ---------------------------------------------------------------------------
// Provenance helpers

FieldOrigin origin_of(const Provenance& p, const std::string& field) {
  const auto it = p.fields.find(field);
  if (it != p.fields.end()) return it->second;
  return FieldOrigin{field, ""};
}

std::string field_ref(const Provenance& p, const std::string& field) {
  return p.file + ": field '" + origin_of(p, field).label + "'";
}

void fail_field(const Provenance& p, const std::string& field, const char* code, const std::string& reason) {
  throw InputError(code, origin_of(p, field).pointer, field_ref(p, field) + ": " + reason);
}

std::string stem_without(const std::filesystem::path& path, std::initializer_list<std::string_view> suffixes) {
  std::string name = path.filename().string();
  bool changed = true;
  while (changed) {
    changed = false;
    for (std::string_view s : suffixes) {
      if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
        name.resize(name.size() - s.size());
        changed = true;
      }
    }
  }
  return name;
}

bool is_toml_path(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".toml";
}

}  // namespace plancert::frontend::detail
