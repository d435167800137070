// SPDX-License-Identifier: Apache-2.0
#include "core/diag.h"

namespace plancert {

void append_pointer_token(std::string& out, std::string_view token) {
  for (char c : token) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
}

void Diagnostics::error(std::string code, std::string path, std::string message, std::vector<std::string> notes, std::string hint) {
  ++count_;
  if (items_.size() < cap_) items_.push_back({std::move(code), std::move(message), std::move(path), std::move(notes), std::move(hint)});
}

void Diagnostics::merge(const Diagnostics& other) { for (const auto& d : other.items_) error(d.code, d.path, d.message, d.notes, d.hint); }

}  // namespace plancert
