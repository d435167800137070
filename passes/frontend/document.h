// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Format-neutral input documents and checked field access for the loaders.
///
/// JSON (through nlohmann's SAX interface) and TOML (through toml++) are both
/// read into one small tree, Node, that keeps every number as its literal text,
/// so no binary floating-point value is ever used. Value and Object wrap a node
/// with its location (file name and JSON Pointer) and turn every type, range or
/// presence problem into a plancert::InputError whose message names the file,
/// the field and the reason.
///
/// This header is an implementation detail of the frontends; it is installed
/// with them so that tests and fuzzers can reach the parsers directly.
#pragma once

#include "core/diag.h"
#include "passes/frontend/configs.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace plancert::frontend::detail {

/// Obligation IDs of the CONFIG family used by the frontends.
namespace code {
inline constexpr const char* kSyntax = "CONFIG-1";       ///< unreadable file, syntax error, duplicate key
inline constexpr const char* kMissing = "CONFIG-2";      ///< missing required field
inline constexpr const char* kType = "CONFIG-3";         ///< wrong type
inline constexpr const char* kRange = "CONFIG-4";        ///< non-positive or out-of-range value
inline constexpr const char* kConsistency = "CONFIG-5";  ///< divisibility / consistency violation
inline constexpr const char* kUnsupported = "CONFIG-6";  ///< unknown or unsupported value or field
inline constexpr const char* kFlag = "CONFIG-7";         ///< bad command-line flag
inline constexpr const char* kRoom = "CONFIG-8";         ///< the derived plan cannot fit the memory room (room.h)
}  // namespace code

/// Dimensions and degrees must be below this bound (2^40).
inline constexpr std::int64_t kMaxDimension = std::int64_t{1} << 40;

/// Most bytes a configuration file may have (16 MiB).
inline constexpr std::uintmax_t kMaxFileBytes = std::uintmax_t{16} << 20;

/// Deepest nesting of arrays and objects accepted in an input document.
inline constexpr std::size_t kMaxDepth = 64;

/// One parsed value of a JSON or TOML document.
struct Node {
  /// Kind of value.
  enum class Kind {
    Null,     ///< JSON null
    Boolean,  ///< true / false
    Integer,  ///< number literal without fraction or exponent (any size)
    Decimal,  ///< number literal with a fraction or an exponent
    String,   ///< string
    Array,    ///< array
    Object,   ///< object / table
    Other,    ///< a value kind the loaders never accept (TOML date and time)
  };
  Kind kind = Kind::Null;  ///< kind of value
  bool boolean = false;    ///< Boolean: the value
  /// Integer / Decimal: the literal (sign, digits, '.', exponent; TOML `_`
  /// separators and `+` removed; or `inf` / `nan`); String: the contents;
  /// Other: a type name for messages.
  std::string text;
  std::vector<Node> items;                            ///< Array: the elements
  std::vector<std::pair<std::string, Node>> members;  ///< Object: members, in input order, keys unique

  // The destructor is defined out of line (document.cpp). Were it implicit, clang with
  // libstdc++ would instantiate it while std::pair<std::string, Node> is still incomplete
  // (pair's conditionally explicit default constructor asks whether Node is implicitly
  // default-constructible, which needs ~Node, which needs ~vector<pair<...>>) and reject
  // the header; declaring it means the copy and move operations must be declared too.
  Node() = default;
  Node(const Node&) = default;
  Node(Node&&) noexcept = default;
  Node& operator=(const Node&) = default;
  Node& operator=(Node&&) noexcept = default;
  ~Node();
  /// Object member by key, or nullptr.
  [[nodiscard]] const Node* find(std::string_view key) const;
};

/// Reads a whole file as bytes. Throws InputError CONFIG-1 when the file is
/// missing, unreadable, a directory, or larger than kMaxFileBytes. `display`
/// is the name used in messages.
std::string read_text_file(const std::filesystem::path& path, const std::string& display);

/// Parses strict JSON (RFC 8259: no comments, no trailing commas) into a
/// Node. Duplicate keys and nesting deeper than kMaxDepth are rejected.
/// Throws InputError CONFIG-1 naming `display`, the line and the column.
Node parse_json(std::string_view text, const std::string& display);

