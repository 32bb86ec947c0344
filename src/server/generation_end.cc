#include "server/generation_end.h"

#include <fmt/format.h>

#include "api/overload_contract.h"

namespace spillway::server {
namespace {

/// The contract's error for `code` with `message`.
api::ApiError ContractError(std::string_view code, std::string message) {
  const api::ContractRow* row = api::FindContractRow(code);
  return api::ApiError{row != nullptr ? row->http_status : 503, std::move(message),
                       std::string(row != nullptr ? row->error_type : "overloaded"), "",
                       std::string(code)};
}

GenerationEnd Error(std::string_view code, std::string message, Seconds retry_after_s) {
  GenerationEnd end;
  end.kind = GenerationEnd::Kind::kError;
  end.error = ContractError(code, std::move(message));
  if (end.error.http_status == 429 || end.error.http_status == 503) {
    end.headers = ContractHeaders(code, retry_after_s);
  }
  return end;
}

GenerationEnd Finished(const StreamEvent& event, const GenerationLimits& limits) {
  switch (event.reason) {
    case FinishReason::kLength:
    case FinishReason::kStop: {
      GenerationEnd end;
      end.finish_reason = std::string(ToString(event.reason));
      return end;
    }
    case FinishReason::kDeadline:
      return Error("queue_deadline_exceeded",
                   fmt::format("Dropped at the queue head: no prefill could start within the "
                               "TTFT SLO of {:g} s. Retry after {:.0f} s.",
                               limits.ttft_slo_s, event.retry_after_s),
                   event.retry_after_s);
    default: {
      const std::string code(ToString(event.reason));
      return Error(code, "The engine could not finish this request (" + code + ").", 1);
    }
  }
}

}  // namespace

GenerationEnd EndOf(const StreamEvent& event, bool channel_error, const GenerationLimits& limits) {
  if (event.kind == StreamEvent::Kind::kClientGone) {
    GenerationEnd end;
    end.kind = GenerationEnd::Kind::kClientGone;
    end.abort = AbortCause::kClientDisconnect;
    return end;
  }
  if (event.kind == StreamEvent::Kind::kShutdown) {
    // The engine aborted it already (AbortAll); the client is told to go elsewhere.
    return Error("draining",
                 fmt::format("The server shut down before this request finished (drain budget "
                             "{:g} s); retry on another replica.",
                             limits.drain_timeout_s),
                 1);
  }
  if (channel_error || event.kind == StreamEvent::Kind::kTimeout) {
    GenerationEnd end = Error("request_timeout",
                              fmt::format("No complete answer within the server's request "
                                          "deadline of {:g} s.",
                                          limits.request_deadline_s),
                              1);
    end.abort = AbortCause::kServerTimeout;
    return end;
  }
  return Finished(event, limits);
}

}  // namespace spillway::server
