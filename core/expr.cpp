// SPDX-License-Identifier: Apache-2.0
#include "core/expr.h"

#include <algorithm>
#include <set>

namespace plancert {
namespace {

unsigned degree(const Monomial& m) {
  unsigned d = 0;
  for (const auto& f : m) d += f.power;
  return d;
}

// Canonical order of monomials: higher total degree first, then factor texts ascending,
// then higher power first.
bool mono_less(const Monomial& a, const Monomial& b) {
  unsigned da = degree(a), db = degree(b);
  if (da != db) return da > db;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].atom->text != b[i].atom->text) return a[i].atom->text < b[i].atom->text;
    if (a[i].power != b[i].power) return a[i].power > b[i].power;
  }
  return a.size() < b.size();
}

bool mono_equal(const Monomial& a, const Monomial& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Factor& x, const Factor& y) { return x.power == y.power && x.atom->text == y.atom->text; });
}

Monomial mono_mul(const Monomial& a, const Monomial& b) {
  Monomial out;
  std::size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].atom->text < b[j].atom->text)) out.push_back(a[i++]);
    else if (i == a.size() || b[j].atom->text < a[i].atom->text) out.push_back(b[j++]);
    else { out.push_back({a[i].atom, a[i].power + b[j].power}); ++i; ++j; }
  }
  return out;
}

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_node_name(std::string_view s) { return s == "ceil" || s == "floor" || s == "max" || s == "min"; }

bool all_integral(const Expr& e) {
  for (const auto& t : e.terms()) {
    if (boost::multiprecision::denominator(t.coef) != 1) return false;
    for (const auto& f : t.mono)
      if (!f.atom->integral) return false;
  }
  return true;
}

// Recursive-descent parser with an explicit nesting limit (nodes nest at most kMaxDepth).
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}
  std::optional<Expr> run(std::string* error) {
    try {
      Expr e = sum(0);
      if (pos_ != s_.size()) fail("unexpected character");
      return e;
    } catch (const std::invalid_argument& ex) {
      if (error) *error = std::string(ex.what()) + " at offset " + std::to_string(pos_);
      return std::nullopt;
    } catch (const std::domain_error& ex) {
      if (error) *error = ex.what();
      return std::nullopt;
    }
  }

 private:
  static constexpr int kMaxDepth = 32;
  [[noreturn]] void fail(const char* what) { throw std::invalid_argument(what); }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) { ++pos_; return true; }
    return false;
  }
  Int integer() {
    std::size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    auto v = parse_int(s_.substr(b, pos_ - b));
    if (!v) fail("malformed integer");
    return *v;
  }
  Expr sum(int depth) {
    std::vector<Expr> terms;  // summed at once: adding them one by one is quadratic
    bool neg = eat('-');
    for (;;) {
      terms.push_back(neg ? -term(depth) : term(depth));
      if (eat('+')) neg = false;
      else if (eat('-')) neg = true;
      else return Expr::sum(terms);
    }
  }
  Expr term(int depth) {
    Expr acc(1);
    if (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      Int p = integer();
      Int q = 1;
      if (eat('/')) q = integer();
      if (q <= 0) fail("zero or negative denominator");
      acc = Expr(make_rat(p, q));
      if (!eat('*')) return acc;
    }
    for (;;) {
      acc = acc * factor(depth);
      if (!eat('*')) return acc;
    }
  }
  Expr factor(int depth) {
    std::size_t b = pos_;
    if (pos_ >= s_.size() || !is_ident_start(s_[pos_])) fail("expected a symbol or node");
    while (pos_ < s_.size() && is_ident(s_[pos_])) ++pos_;
    std::string_view name = s_.substr(b, pos_ - b);
    Expr base;
    if (!is_node_name(name)) base = Expr::symbol(name);
    else {
      if (depth >= kMaxDepth) fail("nodes nested too deeply");
      if (!eat('(')) fail("expected '('");
      Expr a = sum(depth + 1);
      if (!eat(',')) fail("expected ','");
      Expr c = sum(depth + 1);
      if (!eat(')')) fail("expected ')'");
      if (name == "ceil") base = Expr::ceil_div(a, c);
      else if (name == "floor") base = Expr::floor_div(a, c);
      else if (name == "max") base = Expr::max(a, c);
      else base = Expr::min(a, c);
    }
    if (eat('^')) {
      Int k = integer();
      if (k < 2 || k > 64) fail("exponent out of range 2..64");
      Expr r = base;
      for (int i = 1; i < static_cast<int>(k); ++i) r = r * base;
      return r;
    }
    return base;
  }
  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace

