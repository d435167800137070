// SPDX-License-Identifier: Apache-2.0
// cli/io: the mapped input file (IO-1, IO-2) and atomic output.
#include "cli/io.h"
#include "core/diag.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace plancert::cli {
namespace {

std::filesystem::path temp_file(const std::string& name, const std::string& bytes) {
  auto p = std::filesystem::temp_directory_path() / ("plancert-io-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p, std::ios::binary) << bytes;
  return p;
}

std::string code_of(const std::filesystem::path& p, std::uintmax_t max = kDefaultMaxInputBytes) {
  try {
    (void)read_file(p, max);
  } catch (const InputError& e) {
    return e.diag.code;
  }
  return "";
}

TEST(FileBytes, MapsTheWholeFileWhateverItsSize) {
  // Sizes around page boundaries: the view must end exactly at the file's end.
  for (std::size_t n : {std::size_t{1}, std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{3 * 4096}}) {
    std::string bytes(n, 'x');
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    auto p = temp_file("size" + std::to_string(n), bytes);
    FileBytes f = read_file(p);
    EXPECT_EQ(f.view(), bytes) << n;
    FileBytes g = std::move(f);  // moving keeps one owner of the mapping
    EXPECT_TRUE(f.view().empty());
    EXPECT_EQ(g.view(), bytes);
    FileBytes h = read_file(p);
    h = std::move(g);  // unmaps h's own mapping first
    EXPECT_TRUE(g.view().empty());
    EXPECT_EQ(h.view(), bytes);
    std::filesystem::remove(p);
  }
}

TEST(FileBytes, AnEmptyFileIsAnEmptyView) {
  auto p = temp_file("empty", "");
  EXPECT_TRUE(read_file(p).view().empty());
  std::filesystem::remove(p);
}

TEST(FileBytes, MissingDirectoryAndOversizedFilesAreInputErrors) {
  EXPECT_EQ(code_of("/nonexistent/plancert-io-missing.json"), "IO-1");
  EXPECT_EQ(code_of(std::filesystem::temp_directory_path()), "IO-1");
  auto p = temp_file("big", std::string(100, ' '));
  EXPECT_EQ(code_of(p, 99), "IO-2");
  EXPECT_EQ(code_of(p, 100), "");
  std::filesystem::remove(p);
}

TEST(FileBytesDeathTest, AFileThatShrinksWhileMappedIsBadInputNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto p = temp_file("shrinks", std::string(3 * 4096, 'y'));
  EXPECT_EXIT(
      {
        FileBytes f = read_file(p);
        std::filesystem::resize_file(p, 0);  // another process truncates it
        volatile char c = f.view()[2 * 4096];  // a page that no longer exists
        (void)c;
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(2), "IO-1: an input file shrank");
  std::filesystem::remove(p);
}

TEST(WriteFileAtomic, ReplacesTheFileWithExactlyTheBytes) {
  auto p = temp_file("out", "old");
  write_file_atomic(p, "new bytes");
  EXPECT_EQ(read_file(p).view(), "new bytes");
  std::filesystem::remove(p);
}

}  // namespace
}  // namespace plancert::cli