/// Parses TOML 1.0 into a Node; floats keep their literal text, recovered from
/// the source. Throws InputError CONFIG-1 naming `display`, line and column.
Node parse_toml(std::string_view text, const std::string& display);

/// Short rendering of a value for "got ..." in messages.
std::string describe(const Node& n);

/// Location of a value: the file and the path of keys and indices to it.
class Location {
 public:
  /// The root of file `file`.
  explicit Location(std::string file) : file_(std::make_shared<const std::string>(std::move(file))) {}
  /// This location extended by an object key.
  [[nodiscard]] Location key(std::string_view k) const;
  /// This location extended by an array index.
  [[nodiscard]] Location index(std::size_t i) const;
  /// The file name used in messages.
  [[nodiscard]] const std::string& file() const { return *file_; }
  /// RFC 6901 JSON Pointer of the location ("" for the root).
  [[nodiscard]] std::string pointer() const;
  /// Human form: keys joined by '.', indices as `[i]` (e.g. `networks[0].ops.p2p[1]`).
  [[nodiscard]] std::string label() const;
  /// The canonical origin record of this location.
  [[nodiscard]] FieldOrigin origin() const { return {label(), pointer()}; }
  /// Throws InputError(code, pointer, "FILE: field 'LABEL': REASON")
  /// (or "FILE: REASON" at the root).
  [[noreturn]] void fail(const char* code, const std::string& reason) const;

 private:
  struct Step {
    std::string key;
    std::size_t index = 0;
    bool is_index = false;
  };
  std::shared_ptr<const std::string> file_;
  std::vector<Step> steps_;
};

class Object;

/// A node together with its location; the accessors check type and range.
class Value {
 public:
  /// Wraps `node` (which must outlive the Value) found at `where`.
  Value(const Node& node, Location where) : node_(&node), where_(std::move(where)) {}
  /// The wrapped node.
  [[nodiscard]] const Node& node() const { return *node_; }
  /// Where the node is.
  [[nodiscard]] const Location& where() const { return where_; }
  /// True for JSON null.
  [[nodiscard]] bool is_null() const { return node_->kind == Node::Kind::Null; }
  /// Throws InputError with this value's location.
  [[noreturn]] void fail(const char* code, const std::string& reason) const { where_.fail(code, reason); }

  /// A boolean (CONFIG-3 otherwise).
  [[nodiscard]] bool boolean() const;
  /// A string (CONFIG-3 otherwise).
  [[nodiscard]] std::string string() const;
  /// A non-empty string (CONFIG-3 for another type, CONFIG-4 if empty).
  [[nodiscard]] std::string nonempty_string() const;
  /// An integer of any size (CONFIG-3 for a non-integer literal or another type).
  [[nodiscard]] Int integer() const;
  /// An integer in [lo, hi] (CONFIG-3 / CONFIG-4 otherwise).
  [[nodiscard]] std::int64_t integer_in(std::int64_t lo, std::int64_t hi) const;
  /// A positive integer below kMaxDimension: "must be a positive integer, got X".
  [[nodiscard]] std::int64_t positive() const;
  /// A non-negative integer below kMaxDimension.
  [[nodiscard]] std::int64_t non_negative() const;
  /// An exact number from an integer or decimal literal; when `allow_string`
  /// (native TOML), also from a string such as "7/20" or "0.35". Rejects
  /// inf / nan (CONFIG-4) and other types (CONFIG-3).
  [[nodiscard]] Rational rational(bool allow_string) const;
  /// One of `choices` (CONFIG-3 if not a string, CONFIG-6 if unknown); returns its index.
  [[nodiscard]] std::size_t choice(std::initializer_list<std::string_view> choices) const;
  /// The elements of an array (CONFIG-3 otherwise).
  [[nodiscard]] std::vector<Value> array() const;
  /// An object / table (CONFIG-3 otherwise).
  [[nodiscard]] Object object() const;

 private:
  const Node* node_;
  Location where_;
};

