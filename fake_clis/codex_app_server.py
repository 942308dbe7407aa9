"""Fake ``codex app-server``: JSON-RPC over stdio as codex-cli 0.171.0 speaks it (seed 000 §5.3;
wire §A.3.2; real-clis "codex (0.171.0)").

``fake_clis.json_events`` owns the ``codex`` agent id and its argv; ``codex app-server`` is
handed to :func:`run_app_server` here (so this module exports no ``SPECS``).

Design: docs/design/fakes.md#fake_clis.codex_app_server
"""

from __future__ import annotations

import _queue
import _thread
import os
import sys
import time

from fake_clis import jsonio, shquote
from fake_clis.base import CliSpec, FakeRun, read_text, trap_sigterm

# A fake starts hundreds of times per conform: no dataclasses, pathlib, typing, platform,
# uuid or shlex here, stdin is read on a thread through the C modules under threading and
# queue, and difflib (which imports re) loads only to diff a file that existed.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any

    from fake_clis.scenario import Step

__all__ = [
    "CODEX_VERSION",
    "DEFAULT_MODEL",
    "PATCH_STREAMING_FEATURE",
    "SIGTERM_EXIT_CODE",
    "SPECS",
    "run_app_server",
]

CODEX_VERSION = "0.171.0"
#: The model a thread gets when neither the request nor ``-c model=`` names one.
DEFAULT_MODEL = "gpt-5.5"
#: seed 000 §5.3: the per-thread feature override that turns on ``patchUpdated`` previews.
PATCH_STREAMING_FEATURE = "features.apply_patch_streaming_events"
_SANDBOXES = {
    "read-only": "readOnly",
    "workspace-write": "workspaceWrite",
    "danger-full-access": "dangerFullAccess",
}
_POLICIES = ("untrusted", "on-request", "granular", "never")
#: JSON-RPC "Invalid Request": codex 0.171.0 answers every refused request with it.
_INVALID = -32600
_NOT_EMULATED = -32601
#: codex 0.171.0's app-server traps SIGTERM, idle or mid-turn, and exits with this code
#: writing nothing more, where ``codex exec`` dies of it (probed live).
SIGTERM_EXIT_CODE = 0
_CONTEXT_WINDOW = 258400
#: The rate-limit snapshot codex 0.171.0 sends when a model call against a custom provider
#: ends (no limits are known, so every field is null but the id).
_RATE_LIMITS: dict[str, Any] = {
    "limitId": "codex",
    "limitName": None,
    "normalModelSlug": None,
    "primary": None,
    "secondary": None,
    "credits": None,
    "individualLimit": None,
    "spendControlReached": None,
    "planType": None,
    "rateLimitReachedType": None,
}
#: Request methods of codex 0.171.0 (ClientRequest.json) the fake does not emulate.
_KNOWN_METHODS = frozenset(
    {
        "thread/fork",
        "thread/list",
        "thread/read",
        "thread/archive",
        "thread/unarchive",
        "thread/unsubscribe",
        "thread/name/set",
        "thread/compact/start",
        "thread/rollback",
        "thread/shellCommand",
        "thread/loaded/list",
        "turn/steer",
        "model/list",
        "skills/list",
        "fs/readFile",
        "fs/writeFile",
        "account/read",
        "config/read",
    }
)


class _Interrupted(Exception):
    """The client interrupted the active turn."""


class _StdinClosed(Exception):
    """stdin reached EOF while a turn was running."""


def _now_ms() -> int:
    return int(time.time() * 1000)


def _uuid7() -> str:
    """A time-ordered UUID (version 7) like codex's thread and turn ids."""
    ms = _now_ms() & ((1 << 48) - 1)
    rand = int.from_bytes(os.urandom(10), "big")
    value = (ms << 80) | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _dumps(frame: Mapping[str, Any]) -> str:
    # codex writes compact JSON, one message per line.
    return jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def _toml_scalar(text: str) -> Any:
    """A ``-c key=value`` value: TOML booleans, numbers and strings, else the raw text."""
    value = text.strip()
    if value in ("true", "false"):
        return value == "true"
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    try:
        return int(value)
    except ValueError:
        return value


def _uname() -> tuple[str, str, str]:
    """``(platform.system(), platform.release(), platform.machine())``; ``os.uname`` where
    there is one (what platform reads there too), so a start skips platform's import."""
    if hasattr(os, "uname"):
        name = os.uname()
        return name.sysname, name.release, name.machine
    import platform

    return platform.system(), platform.release(), platform.machine()


def _os_label() -> str:
    system, release, _machine = _uname()
    return f"{system or 'Linux'} {release.split('-', 1)[0] or '0'}"


