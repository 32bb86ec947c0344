#include "calibrate/points_file.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "config/yaml_reader.h"

namespace spillway::calibrate {
namespace {

using config::Field;

std::int32_t IntIn(const Field& f, std::int64_t lo) {
  const std::int64_t v = f.AsInt();
  if (v < lo || v > std::numeric_limits<std::int32_t>::max()) {
    f.Fail("must be an integer in [" + std::to_string(lo) + ", 2147483647]");
  }
  return static_cast<std::int32_t>(v);
}

Seconds PositiveSeconds(const Field& f) { return config::Positive(f, f.AsDouble()); }

std::vector<std::int32_t> Tokens(const Field& f, std::int64_t lo) {
  if (!f.is_sequence()) {
    f.Fail("must be a list of token counts");
  }
  std::vector<std::int32_t> out;
  for (const Field& item : f.Items()) {
    out.push_back(IntIn(item, lo));
  }
  return out;
}

BurstPoint ReadBurst(const Field& f) {
  f.RequireKnownKeys(
      {"source", "ttft_median_s", "tpot_median_s", "duration_s", "prompt_tokens", "output_tokens"});
  BurstPoint b;
  b.source = f["source"].String(f.file() + " " + f.path());
  b.ttft_median_s = PositiveSeconds(f["ttft_median_s"]);
  b.tpot_median_s = PositiveSeconds(f["tpot_median_s"]);
  b.duration_s = PositiveSeconds(f["duration_s"]);
  b.prompt_tokens = Tokens(f["prompt_tokens"], 1);
  b.output_tokens = Tokens(f["output_tokens"], 0);
  if (b.prompt_tokens.empty()) {
    f["prompt_tokens"].FailSaying("must list at least one request");
  }
  if (std::none_of(b.output_tokens.begin(), b.output_tokens.end(),
                   [](std::int32_t n) { return n >= 2; })) {
    f["output_tokens"].FailSaying(
        "must have a request of 2 tokens or more (a median TPOT needs a gap between tokens)");
  }
  if (b.duration_s < b.ttft_median_s) {
    f["duration_s"].Fail("must be at least ttft_median_s (the run outlasts its first tokens)");
  }
  if (b.prompt_tokens.size() != b.output_tokens.size()) {
    f["output_tokens"].FailSaying("must list as many requests as prompt_tokens (" +
                                  std::to_string(b.prompt_tokens.size()) + "), got " +
                                  std::to_string(b.output_tokens.size()));
  }
  return b;
}

}  // namespace

PointsFile LoadPointsFile(const std::string& path) {
  const Field root = Field::LoadFile(path);
  root.RequireKnownKeys({"source", "measured_at", "engine", "transport_s", "decode_prompt_tokens",
                         "decode_output_tokens", "prefill", "decode", "bursts"});
  PointsFile out;
  out.source = root["source"].String(path);
  out.measured_at = root["measured_at"].String("");
  const Field engine = root["engine"];
  if (!engine.present()) {
    root.FailSaying(
        "engine: required: the configuration the figures were measured on "
        "(max_num_batched_tokens and max_num_seqs at least)");
  }
  out.engine = engine["name"].String("");
  config::ReadEngineSettings(engine, "engine", {"name"}, &out.settings);
  for (const char* key : {"max_num_batched_tokens", "max_num_seqs"}) {
    if (!engine[key].present()) {
      engine[key].FailSaying("required: the budget the measured engine ran with");
    }
  }
  if (engine["profile"].present()) {
    engine["profile"].FailSaying("not read here: the hardware and model are --profile's");
  }
  // The figures are the engine's own budgets, not ones derived from an SLO.
  out.settings.slo_budgets = out.settings.slo_budgets.value_or(false);
  CalibrationPoints& p = out.points;
  if (const Field t = root["transport_s"]; t.present()) {
    p.transport_s = config::NonNegative(t, t.AsDouble());
  }
  if (const Field d = root["decode_prompt_tokens"]; d.present()) {
    p.decode_prompt_tokens = IntIn(d, 1);
  }
  if (const Field d = root["decode_output_tokens"]; d.present()) {
    p.decode_output_tokens = IntIn(d, 2);
  }
  auto items = [](const Field& f) { return f.present() ? f.Items() : std::vector<Field>{}; };
  for (const Field& f : items(root["prefill"])) {
    f.RequireKnownKeys({"prompt_tokens", "ttft_s", "samples"});
    p.prefill.push_back({IntIn(f["prompt_tokens"], 1), PositiveSeconds(f["ttft_s"]),
                         f["samples"].present() ? IntIn(f["samples"], 1) : 1});
  }
  for (const Field& f : items(root["decode"])) {
    f.RequireKnownKeys({"concurrency", "context_tokens", "itl_s", "samples"});
    const std::int32_t concurrency = IntIn(f["concurrency"], 1);
    if (concurrency > *out.settings.max_num_seqs) {
      f["concurrency"].Fail("must be at most engine.max_num_seqs, " +
                            std::to_string(*out.settings.max_num_seqs) +
                            " (streams past it queue: their gaps are not one batch's step)");
    }
    const std::int32_t context = f["context_tokens"].present() ? IntIn(f["context_tokens"], 1) : 0;
    if (f["context_tokens"].present() && context <= p.decode_output_tokens / 2) {
      f["context_tokens"].Fail("must be more than decode_output_tokens / 2 (" +
                               std::to_string(p.decode_output_tokens / 2) +
                               "): the mean context of streams that generate that many");
    }
    p.decode.push_back({concurrency, context, PositiveSeconds(f["itl_s"]),
                        f["samples"].present() ? IntIn(f["samples"], 1) : 1});
  }
  for (const Field& f : items(root["bursts"])) {
    p.bursts.push_back(ReadBurst(f));
  }
  if (p.prefill.size() + p.decode.size() + 3 * p.bursts.size() < 3) {
    root.FailSaying("holds fewer than three points to fit (a burst counts three)");
  }
  return out;
}

}  // namespace spillway::calibrate
