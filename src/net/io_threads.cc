#include "net/io_threads.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace spillway::net {

int IoThreadCount(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

int ConcurrencyHint(int threads) {
  return IoThreadCount(threads) == 1 ? 1 : BOOST_ASIO_CONCURRENCY_HINT_DEFAULT;
}

void RunOnThreads(boost::asio::io_context& ioc, int threads) {
  const int n = IoThreadCount(threads);
  std::vector<std::thread> others;
  for (int i = 1; i < n; ++i) {
    others.emplace_back([&ioc] { ioc.run(); });
  }
  ioc.run();
  for (std::thread& t : others) {
    t.join();
  }
}

}  // namespace spillway::net
