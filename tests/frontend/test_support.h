// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Helpers shared by the frontend tests.
#pragma once

#include "core/diag.h"
#include "passes/frontend/loaders.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace plancert::frontend::test {

/// Absolute path of a file under the source tree (`examples/...`).
inline std::filesystem::path source_path(const std::string& relative) {
  return std::filesystem::path(PLANCERT_SOURCE_DIR) / relative;
}

/// Runs `f`, which must throw InputError with `code`, a message containing
/// `message_part`, and (when given) the JSON Pointer `pointer`.
template <class F>
void expect_input_error(F&& f, const std::string& code, const std::string& message_part,
                        const char* pointer = nullptr) {
  try {
    f();
  } catch (const InputError& e) {
    EXPECT_EQ(e.diag.code, code) << "message: " << e.what();
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos)
        << "message: " << e.what() << "\nexpected to contain: " << message_part;
    EXPECT_EQ(e.diag.message, std::string(e.what()));
    if (pointer != nullptr) {
      EXPECT_EQ(e.diag.path, pointer) << "message: " << e.what();
    }
    return;
  }
  ADD_FAILURE() << "expected InputError " << code << " containing: " << message_part;
}

}  // namespace plancert::frontend::test

/// Expects `stmt` to throw InputError with the given code and message part.
#define EXPECT_CONFIG_ERROR(stmt, code, part) \
  ::plancert::frontend::test::expect_input_error([&] { (void)(stmt); }, code, part)

/// Same, also checking the JSON Pointer of the diagnostic.
#define EXPECT_CONFIG_ERROR_AT(stmt, code, part, pointer) \
  ::plancert::frontend::test::expect_input_error([&] { (void)(stmt); }, code, part, pointer)