class _Thread:
    """One thread the client started or resumed, and its turns."""

    __slots__ = (
        "approval",
        "created",
        "cwd",
        "id",
        "model",
        "network",
        "originator",
        "patch_streaming",
        "preview",
        "sandbox",
        "turns",
    )

    def __init__(
        self,
        *,
        id: str,
        cwd: str,
        model: str,
        sandbox: str,
        approval: Any,
        network: bool,
        patch_streaming: bool,
        originator: str,
        created: int,
    ) -> None:
        self.id = id
        self.cwd = cwd
        self.model = model
        self.sandbox = sandbox
        self.approval = approval
        self.network = network
        self.patch_streaming = patch_streaming
        self.originator = originator
        self.created = created
        self.preview = ""
        self.turns: list[dict[str, Any]] = []

    def cumulative(self) -> dict[str, int]:
        total = dict.fromkeys(
            (
                "totalTokens",
                "inputTokens",
                "cachedInputTokens",
                "cacheWriteInputTokens",
                "outputTokens",
                "reasoningOutputTokens",
            ),
            0,
        )
        for turn in self.turns:
            last = turn.get("usage")
            if isinstance(last, dict):
                for key in total:
                    value = last.get(key)
                    if isinstance(value, int) and not isinstance(value, bool):
                        total[key] += value
        return total


