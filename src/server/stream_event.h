#pragma once
// What a request's session receives while its generation runs, and why the server aborts one.
// Plain data: no Asio (the channel that carries these is in engine_service.h).

#include <cstdint>
#include <string_view>

#include "core/types.h"
#include "sched/request.h"

namespace spillway::server {

enum class AbortCause : std::uint8_t { kClientDisconnect, kServerTimeout, kSlowClient, kShutdown };
std::string_view ToString(AbortCause cause);

/// What a request's session receives from the engine.
struct StreamEvent {
  /// kClientGone and kTimeout are posted by the session's own watcher, not the engine;
  /// kShutdown by AbortAll when the drain budget runs out.
  enum class Kind : std::uint8_t { kToken, kFinished, kClientGone, kTimeout, kShutdown };
  Kind kind = Kind::kToken;
  std::int32_t token_id = 0;                  ///< kToken
  FinishReason reason = FinishReason::kNone;  ///< kFinished
  std::int32_t completion_tokens = 0;         ///< kFinished: tokens generated
  Seconds retry_after_s = 1;                  ///< kFinished with kDeadline: whole seconds
};

}  // namespace spillway::server
