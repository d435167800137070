// SPDX-License-Identifier: Apache-2.0
// Must NOT compile (ctest Codec.ForEachExprRefusesUnknownTypes, tests/unit/CMakeLists.txt): each
// call below hands codec::for_each_expr a type that could hold Exprs and that it neither follows
// nor knows as a leaf, and each must fail its static_assert rather than skip the Exprs silently.
#include "core/codec.h"

#include <map>
#include <string>
#include <utility>

namespace {
struct Holder {
  std::map<std::string, plancert::Expr> by_name;  // a map: not followed
  std::pair<int, plancert::Expr> pair;            // a pair: not followed
  const plancert::Expr* pointer = nullptr;         // a plain pointer: not followed (only codec::Shared is)
  PLANCERT_FIELDS(Holder, by_name, pair, pointer)
};
}  // namespace

int main() {
  int n = 0;
  plancert::codec::for_each_expr(Holder{}, [&](const plancert::Expr&) { ++n; });
  return n;
}
