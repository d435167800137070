// SPDX-License-Identifier: Apache-2.0
#include "bench/compact_table.h"

#include "core/codec.h"
#include "core/diag.h"
#include "core/json.h"
#include "passes/emit/emit.h"

#include <cstring>
#include <limits>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace plancert::bench {
namespace {

// A cursor over canonical text; every method returns false (and leaves `why`) on anything else.
class Cursor {
 public:
  Cursor(std::string_view s, std::size_t at, std::string& why) : s_(s), i_(at), why_(why) {}
  [[nodiscard]] std::size_t at() const { return i_; }
  [[gnu::always_inline]] bool lit(std::string_view t) {
    if (t.size() > s_.size() - i_ || std::memcmp(s_.data() + i_, t.data(), t.size()) != 0) return false;
    i_ += t.size();
    return true;
  }
  [[gnu::always_inline]] bool need(std::string_view t) { return lit(t) || bad(std::string("expected ") + std::string(t)); }
  // A canonical integer within [lo, hi]: an optional '-', then digits without a leading zero, not -0.
  template <class I>
  [[gnu::always_inline]] bool integer(I& v) {
    const std::size_t b = i_;
    const bool neg = i_ < s_.size() && s_[i_] == '-';
    i_ += neg;
    const std::size_t d = i_;
    std::uint64_t u = 0;
    while (i_ < s_.size() && static_cast<unsigned char>(s_[i_] - '0') < 10 && i_ - d < 19) u = u * 10 + static_cast<unsigned>(s_[i_++] - '0');
    if (i_ == d || (s_[d] == '0' && (i_ - d > 1 || neg)) || (i_ < s_.size() && static_cast<unsigned char>(s_[i_] - '0') < 10)) return i_ = b, bad("a canonical integer");
    const std::uint64_t most = neg ? std::uint64_t{std::numeric_limits<I>::max()} + 1 : std::uint64_t{std::numeric_limits<I>::max()};
    if (u > most) return i_ = b, bad("an integer in range");
    v = neg ? static_cast<I>(-static_cast<std::int64_t>(u - 1) - 1) : static_cast<I>(u);
    return true;
  }
  // A string of printable ASCII without escapes; `out` spans its contents.
  [[gnu::always_inline]] bool string(Span& out) {
    if (i_ >= s_.size() || s_[i_] != '"') return bad("a string");
    const std::size_t b = ++i_;
#ifdef __SSE2__
    for (; i_ + 16 <= s_.size(); i_ += 16) {  // the first byte that is '"', '\\', a control byte or not ASCII (signed: >= 0x80 is < 0x20)
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s_.data() + i_));
      const unsigned m = static_cast<unsigned>(_mm_movemask_epi8(
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))), _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)))));
      if (m != 0) { i_ += static_cast<unsigned>(__builtin_ctz(m)); break; }
    }
#endif
    while (i_ < s_.size() && s_[i_] != '"' && s_[i_] != '\\' && static_cast<unsigned char>(s_[i_]) >= 0x20 && static_cast<unsigned char>(s_[i_]) < 0x80) ++i_;
    if (i_ >= s_.size() || s_[i_] != '"') return bad("a string of printable ASCII without escapes");
    out = {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(i_++ - b)};
    return true;
  }
  // `[i,j,...]` appended to `pool`.
  [[gnu::always_inline]] bool list(std::vector<Index>& pool) {
    if (!need("[")) return false;
    if (lit("]")) return true;
    do {
      if (!integer(pool.emplace_back())) return false;
    } while (lit(","));
    return need("]");
  }
  // `{}` or `{"k":"v",...}` with keys strictly increasing.
  bool attrs(Span& out) {
    const std::size_t b = i_;
    if (!need("{")) return false;
    if (!lit("}")) {
      std::string_view last;
      bool first = true;
      do {
        Span k, v;
        if (!string(k) || !need(":") || !string(v)) return false;
        const std::string_view key = s_.substr(k.offset, k.size);
        if (!first && !(last < key)) return bad("annotation keys in strictly increasing order");
        last = key, first = false;
      } while (lit(","));
      if (!need("}")) return false;
    }
    out = {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(i_ - b)};
    return true;
  }
  void skip_to(std::size_t at) { i_ = at; }
  bool bad(const std::string& what) {
    why_ = "byte " + std::to_string(i_) + ": expected " + what;
    return false;
  }

 private:
  std::string_view s_;
  std::size_t i_;
  std::string& why_;
};

template <class E>
bool enum_value(std::string_view s, E& v) {
  const auto& names = codec::EnumNames<E>::names;
  for (std::size_t k = 0; k < std::size(names); ++k)
    if (names[k] == s) return v = static_cast<E>(k), true;
  return false;
}

}  // namespace

