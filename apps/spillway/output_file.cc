#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace spillway::app {

OutputFile::OutputFile(const std::string& path, const char* flag)
    : path_(path), partial_(path.empty() ? std::string() : path + ".partial") {
  if (path_.empty()) {
    return;
  }
  out_.open(partial_, std::ios::binary | std::ios::trunc);
  if (!out_) {
    throw std::runtime_error(std::string("cannot write ") + flag + " " + path + ": " +
                             std::strerror(errno));
  }
}

OutputFile::~OutputFile() {
  if (!path_.empty() && !committed_) {
    out_.close();
    std::remove(partial_.c_str());
  }
}

void OutputFile::Commit() {
  if (path_.empty() || committed_) {
    return;
  }
  out_.close();
  if (!out_ || std::rename(partial_.c_str(), path_.c_str()) != 0) {
    throw std::runtime_error("cannot write " + path_ + ": " + std::strerror(errno));
  }
  committed_ = true;
}

}  // namespace spillway::app
