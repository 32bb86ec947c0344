#pragma once
// The process's open-file limit: a server holds a descriptor per connection (the gateway two:
// the client's and the endpoint's), and Debian's default soft limit of 1024 is reached long
// before the connection caps.

#include <cstdint>

namespace spillway::net {

/// Raises the soft RLIMIT_NOFILE to the hard limit; returns the soft limit now in force (1024
/// when it cannot be read, 2^20 for unlimited).
std::int64_t RaiseOpenFileLimit();

}  // namespace spillway::net