Expr::Expr(Rat c) { if (!c.is_zero()) mut().push_back({{}, std::move(c)}); }

std::vector<Term>& Expr::mut() {
  if (!rep_ || rep_->use_count() > 1) rep_ = new Rep(rep_ ? rep_->terms : std::vector<Term>{});
  rep_->text.clear();
  return rep_->terms;
}

Expr Expr::symbol(std::string_view name) {
  if (name.empty() || !is_ident_start(name[0]) || is_node_name(name) ||
      !std::all_of(name.begin(), name.end(), is_ident))
    throw std::invalid_argument("invalid symbol name");
  return of(std::make_shared<Atom>(Atom{Atom::Kind::Symbol, std::string(name), {}, std::string(name)}));
}

Expr Expr::of(std::shared_ptr<const Atom> a) { Expr e; e.mut().push_back({{Factor{std::move(a), 1}}, Rat(1)}); return e; }

Expr Expr::node(Atom::Kind kind, Expr x, Expr y) {
  static constexpr const char* kNames[] = {"", "ceil", "floor", "max", "min"};
  auto a = std::make_shared<Atom>();
  a->kind = kind;
  if ((kind == Atom::Kind::Max || kind == Atom::Kind::Min) && y.str() < x.str()) std::swap(x, y);
  a->text = std::string(kNames[static_cast<int>(kind)]) + "(" + x.str() + "," + y.str() + ")";
  a->integral = kind == Atom::Kind::Ceil || kind == Atom::Kind::Floor || (all_integral(x) && all_integral(y));
  a->args = {std::move(x), std::move(y)};
  return of(std::move(a));
}

Expr Expr::divide(Atom::Kind kind, const Expr& a, const Expr& b) {
  auto cb = b.constant();
  if (cb && *cb == 0) throw std::domain_error(kind == Atom::Kind::Ceil ? "ceil division by zero" : "floor division by zero");
  if (cb && a.is_constant()) return Expr(Rat(kind == Atom::Kind::Ceil ? plancert::ceil(*a.constant() / *cb) : plancert::floor(*a.constant() / *cb)));
  if (cb && *cb > 0) {
    Expr q = a / *cb;
    if (all_integral(q)) return q;
  }
  return node(kind, a, b);
}

Expr Expr::max(const Expr& a, const Expr& b) {
  if (auto d = (a - b).constant()) return *d >= 0 ? a : b;
  return node(Atom::Kind::Max, a, b);
}

Expr Expr::min(const Expr& a, const Expr& b) {
  if (auto d = (a - b).constant()) return *d <= 0 ? a : b;
  return node(Atom::Kind::Min, a, b);
}

void Expr::normalize() {
  auto& terms = mut();
  std::sort(terms.begin(), terms.end(), [](const Term& x, const Term& y) { return mono_less(x.mono, y.mono); });
  std::vector<Term> out;
  for (auto& t : terms) {
    if (!out.empty() && mono_equal(out.back().mono, t.mono)) out.back().coef += t.coef;
    else out.push_back(std::move(t));
    if (out.back().coef == 0) out.pop_back();
  }
  if (out.size() > kMaxTerms) throw TooManyTerms("a sum of exact quantities has " + std::to_string(out.size()) + " terms, more than 65,536: the obligations that need it are not decided");
  terms = std::move(out);
}

Expr operator+(const Expr& a, const Expr& b) {
  if (b.terms().empty()) return a;
  if (a.terms().empty()) return b;
  if (a.is_constant() && b.is_constant()) return Expr(a.terms()[0].coef + b.terms()[0].coef);
  return Expr::sum({a, b});
}

Expr operator-(const Expr& a) {
  Expr r = a;
  for (auto& t : r.mut()) t.coef = -t.coef;
  return r;
}

Expr operator-(const Expr& a, const Expr& b) { return a + (-b); }

