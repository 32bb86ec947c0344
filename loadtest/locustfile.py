"""A second load tool: Locust runs a Spillway scenario's arrivals against any OpenAI-compatible
server, the independent cross-check of `spillway bench` (which stays the tool of record).

    SPILLWAY_SCENARIO=scenarios/seed-burst.yaml \\
      locust -f loadtest/locustfile.py --headless --host http://127.0.0.1:8000 \\
             --users 1 --spawn-rate 1 --run-time 60s

The arrivals are open loop, as bench's: one Locust user (the dispatcher) sleeps until each
arrival's time and starts its request in a greenlet of its own, whatever the server does, so a
slow server does not slow the arrivals (Locust's users are closed loop). Each request is what
bench sends (src/loadgen/request_body.h): a prompt of token ids of the class's length,
`max_tokens` with `ignore_eos`, streamed, one connection per request.

Environment:
  SPILLWAY_SCENARIO   the scenario file (docs/scenarios.md): `poisson`, `steps` and `burst`
                      arrivals over its classes (fixed, uniform or lognormal token counts)
  SPILLWAY_ARRIVALS   instead: replay the first attempts of a `spillway bench --records` or
                      `spillway sim --records` file (its scheduled_s, prompt and max tokens)
  SPILLWAY_MODEL      the model to request (default: the first of GET /v1/models)
  SPILLWAY_API_KEY    sent as "Authorization: Bearer KEY"
  SPILLWAY_SEED       the arrivals' seed (default: the scenario's `seed`, else 1)
  SPILLWAY_SUMMARY    where to write the run's summary JSON at the end: offered, by_status
                      (counts per HTTP status, 0 for no answer), ttft_s {p50, p95, p99} of the
                      answered streams, makespan_s

Locust's own statistics name each request by its outcome ("200", "429", ...) and record the
TTFT as a request named "ttft" beside the whole request's time.
"""

import json
import math
import os
import random
import time

import gevent
import requests
import yaml
from locust import User, events, task

FIRST_TOKEN_ID = 1000  # bench's token ids: kFirstTokenId .. + kTokenIdSpan
TOKEN_ID_SPAN = 10000


class ScenarioError(ValueError):
    """A scenario this file cannot run: what and where."""


def draw_tokens(spec, rng, where):
    """A token count from a scenario's token distribution (docs/scenarios.md)."""
    if isinstance(spec, int):
        return spec
    if not isinstance(spec, dict) or "dist" not in spec:
        raise ScenarioError(f"{where}: a token count or {{dist: ...}} expected, got {spec!r}")
    if spec["dist"] == "uniform":
        return rng.randint(int(spec["min"]), int(spec["max"]))
    if spec["dist"] == "lognormal":
        mean, cv = float(spec["mean"]), float(spec["cv"])
        sigma2 = math.log(1 + cv * cv)
        x = rng.lognormvariate(math.log(mean) - sigma2 / 2, math.sqrt(sigma2))
        return max(int(spec.get("min", 1)), min(int(spec.get("max", 1 << 30)), round(x)))
    raise ScenarioError(f"{where}: unknown dist {spec['dist']!r} (uniform, lognormal)")


def scenario_arrivals(path, seed):
    """[(time_s, prompt_tokens, max_tokens)] of the scenario's arrivals, in time order."""
    with open(path, encoding="utf-8") as f:
        sc = yaml.safe_load(f)
    classes = sc.get("classes") or []
    if not classes:
        raise ScenarioError(f"{path}: classes: none (trace scenarios are bench's only)")
    shares = [float(c.get("share", 1)) for c in classes]
    rng = random.Random(seed if seed is not None else sc.get("seed", 1))
    arrival = sc.get("arrival") or {}
    process = arrival.get("process", "poisson")
    if process == "poisson":
        phases = [(float(arrival["rate"]), float(arrival["duration_s"]))]
    elif process == "steps":
        phases = [(float(s["rate"]), float(s["duration_s"])) for s in arrival["steps"]]
    elif process == "burst":
        phases = None
    else:
        raise ScenarioError(f"{path}: arrival.process {process!r}: poisson, steps or burst")

    def request(t):
        i = rng.choices(range(len(classes)), weights=shares)[0]
        where = f"{path}: classes[{i}]"
        return (t, draw_tokens(classes[i]["prompt_tokens"], rng, where + ".prompt_tokens"),
                draw_tokens(classes[i]["output_tokens"], rng, where + ".output_tokens"))

    if phases is None:
        return [request(0.0) for _ in range(int(arrival["burst_count"]))]
    out, start = [], 0.0
    for rate, duration in phases:
        t = start
        while rate > 0:
            t += rng.expovariate(rate)
            if t >= start + duration:
                break
            out.append(request(t))
        start += duration
    return out


