// SPDX-License-Identifier: Apache-2.0
#include "passes/frontend/room.h"

#include "core/diag.h"
#include "passes/frontend/document.h"

#include <limits>

namespace plancert::frontend {
namespace {
std::uintmax_t room = 0;
constexpr std::uintmax_t kSaturated = std::numeric_limits<std::uintmax_t>::max();
}  // namespace

void set_memory_room(std::uintmax_t bytes) { room = bytes; }

std::uintmax_t saturating_product(std::initializer_list<std::uintmax_t> factors) {
  std::uintmax_t p = 1;
  bool over = false, zero = false;
  for (std::uintmax_t f : factors) over = __builtin_mul_overflow(p, f, &p) || over, zero = zero || f == 0;
  return zero ? 0 : over ? kSaturated : p;
}

std::uintmax_t saturating_sum(std::initializer_list<std::uintmax_t> terms) {
  std::uintmax_t s = 0;
  for (std::uintmax_t t : terms)
    if (__builtin_add_overflow(s, t, &s)) return kSaturated;
  return s;
}

std::string gib(std::uintmax_t bytes) {
  if (bytes == kSaturated) return "more than 16 EiB";
  const std::uintmax_t tenths = bytes / (std::uintmax_t{1} << 30) * 10 + bytes % (std::uintmax_t{1} << 30) * 10 / (std::uintmax_t{1} << 30);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB";
}

void require_room(std::uintmax_t bytes, const std::string& pointer, const std::string& what) {
  if (room == 0 || bytes <= room) return;
  throw InputError(detail::code::kRoom, pointer,
                   what + " needs at least " + gib(bytes) + " of memory; this process may use " + gib(room) +
                       " (its address-space limit: PLANCERT_ADDRESS_LIMIT, ulimit -v)");
}

void require_room(std::uintmax_t bytes, const Provenance& source, const std::string& field, const std::string& what) {
  if (room == 0 || bytes <= room) return;
  require_room(bytes, detail::origin_of(source, field).pointer, detail::field_ref(source, field) + ": " + what);
}

}  // namespace plancert::frontend