Expr operator*(const Expr& a, const Expr& b) {
  if (a.is_constant() && b.is_constant()) return Expr(*a.constant() * *b.constant());
  if (!a.is_constant() && !b.is_constant() && a.terms().size() * b.terms().size() > kMaxTerms)
    throw TooManyTerms("a product of exact quantities of " + std::to_string(a.terms().size()) + " and " + std::to_string(b.terms().size()) + " terms would have more than 65,536: the obligations that need it are not decided");
  Expr r;
  for (const auto& x : a.terms())
    for (const auto& y : b.terms()) r.mut().push_back({mono_mul(x.mono, y.mono), x.coef * y.coef});
  r.normalize();
  return r;
}

Expr operator/(const Expr& a, const Rat& b) {
  if (b == 0) throw std::domain_error("division by zero");
  Expr r = a;
  for (auto& t : r.mut()) t.coef /= b;
  return r;
}

bool operator==(const Expr& a, const Expr& b) {
  const auto &x = a.terms(), &y = b.terms();
  if (&x == &y) return true;  // one shared representation
  return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const Term& s, const Term& t) { return s.coef == t.coef && mono_equal(s.mono, t.mono); });
}

std::optional<Rat> Expr::constant() const {
  if (terms().empty()) return Rat(0);
  if (is_constant()) return terms()[0].coef;
  return std::nullopt;
}

std::string Expr::str() const {
  const auto& terms = this->terms();
  if (terms.empty()) return "0";
  if (!rep_->text.empty()) return rep_->text;
  std::string out;
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const Term& t = terms[i];
    Rat c = t.coef;
    if (c < 0) { out += '-'; c = -c; }
    else if (i > 0) out += '+';
    bool first = true;
    if (t.mono.empty() || c != 1) { out += to_string(c); first = false; }
    for (const auto& f : t.mono) {
      if (!first) out += '*';
      first = false;
      out += f.atom->text;
      if (f.power > 1) out += "^" + std::to_string(f.power);
    }
  }
  return rep_->text = out;
}

std::optional<Expr> Expr::parse(std::string_view text, std::string* error) {
  if (auto r = parse_rat(text)) return Expr(std::move(*r));  // fast path for concrete numbers
  return Parser(text).run(error);
}

std::optional<Expr> Expr::parse_canonical(std::string_view text, std::string* error) {
  if (auto r = parse_rat(text)) return Expr(std::move(*r));  // a canonical rational's text is its Expr's text
  auto e = Parser(text).run(error);
  if (e && e->str() != text) {
    if (error) *error = "not in canonical form (canonical: \"" + e->str() + "\")";
    return std::nullopt;
  }
  return e;
}

std::optional<Rat> Expr::eval(const std::function<std::optional<Rat>(std::string_view)>& env) const {
  Rat sum = 0;
  for (const auto& t : terms()) {
    Rat prod = t.coef;
    for (const auto& f : t.mono) {
      const Atom& a = *f.atom;
      std::optional<Rat> v;
      if (a.kind == Atom::Kind::Symbol) v = env(a.name);
      else {
        auto x = a.args[0].eval(env), y = a.args[1].eval(env);
        if (!x || !y) return std::nullopt;
        switch (a.kind) {
          case Atom::Kind::Ceil: if (*y == 0) return std::nullopt; v = Rat(plancert::ceil(*x / *y)); break;
          case Atom::Kind::Floor: if (*y == 0) return std::nullopt; v = Rat(plancert::floor(*x / *y)); break;
          case Atom::Kind::Max: v = std::max(*x, *y); break;
          default: v = std::min(*x, *y); break;
        }
      }
      // No value past 1,024 limbs a factor (about 19,700 digits; a concrete number has at most 4,096):
      // max(1,max(1,S^64)^64)^64 is 50 bytes of text and S^262144 as a number.
      if (!v || (numerator(*v).backend().size() + denominator(*v).backend().size()) * std::uint64_t{f.power} > 1024) return std::nullopt;
      for (unsigned k = 0; k < f.power; ++k) prod *= *v;
    }
    sum += prod;
  }
  return sum;
}

std::vector<std::string> Expr::symbols() const {
  std::set<std::string> out;
  std::vector<const Expr*> todo{this};
  while (!todo.empty()) {  // iterative walk over nested nodes
    const Expr* e = todo.back();
    todo.pop_back();
    for (const auto& t : e->terms())
      for (const auto& f : t.mono) {
        if (f.atom->kind == Atom::Kind::Symbol) out.insert(f.atom->name);
        for (const auto& a : f.atom->args) todo.push_back(&a);
      }
  }
  return {out.begin(), out.end()};
}

}  // namespace plancert
