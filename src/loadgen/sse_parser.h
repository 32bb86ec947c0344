#pragma once
// An incremental Server-Sent Events parser (the WHATWG HTML "event stream interpretation"):
// bytes go in as they arrive from the socket, in pieces of any size; complete events come out.
// Lines end in LF, CRLF or CR (a CRLF split across two pieces is one line end); lines starting
// with ':' are comments; `data:` lines of one event are joined with '\n'; `event:` names the
// event; other fields (`id:`, `retry:`) are ignored; a blank line dispatches the event when it
// has data. Pure (no I/O); not thread-safe.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace spillway::loadgen {

struct SseEvent {
  std::string event;  ///< the `event:` field; empty for the default "message"
  std::string data;   ///< `data:` lines joined with '\n'
};

class SseParser {
 public:
  /// Longest line kept, bytes; a longer one sets overflowed() and is dropped (bound
  /// everything: a server that never ends a line cannot exhaust memory).
  static constexpr std::size_t kMaxLineBytes = 1 << 20;

  /// Parses `bytes` and appends every event they complete to `*out`.
  void Feed(std::string_view bytes, std::vector<SseEvent>* out);

  /// True once a line longer than kMaxLineBytes was seen.
  bool overflowed() const { return overflowed_; }

 private:
  void Append(std::string_view piece);
  void EndLine(std::vector<SseEvent>* out);

  std::string line_;  ///< the current line so far
  std::string data_;  ///< data of the event being built
  std::string event_;
  bool has_data_ = false;
  bool skip_lf_ = false;  ///< the previous piece ended in CR: a leading LF ends nothing
  bool overflowed_ = false;
  bool line_too_long_ = false;
};

}  // namespace spillway::loadgen
