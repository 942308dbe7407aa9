"""Live mode timings: per-CLI wall time of the ``text`` scenario, real vs fake, and the
scripted model server's own added latency per request (p50/p95; target <= 5 ms p95).

    python benchmarks/live.py [ID ...]          # default: claude codex pi

A CLI that is not installed (``harness live install ID``) is reported as skipped.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import urllib.request

from harness.defs.registry import get_agent_def
from harness.live.session import LiveUnavailable, run_live
from harness.modelserver import ModelServer


def _wall(agent: str, side: str) -> float | str:
    started = time.perf_counter()
    try:
        run = run_live(get_agent_def(agent), "text", side=side)
    except LiveUnavailable as exc:
        return f"skipped ({exc.reason})"
    run.dirs.cleanup()
    return round(time.perf_counter() - started, 3)


def server_latency(n: int = 200) -> dict[str, float]:
    """Round-trip of a streamed Anthropic text reply over loopback, in ms."""
    body = json.dumps({"model": "m", "stream": True, "max_tokens": 10,
                       "messages": [{"role": "user", "content": "hi"}]}).encode()
    samples: list[float] = []
    with ModelServer("text") as server:
        for _ in range(n):
            req = urllib.request.Request(server.url + "/v1/messages", data=body,
                                         headers={"content-type": "application/json"})
            t = time.perf_counter()
            with urllib.request.urlopen(req, timeout=10) as resp:
                resp.read()
            samples.append((time.perf_counter() - t) * 1000)
    samples.sort()
    return {"p50_ms": round(statistics.median(samples), 3),
            "p95_ms": round(samples[int(len(samples) * 0.95) - 1], 3)}


def main(argv: list[str]) -> int:
    for agent in argv or ["claude", "codex", "pi"]:
        print(json.dumps({"agent": agent, "real_s": _wall(agent, "real"),
                          "fake_s": _wall(agent, "fake")}))
    print(json.dumps({"server_latency": server_latency()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
