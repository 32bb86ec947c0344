#include "server/refusal_replies.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "api/overload_contract.h"
#include "engine/contract_status.h"
#include "server/generation_end.h"

namespace spillway::server {

api::ApiError Error(int status, std::string message, std::string type, std::string code,
                    std::string param) {
  return api::ApiError{status, std::move(message), std::move(type), std::move(param),
                       std::move(code)};
}

api::ApiError ContractError(std::string_view reason, std::string message) {
  const api::ContractRow* row = api::FindContractRow(reason);
  return Error(row != nullptr ? row->http_status : 503, std::move(message),
               std::string(row != nullptr ? row->error_type : "overloaded"), std::string(reason));
}

api::ApiError OverloadError(const AdmissionDecision& d, double ttft_slo_s,
                            double request_timeout_s) {
  const std::string reason(ToString(d.reason));
  std::string message;
  switch (d.reason) {
    case OverloadReason::kRateLimited:
      message = "Rate limit reached for this API key's tenant.";
      break;
    case OverloadReason::kKvSaturation:
      message =
          "Server overloaded (kv_saturation): KV cache usage is above the admission "
          "headroom (kv_headroom); new prefills wait until running requests free blocks.";
      break;
    case OverloadReason::kQueueDelayExceeded:
    case OverloadReason::kQueueDelayAndKvSaturation:
      if (d.ttft_forecast_s >= 0) {  // the forecast policy decided on its forecast
        message = std::isfinite(d.ttft_forecast_s)
                      ? fmt::format(
                            "Server overloaded ({}): forecast time to first token {:.3f} s + "
                            "margin {:.3f} s against a TTFT SLO of {:.2f} s.",
                            reason, d.ttft_forecast_s, d.ttft_margin_s, ttft_slo_s)
                      : fmt::format(
                            "Server overloaded ({}): no first token forecast within the TTFT "
                            "SLO of {:.2f} s.",
                            reason, ttft_slo_s);
        break;
      }
      message = fmt::format(
          "Server overloaded ({}): estimated queue delay {:.2f} s + prefill {:.3f} s against a "
          "TTFT SLO of {:.2f} s.",
          reason, d.queue_delay_est_s, d.prefill_est_s, ttft_slo_s);
      break;
    case OverloadReason::kDeadlineUnreachable:
      message = fmt::format(
          "Server overloaded (deadline_unreachable): estimated queue delay {:.2f} s + prefill "
          "{:.3f} s + decoding max_tokens {:.2f} s would pass the server's request deadline of "
          "{:.2f} s; a smaller max_tokens may be admitted.",
          d.queue_delay_est_s, d.prefill_est_s, d.decode_est_s, request_timeout_s);
      break;
    case OverloadReason::kFairShare:
      message =
          "Server overloaded (fair_share): this request's flow (x-gateway-inference-fairness-id, "
          "else its tenant) is served above its share of the offered load while another flow "
          "is refused; its place goes to the other flow.";
      break;
    case OverloadReason::kDraining:
      message = "Server is draining for shutdown; send new requests elsewhere.";
      break;
    default:
      message = "Server at its hard queue limit (" + reason + ").";
  }
  message += fmt::format(" Retry after {:.0f} s.", d.retry_after_s);
  const api::ContractRow* row = api::FindContractRow(reason);
  return Error(ContractStatus(d.reason), message,
               std::string(row != nullptr ? row->error_type : "overloaded"), reason);
}

api::ApiError NeverServable(const AdmissionDecision& d, std::int32_t prompt_tokens,
                            std::int32_t max_tokens, const EngineConfig& engine) {
  const std::string code(ToString(d.reason));
  std::string message;
  switch (d.reason) {
    case OverloadReason::kKvCapacityExceeded:
      if (d.max_output_tokens <= 0) {  // no max_tokens would help: the prompt is too long
        message = fmt::format(
            "This prompt alone needs KV cache for {} tokens; the whole KV cache holds {} ({} "
            "blocks of {} tokens) for the prompt and its completion together: shorten the "
            "prompt.",
            prompt_tokens, std::int64_t{engine.num_gpu_blocks} * engine.profile.block_size,
            engine.num_gpu_blocks, engine.profile.block_size);
        return Error(400, message, "invalid_request_error", code, "prompt");
      }
      message = fmt::format(
          "This request needs KV cache for {} tokens ({} in the prompt, {} for the completion), "
          "more than the whole KV cache holds ({} blocks of {} tokens); at most {} max_tokens "
          "fit with this prompt.",
          prompt_tokens + max_tokens, prompt_tokens, max_tokens, engine.num_gpu_blocks,
          engine.profile.block_size, d.max_output_tokens);
      break;
    case OverloadReason::kMaxTokensExceedsDeadline:
      if (d.max_output_tokens <= 0) {  // no max_tokens would help: the prefill is too long
        message = fmt::format(
            "This prompt's prefill alone ({} tokens, about {:.1f} s) would end after the "
            "server's request deadline of {:g} s even on an idle engine: shorten the prompt.",
            prompt_tokens, d.prefill_est_s, engine.admission.request_deadline_s);
        return Error(400, message, "invalid_request_error", code, "prompt");
      }
      message = fmt::format(
          "max_tokens {} cannot be generated within the server's request deadline of {:g} s "
          "even on an idle engine; at most {} fit.",
          max_tokens, engine.admission.request_deadline_s, d.max_output_tokens);
      break;
    default:
      message = fmt::format("This request can never be served as asked ({}).", code);
  }
  return Error(400, message, "invalid_request_error", code, "max_tokens");
}

net::Headers OverloadHeaders(const AdmissionDecision& d) {
  net::Headers h = ContractHeaders(ToString(d.reason), d.retry_after_s);
  if (d.reason == OverloadReason::kRateLimited) {
    // Unix time at which the bucket has a token again (overload lesson §3.3).
    h.emplace_back("X-RateLimit-Reset",
                   std::to_string(std::time(nullptr) + static_cast<std::time_t>(d.retry_after_s)));
  }
  return h;
}

}  // namespace spillway::server
