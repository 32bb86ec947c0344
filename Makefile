# Spillway: the commands a newcomer needs. See README.md.
JOBS ?= $(shell nproc)
SCENARIO ?= scenarios/seed-burst.yaml
FUZZ_SECONDS ?= 30

.PHONY: deps build test test-asan fuzz demo bench bench-reject format format-check clean

deps:
	./scripts/deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

test: build
	ctest --preset release -j $(JOBS)

# The sanitizer job CI runs after the plain one (a separate build tree: build-asan/).
test-asan: deps
	cmake --preset asan >/dev/null
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS) -LE slow

# The libFuzzer targets (clang-14, build-fuzz/), each for FUZZ_SECONDS on a copy of its seeds
# (docs/fuzzing.md). FUZZ_JOBS=2 runs two at a time.
fuzz: deps
	./scripts/fuzz.sh $(FUZZ_SECONDS)

demo: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./scripts/demo.sh

bench: build
	./build/spillway_bench

# 429s per second answered by spillway serve, measured with wrk (docs/serve.md).
bench-reject: deps
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS) --target spillway
	./bench/reject_throughput.sh build/spillway

format:
	clang-format -i $$(git ls-files '*.h' '*.cc')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.h' '*.cc')

clean:
	rm -rf build build-asan build-fuzz
