#pragma once
// An output file (--json, --records, ...) that replaces PATH only when the run succeeds: it is
// written to PATH.partial, opened before any work so a bad path fails at once, and renamed
// over PATH by Commit(). A run that fails (or throws) removes the partial file and leaves an
// earlier PATH untouched.

#include <fstream>
#include <string>

namespace spillway::app {

class OutputFile {
 public:
  /// Opens PATH.partial for writing; throws std::runtime_error naming `flag` and `path` when it
  /// cannot. An empty `path` means no output: stream() is null and Commit() does nothing.
  OutputFile(const std::string& path, const char* flag);
  /// Removes PATH.partial unless committed.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// The stream to write, or nullptr when no path was given.
  std::ofstream* stream() { return path_.empty() ? nullptr : &out_; }
  /// Flushes, closes and renames PATH.partial to PATH; throws std::runtime_error on failure.
  void Commit();

 private:
  std::string path_;
  std::string partial_;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace spillway::app
