"""Latency the scripted model server adds per request.

For each API (Anthropic Messages, OpenAI Responses, Chat Completions, Gemini) a
client on one keep-alive loopback connection sends the same request body over and
over and times the whole exchange, up to the last byte of the SSE reply. The same
client also talks, alternately, to a baseline in the same process: a trivial aiohttp
server that reads the body and answers it back as one SSE event. Both run on the same
HTTP stack, so ``server - baseline`` is what the model server itself costs: JSON
parse, the stateless plan, rendering, the request log (to a real file).

The request bodies are sized like real CLI calls (a ~20 KiB system prompt, a dozen
tools, a short conversation), so parsing is part of the cost. The reply is the
``text`` scenario (three text deltas plus usage).

Prints p50 and p95 for both sides and the difference per API; target: the server adds
<= 5 ms at p95 on every API. Exits 1 on a miss.

Run: ``python benchmarks/modelserver.py [--requests N] [--warmup N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aiohttp import web

from harness.modelserver import ModelServer

TARGET_P95_MS = 5.0
SYSTEM = ("You are a coding agent. Follow the rules below carefully.\n" * 360)[:20_000]


def _tool(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool. " * 20,
        "schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "Absolute path."},
                "content": {"type": "string"},
                "mode": {"type": "string", "enum": ["a", "b"]},
            },
            "required": ["path"],
        },
    }


TOOLS = [
    _tool(n)
    for n in (
        "Read",
        "Write",
        "Edit",
        "Bash",
        "Glob",
        "Grep",
        "Todo",
        "Fetch",
        "Search",
        "Task",
        "Skill",
        "Agent",
    )
]
TURNS = [
    {"role": "user", "content": "Look at the project and say hello."},
    {"role": "assistant", "content": "Looking."},
    {"role": "user", "content": "Say hello please."},
]


def bodies() -> dict[str, tuple[str, bytes]]:
    anthropic = {
        "model": "claude-opus-5-5",
        "max_tokens": 1024,
        "stream": True,
        "system": SYSTEM,
        "tools": [
            {"name": t["name"], "description": t["description"], "input_schema": t["schema"]}
            for t in TOOLS
        ],
        "messages": TURNS,
    }
    responses = {
        "model": "gpt-5.5",
        "stream": True,
        "instructions": SYSTEM,
        "tools": [
            {
                "type": "function",
                "name": t["name"],
                "description": t["description"],
                "parameters": t["schema"],
            }
            for t in TOOLS
        ],
        "input": [
            {
                "type": "message",
                "role": m["role"],
                "content": [{"type": "input_text", "text": m["content"]}],
            }
            for m in TURNS
        ],
    }
    chat = {
        "model": "mock-model",
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": t["name"],
                    "description": t["description"],
                    "parameters": t["schema"],
                },
            }
            for t in TOOLS
        ],
        "messages": [{"role": "system", "content": SYSTEM}, *TURNS],
    }
    gemini = {
        "systemInstruction": {"parts": [{"text": SYSTEM}]},
        "tools": [
            {
                "functionDeclarations": [
                    {
                        "name": t["name"],
                        "description": t["description"],
                        "parametersJsonSchema": t["schema"],
                    }
                    for t in TOOLS
                ]
            }
        ],
        "contents": [
            {
                "role": "model" if m["role"] == "assistant" else "user",
                "parts": [{"text": m["content"]}],
            }
            for m in TURNS
        ],
    }
    return {
        "anthropic": ("/v1/messages?beta=true", json.dumps(anthropic).encode()),
        "responses": ("/v1/responses", json.dumps(responses).encode()),
        "chat": ("/v1/chat/completions", json.dumps(chat).encode()),
        "gemini": ("/v1beta/models/g:streamGenerateContent?alt=sse", json.dumps(gemini).encode()),
    }


class EchoServer:
    """The baseline: aiohttp on loopback, body read and sent back as one SSE event."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.runner: web.AppRunner | None = None
        self.port = 0

    async def _echo(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(b"data: " + raw[:64] + b"\n\n")
        await response.write_eof()
        return response

    async def _start(self) -> None:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._echo)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self.runner.addresses[0][1])

    def start(self) -> EchoServer:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(10)
        return self

    def stop(self) -> None:
        if self.runner is not None:
            asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def timer(port: int, path: str, payload: bytes) -> Callable[[], float]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"content-type": "application/json", "authorization": "Bearer bench-fake-key"}

    def once() -> float:
        start = time.perf_counter()
        conn.request("POST", path, body=payload, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        elapsed = time.perf_counter() - start
        if resp.status != 200 or not data:
            raise SystemExit(f"{path}: status {resp.status}, {len(data)} bytes")
        return elapsed * 1000

    return once


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    args = parser.parse_args(argv)
    echo = EchoServer().start()
    misses: list[str] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        ModelServer("text", log_path=Path(tmp) / "requests.jsonl") as server,
    ):
        print(
            f"{'api':<10} {'server p50':>11} {'p95':>7} {'echo p50':>9} {'p95':>7} "
            f"{'added p50':>10} {'added p95':>10}   (ms, {args.requests} requests, "
            f"{len(next(iter(bodies().values()))[1]) // 1024} KiB bodies)"
        )
        for api, (path, payload) in bodies().items():
            model = timer(server.port, path, payload)
            base = timer(echo.port, path, payload)
            for _ in range(args.warmup):
                model()
                base()
            m_times: list[float] = []
            b_times: list[float] = []
            for _ in range(args.requests):  # interleaved, so drift hits both sides
                m_times.append(model())
                b_times.append(base())
            m50, m95 = statistics.median(m_times), pct(m_times, 0.95)
            b50, b95 = statistics.median(b_times), pct(b_times, 0.95)
            added50, added95 = m50 - b50, m95 - b95
            print(
                f"{api:<10} {m50:11.2f} {m95:7.2f} {b50:9.2f} {b95:7.2f} "
                f"{added50:10.2f} {added95:10.2f}"
            )
            if added95 > TARGET_P95_MS:
                misses.append(f"{api}: +{added95:.2f} ms at p95")
        logged = len(server.requests)
    echo.stop()
    print(f"requests logged: {logged}")
    if misses:
        print(f"MISS (target <= {TARGET_P95_MS} ms added at p95): " + "; ".join(misses))
        return 1
    print(f"ok: the server adds <= {TARGET_P95_MS} ms per request at p95 on every API")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
