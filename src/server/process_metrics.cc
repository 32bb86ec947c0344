#include "server/process_metrics.h"

#include <unistd.h>

#include <array>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>

namespace spillway::server {
namespace {

// The next whitespace-separated token of `text` from `*pos` (empty at the end).
std::string_view NextToken(std::string_view text, std::size_t* pos) {
  std::size_t begin = *pos;
  while (begin < text.size() && (text[begin] == ' ' || text[begin] == '\t' || text[begin] == '\n' ||
                                 text[begin] == '\r')) {
    ++begin;
  }
  std::size_t end = begin;
  while (end < text.size() && text[end] != ' ' && text[end] != '\t' && text[end] != '\n' &&
         text[end] != '\r') {
    ++end;
  }
  *pos = end;
  return text.substr(begin, end - begin);
}

// A whole token as an unsigned decimal integer.
std::optional<std::uint64_t> ParseUnsigned(std::string_view token) {
  std::uint64_t v = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, v);
  if (token.empty() || ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return v;
}

// A whole token as a signed decimal integer.
std::optional<std::int64_t> ParseSigned(std::string_view token) {
  std::int64_t v = 0;
  const char* end = token.data() + token.size();
  const auto [ptr, ec] = std::from_chars(token.data(), end, v);
  if (token.empty() || ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return v;
}

// The line of `text` that starts with `prefix`, without the prefix; nullopt when none does.
std::optional<std::string_view> LineAfter(std::string_view text, std::string_view prefix) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = text.substr(begin, end - begin);
    if (line.starts_with(prefix)) {
      return line.substr(prefix.size());
    }
    begin = end + 1;
  }
  return std::nullopt;
}

// The whole content of a (procfs) file; nullopt when it cannot be opened or read.
std::optional<std::string> ReadWhole(const char* path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) {
    return std::nullopt;
  }
  return std::move(out).str();
}

// Entries of /proc/self/fd (the iterator's own descriptor included); nullopt on error.
std::optional<double> CountOpenFds() {
  std::error_code ec;
  std::filesystem::directory_iterator it("/proc/self/fd", ec);
  double n = 0;
  for (; !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  if (ec) {
    return std::nullopt;
  }
  return n;
}

}  // namespace

std::optional<ProcStat> ParseProcStat(std::string_view text) {
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  // After ") " comes field 3 (state); field k is token k - 3.
  constexpr int kFirstField = 3;
  constexpr int kUtime = 14, kStime = 15, kStartTime = 22, kVsize = 23, kRss = 24;
  std::array<std::string_view, kRss + 1> fields{};
  std::size_t pos = close + 1;
  for (int field = kFirstField; field <= kRss; ++field) {
    fields[field] = NextToken(text, &pos);
    if (fields[field].empty()) {
      return std::nullopt;
    }
  }
  const auto utime = ParseUnsigned(fields[kUtime]);
  const auto stime = ParseUnsigned(fields[kStime]);
  const auto start = ParseUnsigned(fields[kStartTime]);
  const auto vsize = ParseUnsigned(fields[kVsize]);
  const auto rss = ParseSigned(fields[kRss]);
  if (!utime || !stime || !start || !vsize || !rss) {
    return std::nullopt;
  }
  ProcStat s;
  s.utime_ticks = *utime;
  s.stime_ticks = *stime;
  s.starttime_ticks = *start;
  s.vsize_bytes = *vsize;
  s.rss_pages = *rss > 0 ? static_cast<std::uint64_t>(*rss) : 0;
  return s;
}

std::optional<double> ParseBootTimeSeconds(std::string_view proc_stat) {
  const std::optional<std::string_view> rest = LineAfter(proc_stat, "btime ");
  if (!rest.has_value()) {
    return std::nullopt;
  }
  std::size_t pos = 0;
  const std::optional<std::uint64_t> v = ParseUnsigned(NextToken(*rest, &pos));
  if (!v.has_value()) {
    return std::nullopt;
  }
  return static_cast<double>(*v);
}

