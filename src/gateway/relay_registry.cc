#include "gateway/relay_registry.h"

#include <boost/asio/post.hpp>

namespace spillway::gateway {

namespace asio = boost::asio;

RelayRegistry::~RelayRegistry() = default;

void RelayRegistry::Add(const std::shared_ptr<RelayWatch>& watch) {
  const std::lock_guard lock(mu_);
  RelayWatch* w = watch.get();
  // In deadline order: after the last attempt due no later (the tail, but after a reload that
  // shortened the timeout).
  RelayWatch* after = tail_;
  while (after != nullptr && after->deadline > w->deadline) {
    after = after->prev;
  }
  w->prev = after;
  w->next = after != nullptr ? after->next : head_;
  (w->next != nullptr ? w->next->prev : tail_) = w;
  (after != nullptr ? after->next : head_) = w;
  w->linked = true;
  if (!armed_ || timer_->expiry() > w->deadline) {
    ArmLocked(w->deadline, w->executor);
  }
}

void RelayRegistry::Remove(const std::shared_ptr<RelayWatch>& watch) {
  const std::lock_guard lock(mu_);
  UnlinkLocked(watch.get());  // the timer stays armed: it finds the next one due when it fires
}

void RelayRegistry::UnlinkLocked(RelayWatch* w) {
  if (!w->linked) {
    return;
  }
  (w->prev != nullptr ? w->prev->next : head_) = w->next;
  (w->next != nullptr ? w->next->prev : tail_) = w->prev;
  w->prev = w->next = nullptr;
  w->linked = false;
}

void RelayRegistry::ArmLocked(std::chrono::steady_clock::time_point at,
                              const asio::any_io_executor& ex) {
  if (!timer_.has_value()) {
    timer_.emplace(ex);
  }
  armed_ = true;
  timer_->expires_at(at);  // a wait still pending completes with operation_aborted
  timer_->async_wait([this](const boost::system::error_code& ec) {
    if (ec != asio::error::operation_aborted) {
      Fired();
    }
  });
}

void RelayRegistry::Fired() {
  const std::lock_guard lock(mu_);
  armed_ = false;
  const auto now = std::chrono::steady_clock::now();
  while (head_ != nullptr && head_->deadline <= now) {
    RelayWatch* w = head_;
    UnlinkLocked(w);
    asio::post(w->executor, [w = w->shared_from_this()] {
      if (!w->stopped) {
        w->deadline_passed = true;
        w->End();
      }
    });
  }
  if (head_ != nullptr) {
    ArmLocked(head_->deadline, head_->executor);
  }
}

void RelayRegistry::CloseAll() {
  const std::lock_guard lock(mu_);
  for (RelayWatch* w = head_; w != nullptr; w = w->next) {
    asio::post(w->executor, [w = w->shared_from_this()] {
      if (!w->stopped && w->upstream != nullptr) {
        w->closed_for_drain = true;
        w->End();
      }
    });
  }
}

}  // namespace spillway::gateway
