// SPDX-License-Identifier: Apache-2.0
#include "cli/commands.h"
#include "spec/catalog.h"

#include <nlohmann/json.hpp>

#include <iostream>

namespace plancert::cli {

int run_explain(const std::string& code, bool list) {
  for (std::size_t f = 0; f < spec::kCatalogFileCount; ++f) {
    auto fam = nlohmann::json::parse(spec::kCatalogFiles[f]);
    for (const auto& ob : fam.at("obligations")) {
      const std::string id = ob.at("id");
      if (list) { std::cout << id << "  " << ob.at("title").get<std::string>() << "\n"; continue; }
      if (id != code) continue;
      std::cout << id << ": " << ob.at("title").get<std::string>() << "\n"
                << "family:     " << fam.at("family").get<std::string>() << " (" << fam.at("title").get<std::string>() << "), exit code "
                << fam.at("exit_code").get<int>() << " when violated\n"
                << "rule:       " << ob.at("rule").get<std::string>() << "\n"
                << "witness:    " << ob.at("witness").get<std::string>() << "\n"
                << "complexity: " << ob.at("complexity").get<std::string>() << "\n"
                << "checked by: " << ob.at("checked_by").get<std::string>() << "\n";
      return 0;
    }
  }
  if (list) return 0;
  std::cerr << "error: unknown obligation code \"" << code << "\" (plancert explain --list shows them all)\n";
  return static_cast<int>(2);
}

}  // namespace plancert::cli
