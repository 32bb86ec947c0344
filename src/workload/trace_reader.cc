#include "workload/trace_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json.hpp>

#include "config/config_error.h"

namespace spillway {
namespace {

using config::ConfigError;

constexpr std::string_view kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";

/// A record whose time is still absolute: whole seconds plus a fraction, so that subtracting
/// two wall-clock times (about 1.7e9 s since the epoch) loses no sub-microsecond precision.
struct RawRecord {
  std::int64_t whole_s = 0;
  double frac_s = 0;
  std::int32_t prompt_tokens = 0;
  std::int32_t output_tokens = 0;
  std::vector<std::uint64_t> hash_ids;  ///< Mooncake only
};

/// Reports a malformed line as "FILE:LINE: message".
[[noreturn]] void FailLine(const std::string& path, std::size_t line, const std::string& message) {
  throw ConfigError(path + ":" + std::to_string(line) + ": " + message);
}

std::string_view Trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw ConfigError(path + ": cannot open trace file");
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    throw ConfigError(path + ": error reading trace file");
  }
  return std::move(text).str();
}

/// Calls `on_line(line_number, text)` for every non-blank line (1-based numbers, trimmed).
template <typename OnLine>
void ForEachLine(const std::string& text, OnLine on_line) {
  std::size_t start = 0;
  std::size_t line_number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      end = text.size();
    }
    ++line_number;
    const std::string_view line = Trim(std::string_view(text).substr(start, end - start));
    if (!line.empty()) {
      on_line(line_number, line);
    }
    start = end + 1;
  }
}

/// Parses all of `s` as an unsigned decimal integer; false on anything else (a sign, spaces,
/// other characters, overflow).
bool ParseInt(std::string_view s, std::int64_t* out) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string_view::npos) {
    return false;
  }
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

/// Days since 1970-01-01 of a proleptic Gregorian date. Howard Hinnant's days_from_civil
/// (http://howardhinnant.github.io/date_algorithms.html#days_from_civil); no time zones.
std::int64_t DaysFromCivil(std::int64_t y, std::int64_t m, std::int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;                                    // [0, 399]
  const std::int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + doe - 719468;
}

std::int64_t DaysInMonth(std::int64_t y, std::int64_t m) {
  static constexpr std::int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : kDays[m - 1];
}

/// Parses `YYYY-MM-DD HH:MM:SS[.fffffff]` (any number of fractional digits, or none) into
/// whole seconds since the epoch (UTC-agnostic) and a fraction. False when malformed.
bool ParseTimestamp(std::string_view s, std::int64_t* whole_s, double* frac_s) {
  if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != ' ' && s[10] != 'T') ||
      s[13] != ':' || s[16] != ':') {
    return false;
  }
  std::int64_t y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!ParseInt(s.substr(0, 4), &y) || !ParseInt(s.substr(5, 2), &mo) ||
      !ParseInt(s.substr(8, 2), &d) || !ParseInt(s.substr(11, 2), &h) ||
      !ParseInt(s.substr(14, 2), &mi) || !ParseInt(s.substr(17, 2), &sec)) {
    return false;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > DaysInMonth(y, mo) || h > 23 || mi > 59 || sec > 59) {
    return false;
  }
  *frac_s = 0;
  if (s.size() > 19) {
    const std::string_view digits = s.substr(20);
    std::int64_t unused = 0;
    if (s[19] != '.' || digits.size() > 15 || !ParseInt(digits, &unused)) {
      return false;
    }
    double scale = 0.1;
    for (const char c : digits) {
      *frac_s += (c - '0') * scale;
      scale *= 0.1;
    }
  }
  *whole_s = DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
  return true;
}

/// A token count column: a positive integer that fits in int32.
std::int32_t ParseTokens(std::string_view field, const char* column, const std::string& path,
                         std::size_t line) {
  std::int64_t value = 0;
  if (!ParseInt(field, &value) || value < 1 || value > std::numeric_limits<std::int32_t>::max()) {
    FailLine(
        path, line,
        std::string(column) + ": must be a positive integer, got '" + std::string(field) + "'");
  }
  return static_cast<std::int32_t>(value);
}

RawRecord ParseAzureLine(std::string_view line, const std::string& path, std::size_t number) {
  std::string_view fields[3];
  std::size_t count = 0;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    if (count == 3) {
      FailLine(path, number,
               "expected 3 columns (" + std::string(kAzureHeader) + "), got '" + std::string(line) +
                   "'");
    }
    fields[count++] =
        Trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos) {
      break;
    }
    start = comma + 1;
  }
  if (count != 3) {
    FailLine(path, number,
             "missing column: expected 3 (" + std::string(kAzureHeader) + "), got '" +
                 std::string(line) + "'");
  }
  RawRecord r;
  if (!ParseTimestamp(fields[0], &r.whole_s, &r.frac_s)) {
    FailLine(
        path, number,
        "TIMESTAMP: expected 'YYYY-MM-DD HH:MM:SS.fffffff', got '" + std::string(fields[0]) + "'");
  }
  r.prompt_tokens = ParseTokens(fields[1], "ContextTokens", path, number);
  r.output_tokens = ParseTokens(fields[2], "GeneratedTokens", path, number);
  return r;
}

std::vector<RawRecord> ReadAzure(const std::string& path, const std::string& text) {
  std::vector<RawRecord> records;
  bool header_seen = false;
  ForEachLine(text, [&](std::size_t number, std::string_view line) {
    if (!header_seen) {
      if (line != kAzureHeader) {
        FailLine(path, number,
                 "expected the header '" + std::string(kAzureHeader) + "', got '" +
                     std::string(line) + "'");
      }
      header_seen = true;
      return;
    }
    records.push_back(ParseAzureLine(line, path, number));
  });
  return records;
}

