#include "loadgen/calibration_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <vector>

#include <boost/json.hpp>

#include "api/responses.h"
#include "loadgen/http_attempt.h"
#include "loadgen/request_body.h"
#include "net/clock.h"
#include "net/http_get.h"
#include "net/target.h"
#include "report/attempt_record.h"

namespace spillway::loadgen {
namespace asio = boost::asio;
namespace json = boost::json;
namespace {

void Rethrow(std::exception_ptr e) {
  if (e) {
    std::rethrow_exception(e);
  }
}

// The `max_model_len` of `model` in a GET /v1/models body (vLLM's model card and serve's
// carry it); nullopt when the body has none (or is not such a list).
std::optional<std::int32_t> ContextOf(const std::string& body, const std::string& model) {
  boost::system::error_code ec;
  const json::value v = json::parse(body, ec);
  if (ec || !v.is_object() || !v.as_object().contains("data") || !v.at("data").is_array()) {
    return std::nullopt;
  }
  for (const json::value& card : v.at("data").as_array()) {
    const json::object* o = card.if_object();
    if (o == nullptr || !o->contains("id") || !o->at("id").is_string() ||
        o->at("id").as_string() != model || !o->contains("max_model_len")) {
      continue;
    }
    const json::value& len = o->at("max_model_len");
    if (len.is_int64() && len.as_int64() > 0 && len.as_int64() <= (1 << 30)) {
      return static_cast<std::int32_t>(len.as_int64());
    }
  }
  return std::nullopt;
}

std::string Streams(std::int32_t n) { return fmt::format("{} stream{}", n, n == 1 ? "" : "s"); }

// "why" in parentheses, or nothing when it is empty.
std::string Why(const std::string& why) { return why.empty() ? "" : " (" + why + ")"; }

}  // namespace

std::string ProbeFailure(const AttemptRecord& r, const std::string& model) {
  if (r.status == 0) {
    return "no response" + Why(r.reason);
  }
  if (r.status == 429 || r.status == 503) {
    return fmt::format("refused: {}{}", r.status, Why(r.reason));
  }
  if (r.status != 200) {
    return fmt::format("HTTP {}{}", r.status, Why(r.reason));
  }
  if (r.outcome != AttemptOutcome::kCompleted || r.first_token_s == kNever) {
    return "the stream ended early" + Why(r.reason);
  }
  if (!r.served_model.empty() && r.served_model != model) {
    return fmt::format(
        "served by {} instead of {} (X-Spillway-Served-Model: a gateway's model "
        "cascade; calibrate the engine itself, or a pool without fallbacks)",
        r.served_model, model);
  }
  if (r.degraded) {
    return "max_tokens clamped (X-Degraded): the target degrades under this load";
  }
  if (r.cache_hit) {
    return "answered from a result cache (X-Cache: hit)";
  }
  if (r.output_tokens != r.max_tokens) {
    return fmt::format("{} tokens streamed of {}", r.output_tokens, r.max_tokens);
  }
  return "";
}

struct CalibrationProbe::Impl {
  asio::io_context ioc{1};
  net::Target target;
  net::Endpoints endpoints;
  net::SteadyClock clock;
  AttemptContext context;
  std::string model;
  std::string authorization;
  std::uint64_t next_seed = 1;
  std::vector<double> gaps;
  std::optional<std::int32_t> max_model_len;

  // Runs `work` on the io_context until it ends.
  template <typename Awaitable>
  void Run(Awaitable work) {
    ioc.restart();
    asio::co_spawn(ioc, std::move(work), Rethrow);
    ioc.run();
  }

  AttemptRecord Attempt(std::int32_t prompt_tokens, std::int32_t max_tokens) {
    AttemptRecord out;
    Run(Send(prompt_tokens, max_tokens, &out));
    return out;
  }

