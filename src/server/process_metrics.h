#pragma once
// The standard Prometheus process metrics, as the official client libraries' process collector
// exports them (client_golang's NewProcessCollector, client_python's ProcessCollector): same
// names, types and units, read from Linux procfs at scrape time.
//
//   process_cpu_seconds_total      counter  user + system CPU time, s  (/proc/self/stat 14+15)
//   process_virtual_memory_bytes   gauge    virtual memory size, bytes (/proc/self/stat 23)
//   process_resident_memory_bytes  gauge    resident set size, bytes   (/proc/self/stat 24 x
//                                                                       the page size)
//   process_start_time_seconds     gauge    start time, s since the Unix epoch
//                                           (/proc/self/stat 22 in clock ticks after boot +
//                                           btime of /proc/stat)
//   process_open_fds               gauge    entries of /proc/self/fd (the directory's own
//                                           descriptor included, as the official clients do)
//   process_max_fds                gauge    soft "Max open files" of /proc/self/limits
//                                           ("unlimited" is 2^64 - 1, as Prometheus' procfs)
//
// The parsers are pure functions (tested without procfs); ReadSelfProcessSample and
// ProcessMetrics::Update do the I/O. On a system without procfs the families stay at 0.

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "metrics/metrics.h"

namespace spillway::server {

/// The fields of /proc/<pid>/stat (proc(5)) the process metrics need, in the kernel's units.
struct ProcStat {
  std::uint64_t utime_ticks = 0;      ///< field 14, user CPU time, clock ticks
  std::uint64_t stime_ticks = 0;      ///< field 15, system CPU time, clock ticks
  std::uint64_t starttime_ticks = 0;  ///< field 22, start after boot, clock ticks
  std::uint64_t vsize_bytes = 0;      ///< field 23, virtual memory size, bytes
  std::uint64_t rss_pages = 0;        ///< field 24, resident set size, pages (a negative is 0)
};

/// Parses the one line of /proc/<pid>/stat. The command name (field 2) is in parentheses and
/// may itself hold spaces and parentheses, so the fields are counted from the last ')'.
/// nullopt when the text is not such a line (no ')', too few fields, a needed field that is
/// not a decimal integer).
std::optional<ProcStat> ParseProcStat(std::string_view text);

/// The boot time from /proc/stat: the `btime` line, seconds since the Unix epoch. nullopt when
/// there is no such line or its value is not a non-negative integer.
std::optional<double> ParseBootTimeSeconds(std::string_view proc_stat);

/// The soft limit of the "Max open files" line of /proc/<pid>/limits; "unlimited" gives
/// 2^64 - 1 (as Prometheus' procfs reports it). nullopt when the line is missing or malformed.
std::optional<double> ParseMaxOpenFiles(std::string_view limits);

/// One reading of the process metrics, in the units of their names.
struct ProcessSample {
  double cpu_seconds = 0;            ///< user + system CPU time, s
  double virtual_memory_bytes = 0;   ///< bytes
  double resident_memory_bytes = 0;  ///< bytes
  double start_time_seconds = 0;     ///< s since the Unix epoch
  double open_fds = 0;               ///< open file descriptors
  double max_fds = 0;                ///< soft limit on open file descriptors
};

/// Combines parsed procfs values: `ticks_per_s` is sysconf(_SC_CLK_TCK) (> 0), `page_bytes`
/// sysconf(_SC_PAGESIZE), `boot_time_s` the btime. Pure.
ProcessSample MakeProcessSample(const ProcStat& stat, double boot_time_s, double ticks_per_s,
                                double page_bytes, double open_fds, double max_fds);

/// Reads this process's metrics from /proc/self/stat, /proc/stat, /proc/self/limits and
/// /proc/self/fd. nullopt when a file cannot be read or parsed; `*error` (if not null) then
/// says which. Thread-safe; takes a few syscalls plus one per open descriptor.
std::optional<ProcessSample> ReadSelfProcessSample(std::string* error = nullptr);

/// The six families above in a registry, refreshed from procfs by Update().
class ProcessMetrics {
 public:
  /// Declares the families in `registry` (which must outlive this object); names must still be
  /// free there (a clash is a programmer error, SPILLWAY_CHECK).
  explicit ProcessMetrics(metrics::Registry& registry);

  /// Reads procfs and sets the families (before rendering a scrape). When procfs cannot be
  /// read the families keep their previous values. Thread-safe (serialised by a mutex, so the
  /// CPU counter only ever moves up by what procfs added).
  void Update();

 private:
  std::mutex mutex_;
  metrics::Counter* cpu_seconds_total_;
  metrics::Gauge* virtual_memory_bytes_;
  metrics::Gauge* resident_memory_bytes_;
  metrics::Gauge* start_time_seconds_;
  metrics::Gauge* open_fds_;
  metrics::Gauge* max_fds_;
};

}  // namespace spillway::server
