#pragma once
// Runs an io_context on `threads` threads (0: one per core), the calling thread among them;
// returns when the io_context stops and every thread has joined.

#include <boost/asio/io_context.hpp>

namespace spillway::net {

void RunOnThreads(boost::asio::io_context& ioc, int threads);

/// The threads RunOnThreads(ioc, threads) runs.
int IoThreadCount(int threads);

/// The concurrency hint for an io_context RunOnThreads(ioc, threads) will run: 1 when that is
/// one thread (Asio then never wakes another thread for new work), else Asio's default.
int ConcurrencyHint(int threads);

}  // namespace spillway::net
