#include "net/read_deadline.h"

#include <boost/asio/error.hpp>

namespace spillway::net {

ReadDeadline::ReadDeadline(boost::asio::ip::tcp::socket& socket)
    : socket_(&socket), timer_(socket.get_executor()) {}

void ReadDeadline::Set(Clock::time_point deadline) {
  deadline_ = deadline;
  expired_ = false;
  // An armed timer that fires at or before the deadline re-arms itself then; only an earlier
  // deadline needs the timer moved.
  if (!armed_ || timer_.expiry() > deadline) {
    Arm(deadline);
  }
}

void ReadDeadline::Detach() {
  socket_ = nullptr;
  deadline_ = Clock::time_point::max();
  timer_.cancel();
}

void ReadDeadline::Arm(Clock::time_point at) {
  armed_ = true;
  timer_.expires_at(at);  // a wait still pending completes with operation_aborted
  timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
    if (ec != boost::asio::error::operation_aborted) {
      self->Fired();
    }
  });
}

void ReadDeadline::Fired() {
  armed_ = false;
  if (socket_ == nullptr || deadline_ == Clock::time_point::max()) {
    return;  // no head is being read: the next Set arms the timer again
  }
  if (Clock::now() < deadline_) {
    Arm(deadline_);
    return;
  }
  expired_ = true;
  boost::system::error_code ignored;
  socket_->cancel(ignored);
}

}  // namespace spillway::net