  asio::awaitable<void> Send(std::int32_t prompt_tokens, std::int32_t max_tokens,
                             AttemptRecord* out) {
    AttemptRecord r;
    r.request = static_cast<std::int64_t>(next_seed);
    r.prompt_tokens = prompt_tokens;
    r.max_tokens = max_tokens;
    r.sent_s = clock.Now();
    const std::string body = CompletionBody(model, prompt_tokens, max_tokens, next_seed++);
    *out = co_await RunAttempt(context, r, body, authorization);
  }
};

CalibrationProbe::CalibrationProbe(const ProbeOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.target = net::ParseTarget(options.target_url);
  m.endpoints = net::Resolve(m.ioc, m.target);
  m.authorization = options.api_key.empty() ? "" : "Bearer " + options.api_key;
  m.context.endpoints = &m.endpoints;
  m.context.target = &m.target;
  m.context.clock = &m.clock;
  m.context.path = "/v1/completions";
  m.context.authorization = m.authorization;
  m.context.max_request_s = options.request_timeout_s;
  m.context.on_gap = [this](Seconds gap_s) { impl_->gaps.push_back(gap_s); };
  net::GetResult models;
  m.Run([&]() -> asio::awaitable<void> {
    models = co_await net::HttpGet(m.endpoints, m.target, "/v1/models", m.authorization, 10);
  }());
  if (models.status == 0) {
    throw std::runtime_error("cannot reach " + options.target_url +
                             ": GET /v1/models: " + models.error);
  }
  m.model = options.model;
  m.max_model_len = ContextOf(models.status == 200 ? models.body : "", m.model);
  if (m.model.empty()) {
    const auto id = models.status == 200 ? api::FirstModelId(models.body) : std::nullopt;
    if (!id) {
      throw std::runtime_error(
          fmt::format("{}: GET /v1/models answered {} without a model id: name the model (--model)",
                      options.target_url, models.status));
    }
    m.model = *id;
    m.max_model_len = ContextOf(models.body, m.model);
  }
}

CalibrationProbe::~CalibrationProbe() = default;

const std::string& CalibrationProbe::model() const { return impl_->model; }

std::optional<std::int32_t> CalibrationProbe::max_model_len() const { return impl_->max_model_len; }

Seconds CalibrationProbe::RoundTrip(std::int32_t samples) {
  Impl& m = *impl_;
  std::vector<double> times;
  for (std::int32_t i = 0; i < samples; ++i) {
    net::GetResult r;
    const Seconds start = m.clock.Now();
    m.Run([&]() -> asio::awaitable<void> {
      r = co_await net::HttpGet(m.endpoints, m.target, "/v1/models", m.authorization, 10);
    }());
    if (r.status != 200) {
      throw ProbeError(fmt::format("GET /v1/models answered {} {}", r.status, r.error));
    }
    times.push_back(m.clock.Now() - start);
  }
  return calibrate::Median(times);
}

calibrate::PrefillPoint CalibrationProbe::Prefill(std::int32_t prompt_tokens,
                                                  std::int32_t samples) {
  std::vector<double> ttfts;
  for (std::int32_t i = 0; i < samples; ++i) {
    const AttemptRecord r = impl_->Attempt(prompt_tokens, 1);
    if (const std::string why = ProbeFailure(r, impl_->model); !why.empty()) {
      throw ProbeError(fmt::format("a prompt of {} tokens: {}", prompt_tokens, why));
    }
    ttfts.push_back(r.first_token_s - r.sent_s);
  }
  return {.prompt_tokens = prompt_tokens, .ttft_s = calibrate::Median(ttfts), .samples = samples};
}

calibrate::DecodePoint CalibrationProbe::Decode(std::int32_t concurrency,
                                                std::int32_t prompt_tokens,
                                                std::int32_t output_tokens) {
  Impl& m = *impl_;
  m.gaps.clear();
  std::vector<AttemptRecord> records(static_cast<std::size_t>(concurrency));
  m.ioc.restart();
  for (AttemptRecord& r : records) {
    asio::co_spawn(m.ioc, m.Send(prompt_tokens, output_tokens, &r), Rethrow);
  }
  m.ioc.run();
  std::int32_t refused = 0;
  std::string first_failure;
  for (const AttemptRecord& r : records) {
    if (const std::string why = ProbeFailure(r, impl_->model); !why.empty()) {
      refused += r.status == 429 || r.status == 503 ? 1 : 0;
      if (first_failure.empty()) {
        first_failure = why;
      }
    }
  }
  if (!first_failure.empty()) {
    throw ProbeError(fmt::format("{} at once: {}{}", Streams(concurrency), first_failure,
                                 refused > 0 ? fmt::format(" ({} refused)", refused) : ""));
  }
  return {.concurrency = concurrency,
          .context_tokens = prompt_tokens + output_tokens / 2,
          .itl_s = calibrate::Median(m.gaps),
          .samples = static_cast<std::int64_t>(m.gaps.size())};
}

calibrate::LoadedPrefillPoint CalibrationProbe::PrefillUnderDecode(
    std::int32_t prompt_tokens, std::int32_t concurrency, std::int32_t stream_prompt_tokens,
    std::int32_t stream_output_tokens) {
  Impl& m = *impl_;
  m.gaps.clear();
  std::vector<AttemptRecord> streams(static_cast<std::size_t>(concurrency));
  AttemptRecord probe;
  m.ioc.restart();
  for (AttemptRecord& r : streams) {
    asio::co_spawn(m.ioc, m.Send(stream_prompt_tokens, stream_output_tokens, &r), Rethrow);
  }
  // Every stream has its first token and one more (its first gap) before the prompt is sent:
  // the prompt's steps are mixed ones from its first chunk on.
  asio::co_spawn(
      m.ioc,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer wait(m.ioc);
        const Seconds give_up_s = m.clock.Now() + m.context.max_request_s;
        while (m.gaps.size() < static_cast<std::size_t>(concurrency) && m.clock.Now() < give_up_s) {
          wait.expires_after(std::chrono::milliseconds(2));
          co_await wait.async_wait(asio::use_awaitable);
        }
        co_await m.Send(prompt_tokens, 1, &probe);
      }(),
      Rethrow);
  m.ioc.run();
  for (const AttemptRecord& r : streams) {
    if (const std::string why = ProbeFailure(r, impl_->model); !why.empty()) {
      throw ProbeError(fmt::format("{} decoding: {}", Streams(concurrency), why));
    }
  }
  if (const std::string why = ProbeFailure(probe, impl_->model); !why.empty()) {
    throw ProbeError(fmt::format("a prompt of {} tokens beside {}: {}", prompt_tokens,
                                 Streams(concurrency), why));
  }
  for (const AttemptRecord& r : streams) {
    if (r.finished_s < probe.first_token_s) {
      throw ProbeError(fmt::format(
          "a stream of {} tokens ended before the prompt of {} had its first token: the target "
          "runs fewer sequences at once, or a smaller token budget, than planned (give its "
          "--max-num-seqs and --max-num-batched-tokens)",
          stream_output_tokens, prompt_tokens));
    }
  }
  // The streams' context when the prompt came: their prompt plus the tokens they had
  // generated by then, at their measured pace.
  Seconds first_s = 0;
  for (const AttemptRecord& r : streams) {
    first_s += r.first_token_s / concurrency;
  }
  const Seconds itl_s = calibrate::Median(m.gaps);
  const auto generated =
      itl_s > 0 ? static_cast<std::int64_t>(std::max<Seconds>(0, probe.sent_s - first_s) / itl_s)
                : 0;
  return {.prompt_tokens = prompt_tokens,
          .concurrency = concurrency,
          .context_tokens = stream_prompt_tokens + generated,
          .stream_output_tokens = stream_output_tokens,
          .ttft_s = probe.first_token_s - probe.sent_s,
          .samples = 1};
}

}  // namespace spillway::loadgen