std::size_t decode_compact_commands(std::string_view text, std::size_t from, CompactCommands& t, std::string& why) {
  if (text.size() > std::numeric_limits<std::uint32_t>::max()) return why = "text longer than 4 GiB", SIZE_MAX;
  t = CompactCommands{};
  Cursor c(text, from, why);
  const std::size_t guess = text.size() / 400 + 16;  // about 440 bytes a command in the generated plans: one reservation
  t.pool.reserve(6 * guess), t.at.reserve(5 * guess + 1), t.device.reserve(guess), t.kind.reserve(guess), t.id.reserve(guess);
  t.implementation.reserve(guess), t.lineage_kind.reserve(guess), t.rule.reserve(guess), t.sources.reserve(guess), t.sources_at.reserve(guess + 1);
  t.repeat.reserve(guess), t.work.reserve(guess), t.attrs.reserve(guess);
  auto name = [&](Span s) { return codec::Name(text.substr(s.offset, s.size)); };
  auto work = [&]() {  // the decoder's own: a text seen recently shares its value, any other is decoded strictly
    const std::string_view rest = text.substr(c.at());
    try {
      json::Reader r(rest);
      codec::decode(r, t.work.emplace_back());
      if (!r.canonical()) return c.bad("a work in canonical form");
      c.skip_to(c.at() + rest.size() - r.rest().size());
      return true;
    } catch (const InputError& ex) {
      return c.bad("a work (" + to_text(ex.diag) + ")");
    }
  };
  auto list = [&] { t.at.push_back(static_cast<std::uint32_t>(t.pool.size())); return c.list(t.pool); };
  auto one = [&] {
    Span s;
    std::string_view v;
    t.sources_at.push_back(static_cast<std::uint32_t>(t.sources.size()));
    if (!c.need("{\"attrs\":") || !c.attrs(t.attrs.emplace_back()) || !c.need(",\"dependencies\":") || !list()) return false;
    if (!c.need(",\"device\":") || !c.integer(t.device.emplace_back()) || !c.need(",\"id\":") || !c.string(t.id.emplace_back())) return false;
    if (!c.need(",\"implementation\":") || !c.string(s)) return false;
    t.implementation.push_back(name(s));
    if (!c.need(",\"kind\":") || !c.string(s) || !enum_value(text.substr(s.offset, s.size), t.kind.emplace_back())) return c.bad("a command kind");
    if (!c.need(",\"lineage\":{\"kind\":") || !c.string(s) || !enum_value(text.substr(s.offset, s.size), t.lineage_kind.emplace_back())) return c.bad("a lineage kind");
    if (!c.need(",\"rule\":") || !c.string(s)) return false;
    t.rule.push_back(name(s));
    if (!c.need(",\"sources\":[")) return false;
    if (!c.lit("]")) {
      do {
        if (!c.string(t.sources.emplace_back())) return false;
      } while (c.lit(","));
      if (!c.need("]")) return false;
    }
    if (!c.need("},\"reads\":") || !list() || !c.need(",\"repeat\":") || !c.integer(t.repeat.emplace_back())) return false;
    if (!c.need(",\"signals\":") || !list() || !c.need(",\"waits\":") || !list() || !c.need(",\"work\":") || !work()) return false;
    return c.need(",\"writes\":") && list() && c.need("}");
  };
  if (!c.need("[")) return SIZE_MAX;
  if (!c.lit("]")) {
    do {
      if (!one()) return SIZE_MAX;
    } while (c.lit(","));
    if (!c.need("]")) return SIZE_MAX;
  }
  t.at.push_back(static_cast<std::uint32_t>(t.pool.size()));
  t.sources_at.push_back(static_cast<std::uint32_t>(t.sources.size()));
  return c.at();
}

bool same_commands(const CompactCommands& t, std::string_view text, const ConcretePlanIR& plan, std::string& why) {
  const auto& cs = plan.commands;
  if (t.size() != cs.size()) return why = std::to_string(t.size()) + " commands, not " + std::to_string(cs.size()), false;
  auto view = [&](Span s) { return text.substr(s.offset, s.size); };
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const Command& c = cs[i];
    const Indices* lists[] = {&c.dependencies, &c.reads, &c.signals, &c.waits, &c.writes};
    bool same = t.device[i] == c.device && t.kind[i] == c.kind && view(t.id[i]) == c.id && t.implementation[i] == c.implementation &&
                t.lineage_kind[i] == c.lineage.kind && t.rule[i] == c.lineage.rule && t.repeat[i] == c.repeat &&
                view(t.attrs[i]) == (c.attrs.empty() ? std::string("{}") : codec::to_canonical(c.attrs)) && t.sources_at[i + 1] - t.sources_at[i] == c.lineage.sources.size();
    for (std::size_t k = 0; same && k < c.lineage.sources.size(); ++k) same = view(t.sources[t.sources_at[i] + k]) == c.lineage.sources[k];
    for (std::size_t k = 0; same && k < 5; ++k)
      same = std::equal(t.pool.begin() + t.at[5 * i + k], t.pool.begin() + t.at[5 * i + k + 1], lists[k]->begin(), lists[k]->end());
    const Work& w = *t.work[i];
    same = same && w.matrix_ops == c.work->matrix_ops && w.message_bytes == c.work->message_bytes && w.persistent_bytes == c.work->persistent_bytes &&
           w.read_bytes == c.work->read_bytes && w.temporary_bytes == c.work->temporary_bytes && w.vector_ops == c.work->vector_ops && w.write_bytes == c.work->write_bytes;
    if (!same) return why = "command " + std::to_string(i) + " (" + c.id + ") differs", false;
  }
  return true;
}

}  // namespace plancert::bench
