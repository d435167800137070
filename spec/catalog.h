// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The normative obligation catalog (spec/obligations/*.json), embedded at build time.
///
/// spec/CMakeLists.txt generates the definitions from the JSON files, so `plancert explain`
/// and the tests read exactly the catalog in the source tree (format: spec/README.md).
#pragma once

#include <cstddef>
#include <string_view>

namespace plancert::spec {

/// The text of every spec/obligations/<FAMILY>.json file, in file-name order: one JSON
/// object per family with its obligations.
extern const std::string_view kCatalogFiles[];

/// Number of entries of kCatalogFiles.
extern const std::size_t kCatalogFileCount;

}  // namespace plancert::spec