def recorded_arrivals(path):
    """The first attempts of a bench or sim --records file, as scenario_arrivals returns."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            if r.get("attempt", 1) == 1:
                out.append((float(r["scheduled_s"]), int(r["prompt_tokens"]),
                            int(r["max_tokens"])))
    return sorted(out)


def completion_body(model, prompt_tokens, max_tokens, seed):
    """bench's request body: token-id prompt, ignore_eos, streamed with usage."""
    rng = random.Random(seed)
    prompt = [FIRST_TOKEN_ID + rng.randrange(TOKEN_ID_SPAN) for _ in range(prompt_tokens)]
    return {"model": model, "prompt": prompt, "max_tokens": max_tokens, "temperature": 0,
            "ignore_eos": True, "stream": True, "stream_options": {"include_usage": True}}


def percentile(sorted_values, q):
    """Nearest-rank percentile of an ascending list; None when empty."""
    if not sorted_values:
        return None
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


class ScenarioUser(User):
    """The dispatcher: runs the whole schedule once, then stops the run."""

    def on_start(self):
        self.headers = {"Content-Type": "application/json"}
        key = os.environ.get("SPILLWAY_API_KEY")
        if key:
            self.headers["Authorization"] = f"Bearer {key}"
        self.model = os.environ.get("SPILLWAY_MODEL") or self.first_model()
        seed = os.environ.get("SPILLWAY_SEED")
        if os.environ.get("SPILLWAY_ARRIVALS"):
            self.arrivals = recorded_arrivals(os.environ["SPILLWAY_ARRIVALS"])
        else:
            self.arrivals = scenario_arrivals(os.environ["SPILLWAY_SCENARIO"],
                                              int(seed) if seed else None)
        self.statuses = {}
        self.ttfts = []

    def first_model(self):
        r = requests.get(self.host + "/v1/models", headers=self.headers, timeout=10)
        r.raise_for_status()
        return r.json()["data"][0]["id"]

    @task
    def run_schedule(self):
        start = time.monotonic()
        greenlets = []
        for i, (t, prompt_tokens, max_tokens) in enumerate(self.arrivals):
            gevent.sleep(max(0.0, start + t - time.monotonic()))
            greenlets.append(gevent.spawn(self.one_request, i, prompt_tokens, max_tokens))
        gevent.joinall(greenlets)
        self.write_summary(time.monotonic() - start)
        self.environment.runner.quit()

    def one_request(self, index, prompt_tokens, max_tokens):
        body = completion_body(self.model, prompt_tokens, max_tokens, index + 1)
        sent = time.monotonic()
        status, ttft, error = 0, None, None
        try:
            # A session of its own: one connection per request, as bench.
            with requests.Session() as session:
                r = session.post(self.host + "/v1/completions", json=body, headers=self.headers,
                                 stream=True, timeout=(10, 600))
                status = r.status_code
                if status == 200:
                    for line in r.iter_lines():
                        if ttft is None and line.startswith(b"data: {"):
                            chunk = json.loads(line[6:])
                            if any(c.get("text") for c in chunk.get("choices", [])):
                                ttft = time.monotonic() - sent
                else:
                    r.content  # read the refusal's body
        except (requests.RequestException, ValueError) as e:  # ValueError: a malformed chunk
            error = e
        elapsed_ms = (time.monotonic() - sent) * 1000
        self.statuses[status] = self.statuses.get(status, 0) + 1
        events.request.fire(request_type="POST", name=str(status), response_time=elapsed_ms,
                            response_length=0, context={},
                            exception=error or (None if status == 200 else f"HTTP {status}"))
        if ttft is not None:
            self.ttfts.append(ttft)
            events.request.fire(request_type="STREAM", name="ttft", response_time=ttft * 1000,
                                response_length=0, exception=None, context={})

    def write_summary(self, makespan_s):
        path = os.environ.get("SPILLWAY_SUMMARY")
        if not path:
            return
        ttfts = sorted(self.ttfts)
        summary = {"offered": len(self.arrivals),
                   "by_status": {str(k): v for k, v in sorted(self.statuses.items())},
                   "ttft_s": {"p50": percentile(ttfts, 0.50), "p95": percentile(ttfts, 0.95),
                              "p99": percentile(ttfts, 0.99), "count": len(ttfts)},
                   "makespan_s": makespan_s}
        with open(path, "w", encoding="utf-8") as f:
            json.dump(summary, f)
            f.write("\n")
