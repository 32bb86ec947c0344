#include "loadgen/sse_parser.h"

namespace spillway::loadgen {

void SseParser::Feed(std::string_view bytes, std::vector<SseEvent>* out) {
  std::size_t i = 0;
  if (skip_lf_ && !bytes.empty()) {
    skip_lf_ = false;
    if (bytes.front() == '\n') {
      i = 1;
    }
  }
  while (i < bytes.size()) {
    const std::size_t eol = bytes.find_first_of("\r\n", i);
    if (eol == std::string_view::npos) {
      Append(bytes.substr(i));
      return;
    }
    Append(bytes.substr(i, eol - i));
    EndLine(out);
    i = eol + 1;
    if (bytes[eol] == '\r') {
      if (i == bytes.size()) {
        skip_lf_ = true;
      } else if (bytes[i] == '\n') {
        ++i;
      }
    }
  }
}

void SseParser::Append(std::string_view piece) {
  if (line_too_long_) {
    return;
  }
  if (line_.size() + piece.size() > kMaxLineBytes) {
    line_too_long_ = true;
    overflowed_ = true;
    line_.clear();
    return;
  }
  line_.append(piece);
}

void SseParser::EndLine(std::vector<SseEvent>* out) {
  if (line_too_long_) {
    line_too_long_ = false;
    return;
  }
  const std::string_view line = line_;
  if (line.empty()) {
    if (has_data_) {
      out->push_back(SseEvent{std::move(event_), std::move(data_)});
    }
    data_.clear();
    event_.clear();
    has_data_ = false;
  } else if (line.front() != ':') {
    const std::size_t colon = line.find(':');
    const std::string_view field = line.substr(0, colon);
    std::string_view value =
        colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') {
      value.remove_prefix(1);
    }
    if (field == "data") {
      if (has_data_) {
        data_.push_back('\n');
      }
      data_.append(value);
      has_data_ = true;
    } else if (field == "event") {
      event_.assign(value);
    }
  }
  line_.clear();
}

}  // namespace spillway::loadgen