/// A required integer member of a Mooncake object: a positive whole number within int32.
std::int32_t MooncakeTokens(const boost::json::object& obj, std::string_view key,
                            const std::string& path, std::size_t line) {
  const boost::json::value* v = obj.if_contains(key);
  if (v == nullptr) {
    FailLine(path, line, "missing \"" + std::string(key) + "\"");
  }
  boost::system::error_code ec;
  const auto value = v->to_number<std::int32_t>(ec);
  if (ec || value < 1) {
    FailLine(path, line,
             "\"" + std::string(key) + "\": must be a positive integer, got " +
                 boost::json::serialize(*v));
  }
  return value;
}

/// The optional "hash_ids" member: an array of non-negative integers (empty when absent).
std::vector<std::uint64_t> MooncakeHashIds(const boost::json::object& obj, const std::string& path,
                                           std::size_t line) {
  const boost::json::value* v = obj.if_contains("hash_ids");
  if (v == nullptr) {
    return {};
  }
  const boost::json::array* items = v->if_array();
  if (items == nullptr) {
    FailLine(path, line,
             "\"hash_ids\": must be an array of non-negative integers, got " +
                 boost::json::serialize(*v));
  }
  std::vector<std::uint64_t> ids;
  ids.reserve(items->size());
  for (const boost::json::value& item : *items) {
    boost::system::error_code ec;
    const auto id = item.to_number<std::uint64_t>(ec);
    if (ec) {
      FailLine(path, line,
               "\"hash_ids\": must be an array of non-negative integers, got element " +
                   boost::json::serialize(item));
    }
    ids.push_back(id);
  }
  return ids;
}

RawRecord ParseMooncakeLine(std::string_view line, const std::string& path, std::size_t number) {
  boost::system::error_code ec;
  const boost::json::value doc = boost::json::parse(line, ec);
  if (ec) {
    FailLine(path, number, "invalid JSON: " + ec.message());
  }
  const boost::json::object* obj = doc.if_object();
  if (obj == nullptr) {
    FailLine(path, number, "expected a JSON object, got " + boost::json::serialize(doc));
  }
  const boost::json::value* ts = obj->if_contains("timestamp");
  if (ts == nullptr) {
    FailLine(path, number, "missing \"timestamp\"");
  }
  const double ms = ts->to_number<double>(ec);
  if (ec || !(ms >= 0) || ms > 1e15) {
    FailLine(
        path, number,
        "\"timestamp\": must be a number of milliseconds >= 0, got " + boost::json::serialize(*ts));
  }
  RawRecord r;
  r.whole_s = static_cast<std::int64_t>(ms / 1000.0);
  r.frac_s = ms / 1000.0 - static_cast<double>(r.whole_s);
  r.prompt_tokens = MooncakeTokens(*obj, "input_length", path, number);
  r.output_tokens = MooncakeTokens(*obj, "output_length", path, number);
  r.hash_ids = MooncakeHashIds(*obj, path, number);
  // One id per block of the prompt, the last one partial: ids that do not cover the prompt
  // (or cover more than it) are not the trace's own.
  const std::size_t blocks =
      (static_cast<std::size_t>(r.prompt_tokens) + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
  if (!r.hash_ids.empty() && r.hash_ids.size() != blocks) {
    FailLine(path, number,
             "\"hash_ids\": " + std::to_string(r.hash_ids.size()) + " ids for " +
                 std::to_string(r.prompt_tokens) + " input tokens; expected " +
                 std::to_string(blocks) + ", one per block of " +
                 std::to_string(kMooncakeBlockTokens) + " tokens");
  }
  return r;
}

std::vector<RawRecord> ReadMooncake(const std::string& path, const std::string& text) {
  std::vector<RawRecord> records;
  ForEachLine(text, [&](std::size_t number, std::string_view line) {
    records.push_back(ParseMooncakeLine(line, path, number));
  });
  return records;
}

/// Stable-sorts by absolute time and re-bases to the earliest record.
std::vector<TraceRecord> Rebase(std::vector<RawRecord> raw) {
  std::stable_sort(raw.begin(), raw.end(), [](const RawRecord& a, const RawRecord& b) {
    return a.whole_s != b.whole_s ? a.whole_s < b.whole_s : a.frac_s < b.frac_s;
  });
  std::vector<TraceRecord> records;
  records.reserve(raw.size());
  for (RawRecord& r : raw) {
    const double t =
        static_cast<double>(r.whole_s - raw.front().whole_s) + (r.frac_s - raw.front().frac_s);
    records.push_back({std::max(t, 0.0), r.prompt_tokens, r.output_tokens, std::move(r.hash_ids)});
  }
  return records;
}

}  // namespace

std::vector<TraceRecord> ReadTrace(const std::string& path, TraceFormat format) {
  const std::string text = ReadWholeFile(path);
  std::vector<RawRecord> raw =
      format == TraceFormat::kMooncakeJsonl ? ReadMooncake(path, text) : ReadAzure(path, text);
  if (raw.empty()) {
    throw ConfigError(path + ": trace has no records");
  }
  return Rebase(std::move(raw));
}

TraceFormat GuessTraceFormat(const std::string& path) {
  return std::string_view(path).ends_with(".jsonl") ? TraceFormat::kMooncakeJsonl
                                                    : TraceFormat::kAzureCsv;
}

}  // namespace spillway
