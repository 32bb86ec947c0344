// What `spillway calibrate` takes as a measurement (loadgen/calibration_probe.h ProbeFailure):
// a stream of every token asked for, from the model asked for; not a refusal, an error, a short
// stream, nor what a gateway in front answers instead of the engine (another model of its
// cascade, a clamped max_tokens, its result cache).

#include <string>

#include <gtest/gtest.h>

#include "loadgen/calibration_probe.h"

namespace spillway::loadgen {
namespace {

AttemptRecord Streamed() {
  AttemptRecord r;
  r.status = 200;
  r.outcome = AttemptOutcome::kCompleted;
  r.sent_s = 1;
  r.first_token_s = 1.05;
  r.max_tokens = 64;
  r.output_tokens = 64;
  return r;
}

TEST(ProbeFailureTest, AWholeStreamFromTheModelAskedForIsAMeasurement) {
  EXPECT_EQ(ProbeFailure(Streamed(), "m"), "");
  AttemptRecord same = Streamed();
  same.served_model = "m";  // a gateway names the pool on every answer
  EXPECT_EQ(ProbeFailure(same, "m"), "");
}

TEST(ProbeFailureTest, WhatAGatewayAnswersInsteadOfTheEngineIsNot) {
  AttemptRecord cascaded = Streamed();
  cascaded.served_model = "small";
  EXPECT_NE(ProbeFailure(cascaded, "m").find("served by small instead of m"), std::string::npos);
  AttemptRecord clamped = Streamed();
  clamped.degraded = true;
  EXPECT_NE(ProbeFailure(clamped, "m").find("X-Degraded"), std::string::npos);
  AttemptRecord cached = Streamed();
  cached.cache_hit = true;
  EXPECT_NE(ProbeFailure(cached, "m").find("X-Cache"), std::string::npos);
}

TEST(ProbeFailureTest, RefusalsErrorsAndShortStreamsAreNot) {
  AttemptRecord refused = Streamed();
  refused.status = 429;
  refused.reason = "queue_delay_exceeded";
  EXPECT_EQ(ProbeFailure(refused, "m"), "refused: 429 (queue_delay_exceeded)");
  AttemptRecord none = Streamed();
  none.status = 0;
  EXPECT_EQ(ProbeFailure(none, "m").rfind("no response", 0), 0u);
  AttemptRecord short_stream = Streamed();
  short_stream.output_tokens = 10;
  EXPECT_EQ(ProbeFailure(short_stream, "m"), "10 tokens streamed of 64");
}

}  // namespace
}  // namespace spillway::loadgen
