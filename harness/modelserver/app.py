"""The scripted model server: routing, and starting and stopping it.

:class:`ModelServer` serves the four model APIs the real CLIs speak (design §Live
mode; recordings/real/ for what each CLI sends) from one scenario file, on
127.0.0.1 only (MODEL-BIND-001). It runs either

Design: docs/design/modelserver.md#harness.modelserver.app
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import ipaddress
import itertools
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from aiohttp import web

from fake_clis.scenario import Scenario, load_scenario
from harness.modelserver import anthropic, gemini, openai_chat, openai_responses
from harness.modelserver.errors import (
    ApiErrorSpec,
    NonLoopbackHostError,
    ServerStateError,
    UnsatisfiableSchemaError,
)
from harness.modelserver.log import RequestLog, RequestRecord, redacted
from harness.modelserver.scenario_script import (
    Conversation,
    ErrorBlock,
    HangBlock,
    Pause,
    ReplyPlan,
    plan_reply,
)
from harness.modelserver.sse import Frame, ReplyIds

__all__ = [
    "DEFAULT_MODELS",
    "RETRY_HEADERS",
    "ModelServer",
    "RequestTiming",
    "Route",
    "check_loopback",
    "model_entry",
    "resolve_route",
]

_logger = logging.getLogger(__name__)

#: Model ids the listings name (any id asked for by ``…/models/<id>`` is answered too).
DEFAULT_MODELS = ("mock-model", "gpt-5.5", "claude-opus-5-5", "gemini-3.8-flash")
#: Request bodies up to this size (claude and qwen ACP send several hundred KiB).
MAX_BODY = 64 * 1024 * 1024
START_TIMEOUT_S = 15.0
STOP_TIMEOUT_S = 15.0
#: How long stop() lets running handlers finish before they are cancelled.
SHUTDOWN_GRACE_S = 2.0
#: Sent with every scripted API error (MODEL-ERR-001). Real CLIs retry a 5xx/429 with
#: exponential backoff unless the reply says when to retry: opencode 1.18.33 spent 93 s
#: on six attempts at the ``api_error`` scenario without these, about 1 s with them. The
#: CLI still makes every retry it would make (its retry count is its behaviour); only the
#: waits go. ``retry-after-ms`` is 1, not 0: the OpenAI and Anthropic SDKs treat 0 as
#: absent and fall back to their own backoff.
RETRY_HEADERS: Mapping[str, str] = {"retry-after-ms": "1", "retry-after": "0"}


# -- routing ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Route:
    """What a request asks for. ``kind`` is one of :data:`ROUTE_KINDS`."""

    kind: str
    model: str | None = None
    #: For Gemini: whether the path asks for streaming (``:streamGenerateContent``).
    stream: bool = False


ROUTE_KINDS = (
    "messages",
    "count_tokens",
    "responses",
    "chat",
    "generate",
    "gemini_count",
    "models",
    "model",
    "probe",
    "not_found",
)

_GEMINI_PATH = re.compile(
    r"/models/(?P<model>[^/:]+):(?P<action>streamGenerateContent|generateContent|countTokens)$"
)
_MODEL_PATH = re.compile(r"/models/(?P<model>[^/:]+)$")


def resolve_route(method: str, path: str) -> Route:
    """The route for ``method path`` (suffix match; any base prefix; MODEL-ROUTE-001)."""
    p = path.rstrip("/") or "/"
    method = method.upper()
    if method == "HEAD":
        return Route("probe")
    if method == "GET":
        if p.endswith("/models"):
            return Route("models")
        m = _MODEL_PATH.search(p)
        if m:
            return Route("model", model=m["model"])
        if p == "/" or p.endswith("/api/hello"):
            return Route("probe")
        return Route("not_found")
    if method != "POST":
        return Route("not_found")
    m = _GEMINI_PATH.search(p)
    if m:
        action = m["action"]
        if action == "countTokens":
            return Route("gemini_count", model=m["model"])
        return Route("generate", model=m["model"], stream=action == "streamGenerateContent")
    if p.endswith("/messages/count_tokens"):
        return Route("count_tokens")
    for suffix, kind in (
        ("/messages", "messages"),
        ("/responses", "responses"),
        ("/chat/completions", "chat"),
    ):
        if p.endswith(suffix):
            return Route(kind)
    return Route("not_found")


@dataclass(frozen=True)
class _Provider:
    read: Callable[[Mapping[str, Any], Route], Conversation]
    render_stream: Callable[[ReplyPlan, Conversation, ReplyIds], list[Frame]]
    render_json: Callable[[ReplyPlan, Conversation, ReplyIds], dict[str, Any]]
    error_reply: Callable[[ApiErrorSpec], tuple[int, dict[str, Any]]]


_PROVIDERS: dict[str, _Provider] = {
    "messages": _Provider(
        lambda body, route: anthropic.read_request(body),
        anthropic.render_stream,
        anthropic.render_json,
        anthropic.error_reply,
    ),
    "responses": _Provider(
        lambda body, route: openai_responses.read_request(body),
        openai_responses.render_stream,
        openai_responses.render_json,
        openai_responses.error_reply,
    ),
    "chat": _Provider(
        lambda body, route: openai_chat.read_request(body),
        openai_chat.render_stream,
        openai_chat.render_json,
        openai_chat.error_reply,
    ),
    "generate": _Provider(
        lambda body, route: gemini.read_request(body, model=route.model or "", stream=route.stream),
        gemini.render_stream,
        gemini.render_json,
        gemini.error_reply,
    ),
}
#: Which provider's error shape a malformed body gets, per route kind.
_ERROR_SHAPE = {"count_tokens": "messages", "gemini_count": "generate"}


def model_entry(model_id: str) -> dict[str, Any]:
    """One model in a shape that Anthropic, OpenAI and Gemini clients all accept."""
    return {
        "id": model_id,
        "object": "model",
        "type": "model",
        "created": 1767225600,
        "created_at": "2026-01-01T00:00:00Z",
        "owned_by": "mock",
        "display_name": model_id,
        "name": f"models/{model_id}",
        "displayName": model_id,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
        "inputTokenLimit": 128000,
        "outputTokenLimit": 8192,
    }


def check_loopback(host: str) -> str:
    """The address to bind for ``host``; raises unless it is loopback (MODEL-BIND-001).

    ``localhost`` binds 127.0.0.1 (one socket, one port, whatever the resolver says).
    """
    # design §Live mode (MODEL-BIND-001): "their model API is pointed at a scripted model
    # server on 127.0.0.1"; no request from a live run leaves 127.0.0.1.
    if host == "localhost":
        return "127.0.0.1"
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        raise NonLoopbackHostError(host) from None
    if not address.is_loopback:
        raise NonLoopbackHostError(host)
    return str(address)


# -- what the server itself costs ------------------------------------------------------------
@dataclass(frozen=True)
class RequestTiming:
    """How long the server held one request, and how much of that the scenario asked for.

    ``added_ms`` is the latency the server itself adds (target: <= 5 ms at p95): from the
    handler's start (headers parsed) until the reply is handed over (a stream: its last byte
    written), minus the time the client took to send its body (``upload_ms``: a CLI writes a
    50 KB request in several chunks) and minus the scripted pauses (measured as slept, so
    timer slack is not charged to the server). A request held open by a ``hang`` step has no
    meaningful figure (``hung``).
    """

    seq: int
    path: str
    reply_kind: str
    total_ms: float
    scripted_ms: float
    hung: bool = False
    upload_ms: float = 0.0
    #: CPU time of the server's thread while it held the request: its own work, without
    #: the waits for a CPU that a busy machine adds to ``added_ms``.
    cpu_ms: float = 0.0
    #: When each write of a streamed reply went out, in ms since the handler started: the
    #: server's own record of the gaps a ``sleep`` step put between deltas (MODEL-SCRIPT-006),
    #: which a client reading late on a busy machine cannot see.
    writes_ms: tuple[float, ...] = ()

    @property
    def added_ms(self) -> float:
        return max(0.0, self.total_ms - self.scripted_ms - self.upload_ms)


class _Clock:
    """Per request: the scripted pause time slept so far, and whether it hung."""

    __slots__ = ("cpu_started", "hung", "kind", "paused_ms", "started", "upload_ms", "writes")

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.cpu_started = time.thread_time()
        self.paused_ms = 0.0
        self.upload_ms = 0.0
        self.hung = False
        self.kind = ""
        self.writes: list[float] = []

    def wrote(self) -> None:
        self.writes.append((time.perf_counter() - self.started) * 1000)


class _GcFreeze:
    """``gc.freeze()`` while any thread-mode server runs in this process.

    The server shares its process (and the GIL) with the harness, which holds every run's
    events; a full collection that happens to start in the server's thread traversed all of
    them, 30-40 ms in the middle of a reply (measured: one per benchmarks/live.py process,
    in the ``modelserver`` thread). Objects that exist when the first server starts are
    moved to the permanent generation, which collections skip, and back when the last one
    stops (so nothing frozen outlives the servers)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0

    def acquire(self) -> None:
        with self._lock:
            if self._users == 0:
                gc.freeze()
            self._users += 1

    def release(self) -> None:
        with self._lock:
            self._users = max(0, self._users - 1)
            if self._users == 0:
                gc.unfreeze()

    @property
    def users(self) -> int:
        """How many thread-mode servers of this process are running."""
        return self._users


