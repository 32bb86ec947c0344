#pragma once
// An output file (--json, --records, ...) that replaces PATH only when the run succeeds: it is
// written to PATH.partial, opened before any work so a bad path fails at once, and renamed
// over PATH by Commit(). A run that fails (or throws) removes the partial file and leaves an
// earlier PATH untouched. A symlink is followed (the file it points to is replaced, the link
// kept); a FIFO, a device or a socket is written directly (nothing is renamed over it); a
// directory is an error at once.

#include <fstream>
#include <string>

namespace spillway::app {

class OutputFile {
 public:
  /// Opens PATH.partial for writing; throws std::runtime_error "cannot write FLAG PATH: why"
  /// when it cannot (a directory, a missing parent, no permission). An empty `path` means no
  /// output: stream() is null and Commit() does nothing.
  OutputFile(const std::string& path, const char* flag);
  /// Removes PATH.partial unless committed.
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// The stream to write, or nullptr when no path was given.
  std::ofstream* stream() { return path_.empty() ? nullptr : &out_; }
  /// Flushes, closes and renames PATH.partial to PATH; throws std::runtime_error on failure.
  void Commit();

  /// True when both paths are given and name the same file (after symlinks): two outputs of
  /// one run must not, or one would overwrite the other.
  static bool SameFile(const std::string& a, const std::string& b);

 private:
  std::string Error(int error) const;

  std::string path_;
  std::string flag_;
  std::string target_;   // PATH with its symlinks followed
  std::string partial_;  // what is written: TARGET.partial, or TARGET itself when direct_
  bool direct_ = false;
  std::ofstream out_;
  bool committed_ = false;
};

}  // namespace spillway::app
