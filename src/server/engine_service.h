#pragma once
// The live driver of the engine: one `Engine` (engine/engine.h, the code the simulator runs)
// lives on one strand, so it needs no locks. A coroutine on that strand runs the iteration
// loop: Engine::BeginStep(now) -> wait the step's duration (the emulated executor's modelled
// time) -> Engine::EndStep(now) -> deliver tokens to each request's channel.
// Idle, it sleeps until a request arrives (waking at least once a second to show liveness).
//
// Sessions talk to it through thread-safe calls that post to the strand. Each admitted request
// gets a bounded channel of StreamEvents; the engine never blocks on a slow client: when a
// request's channel is full, the request is aborted (cause slow_client).

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <memory>
#include <string>
#include <unordered_map>

#include "admission/admission.h"
#include "engine/engine.h"
#include "net/clock.h"
#include "server/server_metrics.h"
#include "server/stream_event.h"

namespace spillway::server {

namespace asio = boost::asio;

using EventChannel =
    asio::experimental::concurrent_channel<void(boost::system::error_code, StreamEvent)>;

struct SubmitRequest {
  std::string tenant = "default";
  std::int32_t prompt_tokens = 0;
  std::int32_t max_tokens = 0;
  std::int32_t priority = 0;
  bool ignore_eos = false;
  std::int32_t emulated_output_tokens = 0;  ///< EngineRequest::emulated_output_tokens
  std::string fairness_id;                  ///< EngineRequest::fairness_id ("": the tenant)
  /// EngineRequest::prompt_segments (server/prompt_content.h); null: all its own.
  std::shared_ptr<const PromptSegments> prompt_segments;
};

struct SubmitResult {
  AdmissionDecision decision;
  RequestId id = 0;                      ///< valid when admitted
  std::shared_ptr<EventChannel> events;  ///< valid when admitted
};

/// Events buffered per request before the request is aborted as a slow client.
inline constexpr std::size_t kDefaultChannelCapacity = 4096;

class EngineService {
 public:
  EngineService(asio::io_context& ioc, EngineConfig config, ServerMetrics& metrics,
                const net::SteadyClock& clock,
                std::size_t channel_capacity = kDefaultChannelCapacity);

  /// Starts the iteration loop on the engine strand.
  void Start();
  /// Stops the loop after the current step; pending requests get no more events.
  void Stop();

  /// Decides admission and, when admitted, enqueues the request. `events_executor` is where
  /// the session receives its events. Runs on the engine strand; the result is delivered back
  /// to the caller's coroutine.
  /// (Parameters are references: GCC 12 mishandles class prvalues passed by value to a
  /// coroutine; the caller's objects outlive the co_await.)
  asio::awaitable<SubmitResult> Submit(const SubmitRequest& request,
                                       const asio::any_io_executor& session);

  /// Asks the engine to stop work on `id` (applied at the next iteration boundary). Client
  /// disconnects abort only while cancellation propagation is on; other causes always do.
  void Abort(RequestId id, AbortCause cause);

  /// Ends `id` with finish reason stop (a stop string matched on the session side); no abort
  /// is counted and no further events are sent.
  void FinishStop(RequestId id);

  /// Refuses new requests with 503 draining from now on.
  void StartDraining();

  /// Aborts every request in flight with `cause` (counted in spillway_aborts_total) and sends
  /// each session a kShutdown event, so clients get a final error instead of a cut connection.
  /// Used when the drain budget runs out.
  void AbortAll(AbortCause cause);

  /// Requests admitted and not yet finished (any thread).
  std::int64_t in_flight() const { return in_flight_.load(); }
  /// Seconds (SteadyClock) of the loop's last sign of life (any thread).
  Seconds last_heartbeat_s() const { return heartbeat_s_.load(); }
  const EngineConfig& config() const { return engine_.config(); }

 private:
  asio::awaitable<void> Loop();
  SubmitResult DoSubmit(const SubmitRequest& request, const asio::any_io_executor& session);
  void DoAbort(RequestId id, AbortCause cause);
  void DeliverTokens(Seconds now);
  void HandleFinished(Seconds now);
  void Publish();
  void Wake();

  struct Entry {
    std::shared_ptr<EventChannel> events;
    Seconds arrival_s = 0;
    Seconds last_token_s = kNever;
    std::int32_t tokens = 0;
    Seconds engine_s = 0;   ///< its share of the engine steps it was in, by tokens
    bool answered = false;  ///< FinishStop: the session sent a complete answer (stop string)
  };

  ServerMetrics& metrics_;
  const net::SteadyClock& clock_;
  asio::strand<asio::io_context::executor_type> strand_;
  asio::steady_timer idle_timer_;
  asio::steady_timer step_timer_;
  Engine engine_;
  std::size_t channel_capacity_;
  std::unordered_map<RequestId, Entry> entries_;
  RequestId next_id_ = 1;
  bool stopping_ = false;
  bool idle_ = false;
  std::atomic<std::int64_t> in_flight_{0};
  std::atomic<double> heartbeat_s_{0};
  /// When spillway_ttft_forecast_queue_seconds was last computed (Publish): at most every
  /// kQueueForecastEvery, well within a gateway's 0.25 s scrape, not at every step.
  Seconds queue_forecast_s_ = -1e9;
  static constexpr Seconds kQueueForecastEvery = 0.05;
};

}  // namespace spillway::server
