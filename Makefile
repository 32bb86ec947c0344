# Spillway: the commands a newcomer needs. See README.md.
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/seed-burst.yaml
FUZZ_SECONDS ?= 30
SOAK_SECONDS ?= 600

# Each target installs the Debian packages it needs first (scripts/deps.sh GROUP; README.md,
# "Quick start", says how much each group installs). `make deps` installs every group.
DEPS = ./scripts/deps.sh

.PHONY: deps build test build-asan test-asan build-tsan test-tsan build-fuzz fuzz demo soak bench bench-failure bench-reject bench-cold-burst bench-gateway bench-cache bench-limit bench-metrics format format-check clean

deps:
	$(DEPS) all

build:
	$(DEPS) build
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

# Two ctest slots a core: the live tests wait on the clock, and a test that is not live takes
# two slots (tests/CMakeLists.txt), so at most a core's worth of those run at once, and live
# tests fill the other slots.
test: build
	$(DEPS) test
	ctest --preset release -j $$(( 2 * $(JOBS) ))

# The sanitizer job CI runs after the plain one (a separate build tree: build-asan/). The
# sanitizer presets build without debug info (-g0, to keep CI under 30 minutes): reports name
# functions, not lines; for lines, configure with
# cmake --preset asan -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" (tsan likewise).
build-asan:
	$(DEPS) test
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)

test-asan: build-asan
	ctest --preset asan -j $(JOBS)

# ThreadSanitizer over the suites with threads (server, gateway, loadgen; build-tsan/). Every process
# (test binaries and the servers they start) writes its reports under build-tsan/tsan-reports/;
# any report fails the target.
TSAN_REPORTS = $(CURDIR)/build-tsan/tsan-reports
build-tsan:
	$(DEPS) test
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS)

test-tsan: build-tsan
	rm -rf $(TSAN_REPORTS) && mkdir -p $(TSAN_REPORTS)
	TSAN_OPTIONS="log_path=$(TSAN_REPORTS)/report second_deadlock_stack=1" ctest --preset tsan -j $(JOBS)
	@if ls $(TSAN_REPORTS)/report* >/dev/null 2>&1; then cat $(TSAN_REPORTS)/report*; \
	  echo "test-tsan: ThreadSanitizer reports above" >&2; exit 1; fi

# The libFuzzer targets (clang-14, build-fuzz/), each for FUZZ_SECONDS on a copy of its seeds
# (docs/fuzzing.md). FUZZ_JOBS=2 runs two at a time.
build-fuzz:
	$(DEPS) fuzz
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)

fuzz: build-fuzz
	./scripts/fuzz.sh $(FUZZ_SECONDS)

demo:
	$(DEPS) demo
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./scripts/demo.sh

# The soak (docs/soak.md; not in CI): SOAK_SECONDS (default 600) at ten times the engine's
# capacity against spillway serve; checks replies, memory and liveness, writes out/soak/.
soak:
	$(DEPS) soak
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	SOAK_SECONDS=$(SOAK_SECONDS) ./scripts/soak.sh

# The microbenchmarks (Google Benchmark), then the failure-injection suite at full length.
bench: build
	$(DEPS) bench
	./build/spillway_bench
	./scripts/failure_suite.sh build

# Only the failure-injection suite at full length, sim and live (about 13 min; docs/failure.md).
bench-failure: build
	$(DEPS) bench
	./scripts/failure_suite.sh build

# 429s per second answered by spillway serve, measured with wrk (docs/serve.md).
bench-reject:
	$(DEPS) bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./bench/reject_throughput.sh build/spillway

# Cold simultaneous bursts of 100 and 1,000: the refusals' latency at the client, beside nginx
# answering 429 to the same burst from the same client (bench/cold_burst.sh; README).
bench-cold-burst:
	$(DEPS) bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./bench/cold_burst.sh build/spillway

# Spillway's metrics registry beside the Prometheus C++ client on the per-request and
# per-scrape paths (bench/metrics/metrics_bench.cc; docs/gateway.md, "Performance").
bench-metrics:
	$(DEPS) bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway_metrics_bench
	./build/spillway_metrics_bench --benchmark_repetitions=3 --benchmark_report_aggregates_only=true

# The latency spillway gateway adds in front of a fast upstream, beside nginx proxy_pass, then
# what it adds to 6,000 concurrent SSE streams and their memory (docs/gateway.md, "Performance").
bench-gateway:
	$(DEPS) bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./bench/gateway_latency.sh build/spillway
	./bench/gateway_streams.sh build/spillway

# The exact-result cache's hit beside nginx proxy_cache, against one emulated engine
# (bench/cache_hit.sh; docs/gateway.md, "The exact-result cache").
bench-cache:
	$(DEPS) bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./bench/cache_hit.sh build/spillway

# One tenant's limit across 2, 3 and 4 gateways sharing a Redis (beside a fixed window), Redis
# killed and restarted, and the shared decision's latency (bench/shared_limit.sh, ~8 min).
bench-limit:
	$(DEPS) bench
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./bench/shared_limit.sh build/spillway

format:
	$(DEPS) format
	clang-format -i $$(git ls-files '*.h' '*.cc')

format-check:
	$(DEPS) format
	clang-format --dry-run --Werror $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build build-asan build-tsan build-fuzz
