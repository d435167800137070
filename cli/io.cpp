// SPDX-License-Identifier: Apache-2.0
#include "cli/io.h"

#include "core/diag.h"

#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include <stdexcept>
#include <system_error>

namespace plancert::cli {

std::string read_file(const std::filesystem::path& p, std::uintmax_t max_bytes) {
  std::error_code ec;
  auto st = std::filesystem::status(p, ec);
  if (ec || !std::filesystem::exists(st)) throw InputError("IO-1", "", p.string() + ": no such file");
  if (!std::filesystem::is_regular_file(st)) throw InputError("IO-1", "", p.string() + ": not a regular file");
  auto size = std::filesystem::file_size(p, ec);
  if (ec) throw InputError("IO-1", "", p.string() + ": cannot read: " + ec.message());
  if (size > max_bytes)
    throw InputError("IO-2", "", p.string() + ": file is " + std::to_string(size) + " bytes, over the limit of " + std::to_string(max_bytes) + " (raise it with --max-bytes)");
  int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("IO-1", "", p.string() + ": cannot open: " + std::error_code(errno, std::generic_category()).message());
  std::string out;
  out.resize(static_cast<std::size_t>(size));
  std::size_t got = 0;
  while (got < out.size()) {
    ssize_t n = ::read(fd, out.data() + got, out.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got != out.size()) throw InputError("IO-1", "", p.string() + ": file changed or could not be read completely");
  return out;
}

void write_file_atomic(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::string tmpl = (dir / ("." + p.filename().string() + ".tmp-XXXXXX")).string();
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error(p.string() + ": cannot create a temporary file: " + std::error_code(errno, std::generic_category()).message());
  std::size_t put = 0;
  while (put < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + put, bytes.size() - put);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    put += static_cast<std::size_t>(n);
  }
  bool ok = put == bytes.size() && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (ok) ok = std::rename(tmpl.c_str(), p.c_str()) == 0;
  if (!ok) {
    int e = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error(p.string() + ": cannot write: " + std::error_code(e, std::generic_category()).message());
  }
}

}  // namespace plancert::cli