std::optional<double> ParseMaxOpenFiles(std::string_view limits) {
  const std::optional<std::string_view> rest = LineAfter(limits, "Max open files");
  if (!rest.has_value()) {
    return std::nullopt;
  }
  std::size_t pos = 0;
  const std::string_view soft = NextToken(*rest, &pos);
  if (soft == "unlimited") {
    return static_cast<double>(std::numeric_limits<std::uint64_t>::max());
  }
  const std::optional<std::uint64_t> v = ParseUnsigned(soft);
  if (!v.has_value()) {
    return std::nullopt;
  }
  return static_cast<double>(*v);
}

ProcessSample MakeProcessSample(const ProcStat& stat, double boot_time_s, double ticks_per_s,
                                double page_bytes, double open_fds, double max_fds) {
  ProcessSample s;
  s.cpu_seconds = static_cast<double>(stat.utime_ticks + stat.stime_ticks) / ticks_per_s;
  s.virtual_memory_bytes = static_cast<double>(stat.vsize_bytes);
  s.resident_memory_bytes = static_cast<double>(stat.rss_pages) * page_bytes;
  s.start_time_seconds = boot_time_s + static_cast<double>(stat.starttime_ticks) / ticks_per_s;
  s.open_fds = open_fds;
  s.max_fds = max_fds;
  return s;
}

std::optional<ProcessSample> ReadSelfProcessSample(std::string* error) {
  auto fail = [error](const char* what) -> std::optional<ProcessSample> {
    if (error != nullptr) {
      *error = what;
    }
    return std::nullopt;
  };
  const std::optional<std::string> stat_text = ReadWhole("/proc/self/stat");
  const std::optional<ProcStat> stat =
      stat_text.has_value() ? ParseProcStat(*stat_text) : std::nullopt;
  if (!stat.has_value()) {
    return fail("cannot read or parse /proc/self/stat");
  }
  const std::optional<std::string> proc_stat = ReadWhole("/proc/stat");
  const std::optional<double> boot =
      proc_stat.has_value() ? ParseBootTimeSeconds(*proc_stat) : std::nullopt;
  if (!boot.has_value()) {
    return fail("cannot read or parse the btime line of /proc/stat");
  }
  const std::optional<std::string> limits = ReadWhole("/proc/self/limits");
  const std::optional<double> max_fds =
      limits.has_value() ? ParseMaxOpenFiles(*limits) : std::nullopt;
  if (!max_fds.has_value()) {
    return fail("cannot read or parse Max open files in /proc/self/limits");
  }
  const std::optional<double> open_fds = CountOpenFds();
  if (!open_fds.has_value()) {
    return fail("cannot list /proc/self/fd");
  }
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (ticks <= 0 || page <= 0) {
    return fail("sysconf(_SC_CLK_TCK or _SC_PAGESIZE) failed");
  }
  return MakeProcessSample(*stat, *boot, static_cast<double>(ticks), static_cast<double>(page),
                           *open_fds, *max_fds);
}

ProcessMetrics::ProcessMetrics(metrics::Registry& registry)
    : cpu_seconds_total_(&registry
                              .AddCounter("process_cpu_seconds_total",
                                          "Total user and system CPU time spent in seconds.")
                              .Get()),
      virtual_memory_bytes_(
          &registry.AddGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
               .Get()),
      resident_memory_bytes_(
          &registry.AddGauge("process_resident_memory_bytes", "Resident memory size in bytes.")
               .Get()),
      start_time_seconds_(&registry
                               .AddGauge("process_start_time_seconds",
                                         "Start time of the process since unix epoch in seconds.")
                               .Get()),
      open_fds_(&registry.AddGauge("process_open_fds", "Number of open file descriptors.").Get()),
      max_fds_(
          &registry.AddGauge("process_max_fds", "Maximum number of open file descriptors.").Get()) {
}

void ProcessMetrics::Update() {
  const std::lock_guard<std::mutex> lock(mutex_);
  const std::optional<ProcessSample> s = ReadSelfProcessSample();
  if (!s.has_value()) {
    return;
  }
  const double added = s->cpu_seconds - cpu_seconds_total_->value();
  if (added > 0) {
    cpu_seconds_total_->Inc(added);
  }
  virtual_memory_bytes_->Set(s->virtual_memory_bytes);
  resident_memory_bytes_->Set(s->resident_memory_bytes);
  start_time_seconds_->Set(s->start_time_seconds);
  open_fds_->Set(s->open_fds);
  max_fds_->Set(s->max_fds);
}

}  // namespace spillway::server