_GC_FREEZE = _GcFreeze()


# -- the server -----------------------------------------------------------------------------
class ModelServer:
    """A scripted model API on loopback, driven by one fake_clis scenario."""

    def __init__(
        self,
        scenario: Scenario | str | os.PathLike[str],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: str | os.PathLike[str] | None = None,
        models: Sequence[str] = DEFAULT_MODELS,
    ) -> None:
        self._bind = check_loopback(host)
        self.host = host
        self.scenario = (
            scenario if isinstance(scenario, Scenario) else load_scenario(os.fspath(scenario))
        )
        self.models = tuple(models)
        self._requested_port = port
        self._log = RequestLog(log_path)
        self._timings: list[RequestTiming] = []
        self._seq = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._stopping: asyncio.Event | None = None
        self._port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- public state -----------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._runner is not None

    @property
    def port(self) -> int:
        if self._port is None:
            raise ServerStateError("ModelServer is not running: no port yet")
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` (IPv6 in brackets)."""
        host = f"[{self._bind}]" if ":" in self._bind else self._bind
        return f"http://{host}:{self.port}"

    def base_url(self, prefix: str = "/v1") -> str:
        """The URL a CLI's base-URL setting takes, e.g. ``http://127.0.0.1:P/v1``."""
        return self.url + ("/" + prefix.strip("/") if prefix.strip("/") else "")

    @property
    def requests(self) -> list[RequestRecord]:
        """Every request so far, in arrival order (a copy)."""
        return self._log.records

    @property
    def timings(self) -> list[RequestTiming]:
        """The server's own time per finished request, in finishing order (a copy)."""
        return list(self._timings)

    @property
    def log_path(self) -> str | None:
        return str(self._log.path) if self._log.path is not None else None

    # -- sync: a thread with its own loop ----------------------------------------------
    def start(self) -> ModelServer:
        if self._runner is not None or self._thread is not None:
            raise ServerStateError("ModelServer is already running")
        _GC_FREEZE.acquire()
        try:
            return self._start_thread()
        except BaseException:
            _GC_FREEZE.release()
            raise

    def _start_thread(self) -> ModelServer:
        loop = asyncio.new_event_loop()
        thread = threading.Thread(
            target=_run_forever, args=(loop,), name="modelserver", daemon=True
        )
        thread.start()
        try:
            asyncio.run_coroutine_threadsafe(self._serve(), loop).result(START_TIMEOUT_S)
        except BaseException:
            _close_loop(loop, thread)
            raise
        self._loop, self._thread = loop, thread
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if thread is None or loop is None:
            if self._runner is not None:
                raise ServerStateError("ModelServer was started with astart(); use astop()")
            return
        try:
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(STOP_TIMEOUT_S)
        finally:
            _close_loop(loop, thread)
            self._loop = self._thread = None
            _GC_FREEZE.release()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- async: the caller's loop -------------------------------------------------------
    async def astart(self) -> ModelServer:
        if self._runner is not None or self._thread is not None:
            raise ServerStateError("ModelServer is already running")
        await self._serve()
        self._loop = None
        return self

    async def astop(self) -> None:
        if self._thread is not None:
            raise ServerStateError("ModelServer was started with start(); use stop()")
        await self._shutdown()

    async def __aenter__(self) -> ModelServer:
        return await self.astart()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.astop()

    # -- lifecycle ------------------------------------------------------------------------
    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(
            app,
            handle_signals=False,
            access_log=None,
            shutdown_timeout=SHUTDOWN_GRACE_S,
            handler_cancellation=True,
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, self._bind, self._requested_port)
            await site.start()
            addresses = runner.addresses
            self._port = int(addresses[0][1])
            self._log.open()
        except BaseException:
            await runner.cleanup()
            self._port = None
            raise
        self._runner = runner

    async def _shutdown(self) -> None:
        # MODEL-BIND-002: hung and pausing handlers end first, then aiohttp closes the
        # listening socket and every connection; stop() then drains and closes the loop.
        if self._stopping is not None:
            self._stopping.set()
        runner, self._runner = self._runner, None
        try:
            if runner is not None:
                await runner.cleanup()
        finally:
            self._port = None
            self._log.close()

    # -- requests ---------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        clock = _Clock()
        seq = next(self._seq)
        try:
            return await self._respond(request, seq, clock)
        finally:
            self._timings.append(
                RequestTiming(
                    seq=seq,
                    path=request.path,
                    reply_kind=clock.kind,
                    total_ms=(time.perf_counter() - clock.started) * 1000,
                    scripted_ms=clock.paused_ms,
                    hung=clock.hung,
                    upload_ms=clock.upload_ms,
                    cpu_ms=(time.thread_time() - clock.cpu_started) * 1000,
                    writes_ms=tuple(clock.writes),
                )
            )

    async def _respond(self, request: web.Request, seq: int, clock: _Clock) -> web.StreamResponse:
        t = time.time()
        route = resolve_route(request.method, request.path)
        headers = {k: v for k, v in request.headers.items()}

        def log(
            status: int,
            kind: str,
            conv: Conversation | None = None,
            plan: ReplyPlan | None = None,
            model: str | None = None,
        ) -> None:
            clock.kind = kind
            self._log.append(
                redacted(
                    t=t,
                    method=request.method,
                    path=request.path,
                    query=request.query_string,
                    headers=headers,
                    status=status,
                    api=conv.api if conv else None,
                    model=conv.model if conv else model,
                    stream=conv.stream if conv else False,
                    tool_names=conv.tool_names if conv else (),
                    message_roles=conv.roles if conv else (),
                    structured=conv.structured if conv else False,
                    reply_kind=kind,
                    segment=plan.segment if plan else None,
                )
            )

        if route.kind == "probe":
            log(200, "probe")
            return (
                web.Response(status=200)
                if request.method == "HEAD"
                else web.json_response({"status": "ok"})
            )
        if route.kind == "models":
            log(200, "models")
            entries = [model_entry(m) for m in self.models]
            return web.json_response(
                {
                    "object": "list",
                    "data": entries,
                    "models": entries,
                    "has_more": False,
                    "first_id": self.models[0] if self.models else None,
                    "last_id": self.models[-1] if self.models else None,
                }
            )
        if route.kind == "model":
            log(200, "models", model=route.model)
            return web.json_response(model_entry(route.model or ""))
        if route.kind == "not_found":
            log(404, "not_found")
            return web.json_response(
                {
                    "type": "error",
                    "error": {
                        "type": "not_found_error",
                        "code": "not_found",
                        "message": f"no route for {request.method} {request.path}",
                    },
                },
                status=404,
            )

        provider = _PROVIDERS[_ERROR_SHAPE.get(route.kind, route.kind)]
        raw = await request.read()
        clock.upload_ms = (time.perf_counter() - clock.started) * 1000
        try:
            body = json.loads(raw) if raw else {}
            if not isinstance(body, dict):
                raise ValueError(f"the body is JSON {type(body).__name__}, not an object")
        except ValueError as exc:
            status, payload = provider.error_reply(
                ApiErrorSpec(
                    f"request body is not a JSON object: {exc}", "invalid_request_error", 400
                )
            )
            log(status, "bad_request", model=route.model)
            return web.json_response(payload, status=status)

        if route.kind == "count_tokens":
            log(200, "count_tokens", model=str(body.get("model", "")))
            return web.json_response(anthropic.count_tokens(body))
        if route.kind == "gemini_count":
            log(200, "count_tokens", model=route.model)
            return web.json_response(gemini.count_tokens(body))

        conv = provider.read(body, route)
        try:
            plan = plan_reply(self.scenario, conv)
        except UnsatisfiableSchemaError as exc:  # the API would reject such a schema: a 400
            status, payload = provider.error_reply(
                ApiErrorSpec(
                    f"response schema cannot be satisfied: {exc.message}",
                    "invalid_request_error",
                    400,
                )
            )
            log(status, "bad_request", conv)
            return web.json_response(payload, status=status)
        except Exception as exc:  # a bug here: answered and logged, never a silent drop
            _logger.exception("modelserver: no plan for %s %s", request.method, request.path)
            status, payload = provider.error_reply(
                ApiErrorSpec(f"model server error: {type(exc).__name__}: {exc}", "api_error", 500)
            )
            log(status, "server_error", conv)
            return web.json_response(payload, status=status)
        ids = ReplyIds(seq, int(t))
        if plan.stall_ms:
            await self._pause(plan.stall_ms, clock)
        error = plan.leading_error if conv.stream else _first_error(plan)
        if error is not None:
            status, payload = provider.error_reply(error)
            log(status, "error", conv, plan)
            return web.json_response(payload, status=status, headers=RETRY_HEADERS)
        log(200, plan.kind, conv, plan)
        if conv.stream:
            return await self._send_stream(request, provider.render_stream(plan, conv, ids), clock)
        for block in plan.blocks:
            if isinstance(block, Pause):
                await self._pause(block.ms, clock)
            elif isinstance(block, HangBlock):
                await self._hang(clock)
        return web.json_response(provider.render_json(plan, conv, ids))

    async def _send_stream(
        self, request: web.Request, frames: list[Frame], clock: _Clock
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-cache",
            },
        )
        await response.prepare(request)
        buffer = bytearray()
        try:
            for frame in frames:
                if isinstance(frame, bytes):
                    buffer += frame
                    continue
                if buffer:
                    await response.write(bytes(buffer))
                    clock.wrote()
                    buffer.clear()
                if isinstance(frame, Pause):
                    await self._pause(frame.ms, clock)
                else:
                    await self._hang(clock)
                    return response
            if buffer:
                await response.write(bytes(buffer))
                clock.wrote()
            await response.write_eof()
        except ConnectionResetError:  # the client left mid-stream
            pass
        return response

    async def _pause(self, ms: int, clock: _Clock) -> None:
        """Sleep ``ms`` (cut short when the server stops); the time slept goes on ``clock``."""
        started = time.perf_counter()
        try:
            if self._stopping is None:
                await asyncio.sleep(ms / 1000)
                return
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), ms / 1000)
        finally:
            clock.paused_ms += (time.perf_counter() - started) * 1000

    async def _hang(self, clock: _Clock) -> None:
        """Hold the response open until the server stops (or the client leaves)."""
        clock.hung = True
        if self._stopping is not None:
            await self._stopping.wait()


def _first_error(plan: ReplyPlan) -> ApiErrorSpec | None:
    return next((b.spec for b in plan.blocks if isinstance(b, ErrorBlock)), None)


def _run_forever(loop: asyncio.AbstractEventLoop) -> None:
    asyncio.set_event_loop(loop)
    loop.run_forever()


async def _drain() -> None:
    """Cancel what is left on the loop, then close async generators and the executor."""
    loop = asyncio.get_running_loop()
    tasks = [t for t in asyncio.all_tasks(loop) if t is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    if tasks:
        await asyncio.gather(*tasks, return_exceptions=True)
    await loop.shutdown_asyncgens()
    await loop.shutdown_default_executor()


def _close_loop(loop: asyncio.AbstractEventLoop, thread: threading.Thread) -> None:
    with contextlib.suppress(Exception):
        asyncio.run_coroutine_threadsafe(_drain(), loop).result(STOP_TIMEOUT_S)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(STOP_TIMEOUT_S)
    if not thread.is_alive():
        loop.close()
