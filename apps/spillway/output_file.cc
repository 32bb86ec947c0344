#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace spillway::app {
namespace {

namespace fs = std::filesystem;

/// `path` with its symlinks followed (at most 40, as the kernel's ELOOP limit): the file the
/// output goes to, so a link keeps pointing at it.
fs::path Target(const std::string& path) {
  fs::path target = path;
  std::error_code ec;
  for (int i = 0; i < 40 && fs::is_symlink(fs::symlink_status(target, ec)); ++i) {
    const fs::path link = fs::read_symlink(target, ec);
    if (ec) {
      break;
    }
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

}  // namespace

OutputFile::OutputFile(const std::string& path, const char* flag) : path_(path), flag_(flag) {
  if (path_.empty()) {
    return;
  }
  const fs::path target = Target(path_);
  std::error_code ec;
  const fs::file_status status = fs::status(target, ec);
  if (fs::is_directory(status) || path_.back() == '/') {
    throw std::runtime_error(Error(EISDIR));
  }
  // A FIFO, a device or a socket is written as it is: renaming a file over it would replace it.
  direct_ = fs::exists(status) && !fs::is_regular_file(status);
  target_ = target.string();
  partial_ = direct_ ? target_ : target_ + ".partial";
  out_.open(partial_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error(Error(errno));
  }
}

OutputFile::~OutputFile() {
  if (!path_.empty() && !committed_ && !direct_) {
    out_.close();
    std::remove(partial_.c_str());
  }
}

std::string OutputFile::Error(int error) const {
  return "cannot write " + flag_ + " " + path_ + ": " + std::strerror(error);
}

void OutputFile::Commit() {
  if (path_.empty() || committed_) {
    return;
  }
  out_.close();
  if (!out_ || (!direct_ && std::rename(partial_.c_str(), target_.c_str()) != 0)) {
    throw std::runtime_error(Error(errno));
  }
  committed_ = true;
}

bool OutputFile::SameFile(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) {
    return false;
  }
  const auto resolved = [](const std::string& p) {
    std::error_code ec;
    const fs::path r = fs::weakly_canonical(fs::absolute(Target(p), ec), ec);
    return ec ? fs::path(p) : r;
  };
  return a == b || resolved(a) == resolved(b);
}

}  // namespace spillway::app