/// An object with key lookup that remembers which keys were read, so that
/// strict formats can reject the rest as unknown.
class Object {
 public:
  /// Wraps an object node at `where`.
  Object(const Node& node, Location where);
  /// Where the object is.
  [[nodiscard]] const Location& where() const { return where_; }
  /// True if the key is present (null counts as present).
  [[nodiscard]] bool has(std::string_view key) const;
  /// The member (CONFIG-2 "missing required field" when absent).
  [[nodiscard]] Value required(std::string_view key) const;
  /// The member, or nullopt when absent. With `null_is_absent`, a JSON null
  /// counts as absent (Hugging Face writes null for "use the default").
  [[nodiscard]] std::optional<Value> optional(std::string_view key, bool null_is_absent = false) const;
  /// All members in input order (marks them all as read).
  [[nodiscard]] std::vector<std::pair<std::string, Value>> members() const;
  /// Throws CONFIG-6 for the first member that was never read.
  void reject_unknown() const;

 private:
  const Node* node_;
  Location where_;
  mutable std::set<std::string, std::less<>> read_;
};

/// The `[name]` table of a native TOML document. The top level may hold only
/// the tables `model`, `strategy` and `system` (CONFIG-6 for anything else), so
/// one file can describe a whole plan; the named table is required (CONFIG-2).
/// `root` must outlive the returned Object.
Object native_section(const Node& root, const std::string& display, const char* name);

/// Records `where` as the origin of canonical field `field` in `p`.
inline void note(Provenance& p, const std::string& field, const Location& where) { p.fields[field] = where.origin(); }

/// Reads the members of one object into a loaded record and notes in the record's Provenance
/// where each value came from, so that later checks can point at the input. `get` is one of
/// Value's typed readers (`&Value::positive`, `&Value::boolean`, ...); `field` is the
/// canonical field a member fills, the member's own key when not given.
class Fields {
 public:
  /// The members of `o`, noted in `source`; `null_is_absent` as for Object::optional.
  Fields(const Object& o, Provenance& source, bool null_is_absent = false) : o_(o), source_(source), null_is_absent_(null_is_absent) {}
  /// The member `key` (CONFIG-2 when absent), noted as `field`.
  Value required(const char* key, const char* field = nullptr) const {
    Value v = o_.required(key);
    note(source_, field ? field : key, v.where());
    return v;
  }
  /// The member `key` if present, noted as `field`.
  [[nodiscard]] std::optional<Value> optional(const char* key, const char* field = nullptr) const {
    std::optional<Value> v = o_.optional(key, null_is_absent_);
    if (v) note(source_, field ? field : key, v->where());
    return v;
  }
  /// `out` = the member `key` read by `get`; the member is required.
  template <class T, class Get>
  void req(const char* key, T& out, Get get, const char* field = nullptr) const { out = (required(key, field).*get)(); }
  /// `out` = the member `key` read by `get` when it is present; otherwise `out` keeps its value.
  template <class T, class Get>
  void opt(const char* key, T& out, Get get, const char* field = nullptr) const {
    if (const std::optional<Value> v = optional(key, field)) out = ((*v).*get)();
  }

 private:
  const Object& o_;
  Provenance& source_;
  bool null_is_absent_;
};

/// Origin of canonical `field` in `p`, or a fallback naming the canonical field.
FieldOrigin origin_of(const Provenance& p, const std::string& field);

/// Throws InputError(code, origin pointer, "FILE: field 'LABEL': REASON") for a
/// canonical field of a loaded record.
[[noreturn]] void fail_field(const Provenance& p, const std::string& field, const char* code,
                             const std::string& reason);

/// "FILE: field 'LABEL'" for a canonical field of a loaded record.
std::string field_ref(const Provenance& p, const std::string& field);

/// File name without directories and without the given suffixes (e.g.
/// `llama-3-70b.config.json` -> `llama-3-70b` for suffixes {".json", ".config"}).
std::string stem_without(const std::filesystem::path& path, std::initializer_list<std::string_view> suffixes);

/// Lower-cased extension test: true if the path ends with `.toml`.
bool is_toml_path(const std::filesystem::path& path);

}  // namespace plancert::frontend::detail