class _AppServer:
    """One ``codex app-server`` process (stdio transport)."""

    def __init__(self, run: FakeRun) -> None:
        self.run = run
        self.inbox: _queue.SimpleQueue[bytes | None] = _queue.SimpleQueue()
        self.eof = False
        self.client: dict[str, Any] | None = None
        self.threads: dict[str, _Thread] = {}
        overrides = _overrides(run)
        self.default_model = str(overrides.get("model") or DEFAULT_MODEL)
        self.default_sandbox = str(overrides.get("sandbox_mode") or "read-only")
        self.cli_patch_streaming = overrides.get(PATCH_STREAMING_FEATURE) is True
        self.server_request_id = 0
        self.responses: dict[int | str, dict[str, Any]] = {}
        # The active turn: (thread, turn id); interrupt requested by the client.
        self.active: tuple[_Thread, str] | None = None
        self.interrupt = False
        #: The ids of the turn/interrupt requests answered once the turn has stopped.
        self.interrupts: list[Any] = []
        self.items = 0
        home = run.env.get("CODEX_HOME")
        self.codex_home = home if home else os.path.join(run.home, ".codex")

    # -- IO -------------------------------------------------------------------------------------

    def _reader(self) -> None:
        # Raw reads on the descriptor: a daemon thread blocked inside the buffered
        # sys.stdin would hold its lock and abort the interpreter at exit.
        fd = self.run.stdin.fileno()
        pending = b""
        while True:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                if pending:
                    self.inbox.put(pending)
                self.inbox.put(None)
                return
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                self.inbox.put(line)

    def send(self, message: Mapping[str, Any]) -> None:
        self.run.out(_dumps(message))

    def notify(self, method: str, params: Mapping[str, Any]) -> None:
        self.send({"method": method, "params": params, "emittedAtMs": _now_ms()})

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"id": request_id, "result": result})

    def error(self, request_id: Any, message: str, code: int = _INVALID) -> None:
        # 0.171.0 writes error responses with "error" before "id".
        self.send({"error": {"code": code, "message": message}, "id": request_id})

    def log(self, text: str) -> None:
        self.run.err(f"ERROR codex_app_server_transport::transport: {text}\n")

    # -- main loop ------------------------------------------------------------------------------

    def serve(self) -> int:
        _thread.start_new_thread(self._reader, ())  # never joined: a daemon thread
        while not self.eof:
            line = self.inbox.get()
            if line is None:
                self.eof = True
                break
            # A turn/start runs its turn inside dispatch; stdin may reach EOF meanwhile.
            self.dispatch(line)
        # wire §A.3.2 / upstream session.ts: the server exits shortly after stdin EOF.
        self.run.linger_if_asked()
        return 0

    def wait(self, seconds: float | None) -> None:
        """Handle client messages for ``seconds`` (``None``: until interrupted)."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while not self.interrupt:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            if self.eof:
                # Nothing more can arrive: a sleep just passes, a hang ends the turn.
                if left is None:
                    raise _StdinClosed
                time.sleep(left)
                return
            try:
                line = self.inbox.get(timeout=left)
            except _queue.Empty:
                return
            if line is None:
                # codex 0.171.0 exits 0 at stdin EOF even while its model call hangs,
                # writing nothing more (probed live).
                self.eof = True
                self.run.record["stdin_closed_during_turn"] = True
                raise _StdinClosed
            self.dispatch(line)
        raise _Interrupted

    def poll(self) -> None:
        """Handle what has arrived so far; raise :class:`_Interrupted` when asked to stop."""
        while True:
            try:
                line = self.inbox.get_nowait()
            except _queue.Empty:
                break
            if line is None:
                self.eof = True
                self.run.record["stdin_closed_during_turn"] = True
                raise _StdinClosed
            self.dispatch(line)
        if self.interrupt:
            raise _Interrupted

    # -- dispatch -------------------------------------------------------------------------------

    def dispatch(self, line: bytes) -> None:
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return
        try:
            message = jsonio.loads(text)
        except ValueError as exc:
            self.log(f"Failed to deserialize JSONRPCMessage: {exc}")
            return
        if not isinstance(message, dict):
            self.log("Failed to deserialize JSONRPCMessage: expected a JSON object")
            return
        self.run.record.setdefault("stdin_frames", []).append(message)
        method = message.get("method")
        has_id = "id" in message
        if isinstance(method, str) and has_id:
            self.request(message["id"], method, message.get("params"))
        elif isinstance(method, str):
            if method == "initialized":
                self.run.record["initialized_notification"] = True
        elif has_id and ("result" in message or "error" in message):
            self.responses[message["id"]] = message
        else:
            self.log("Failed to deserialize JSONRPCMessage: data did not match any variant")

    def request(self, request_id: Any, method: str, params: Any) -> None:
        params = params if isinstance(params, dict) else {}
        if method == "initialize":
            self.initialize(request_id, params)
            return
        if self.client is None:
            self.error(request_id, "Not initialized")
            return
        handler = _HANDLERS.get(method)
        if handler is not None:
            handler(self, request_id, params)
        elif method in _KNOWN_METHODS:
            self.error(request_id, f"{method} is not emulated by the fake", _NOT_EMULATED)
        else:
            self.error(request_id, f"Invalid request: unknown variant `{method}`")

    # -- requests -------------------------------------------------------------------------------

    def initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        if self.client is not None:
            self.error(request_id, "Already initialized")
            return
        info = params.get("clientInfo")
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            self.error(request_id, "Invalid request: missing field `clientInfo`")
            return
        self.client = info
        self.run.record["client_info"] = info
        name = info["name"]
        version = info.get("version", "")
        windows = sys.platform == "win32"
        self.result(
            request_id,
            {
                "userAgent": f"{name}/{CODEX_VERSION} ({_os_label()}; "
                f"{_uname()[2] or 'x86_64'}) unknown ({name}; {version})",
                "codexHome": self.codex_home,
                "platformFamily": "windows" if windows else "unix",
                "platformOs": {"win32": "windows", "darwin": "macos"}.get(sys.platform, "linux"),
            },
        )

    def _thread_settings(self, request_id: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        """Validate thread/start and thread/resume settings; answer the error when invalid."""
        policy = params.get("approvalPolicy", "on-request")
        if isinstance(policy, dict):
            policy_name = "granular" if "granular" in policy else str(next(iter(policy), ""))
        else:
            policy_name = str(policy)
        if policy_name not in _POLICIES:
            self.error(
                request_id,
                f"Invalid request: unknown variant `{policy_name}`, expected one of "
                + ", ".join(f"`{p}`" for p in _POLICIES),
            )
            return None
        sandbox = params.get("sandbox", self.default_sandbox)
        if sandbox not in _SANDBOXES:
            self.error(
                request_id,
                f"Invalid request: unknown variant `{sandbox}`, expected one of "
                + ", ".join(f"`{s}`" for s in _SANDBOXES),
            )
            return None
        cwd = str(params.get("cwd") or self.run.cwd)
        if not os.path.isdir(cwd):
            self.error(request_id, f"cwd does not exist: {cwd}")
            return None
        config = params.get("config")
        config = config if isinstance(config, dict) else {}
        features = config.get("features")
        streaming = config.get(PATCH_STREAMING_FEATURE) is True or (
            isinstance(features, dict) and features.get("apply_patch_streaming_events") is True
        )
        return {
            "cwd": os.path.realpath(cwd),
            "model": str(params.get("model") or self.default_model),
            "sandbox": sandbox,
            "approval": policy,
            "network": config.get("sandbox_workspace_write.network_access") is True,
            "patch_streaming": streaming or self.cli_patch_streaming,
        }

    def thread_start(self, request_id: Any, params: dict[str, Any]) -> None:
        settings = self._thread_settings(request_id, params)
        if settings is None:
            return
        assert self.client is not None
        thread = _Thread(
            id=_uuid7(),
            originator=str(self.client["name"]),
            created=_now_ms() // 1000,
            **settings,
        )
        self.threads[thread.id] = thread
        self.run.record.setdefault("threads", []).append(
            {"id": thread.id, "params": params, "patch_streaming": thread.patch_streaming}
        )
        self.run.record["session_id"] = thread.id
        self.run.record["resumed"] = False
        self.run.record["prior_turns"] = 0
        self.result(request_id, self._thread_response(thread))
        self.notify("thread/started", {"thread": self._thread_object(thread)})

    def thread_resume(self, request_id: Any, params: dict[str, Any]) -> None:
        thread_id = params.get("threadId")
        if not isinstance(thread_id, str):
            self.error(request_id, "Invalid request: missing field `threadId`")
            return
        import uuid  # only a resumed thread's id is checked

        try:
            uuid.UUID(thread_id)
        except ValueError:
            self.error(
                request_id,
                "invalid session id: invalid character: expected an optional prefix of "
                "`urn:uuid:` followed by [0-9a-fA-F-], found "
                f"`{_first_bad_char(thread_id)}` at {_first_bad_index(thread_id)}",
            )
            return
        saved = self.run.load_session(thread_id)
        turns = saved.get("turns") if isinstance(saved, dict) else None
        if not isinstance(turns, list):
            self.error(request_id, f"no rollout found for thread id {thread_id}")
            return
        settings = self._thread_settings(request_id, params)
        if settings is None:
            return
        assert self.client is not None
        thread = self.threads.get(thread_id) or _Thread(
            id=thread_id,
            originator=str(self.client["name"]),
            created=_now_ms() // 1000,
            **settings,
        )
        thread.turns = [t for t in turns if isinstance(t, dict)]
        thread.preview = str(thread.turns[0].get("prompt", "")) if thread.turns else ""
        for key, value in settings.items():
            setattr(thread, key, value)
        self.threads[thread_id] = thread
        self.run.record.setdefault("threads", []).append(
            {"id": thread_id, "params": params, "patch_streaming": thread.patch_streaming}
        )
        self.run.record["session_id"] = thread_id
        self.run.record["resumed"] = True
        self.run.record["prior_turns"] = len(thread.turns)
        self.notify("thread/status/changed", {"threadId": thread_id, "status": {"type": "idle"}})
        response = self._thread_response(thread)
        cursor = {"requestedThreadId": thread_id, "rolloutOrdinal": 1, "includeAnchor": True}
        response.update(
            collaborationMode={
                "mode": "default",
                "settings": {
                    "model": thread.model,
                    "reasoning_effort": None,
                    "developer_instructions": None,
                },
            },
            initialTurnsPage=None,
            turnsBackwardsCursor=_dumps({**cursor, "scope": {"kind": "turns"}}),
            itemsBackwardsCursor=_dumps({**cursor, "scope": {"kind": "itemsByCreatedAtOrdinal"}}),
        )
        self.result(request_id, response)
        last = thread.turns[-1] if thread.turns else {}
        if isinstance(last.get("usage"), dict) and isinstance(last.get("turn_id"), str):
            # The resume capture: codex replays the previous turn's usage after the result.
            self.notify(
                "thread/tokenUsage/updated",
                {
                    "threadId": thread_id,
                    "turnId": last["turn_id"],
                    "tokenUsage": {
                        "total": thread.cumulative(),
                        "last": last["usage"],
                        "modelContextWindow": _CONTEXT_WINDOW,
                    },
                },
            )

    def turn_start(self, request_id: Any, params: dict[str, Any]) -> None:
        thread_id = params.get("threadId")
        thread = self.threads.get(thread_id) if isinstance(thread_id, str) else None
        if thread is None:
            self.error(request_id, f"thread not found: {thread_id}")
            return
        if self.active is not None:
            self.error(request_id, "a turn is already in progress on this thread")
            return
        inputs = params.get("input")
        if not isinstance(inputs, list):
            self.error(request_id, "Invalid request: missing field `input`")
            return
        texts = [
            str(i.get("text", ""))
            for i in inputs
            if isinstance(i, dict) and i.get("type") == "text"
        ]
        prompt = "\n".join(texts)
        record = self.run.record
        record["prompt"] = prompt
        record["prompt_via"] = "turn/start"
        record.setdefault("turn_params", []).append(params)
        turn_id = _uuid7()
        self.result(request_id, {"turn": _turn_object(turn_id, "inProgress", started=None)})
        _Turn(self, thread, turn_id, prompt, inputs).play()

    def turn_interrupt(self, request_id: Any, params: dict[str, Any]) -> None:
        """Stop the active turn; the answer waits until it has stopped (:meth:`_Turn.finish`),
        as codex 0.171.0's does (recordings/real/codex/cancel.app-server.jsonl)."""
        thread_id = params.get("threadId")
        if thread_id not in self.threads:
            self.error(request_id, f"thread not found: {thread_id}")
            return
        active = self.active
        if active is None or thread_id != active[0].id:
            self.error(request_id, "no active turn to interrupt")
            return
        turn_id = params.get("turnId")
        if turn_id != active[1]:
            self.error(request_id, f"expected active turn id {turn_id} but found {active[1]}")
            return
        self.run.record["interrupted"] = True
        self.interrupt = True
        self.interrupts.append(request_id)

    # -- server requests ------------------------------------------------------------------------

    def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send a server request and handle client messages until its answer arrives."""
        request_id = self.server_request_id
        self.server_request_id += 1
        self.send({"id": request_id, "method": method, "params": params})
        while request_id not in self.responses:
            if self.interrupt:
                raise _Interrupted
            if self.eof:
                raise _StdinClosed
            line = self.inbox.get()
            if line is None:
                self.eof = True
                raise _StdinClosed
            self.dispatch(line)
        return self.responses.pop(request_id)

    # -- objects ----------------------------------------------------------------------------------

    def _rollout_path(self, thread: _Thread) -> str:
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(thread.created))
        day = time.strftime("%Y/%m/%d", time.gmtime(thread.created))
        name = f"rollout-{stamp}-{thread.id}.jsonl"
        return os.path.join(self.codex_home, "sessions", *day.split("/"), name)

    def _thread_object(self, thread: _Thread) -> dict[str, Any]:
        cwd = thread.cwd
        return {
            "id": thread.id,
            "environments": [
                {"environmentId": "local", "cwd": cwd, "runtimeWorkspaceRoots": [cwd]}
            ],
            "extra": None,
            "sessionId": thread.id,
            "forkedFromId": None,
            "attachedToThreadId": None,
            "parentThreadId": None,
            "preview": thread.preview,
            "ephemeral": False,
            "section": None,
            "sectionEnteredAt": None,
            "projectId": None,
            "historyMode": "paginated",
            "modelProvider": "openai",
            "model": thread.model,
            "reasoningEffort": None,
            "createdAt": thread.created,
            "updatedAt": thread.created,
            "recencyAt": thread.created,
            "status": {"type": "idle"},
            "path": self._rollout_path(thread),
            "cwd": cwd,
            "cliVersion": CODEX_VERSION,
            "originator": thread.originator,
            "source": "vscode",
            "canAcceptDirectInput": True,
            "threadSource": None,
            "agentNickname": None,
            "agentRole": None,
            "gitInfo": None,
            "name": None,
            "daybreakEnabled": None,
            "turns": [],
        }

    def _thread_response(self, thread: _Thread) -> dict[str, Any]:
        cwd = thread.cwd
        sandbox: dict[str, Any] = {"type": _SANDBOXES[thread.sandbox]}
        if thread.sandbox == "workspace-write":
            sandbox.update(
                writableRoots=[],
                networkAccess=thread.network,
                excludeTmpdirEnvVar=False,
                excludeSlashTmp=False,
            )
        elif thread.sandbox == "read-only":
            sandbox["networkAccess"] = False
        return {
            "thread": self._thread_object(thread),
            "model": thread.model,
            "modelProvider": "openai",
            "serviceTier": None,
            "disabledPluginIds": [],
            "cwd": cwd,
            "runtimeWorkspaceRoots": [cwd],
            "instructionSources": [],
            "approvalPolicy": thread.approval,
            "approvalsReviewer": "user",
            "sandbox": sandbox,
            "activePermissionProfile": None,
            "reasoningEffort": None,
            "multiAgentMode": "explicitRequestOnly",
        }


def _first_bad_index(text: str) -> int:
    for index, char in enumerate(text):
        if char not in "0123456789abcdefABCDEF-":
            return index + 1
    return len(text)


def _first_bad_char(text: str) -> str:
    for char in text:
        if char not in "0123456789abcdefABCDEF-":
            return char
    return text[-1:] or " "


def _turn_object(
    turn_id: str,
    status: str,
    *,
    started: int | None,
    completed: int | None = None,
    items: Sequence[dict[str, Any]] = (),
    error: dict[str, Any] | None = None,
    duration: int | None = None,
) -> dict[str, Any]:
    return {
        "id": turn_id,
        "rootTurnId": turn_id,
        "items": list(items),
        "itemsView": "summary" if items else "notLoaded",
        "status": status,
        "error": error,
        "startedAt": started,
        "completedAt": completed,
        "durationMs": duration,
    }


class _Turn:
    """One ``turn/start``: the scenario's steps as thread items (wire §A.3.2)."""

    def __init__(
        self,
        server: _AppServer,
        thread: _Thread,
        turn_id: str,
        prompt: str,
        inputs: list[Any],
    ) -> None:
        self.server = server
        self.run = server.run
        self.thread = thread
        self.turn_id = turn_id
        self.prompt = prompt
        self.inputs = inputs
        self.started_ms = _now_ms()
        self.messages: list[dict[str, Any]] = []
        self.replies: list[str] = []
        self.usage: dict[str, int] | None = None
        self.diffs: list[str] = []

    # -- helpers ----------------------------------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.server.notify(method, {"threadId": self.thread.id, "turnId": self.turn_id, **params})

    def item_id(self, prefix: str) -> str:
        self.server.items += 1
        return f"{prefix}_{self.server.items}"

    def started(self, item: dict[str, Any]) -> None:
        now = _now_ms()
        self.server.notify(
            "item/started",
            {
                "item": {**item, "startedAtMs": now, "completedAtMs": None},
                "threadId": self.thread.id,
                "turnId": self.turn_id,
                "startedAtMs": now,
            },
        )

    def completed(self, item: dict[str, Any], started_ms: int) -> None:
        now = _now_ms()
        self.server.notify(
            "item/completed",
            {
                "item": {**item, "startedAtMs": started_ms, "completedAtMs": now},
                "threadId": self.thread.id,
                "turnId": self.turn_id,
                "contentTokenCount": None,
                "completedAtMs": now,
            },
        )

    def status(self, kind: str) -> None:
        status: dict[str, Any] = {"type": kind}
        if kind == "active":
            status["activeFlags"] = []
        self.server.notify("thread/status/changed", {"threadId": self.thread.id, "status": status})

    # -- the turn ---------------------------------------------------------------------------------

    def play(self) -> None:
        server = self.server
        server.active = (self.thread, self.turn_id)
        server.interrupt = False
        self.thread.turns.append(
            {"prompt": self.prompt, "reply": "", "turn_id": self.turn_id, "usage": None}
        )
        # A rollout exists once a turn started: save now, so a crash still leaves it.
        self.run.save_session(self.thread.id, self.thread.turns)
        self.run.record["turns"] = len(self.thread.turns)
        self.status("active")
        self.server.notify(
            "turn/started",
            {
                "threadId": self.thread.id,
                "turn": _turn_object(self.turn_id, "inProgress", started=self.started_ms // 1000),
            },
        )
        user = {
            "type": "userMessage",
            "id": _uuid7(),
            "clientId": None,
            "content": [
                {"type": "text", "text": str(i.get("text", "")), "text_elements": []}
                if i.get("type") == "text"
                else dict(i)
                for i in self.inputs
                if isinstance(i, dict)
            ],
        }
        start = _now_ms()
        self.started(user)
        self.completed(user, start)
        try:
            failed = self.steps()
        except _Interrupted:
            self.finish("interrupted")
            return
        except _StdinClosed:
            self.save()
            self.server.active = None
            return
        if failed is not None:
            self.finish("failed", error=failed)
            return
        self.finish("completed")

    def steps(self) -> dict[str, Any] | None:
        for step in self.run.scenario.steps:
            self.server.poll()
            kind = step.kind
            if kind == "text":
                self.text(step)
            elif kind == "thinking":
                self.thinking(step)
            elif kind == "tool":
                self.tool(step)
            elif kind == "usage":
                self.token_usage(step)
            elif kind == "api_error":
                return self.api_error(step)
            elif kind == "sleep":
                self.server.wait(float(step.get("ms", 0)) / 1000.0)
            elif kind == "hang":
                # The model stream stalls: only turn/interrupt ends the turn.
                self.run.finish_record()
                self.server.wait(None)
            elif kind == "malformed":
                line = self._delta_line("msg_malformed", "a frame cut short")
                self.run.out(str(step.get("text") or line[: len(line) // 2]))
            elif kind == "foreign":
                # A sub-agent's thread: another thread and turn than this run's.
                self.server.notify(
                    "item/agentMessage/delta",
                    {
                        "threadId": _uuid7(),
                        "turnId": _uuid7(),
                        "itemId": "msg_other_thread",
                        "delta": "Not for this thread.",
                    },
                )
            elif kind == "oversize":
                self.oversize(int(step.get("bytes", 0)))
            elif kind == "crash" and step.get("mid_line"):
                line = self._delta_line("msg_crash", "Half a frame")
                self.run.out_raw(line[: len(line) // 2].encode("utf-8"))
                self.run.exit(int(step.get("exit_code", 1)))
            else:
                self.run.run_common_step(step)
        self.server.poll()
        return None

    def _delta_line(self, item_id: str, delta: str) -> str:
        return _dumps(
            {
                "method": "item/agentMessage/delta",
                "params": {
                    "threadId": self.thread.id,
                    "turnId": self.turn_id,
                    "itemId": item_id,
                    "delta": delta,
                },
                "emittedAtMs": _now_ms(),
            }
        )

    def _message(
        self,
        pieces: Sequence[str],
        *,
        item_id: str | None = None,
        lines: Sequence[str] | None = None,
    ) -> None:
        item_id = item_id or self.item_id("msg")
        base = {
            "type": "agentMessage",
            "moderation": None,
            "id": item_id,
            "text": "",
            "phase": None,
            "memoryCitation": None,
            "delivery": None,
            "questions": None,
        }
        start = _now_ms()
        self.started(base)
        if lines is not None:
            for line in lines:
                self.run.out(line)
        else:
            for piece in pieces:
                self.notify("item/agentMessage/delta", {"itemId": item_id, "delta": piece})
        done = {**base, "text": "".join(pieces)}
        self.completed(done, start)
        self.messages.append({**done, "startedAtMs": start, "completedAtMs": _now_ms()})
        self.replies.append("".join(pieces))

    def text(self, step: Step) -> None:
        pieces = step.chunks
        if pieces:
            self._message(pieces)

    def oversize(self, size: int) -> None:
        """One ``item/agentMessage/delta`` line of exactly ``size`` bytes (when it fits)."""
        item_id = self.item_id("msg")
        bare = self._delta_line(item_id, "")
        pad = "x" * max(0, size - len(bare.encode("utf-8")))
        self._message([pad], item_id=item_id, lines=[self._delta_line(item_id, pad)])

    def thinking(self, step: Step) -> None:
        pieces = step.chunks
        if not pieces:
            return
        item_id = self.item_id("rs")
        base = {"type": "reasoning", "id": item_id, "summary": [], "content": []}
        start = _now_ms()
        self.started(base)
        self.notify("item/reasoning/summaryPartAdded", {"itemId": item_id, "summaryIndex": 0})
        for piece in pieces:
            self.notify(
                "item/reasoning/summaryTextDelta",
                {"itemId": item_id, "delta": piece, "summaryIndex": 0},
            )
        self.completed({**base, "summary": ["".join(pieces)]}, start)

    # -- tools ------------------------------------------------------------------------------------

    def _approval_needed(self) -> bool:
        return bool(self.thread.approval == "untrusted")

    def _approve(self, method: str, item_id: str, extra: dict[str, Any]) -> str:
        """Ask the client (``approvalPolicy: untrusted``); returns its decision."""
        params = {
            "threadId": self.thread.id,
            "turnId": self.turn_id,
            "itemId": item_id,
            "startedAtMs": _now_ms(),
            **extra,
        }
        answer = self.server.ask(method, params)
        result = answer.get("result")
        decision = result.get("decision") if isinstance(result, dict) else None
        label = decision if isinstance(decision, str) else jsonio.dumps(decision)
        self.run.record.setdefault("approvals", []).append({"method": method, "decision": label})
        self.server.notify(
            "serverRequest/resolved", {"threadId": self.thread.id, "requestId": answer["id"]}
        )
        if label == "cancel":
            self.server.interrupt = True
        return label

    def tool(self, step: Step) -> None:
        kind = step.get("tool")
        if kind == "write":
            self.file_change(step)
        elif kind == "shell":
            self.command(step)
        else:
            self.mcp(step)

    def command(self, step: Step) -> None:
        item_id = str(step.get("id") or self.item_id("call"))
        raw = str(step.get("command", ""))
        item: dict[str, Any] = {
            "type": "commandExecution",
            "id": item_id,
            "pluginId": None,
            "scriptPath": None,
            "command": f"/bin/bash -lc {shquote.quote(raw)}",
            "cwd": self.thread.cwd,
            "processId": None,
            "source": "unifiedExecStartup",
            "status": "inProgress",
            "commandActions": [{"type": "unknown", "command": raw}],
            "aggregatedOutput": None,
            "exitCode": None,
            "durationMs": None,
        }
        if self._approval_needed():
            decision = self._approve(
                "item/commandExecution/requestApproval",
                item_id,
                {"command": item["command"], "cwd": item["cwd"], "reason": None},
            )
            if decision not in ("accept", "acceptForSession"):
                start = _now_ms()
                self.started(item)
                self.completed({**item, "status": "declined"}, start)
                self.server.poll()
                return
        start = _now_ms()
        item["processId"] = str(os.getpid())
        self.started(item)
        output = str(step.get("output", ""))
        if output:
            self.notify("item/commandExecution/outputDelta", {"itemId": item_id, "delta": output})
        failed = bool(step.get("is_error"))
        self.completed(
            {
                **item,
                "status": "failed" if failed else "completed",
                "aggregatedOutput": output,
                "exitCode": 1 if failed else 0,
                "durationMs": max(0, _now_ms() - start),
            },
            start,
        )

    def file_change(self, step: Step) -> None:
        rel = str(step.get("path") or "output.txt")
        content = str(step.get("content", ""))
        target = os.path.realpath(os.path.join(self.thread.cwd, rel))
        if self.thread.sandbox == "read-only":
            # As the exec fake (the real codex, recordings/real/codex): the read-only sandbox
            # rejects the patch first.
            self.run.record.setdefault("rejected_writes", []).append(rel)
            self.run.err("patch rejected: writing is blocked by read-only sandbox\n")
            return
        item_id = str(step.get("id") or self.item_id("call"))
        existed = os.path.isfile(target)
        old = read_text(target) if existed else ""
        kind: dict[str, Any] = {"type": "update", "move_path": None} if existed else {"type": "add"}
        diff = _unified_hunks(old, content) if existed else content
        if self.thread.patch_streaming:
            # seed 000 §5.3: previews first, paths relative to the cwd as 0.171.0 reports them.
            for preview in ("", diff):
                self.notify(
                    "item/fileChange/patchUpdated",
                    {"itemId": item_id, "changes": [{"path": rel, "kind": kind, "diff": preview}]},
                )
        item = {
            "type": "fileChange",
            "id": item_id,
            "changes": [{"path": target, "kind": kind, "diff": diff}],
            "status": "inProgress",
        }
        if self._approval_needed():
            decision = self._approve(
                "item/fileChange/requestApproval", item_id, {"reason": None, "grantRoot": None}
            )
            if decision not in ("accept", "acceptForSession"):
                start = _now_ms()
                self.started(item)
                self.completed({**item, "status": "declined"}, start)
                self.server.poll()
                return
        start = _now_ms()
        self.started(item)
        failed = bool(step.get("is_error"))
        if not failed:
            try:
                self.run.cwd = self.thread.cwd
                self.run.write_file(rel, content)
            except (ValueError, OSError):
                failed = True
        self.completed({**item, "status": "failed" if failed else "completed"}, start)
        if not failed:
            self.diffs.append(_git_diff(rel, old, content, existed))
            self.notify("turn/diff/updated", {"diff": "".join(self.diffs)})

    def mcp(self, step: Step) -> None:
        name = str(step.get("name") or "lookup")
        parts = name.split("__")
        server, tool = (parts[1], parts[2]) if len(parts) == 3 else ("fake_mcp", name)
        raw_input = step.get("input")
        item: dict[str, Any] = {
            "type": "mcpToolCall",
            "id": str(step.get("id") or self.item_id("call")),
            "server": server,
            "tool": tool,
            "arguments": dict(raw_input) if isinstance(raw_input, dict) else {},
            "result": None,
            "error": None,
            "status": "inProgress",
            "durationMs": None,
        }
        start = _now_ms()
        self.started(item)
        output = str(step.get("output", ""))
        done = dict(item, durationMs=max(0, _now_ms() - start))
        if step.get("is_error"):
            done.update(error={"message": output}, status="failed")
        else:
            done.update(
                result={"content": [{"type": "text", "text": output}], "structuredContent": None},
                status="completed",
            )
        self.completed(done, start)

    # -- usage, errors, endings ------------------------------------------------------------------

    def token_usage(self, step: Step) -> None:
        inputs = int(step.get("input_tokens", 0))
        outputs = int(step.get("output_tokens", 0))
        last = {
            "totalTokens": inputs + outputs,
            "inputTokens": inputs,
            "cachedInputTokens": int(step.get("cached_read_tokens", 0)),
            "cacheWriteInputTokens": int(step.get("cached_write_tokens", 0)),
            "outputTokens": outputs,
            "reasoningOutputTokens": int(step.get("thought_tokens", 0)),
        }
        # The turn's own sum is kept for the thread total; ``last`` is this model call's.
        turn = last if self.usage is None else {k: self.usage[k] + v for k, v in last.items()}
        self.usage = turn
        self.thread.turns[-1]["usage"] = turn
        # The thread-cumulative total (seed 002 §7.3 "流里的 usage 是累计值") and this turn's.
        self.notify(
            "thread/tokenUsage/updated",
            {
                "tokenUsage": {
                    "total": self.thread.cumulative(),
                    "last": last,
                    "modelContextWindow": _CONTEXT_WINDOW,
                }
            },
        )
        self.rate_limits()

    def rate_limits(self) -> None:
        """The snapshot codex 0.171.0 sends as a model call ends: after its usage when it
        completed, or when an interrupt aborted it (recordings/real/codex/*.app-server.jsonl)."""
        self.server.notify("account/rateLimits/updated", {"rateLimits": _RATE_LIMITS})

    def api_error(self, step: Step) -> dict[str, Any]:
        status = int(step.get("status", 500))
        code = str(step.get("code") or "api_error")
        body = {
            "error": {
                "message": str(step.get("message", "")),
                "type": code,
                "param": None,
                "code": code,
            }
        }
        info = {400: "badRequest", 401: "unauthorized", 429: "usageLimitExceeded"}.get(
            status, "internalServerError" if status >= 500 else "other"
        )
        # The error_turn capture: the body as the message, then a failed turn.
        error = {
            "message": jsonio.dumps(body),
            "codexErrorInfo": info,
            "additionalDetails": None,
            "misalignment": None,
        }
        self.status("systemError")
        self.notify("error", {"error": error, "willRetry": False})
        return error

    def answer_interrupts(self) -> None:
        """The client's interrupts, answered now that the turn has stopped: the aborted model
        call's rate-limit snapshot first, then ``{}`` to each (codex 0.171.0)."""
        waiting, self.server.interrupts = self.server.interrupts, []
        if not waiting:
            return
        self.rate_limits()
        for request_id in waiting:
            self.server.result(request_id, {})

    def save(self) -> None:
        self.thread.turns[-1]["reply"] = "\n".join(self.replies)
        self.run.save_session(self.thread.id, self.thread.turns)

    def finish(self, status: str, *, error: dict[str, Any] | None = None) -> None:
        self.save()
        self.server.active = None
        self.server.interrupt = False
        self.answer_interrupts()
        self.run.record.setdefault("turn_status", []).append(status)
        if status != "failed":
            self.status("idle")
        now = _now_ms()
        self.server.notify(
            "turn/completed",
            {
                "threadId": self.thread.id,
                "turn": _turn_object(
                    self.turn_id,
                    status,
                    started=self.started_ms // 1000,
                    completed=now // 1000,
                    items=self.messages if status == "completed" else (),
                    error=error,
                    duration=now - self.started_ms,
                ),
            },
        )


def _unified_hunks(old: str, new: str) -> str:
    import difflib  # only a file that existed is diffed

    lines = difflib.unified_diff(
        old.splitlines(keepends=True), new.splitlines(keepends=True), n=3, lineterm="\n"
    )
    return "".join(line for line in lines if not line.startswith(("---", "+++")))


def _git_diff(rel: str, old: str, new: str, existed: bool) -> str:
    header = f"diff --git a/{rel} b/{rel}\n"
    if not existed:
        return header + "new file mode 100644\n" + _added_diff(f"b/{rel}", new)
    import difflib  # only a file that existed is diffed

    body = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{rel}",
        tofile=f"b/{rel}",
    )
    return header + "".join(body)


def _overrides(run: FakeRun) -> dict[str, Any]:
    """``-c key=value`` and ``--enable`` / ``--disable`` features on the command line."""
    out: dict[str, Any] = {}
    for raw in run.parsed.values("--config"):
        key, eq, value = raw.partition("=")
        if eq and key.strip():
            out[key.strip()] = _toml_scalar(value)
    for feature in run.parsed.values("--enable"):
        out[f"features.{feature}"] = True
    for feature in run.parsed.values("--disable"):
        out[f"features.{feature}"] = False
    return out


if TYPE_CHECKING:
    _Handler = Callable[[_AppServer, Any, dict[str, Any]], None]
_HANDLERS: dict[str, _Handler] = {
    "thread/start": _AppServer.thread_start,
    "thread/resume": _AppServer.thread_resume,
    "turn/start": _AppServer.turn_start,
    "turn/interrupt": _AppServer.turn_interrupt,
}


def run_app_server(run: FakeRun) -> int:
    """``codex app-server`` on stdio (called by the ``codex`` fake in ``fake_clis.json_events``)."""
    listen = run.parsed.value("--listen")
    if listen not in (None, "stdio://"):
        run.err(f"fake codex app-server: only stdio:// is emulated, not {listen}\n")
        return 2
    run.record["transport"] = "app-server"
    run.record["initialized_notification"] = False
    trap_sigterm(run, SIGTERM_EXIT_CODE)
    return _AppServer(run).serve()


#: The ``codex`` agent id belongs to ``fake_clis.json_events``; this module adds no CLI.
SPECS: dict[str, CliSpec] = {}


def _added_diff(tofile: str, new: str) -> str:
    """``difflib.unified_diff("", new, fromfile="/dev/null", tofile=tofile)`` joined: every
    line added, in one hunk (nothing at all for an empty file)."""
    lines = new.splitlines(keepends=True)
    if not lines:
        return ""
    added = "1" if len(lines) == 1 else f"1,{len(lines)}"
    head = f"--- /dev/null\n+++ {tofile}\n@@ -0,0 +{added} @@\n"
    return head + "".join(f"+{line}" for line in lines)
