"""Fake ACP agents: the ``acp-json-rpc`` emulators (amr, devin, hermes, kimi, kiro, kilo,
reasonix, trae-cli, vibe).

Each fake is the *agent* side of the Agent Client Protocol: newline-delimited JSON-RPC 2.0 on
stdin/stdout (wire §A.0, §A.1). Every frame it writes is shaped after the vendored ACP v1
schema (``harness/schemas/acp/v1/schema.json``); the tests validate each one.

What the fakes do, and where it is written down:

* **Handshake** (wire §A.1.2, ref §2.6 steps 1-3, real-clis second batch "ACP initialize
  results"): ``initialize`` -> ``protocolVersion: 1``, ``agentCapabilities{loadSession: true,
  promptCapabilities, mcpCapabilities, sessionCapabilities}``, ``agentInfo{name, version}``,
  ``authMethods``. AMR also advertises ``_meta["com.open-design.nativeSessionContinue"]``
  (seed 000 "AMR compaction continuation"). ``session/new`` -> ``sessionId`` plus the model
  state: kilo and reasonix advertise a ``model`` *config option* (real-clis: kilo's
  ``configOptions``; reasonix ``internal/cli/acp.go`` builds ``model``/``work_mode`` options),
  the others a ``models{currentModelId, availableModels}`` block, so both of the engine's
  model paths (``session/set_config_option`` and ``session/set_model``, ref §2.6 step 3) are
  exercised. The params of every ``session/new``/``session/load`` are recorded
  (``session_new``, ``mcp_servers``; the adapter-layer checks judge MCP injection through them).
* **MCP servers** (ref §2.6 "MCP env format", ref §7): a stdio server's ``env`` is an array of
  ``{name, value}`` for every agent except reasonix (>= 1.0, Go), which takes a ``{KEY: value}``
  map; the wrong shape fails ``session/new`` with ``-32602``. Kimi refuses stdio servers from
  the version it reports when that is >= 0.37.0 (ref §2.6 step 2); it reports 0.36.2 unless
  ``FAKE_CLI_VERSION`` overrides the version in ``agentInfo`` (the ``--version`` probe output is
  fixed). ``http``/``sse`` servers need the agent's ``mcpCapabilities``.
* **Resume** (wire §A.1.2 ``session/load``): the saved history is replayed as
  ``session/update`` notifications before the response; an unknown id is JSON-RPC ``-32002``
  (resource not found). Sessions live under ``$HOME/.fake-cli/<agent>/sessions``.
* **AMR sessions and the compaction continuation** (seed 000 "AMR compaction continuation
  (ACP extension v1)"; Open Design ``packages/contracts/src/api/amr-continuation.ts``). Vela
  keeps two ids: ``session/new`` answers a per-process ACP ``sessionId`` (``acp-<hex>``, used
  by every later request and update of that process) and the durable ``openCodeSessionId``
  (``ses_<hex>``, the saved session's key). ``session/load`` takes the durable id, replays
  the history under a new ACP id and answers ``{sessionId, openCodeSessionId, ...models}``;
  a session it cannot find is ``-32600 "session gone"`` with ``data {kind: resume_failed,
  retryable: true}`` (upstream's words, not ``-32002``). The scenario step ``compaction``
  ends the prompt after the steps before it: the turn so far is saved with a pending
  continuation (cursor, this pid, the next step, the step's options) and the prompt is
  answered ``-32600 "opencode compaction continuation ended before prompt completion"``
  with structured ``data`` (``kind``, ``code``, ``runtime``, ``phase``, ``retryable``,
  ``openCodeSessionId``, ``continuation{version, userMessageId, assistantMessageId,
  toolResultsCommitted}``) or the legacy ``{kind: opencode_prompt_error}`` (no pending
  continuation then). ``_session/continue {sessionId, continuation}`` is refused with
  ``-32600 "unsafe continuation"`` unless this process *loaded* the session, its history is
  the one saved, a continuation is pending, the interrupted process is gone, the cursor is
  the saved one exactly and there is no ``prompt``; then the steps after ``compaction`` are
  rendered as the rest of the same turn (saved into it) and answered like a prompt
  (``{stopReason, usage}``). Step options: ``history`` ``missing`` (the load fails as
  above) or ``changed`` (the load answers another ``openCodeSessionId``), ``pending_tool``
  (a write ``tool_call`` left ``in_progress`` before the error, the evidence still claiming
  ``toolResultsCommitted``, as upstream's fake does), ``repeat`` (the continuation is
  interrupted again with the same evidence, once) and ``advertise`` (the
  ``nativeSessionContinue`` version ``initialize`` announces; ``null`` = none; the cursor
  stays version 1, so only the capability differs). Every request of an amr process also
  adds a ``{pid, method, has_prompt}`` row to the saved session's ``ledger`` (rows before
  the session existed are added when it is created or loaded), so both processes of a
  continuation can be inspected afterwards.
* **A turn** (wire §A.1.3): ``session/prompt`` streams ``agent_thought_chunk`` /
  ``agent_message_chunk`` (one per scenario chunk) and ``tool_call`` (``pending``, ``rawInput``,
  ``locations``) then ``tool_call_update`` (``in_progress``, then ``completed``/``failed`` with
  ``content`` and ``rawOutput``), and ends with the prompt response ``{stopReason, usage}``
  (``usage`` is the unstable schema's ``PromptResponse.usage``; a ``usage_update`` carries the
  context size). Kiro also sends its ``turn_end`` session update first (ref §2.6 step 5,
  ``acpTurnEndCompletesPrompt``): the one frame outside the vendored schema, on purpose.
* **Permission** (wire §A.1.2 ``session/request_permission``): before a write the agent asks
  with options of kinds ``allow_once`` / ``allow_always`` / ``reject_once`` (ids per agent, see
  "Tool shapes per agent") and waits for the client:
  ``selected`` allow -> the file is written and the tool completes; ``reject_once`` or
  ``cancelled`` -> the tool fails and nothing is written. Agents started with an
  auto-approving posture do not ask: devin ``--permission-mode dangerous`` and trae ``--yolo``
  (seed 000 §5.4, §5.9, §10), hermes/kimi ``--yolo``, kiro ``--trust-all-tools``, and kilo,
  whose edits are allowed by default (real-clis second batch: "no permission request").
* **Cancel** (wire §A.1.3): a ``session/cancel`` notification stops the stream; the pending
  prompt is answered with ``stopReason: "cancelled"`` after the last update.
* **Faults**: ``api_error`` is a JSON-RPC error response to ``session/prompt`` (but see "API
  errors per agent" below); ``malformed``
  writes the first half of a ``session/update`` line; ``foreign`` a ``session/update`` for
  another ``sessionId``; ``oversize`` one valid ``available_commands_update`` line of exactly
  ``bytes`` bytes (qwen 0.24 writes 560 KB ones, real-clis "Other gotchas"); ``crash`` with
  ``mid_line`` half a frame without a newline, then the exit.
* **stdin EOF**: the agent exits with the scenario's exit code (vibe-acp never does: it
  waits for the host's SIGTERM), unless the scenario sets
  ``ignore_stdin_close`` (claude-code-acp / codex-acp "close wait", real-clis second batch §5);
  kilo, kimi and hermes exit 0 after a prompt failed with an API error, as their
  real servers do (live differential, ``recordings/real/<agent>/api_error.jsonl``).
* **API errors per agent** (live differential): kimi 1.51.0 ends such a prompt with
  ``end_turn`` and no message; hermes 0.19.0 with the error as an agent message.
* **Tool inputs per agent** (live differential): kilo's and vibe's write ``rawInput`` names
  the path ``filePath``; vibe's shell ``rawInput`` has no ``cwd``; kilo lists the cwd in a
  shell call's ``locations``.
* **Tool shapes per agent** (live differential): kimi 1.51.0 (recordings/real/kimi/happy,
  shell) sends ``tool_call`` ``in_progress`` titled ``WriteFile`` / ``Shell`` with no ``kind``
  and no ``rawInput``, then an update titled ``WriteFile: <path>`` / ``Shell: <command>`` with
  the arguments as JSON text, asks for writes *and* shell commands (options ``approve`` /
  ``approve_for_session`` / ``reject``) and completes with the diff or the output. hermes
  0.19.0 (recordings/real/hermes/happy) sends a write as one ``tool_call`` (``tc-<hex>``,
  ``write: <path>``, kind ``edit``, no ``rawInput``), asks about ``edit-approval-<n>`` (options
  ``allow_once`` / ``deny``) and sends no update after an approved write; a ``terminal``
  call (recordings/real/hermes/shell) is one ``tool_call`` (``terminal: <command>``, kind
  ``execute``, no ``rawInput``) and one ``completed`` update listing output and exit code;
  the text of a model message after a tool starts with a blank line.

The record (``FAKE_CLI_RECORD``) holds, besides the common keys: ``prompt`` (the first
prompt's text), ``prompts``, ``prompt_via: "acp"``, ``initialize`` (its params),
``session_new`` (one ``{method, cwd, mcpServers}`` per ``session/new``/``session/load``),
``mcp_servers`` and ``session_cwd`` (the last ones), ``session_id``, ``resumed``,
``prior_turns``, ``model`` / ``model_via``, ``auto_approve``, ``permission_outcomes``,
``cancels`` and ``stdin_frames``; amr adds ``durable_session_id`` (the ``openCodeSessionId``
of the last session created or loaded; ``session_id`` is the ACP id), ``compactions`` (how
many compaction interruptions this process answered) and ``continues`` (one ``{params,
loaded, previous_alive, accepted, reason}`` per ``_session/continue``; ``reason`` is None
when accepted, ``previous_alive`` None when no continuation was pending).

Argument parsers (design principle 7: an unknown flag or a flag in the wrong mode exits
non-zero in the real CLI's own words). Decisions, per CLI:

=========  ======================================  ==========  ===============================
agent      argv (the def's build_args)             parser      why
=========  ======================================  ==========  ===============================
amr        ``vela agent run --runtime opencode``   commander   a Node CLI (assumed)
devin      ``devin --permission-mode dangerous     commander   brief; commander also accepts
           --respect-workspace-trust false acp``               program options after ``acp``
hermes     ``hermes acp --accept-hooks``           argparse    hermes-agent is a Python venv
kimi       ``kimi acp``                            argparse    Python (brief)
kiro       ``kiro-cli acp``                        clap        kiro-cli is a Rust binary
kilo       ``kilo acp``                            yargs       an opencode fork (brief)
reasonix   ``reasonix acp``                        Go flag     ``internal/cli/acp.go``
trae-cli   ``traecli acp serve --yolo``            commander   brief
vibe       ``vibe-acp``                            argparse    mistral-vibe is Python (brief)
=========  ======================================  ==========  ===============================

``fake_clis.argv`` has no Go ``flag`` style, so reasonix's ``acp`` flags are parsed here with
Go's rules and messages (``flag provided but not defined: -x``, exit 2); the shared parser only
routes the subcommand (:class:`AnyFlag`), and so still refuses a ``--name=value`` spelling, which
Go would accept (no def emits one). Each fake serves ACP only: the other modes of these CLIs (kimi
``--print``, kilo ``run``, an interactive TUI) exit 2 with a message naming the fake's limit.
"""

from __future__ import annotations

import json
import os
import queue
import re
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fake_clis import ids
from fake_clis.argv import Grammar, Parsed
from fake_clis.base import CliSpec, FakeRun
from fake_clis.scenario import Step

__all__ = ["PROTOCOL_VERSION", "SPECS", "AnyFlag", "GoFlagResult", "go_flag_parse"]

#: wire §A.1.2: the only stable protocol version.
PROTOCOL_VERSION = 1

# JSON-RPC / ACP error codes (wire §A.1.3 ``ErrorCode``).
_PARSE_ERROR = -32700
_INVALID_REQUEST = -32600
_METHOD_NOT_FOUND = -32601
_INVALID_PARAMS = -32602
_INTERNAL_ERROR = -32603
_AUTH_REQUIRED = -32000
_NOT_FOUND = -32002

#: wire §A.1.3 ``StopReason`` (v1 is a closed enum).
_STOP_REASONS = frozenset({"end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"})
#: wire §A.1.3 ``ToolKind``.
_TOOL_KINDS = frozenset(
    {"read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode"}
)
_CONTEXT_SIZE = 200_000

# seed 000 "AMR compaction continuation (ACP extension v1)"; the words are upstream's
# (Open Design packages/contracts/src/api/amr-continuation.ts and its test fake).
_CONTINUE_METHOD = "_session/continue"
_CONTINUE_CAPABILITY = "com.open-design.nativeSessionContinue"
_COMPACTION_MESSAGE = "opencode compaction continuation ended before prompt completion"
_COMPACTION_CODE = "OPENCODE_COMPACTION_CONTINUATION_INCOMPLETE"
_UNSAFE_CONTINUATION = "unsafe continuation"
_SESSION_GONE = "session gone"
#: The durable ids an amr fake writes and reads (its own ``ses_<hex>``): file-name safe.
_DURABLE_ID = re.compile(r"^[A-Za-z0-9_-]{1,200}$")

_EOF = object()


# --------------------------------------------------------------------------- agents


@dataclass(frozen=True)
class _Agent:
    """Everything that differs between the ACP agents (the server below is shared)."""

    agent_id: str
    prog: str
    version: str
    version_output: str
    style: str
    grammar: Callable[[bool], Grammar]
    help_text: str
    #: The subcommand path that starts the ACP server.
    acp_command: tuple[str, ...]
    info_name: str
    info_title: str
    auth_methods: tuple[Mapping[str, Any], ...]
    #: ``config`` = a ``model`` config option; ``models`` = a ``models`` block (set_model);
    #: ``both`` = the two (reasonix sends both; the engine then prefers the config option).
    model_channel: str
    models: tuple[tuple[str, str], ...]
    #: ``array`` (ACP schema) or ``map`` (reasonix) for a stdio MCP server's env.
    env_format: str = "array"
    #: Stdio MCP servers are refused from this reported version on (kimi).
    stdio_removed_in: str | None = None
    #: Kiro: a ``turn_end`` session update precedes the prompt response.
    turn_end_update: bool = False
    #: Agent posture: argv -> True when writes are approved without asking.
    auto_approve: Callable[[Parsed], bool] = lambda parsed: False
    mcp_http: bool = False
    session_prefix: str = ""
    #: Env var that pins the session's initial model (amr: ``VELA_DEFAULT_MODEL``, ref §8.3).
    default_model_env: str | None = None
    capability_meta: Mapping[str, Any] = field(default_factory=dict)
    #: Agent-specific argv checks beyond the grammar: returns (message, exit code) or None.
    check_argv: Callable[[FakeRun], tuple[str, int] | None] | None = None
    models_args: tuple[str, ...] | None = None
    models_output: str = ""
    #: ``rawInput`` of a write tool call: the key of the path, and whether the path stays as
    #: the model wrote it (relative) instead of resolved under the session cwd.
    write_path_key: str = "path"
    write_path_as_given: bool = False
    #: Whether a shell tool call's ``rawInput`` carries the session ``cwd``.
    shell_input_cwd: bool = True
    #: Whether a shell tool call lists the session cwd in ``locations`` (kilo).
    shell_locations_cwd: bool = False
    #: The exit code at stdin EOF after a turn failed with an API error (``None``: the
    #: scenario's). A real ACP server answers the failed prompt with an error and, being a
    #: server, still exits 0 when its client goes (live: kilo 7.7.7, vibe-acp 3.0.2).
    api_error_exit: int | None = None
    #: Whether the agent exits once its client closes stdin. vibe-acp 3.0.2 does not: each
    #: of its live runs (recordings/real/vibe/*.jsonl, and a failed api_error run) ended by
    #: the host's SIGTERM after the close grace (ref §10.1 rule 3 bounds that wait).
    exits_at_eof: bool = True
    #: How a prompt that hits a scripted API error ends: ``None`` = a JSON-RPC error
    #: response; a string = the turn still ends with ``end_turn``, after that text (with
    #: ``{status}`` and ``{message}`` filled) as one agent message when it is not empty.
    #: Live: kimi 1.51.0 ends the turn silently; hermes 0.19.0 says what failed.
    api_error_reply: str | None = None
    #: How tool calls are rendered: ``acp`` (``tool_call`` pending with ``kind`` and
    #: ``rawInput``, then ``in_progress`` and ``completed``/``failed`` updates), ``kimi``
    #: (kimi-cli 1.51.0) or ``hermes`` (hermes-agent 0.19.0); see ``_TurnRenderer.tool``.
    tool_style: str = "acp"
    #: Put between the text of two model messages of one prompt (hermes: a blank line).
    text_separator: str = ""
    #: ``session/request_permission`` options: (optionId, name, kind), in order.
    permission_options: tuple[tuple[str, str, str], ...] = (
        ("allow_once", "Allow", "allow_once"),
        ("allow_always", "Always allow", "allow_always"),
        ("reject_once", "Reject", "reject_once"),
    )
    #: AMR (Vela over OpenCode): a per-process ACP ``sessionId`` beside the durable
    #: ``openCodeSessionId``, the ``compaction`` step and ``_session/continue`` (seed 000
    #: "AMR compaction continuation (ACP extension v1)").
    native_continue: bool = False


def _version_tuple(text: str) -> tuple[int, ...] | None:
    match = re.match(r"^\s*v?(\d+(?:\.\d+)*)", text)
    return tuple(int(p) for p in match.group(1).split(".")) if match else None


def _at_least(version: str, floor: str) -> bool:
    mine, theirs = _version_tuple(version), _version_tuple(floor)
    if mine is None or theirs is None:
        return False
    width = max(len(mine), len(theirs))
    return mine + (0,) * (width - len(mine)) >= theirs + (0,) * (width - len(theirs))


# --------------------------------------------------------------------------- the channel


class _Channel:
    """stdin on a reader thread: requests to a queue, responses and cancels routed at once.

    The agent must notice ``session/cancel`` and answer its own permission requests while
    a prompt is streaming, so stdin is read concurrently (wire §A.1.3 cancellation).
    """

    def __init__(self, run: FakeRun) -> None:
        self.run = run
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.eof = threading.Event()
        self._lock = threading.Condition()
        self._responses: dict[Any, dict[str, Any]] = {}
        #: sessionId -> id of the latest session/prompt request seen for it.
        self._latest_prompt: dict[str, Any] = {}
        self._cancelled: set[Any] = set()
        self._thread = threading.Thread(target=self._read, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _read(self) -> None:
        frames = self.run.record.setdefault("stdin_frames", [])
        while True:
            line = self.run.stdin.readline()
            if not line:
                break
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except ValueError:
                self.inbox.put(("invalid", text))
                continue
            frames.append(value)
            self._route(value)
        self.eof.set()
        with self._lock:
            self._lock.notify_all()
        self.inbox.put(_EOF)

    def _route(self, value: Any) -> None:
        if not isinstance(value, dict):
            self.inbox.put(value)
            return
        method = value.get("method")
        if method is None and "id" in value and ("result" in value or "error" in value):
            with self._lock:
                self._responses[value["id"]] = value
                self._lock.notify_all()
            return
        params = value.get("params")
        session_id = params.get("sessionId") if isinstance(params, dict) else None
        turn_methods = ("session/prompt", _CONTINUE_METHOD)
        if method in turn_methods and "id" in value and isinstance(session_id, str):
            with self._lock:
                self._latest_prompt[session_id] = value["id"]
        elif method == "session/cancel" and "id" not in value and isinstance(session_id, str):
            with self._lock:
                if session_id in self._latest_prompt:
                    self._cancelled.add(self._latest_prompt[session_id])
                self._lock.notify_all()
            self.run.record.setdefault("cancels", []).append(session_id)
            return
        self.inbox.put(value)

    def cancelled(self, prompt_id: Any) -> bool:
        with self._lock:
            return prompt_id in self._cancelled

    def wait_cancel(self, prompt_id: Any, seconds: float) -> bool:
        """Sleep up to ``seconds``; True as soon as the prompt is cancelled."""
        deadline = time.monotonic() + seconds
        with self._lock:
            while prompt_id not in self._cancelled:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._lock.wait(left)
            return True

    def wait_response(self, request_id: Any) -> dict[str, Any] | None:
        """Block until the client answers ``request_id``; None at stdin EOF."""
        with self._lock:
            while request_id not in self._responses:
                if self.eof.is_set():
                    return None
                self._lock.wait(0.5)
            return self._responses.pop(request_id)


# --------------------------------------------------------------------------- sessions


@dataclass
class _Session:
    session_id: str
    cwd: str
    model: str
    turns: list[dict[str, Any]] = field(default_factory=list)
    #: Tool kinds the client allowed for the whole session (``allow_always``).
    always_allowed: set[str] = field(default_factory=set)
    #: hermes: its approval requests are numbered per session (``edit-approval-<n>``).
    approvals: int = 0
    #: The id the session is saved under: amr's ``openCodeSessionId``; the others' ACP id.
    durable_id: str = ""
    #: Opened by ``session/load`` in this process (``_session/continue`` needs that).
    loaded: bool = False
    #: amr ``history: changed``: the load found another history than the one saved.
    history_changed: bool = False

    def __post_init__(self) -> None:
        if not self.durable_id:
            self.durable_id = self.session_id


@dataclass
class _Turn:
    prompt: str
    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    tools: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    cost: float = 0.0


def _dumps(frame: Any) -> str:
    return json.dumps(frame, ensure_ascii=False, separators=(",", ":"))


class _Stop(Exception):
    """Stop the turn: the client cancelled, or stdin closed under a pending request."""


class _ApiError(Exception):
    def __init__(self, step: Step) -> None:
        super().__init__(str(step.get("message", "API error")))
        self.step = step


class _Compaction(Exception):
    """The scenario's ``compaction`` step at ``index``: the prompt ends with evidence."""

    def __init__(self, index: int, step: Step) -> None:
        super().__init__("compaction")
        self.index = index
        self.step = step


class _AcpServer:
    """One agent process: the JSON-RPC loop, sessions and the scenario renderer."""

    def __init__(self, run: FakeRun, agent: _Agent) -> None:
        self.run = run
        self.agent = agent
        #: A turn failed with a scripted API error (see ``_Agent.api_error_exit``).
        self.api_error_seen = False
        self.channel = _Channel(run)
        self.version = run.env.get("FAKE_CLI_VERSION") or agent.version
        self.sessions: dict[str, _Session] = {}
        self.authenticated = run.scenario.auth != "missing" and run.env.get("FAKE_CLI_AUTH") != (
            "missing"
        )
        self.next_request_id = 0
        self.auto_approve = agent.auto_approve(run.parsed)
        #: amr: ledger rows of requests not yet written to a saved session.
        self.ledger_buffer: list[dict[str, Any]] = []
        run.record["prompt_via"] = "acp"
        run.record["auto_approve"] = self.auto_approve

    # -- output ---------------------------------------------------------------------

    def send(self, frame: dict[str, Any]) -> None:
        self.run.out(_dumps(frame))

    def result(self, request_id: Any, result: Any) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "result": result})

    def error(self, request_id: Any, code: int, message: str, data: Any = None) -> None:
        body: dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            body["data"] = data
        self.send({"jsonrpc": "2.0", "id": request_id, "error": body})

    def update(self, session_id: str, update: dict[str, Any]) -> None:
        params = {"sessionId": session_id, "update": update}
        self.send({"jsonrpc": "2.0", "method": "session/update", "params": params})

    # -- the loop --------------------------------------------------------------------

    def serve(self) -> int:
        self.channel.start()
        while True:
            message = self.channel.inbox.get()
            if message is _EOF:
                break
            self.dispatch(message)
        self.run.linger_if_asked()
        if not self.agent.exits_at_eof:
            self.run.hang()
        if self.api_error_seen and self.agent.api_error_exit is not None:
            return self.agent.api_error_exit
        return self.run.scenario.exit_code

    def dispatch(self, message: Any) -> None:
        if isinstance(message, tuple) and message[0] == "invalid":
            self.error(None, _PARSE_ERROR, "Parse error")
            return
        if not isinstance(message, dict) or not isinstance(message.get("method"), str):
            self.error(None, _INVALID_REQUEST, "Invalid Request")
            return
        if message.get("jsonrpc") != "2.0" and "id" in message:
            self.error(message.get("id"), _INVALID_REQUEST, "Invalid Request: jsonrpc must be 2.0")
            return
        method: str = message["method"]
        params = message.get("params")
        if "id" not in message:
            # Notifications: session/cancel is routed by the channel; others are ignored.
            self.run.record.setdefault("ignored_notifications", []).append(method)
            return
        request_id = message["id"]
        handler = _HANDLERS.get(method)
        if handler is None:
            self.error(request_id, _METHOD_NOT_FOUND, f"Method not found: {method}")
            return
        if not isinstance(params, dict):
            self.error(request_id, _INVALID_PARAMS, f"Invalid params: {method} needs an object")
            return
        if self.agent.native_continue:
            self.ledger(method, params)
        handler(self, request_id, params)

    # -- handshake -------------------------------------------------------------------

    def on_initialize(self, request_id: Any, params: dict[str, Any]) -> None:
        version = params.get("protocolVersion")
        if not isinstance(version, int) or isinstance(version, bool):
            self.error(request_id, _INVALID_PARAMS, "Invalid params: protocolVersion is required")
            return
        self.run.record["initialize"] = params
        capabilities: dict[str, Any] = {
            "loadSession": True,
            "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": self.agent.mcp_http, "sse": False},
            "sessionCapabilities": {},
        }
        meta = dict(self.agent.capability_meta)
        if self.agent.native_continue:
            # The compaction step's ``advertise``: the extension version this run announces
            # (None: not announced), so a host's capability check can be exercised.
            step = next((s for s in self.run.scenario.steps if s.kind == "compaction"), None)
            version = step.get("advertise", 1) if step is not None else 1
            meta.pop(_CONTINUE_CAPABILITY, None)
            if version is not None:
                meta[_CONTINUE_CAPABILITY] = {"version": version}
        if meta:
            capabilities["_meta"] = meta
        self.result(
            request_id,
            {
                # wire §A.1.2: the agent answers with the version it speaks when the
                # client asks for another one.
                "protocolVersion": PROTOCOL_VERSION,
                "agentCapabilities": capabilities,
                "agentInfo": {
                    "name": self.agent.info_name,
                    "title": self.agent.info_title,
                    "version": self.version,
                },
                "authMethods": [dict(m) for m in self.agent.auth_methods],
            },
        )

    def on_authenticate(self, request_id: Any, params: dict[str, Any]) -> None:
        ids = {m.get("id") for m in self.agent.auth_methods}
        if params.get("methodId") not in ids:
            self.error(
                request_id, _INVALID_PARAMS, f"Unknown auth method: {params.get('methodId')}"
            )
            return
        self.authenticated = True
        self.result(request_id, {})

    # -- sessions ---------------------------------------------------------------------

    def _check_session_params(self, request_id: Any, params: dict[str, Any]) -> bool:
        cwd = params.get("cwd")
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            self.error(request_id, _INVALID_PARAMS, "Invalid params: cwd must be an absolute path")
            return False
        servers = params.get("mcpServers")
        if not isinstance(servers, list):
            self.error(request_id, _INVALID_PARAMS, "Invalid params: mcpServers is required")
            return False
        problem = self._mcp_problem(servers)
        if problem is not None:
            self.error(request_id, _INVALID_PARAMS, f"Invalid params: {problem}")
            return False
        if not self.authenticated:
            # real-clis second batch (kimi): without credentials session/new is -32000.
            self.error(request_id, _AUTH_REQUIRED, "Authentication required")
            return False
        return True

    def _mcp_problem(self, servers: list[Any]) -> str | None:
        """ref §2.6 / ref §7: the env shape per agent; kimi's stdio cut-off; transports."""
        for index, server in enumerate(servers):
            where = f"mcpServers[{index}]"
            if not isinstance(server, dict):
                return f"{where} must be an object"
            kind = server.get("type", "stdio")
            if kind in ("http", "sse"):
                if not (kind == "http" and self.agent.mcp_http):
                    return f"{where}: {kind} MCP servers are not supported by this agent"
                if not isinstance(server.get("url"), str) or not isinstance(
                    server.get("headers"), list
                ):
                    return f"{where}: {kind} servers need url and headers"
                continue
            if kind != "stdio":
                return f"{where}.type: unknown transport {kind!r}"
            floor = self.agent.stdio_removed_in
            if floor is not None and _at_least(self.version, floor):
                return (
                    f"{where}: stdio MCP servers are not supported since {self.agent.prog} {floor}"
                )
            for key in ("name", "command"):
                if not isinstance(server.get(key), str):
                    return f"{where}.{key} must be a string"
            args = server.get("args")
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                return f"{where}.args must be an array of strings"
            env = server.get("env")
            if self.agent.env_format == "map":
                if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
                    return f"{where}.env must be an object of strings (KEY: value)"
            elif not isinstance(env, list) or not all(
                isinstance(e, dict)
                and isinstance(e.get("name"), str)
                and isinstance(e.get("value"), str)
                for e in env
            ):
                return f"{where}.env must be an array of {{name, value}}"
        return None

    def _model_state(self, session: _Session) -> dict[str, Any]:
        state: dict[str, Any] = {}
        if self.agent.model_channel in ("models", "both"):
            models = [{"modelId": m, "name": n} for m, n in self.agent.models]
            state["models"] = {"currentModelId": session.model, "availableModels": models}
        if self.agent.model_channel in ("config", "both"):
            state["configOptions"] = self._config_options(session)
        return state

    def _config_options(self, session: _Session) -> list[dict[str, Any]]:
        return [
            {
                "id": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": session.model,
                "options": [{"value": m, "name": n} for m, n in self.agent.models],
            }
        ]

    def _new_session_id(self) -> str:
        if self.agent.session_prefix:
            return self.agent.session_prefix + ids.uuid4_hex()[:26]
        return ids.uuid4()

    def _record_session_params(self, method: str, params: dict[str, Any]) -> None:
        self.run.record.setdefault("session_new", []).append({"method": method, **params})
        self.run.record["mcp_servers"] = params.get("mcpServers")
        self.run.record["session_cwd"] = params.get("cwd")

    def _default_model(self) -> str:
        env = self.agent.default_model_env
        pinned = self.run.env.get(env) if env else None
        return pinned or self.agent.models[0][0]

    def on_session_new(self, request_id: Any, params: dict[str, Any]) -> None:
        self._record_session_params("session/new", params)
        if not self._check_session_params(request_id, params):
            return
        if self.agent.native_continue:
            self._native_session_new(request_id, params)
            return
        session = _Session(self._new_session_id(), params["cwd"], self._default_model())
        self.sessions[session.session_id] = session
        self.run.record["session_id"] = session.session_id
        self.run.record["resumed"] = False
        self.result(request_id, {"sessionId": session.session_id, **self._model_state(session)})

    def _native_session_new(self, request_id: Any, params: dict[str, Any]) -> None:
        """amr: a per-process ACP id and the durable ``openCodeSessionId`` (saved at once,
        with the ledger rows of this process so far)."""
        session = _Session(
            _acp_session_id(),
            params["cwd"],
            self._default_model(),
            durable_id=self._new_session_id(),
        )
        self.sessions[session.session_id] = session
        self._write_doc(session.durable_id, lambda doc: None, create=True)
        self._flush_ledger(session.durable_id)
        self.run.record.update(
            session_id=session.session_id, durable_session_id=session.durable_id, resumed=False
        )
        self.result(
            request_id,
            {
                "sessionId": session.session_id,
                "openCodeSessionId": session.durable_id,
                **self._model_state(session),
            },
        )

    def on_session_load(self, request_id: Any, params: dict[str, Any]) -> None:
        self._record_session_params("session/load", params)
        session_id = params.get("sessionId")
        if not isinstance(session_id, str) or not session_id:
            self.error(request_id, _INVALID_PARAMS, "Invalid params: sessionId is required")
            return
        if not self._check_session_params(request_id, params):
            return
        if self.agent.native_continue:
            self._native_session_load(request_id, params, session_id)
            return
        saved = self.run.load_session(session_id)
        if saved is None:
            # wire §A.1.3 ErrorCode -32002 "Resource not found".
            self.error(
                request_id, _NOT_FOUND, "Resource not found", {"uri": f"session:{session_id}"}
            )
            return
        turns = [t for t in saved.get("turns", []) if isinstance(t, dict)]
        last = turns[-1].get("model") if turns else None
        model = last if isinstance(last, str) else None
        session = _Session(session_id, params["cwd"], model or self._default_model(), turns)
        self.sessions[session_id] = session
        self.run.record.update(session_id=session_id, resumed=True, prior_turns=len(turns))
        # wire §A.1.2: the history is replayed as session/update before the response.
        for turn in turns:
            self._replay(session_id, turn)
        self.result(request_id, self._model_state(session))

    def _native_session_load(self, request_id: Any, params: dict[str, Any], durable: str) -> None:
        """amr: load by the durable id, replay under a new ACP id, answer both ids.

        A pending continuation's ``history`` option decides what this load finds: ``missing``
        fails like a session that is gone, ``changed`` answers another ``openCodeSessionId``
        (and the continuation is then refused: the persisted history is not the cursor's).
        """
        saved = self.run.load_session(durable) if _DURABLE_ID.match(durable) else None
        pending = saved.get("continuation") if saved is not None else None
        options = pending.get("options") if isinstance(pending, dict) else None
        history = options.get("history", "kept") if isinstance(options, dict) else "kept"
        if saved is None or history == "missing":
            # Upstream's words for a load of a session that is gone.
            self.error(
                request_id,
                _INVALID_REQUEST,
                _SESSION_GONE,
                {"kind": "resume_failed", "retryable": True},
            )
            return
        turns = [t for t in saved.get("turns", []) if isinstance(t, dict)]
        last = turns[-1].get("model") if turns else None
        model = last if isinstance(last, str) else self._default_model()
        session = _Session(
            _acp_session_id(),
            params["cwd"],
            model,
            turns,
            durable_id=durable,
            loaded=True,
            history_changed=history == "changed",
        )
        self.sessions[session.session_id] = session
        self._flush_ledger(durable)
        self.run.record.update(
            session_id=session.session_id,
            durable_session_id=durable,
            resumed=True,
            prior_turns=len(turns),
        )
        for turn in turns:
            self._replay(session.session_id, turn)
        answered = self._new_session_id() if session.history_changed else durable
        self.result(
            request_id,
            {
                "sessionId": session.session_id,
                "openCodeSessionId": answered,
                **self._model_state(session),
            },
        )

    def _replay(self, session_id: str, turn: Mapping[str, Any]) -> None:
        prompt = str(turn.get("prompt", ""))
        self.update(session_id, _chunk("user_message_chunk", prompt))
        thinking = str(turn.get("thinking", ""))
        if thinking:
            self.update(session_id, _chunk("agent_thought_chunk", thinking))
        for tool in turn.get("tools", []):
            if isinstance(tool, dict):
                self.update(session_id, {"sessionUpdate": "tool_call", **tool})
        text = str(turn.get("text", ""))
        if text:
            self.update(session_id, _chunk("agent_message_chunk", text))

    def _session(self, request_id: Any, params: dict[str, Any]) -> _Session | None:
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        if session is None:
            self.error(
                request_id, _NOT_FOUND, "Resource not found", {"uri": f"session:{session_id}"}
            )
        return session

    def on_set_model(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self._session(request_id, params)
        if session is None:
            return
        model = params.get("modelId")
        known = {m for m, _ in self.agent.models}
        if not isinstance(model, str) or model not in known:
            self.error(request_id, _INVALID_PARAMS, f"Invalid params: unknown model {model!r}")
            return
        session.model = model
        self.run.record["model"] = model
        self.run.record["model_via"] = "session/set_model"
        self.result(request_id, {})

    def on_set_config_option(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self._session(request_id, params)
        if session is None:
            return
        if self.agent.model_channel == "models" or params.get("configId") != "model":
            self.error(
                request_id,
                _INVALID_PARAMS,
                f"Invalid params: unknown config option {params.get('configId')!r}",
            )
            return
        value = params.get("value")
        if not isinstance(value, str) or value not in {m for m, _ in self.agent.models}:
            self.error(request_id, _INVALID_PARAMS, f"Invalid params: unknown model {value!r}")
            return
        session.model = value
        self.run.record["model"] = value
        self.run.record["model_via"] = "session/set_config_option"
        self.result(request_id, {"configOptions": self._config_options(session)})

    # -- the prompt turn ----------------------------------------------------------------

    def on_prompt(self, request_id: Any, params: dict[str, Any]) -> None:
        session = self._session(request_id, params)
        if session is None:
            return
        blocks = params.get("prompt")
        if not isinstance(blocks, list) or not blocks:
            self.error(
                request_id, _INVALID_PARAMS, "Invalid params: prompt must be a non-empty array"
            )
            return
        text = "".join(
            str(b.get("text", ""))
            for b in blocks
            if isinstance(b, dict) and b.get("type") == "text"
        )
        self.run.record.setdefault("prompts", []).append(text)
        self.run.record.setdefault("prompt", text)
        self._run_turn(request_id, session, _Turn(prompt=text), start=0, index=None)

    def _run_turn(
        self, request_id: Any, session: _Session, turn: _Turn, *, start: int, index: int | None
    ) -> None:
        """Render the scenario's steps from ``start`` into ``turn`` and answer the request;
        ``index`` is the saved turn this one continues (None: a new turn)."""
        renderer = _TurnRenderer(self, session, request_id, turn)
        try:
            renderer.render(start)
        except _ApiError as exc:
            self.api_error_seen = True
            self._save(session, turn, index)
            self.error(request_id, _INTERNAL_ERROR, str(exc), renderer.api_error_data(exc.step))
            return
        except _Compaction as exc:
            self._interrupt(request_id, session, turn, index, exc)
            return
        except _Stop:
            pass
        cancelled = self.channel.cancelled(request_id)
        if cancelled:
            stop = "cancelled"
        else:
            wanted = self.run.scenario.stop_reason
            stop = wanted if wanted in _STOP_REASONS else "end_turn"
            if self.agent.turn_end_update:
                # ref §2.6 step 5: Kiro ends a turn with its own session update.
                self.update(session.session_id, {"sessionUpdate": "turn_end", "stopReason": stop})
        self._save(session, turn, index)
        result: dict[str, Any] = {"stopReason": stop}
        if turn.usage:
            result["usage"] = dict(turn.usage)
        self.result(request_id, result)

    def _save(self, session: _Session, turn: _Turn, index: int | None = None) -> int:
        """Save ``turn`` as a new turn (or over the saved turn ``index``); its index."""
        saved = {
            "prompt": turn.prompt,
            "text": "".join(turn.text),
            "thinking": "".join(turn.thinking),
            "tools": turn.tools,
            # The model in use, so session/load restores it.
            "model": session.model,
        }
        if index is None or not 0 <= index < len(session.turns):
            session.turns.append(saved)
            index = len(session.turns) - 1
        else:
            session.turns[index] = saved
        if self.agent.native_continue:
            turns = list(session.turns)
            self._write_doc(session.durable_id, lambda doc: doc.update(turns=turns), create=True)
        else:
            self.run.save_session(session.session_id, session.turns)
        return index

    # -- the compaction continuation (amr) -----------------------------------------------

    def _interrupt(
        self, request_id: Any, session: _Session, turn: _Turn, index: int | None, exc: _Compaction
    ) -> None:
        """seed 000 "AMR compaction continuation": the turn so far is saved, with a pending
        continuation when the evidence is structured, then the request fails with it."""
        step = exc.step
        options = {
            "evidence": str(step.get("evidence", "structured")),
            "history": str(step.get("history", "kept")),
            "pending_tool": bool(step.get("pending_tool", False)),
            "repeat": bool(step.get("repeat", False)),
        }
        index = self._save(session, turn, index)
        cursor = {
            "version": 1,
            "userMessageId": f"msg_{ids.uuid4_hex()[:24]}",
            "assistantMessageId": f"msg_{ids.uuid4_hex()[:24]}",
            # Claimed even with a tool left in_progress (pending_tool), as upstream's fake
            # does: the host must check its own tool frames (seed 000: "The daemon
            # independently checks its tool frames").
            "toolResultsCommitted": True,
        }
        pending = {
            "cursor": cursor,
            "pid": os.getpid(),
            "next_step": exc.index + 1,
            "turn": index,
            "options": options,
            "usage": dict(turn.usage),
            "cost": turn.cost,
        }
        self._send_interruption(request_id, session, pending)

    def _send_interruption(
        self, request_id: Any, session: _Session, pending: dict[str, Any]
    ) -> None:
        """Save ``pending`` (legacy evidence: none) and answer the request with the error."""
        structured = pending["options"]["evidence"] == "structured"

        def change(doc: dict[str, Any]) -> None:
            if structured:
                doc["continuation"] = pending
            else:
                doc.pop("continuation", None)

        self._write_doc(session.durable_id, change, create=True)
        self.run.record["compactions"] = int(self.run.record.get("compactions", 0)) + 1
        data: dict[str, Any] = {"kind": "opencode_prompt_error"}
        if structured:
            data = {
                "kind": "opencode_continuation_incomplete",
                "code": _COMPACTION_CODE,
                "runtime": "opencode",
                "phase": "post_tool_resume",
                "retryable": False,
                "openCodeSessionId": session.durable_id,
                "continuation": pending["cursor"],
            }
        self.error(request_id, _INVALID_REQUEST, _COMPACTION_MESSAGE, data)

    def on_continue(self, request_id: Any, params: dict[str, Any]) -> None:
        """``_session/continue {sessionId, continuation}``: the rest of the interrupted turn,
        without a user message, when it is safe (seed 000: the new process loads the same
        durable session and sends only the cursor; OpenCode rechecks persisted history)."""
        if not self.agent.native_continue:
            self.error(request_id, _METHOD_NOT_FOUND, f"Method not found: {_CONTINUE_METHOD}")
            return
        entry: dict[str, Any] = {
            "params": params,
            "loaded": False,
            "previous_alive": None,
            "accepted": False,
            "reason": None,
        }
        self.run.record.setdefault("continues", []).append(entry)
        session_id = params.get("sessionId")
        session = self.sessions.get(session_id) if isinstance(session_id, str) else None
        pending: Any = None
        if session is not None:
            entry["loaded"] = session.loaded
            saved = self.run.load_session(session.durable_id)
            pending = saved.get("continuation") if saved is not None else None
            if isinstance(pending, dict) and isinstance(pending.get("pid"), int):
                entry["previous_alive"] = _pid_alive(pending["pid"])
        extra = sorted(set(params) - {"sessionId", "continuation"})
        reason: str | None = None
        if session is None:
            reason = f"unknown session {session_id!r}"
        elif "prompt" in params:
            reason = "a continuation carries no prompt"
        elif extra:
            reason = f"unexpected params {extra}"
        elif not session.loaded:
            reason = "the session was not loaded by this process"
        elif session.history_changed:
            reason = "the persisted history changed"
        elif not isinstance(pending, dict):
            reason = "no continuation is pending"
        elif entry["previous_alive"] is not False:
            reason = "the interrupted process is still alive"
        elif not _same_json(params.get("continuation"), pending.get("cursor")):
            reason = "the cursor is not the saved one"
        if reason is not None or session is None or not isinstance(pending, dict):
            entry["reason"] = reason
            self.error(request_id, _INVALID_REQUEST, _UNSAFE_CONTINUATION)
            return
        entry["accepted"] = True
        # One continuation per interruption: the pending record is consumed.
        self._write_doc(session.durable_id, lambda doc: doc.pop("continuation", None))
        options = dict(pending.get("options") or {})
        if options.get("repeat"):
            # The continuation is interrupted again, with the same evidence (once).
            again = {**pending, "pid": os.getpid(), "options": {**options, "repeat": False}}
            self._send_interruption(request_id, session, again)
            return
        index = int(pending.get("turn", len(session.turns) - 1))
        saved_turn = session.turns[index] if 0 <= index < len(session.turns) else {}
        turn = _Turn(
            prompt=str(saved_turn.get("prompt", "")),
            text=[str(saved_turn.get("text", ""))],
            thinking=[str(saved_turn.get("thinking", ""))],
            tools=[t for t in saved_turn.get("tools", []) if isinstance(t, dict)],
            usage={k: v for k, v in dict(pending.get("usage") or {}).items() if isinstance(v, int)},
            cost=float(pending.get("cost", 0.0)),
        )
        self._run_turn(
            request_id, session, turn, start=int(pending.get("next_step", 0)), index=index
        )

    # -- the saved session document (amr) ----------------------------------------------

    def _doc_path(self, durable: str) -> Path | None:
        if not _DURABLE_ID.match(durable):
            return None
        return self.run.session_dir / f"{durable}.json"

    def _write_doc(
        self, durable: str, change: Callable[[dict[str, Any]], Any], *, create: bool = False
    ) -> bool:
        """Read-modify-write the saved session ``durable`` (replaced atomically); False
        when it does not exist and ``create`` is false."""
        path = self._doc_path(durable)
        if path is None:
            return False
        doc = self.run.load_session(durable)
        if doc is None:
            if not create:
                return False
            doc = {"id": durable, "turns": []}
        change(doc)
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.write_text(json.dumps(doc), encoding="utf-8")
        os.replace(scratch, path)
        return True

    def ledger(self, method: str, params: dict[str, Any]) -> None:
        """One ledger row for a request, written to the session it names when that is
        saved already (else kept until this process creates or loads one)."""
        self.ledger_buffer.append(
            {"pid": os.getpid(), "method": method, "has_prompt": "prompt" in params}
        )
        named = params.get("sessionId")
        if method == "session/load":
            target = named if isinstance(named, str) else None
        else:
            session = self.sessions.get(named) if isinstance(named, str) else None
            target = session.durable_id if session is not None else None
        if target is not None:
            self._flush_ledger(target)

    def _flush_ledger(self, durable: str) -> None:
        rows, self.ledger_buffer = self.ledger_buffer, []
        if rows and not self._write_doc(
            durable, lambda doc: doc.setdefault("ledger", []).extend(rows)
        ):
            self.ledger_buffer = rows + self.ledger_buffer

    def next_id(self) -> int:
        request_id = self.next_request_id
        self.next_request_id += 1
        return request_id


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


_HANDLERS: dict[str, Callable[[_AcpServer, Any, dict[str, Any]], None]] = {
    "initialize": _AcpServer.on_initialize,
    "authenticate": _AcpServer.on_authenticate,
    "session/new": _AcpServer.on_session_new,
    "session/load": _AcpServer.on_session_load,
    "session/set_model": _AcpServer.on_set_model,
    "session/set_config_option": _AcpServer.on_set_config_option,
    "session/prompt": _AcpServer.on_prompt,
    _CONTINUE_METHOD: _AcpServer.on_continue,
}


def _acp_session_id() -> str:
    """amr: the ACP ``sessionId`` of one process (the durable id is ``openCodeSessionId``)."""
    return f"acp-{ids.uuid4_hex()}"


def _same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values (``1`` is not ``true``, ``1`` is not ``1.0``)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (an exited, reaped process does not)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.OpenProcess.restype = ctypes.c_void_p
        process_query_limited_information = 0x1000
        still_active = 259
        handle = kernel32.OpenProcess(process_query_limited_information, False, pid)
        if not handle:
            # ERROR_ACCESS_DENIED: it exists, owned by someone else.
            return ctypes.get_last_error() == 5
        try:
            code = ctypes.c_ulong()
            if not kernel32.GetExitCodeProcess(ctypes.c_void_p(handle), ctypes.byref(code)):
                return True
            return code.value == still_active
        finally:
            kernel32.CloseHandle(ctypes.c_void_p(handle))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # Linux: an exited process its parent has not reaped yet (a zombie) is not alive.
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            state = stat.read().rpartition(")")[2].split()[:1]
    except OSError:
        return True
    return state not in (["Z"], ["X"])


# --------------------------------------------------------------------------- rendering


class _TurnRenderer:
    """Renders the scenario's steps as ``session/update`` notifications for one prompt."""

    def __init__(self, server: _AcpServer, session: _Session, prompt_id: Any, turn: _Turn) -> None:
        self.server = server
        self.run = server.run
        self.session = session
        self.prompt_id = prompt_id
        self.turn = turn
        #: A tool ran since the last text: the next text is another model message.
        self.text_ended = False
        #: kimi prefixes its tool call ids with the id of the step (one per prompt here).
        self.step_id = ids.uuid4()

    def check(self) -> None:
        if self.server.channel.cancelled(self.prompt_id):
            raise _Stop

    def update(self, update: dict[str, Any]) -> None:
        self.server.update(self.session.session_id, update)

    def render(self, start: int = 0) -> None:
        """Render the steps from ``start`` (a continuation starts after its compaction)."""
        steps = self.run.scenario.steps
        for index in range(start, len(steps)):
            self.check()
            step = steps[index]
            if step.kind == "compaction" and self.server.agent.native_continue:
                self.compaction(index, step)
            self.step(step)

    def compaction(self, index: int, step: Step) -> None:
        """seed 000 "AMR compaction continuation": stop the turn here. ``pending_tool``
        first announces a write that never ends (``in_progress``, no terminal update)."""
        if step.get("pending_tool"):
            cwd = Path(self.session.cwd)
            call_id = f"call_{ids.uuid4_hex()[:24]}"
            target = str(cwd / "pending.txt")
            self.update(
                {
                    "sessionUpdate": "tool_call",
                    "toolCallId": call_id,
                    "title": "Write pending.txt",
                    "kind": "edit",
                    "status": "pending",
                    "rawInput": {"path": target, "content": ""},
                    "locations": [{"path": target}],
                }
            )
            self.update(
                {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": call_id,
                    "status": "in_progress",
                }
            )
            record = {"toolCallId": call_id, "title": "Write pending.txt", "kind": "edit"}
            self.turn.tools.append({**record, "status": "in_progress"})
        raise _Compaction(index, step)

    def step(self, step: Step) -> None:
        kind = step.kind
        if kind == "text":
            separator = self.server.agent.text_separator
            if self.text_ended and separator:
                # hermes: the text of a later model message starts with the separator
                # (recordings/real/hermes/happy.jsonl: "\n\nDone: hello.html is ready.").
                chunks = [separator + step.chunks[0], *step.chunks[1:]]
            else:
                chunks = list(step.chunks)
            self.text_ended = False
            for chunk in chunks:
                self.check()
                self.update(_chunk("agent_message_chunk", chunk))
                self.turn.text.append(chunk)
        elif kind == "thinking":
            for chunk in step.chunks:
                self.check()
                self.update(_chunk("agent_thought_chunk", chunk))
                self.turn.thinking.append(chunk)
        elif kind == "tool":
            # hermes starts the text after a tool with its separator even when no text came
            # before (recordings/real/hermes/shell.jsonl: "\n\nThe command printed hi.").
            self.text_ended = True
            self.tool(step)
        elif kind == "usage":
            self.usage(step)
        elif kind == "sleep":
            if self.server.channel.wait_cancel(self.prompt_id, float(step.get("ms", 0)) / 1000):
                raise _Stop
        elif kind == "api_error":
            reply = self.server.agent.api_error_reply
            if reply is None:
                raise _ApiError(step)
            self.server.api_error_seen = True
            text = reply.format(
                status=int(step.get("status", 500)), message=str(step.get("message", ""))
            )
            if text:
                self.update(_chunk("agent_message_chunk", text))
                self.turn.text.append(text)
            raise _Stop
        elif kind == "malformed":
            line = _dumps(self.notification(_chunk("agent_message_chunk", step.text or "lost")))
            self.run.out(line[: len(line) // 2])
        elif kind == "foreign":
            foreign = {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": f"foreign-{ids.uuid4()}",
                    "update": _chunk("agent_message_chunk", "text of another session"),
                },
            }
            self.run.out(_dumps(foreign))
        elif kind == "oversize":
            self.run.out(self.oversize_line(int(step.get("bytes", 1))))
        elif kind == "crash" and step.get("mid_line"):
            line = _dumps(self.notification(_chunk("agent_message_chunk", "cut off")))
            self.run.out_raw(line[: len(line) // 2].encode("utf-8"))
            self.run.exit(int(step.get("exit_code", 1)))
        elif not self.run.run_common_step(step):
            raise ValueError(f"ACP fake cannot render step kind {kind!r}")

    def notification(self, update: dict[str, Any]) -> dict[str, Any]:
        params = {"sessionId": self.session.session_id, "update": update}
        return {"jsonrpc": "2.0", "method": "session/update", "params": params}

    def oversize_line(self, nbytes: int) -> str:
        """One valid ``available_commands_update`` line of exactly ``nbytes`` bytes."""
        command = {"name": "padding", "description": ""}
        frame = self.notification(
            {"sessionUpdate": "available_commands_update", "availableCommands": [command]}
        )
        missing = nbytes - len(_dumps(frame).encode("utf-8"))
        if missing > 0:
            command["description"] = "x" * missing
        return _dumps(frame)

    def usage(self, step: Step) -> None:
        usage = self.turn.usage
        for source, target in (
            ("input_tokens", "inputTokens"),
            ("output_tokens", "outputTokens"),
            ("cached_read_tokens", "cachedReadTokens"),
            ("cached_write_tokens", "cachedWriteTokens"),
            ("thought_tokens", "thoughtTokens"),
        ):
            value = step.get(source)
            if isinstance(value, int):
                usage[target] = usage.get(target, 0) + value
        usage.setdefault("inputTokens", 0)
        usage.setdefault("outputTokens", 0)
        usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        update: dict[str, Any] = {
            "sessionUpdate": "usage_update",
            "used": usage["totalTokens"],
            "size": _CONTEXT_SIZE,
        }
        cost = step.get("cost_usd")
        if isinstance(cost, (int, float)):
            self.turn.cost += float(cost)
            update["cost"] = {"amount": self.turn.cost, "currency": "USD"}
        self.update(update)

    def api_error_data(self, step: Step) -> dict[str, Any]:
        status = step.get("status")
        data: dict[str, Any] = {"code": step.get("code", "api_error")}
        if isinstance(status, int):
            data["statusCode"] = status
            data["retryable"] = status >= 500 or status == 429
        return data

    # -- tools ---------------------------------------------------------------------

    def tool(self, step: Step) -> None:
        tool = str(step.get("tool", "other"))
        call_id = str(step.get("id") or f"call_{ids.uuid4_hex()[:24]}")
        cwd = Path(self.session.cwd)
        output = step.get("output")
        is_error = bool(step.get("is_error", False))
        if tool == "write":
            path = str(step.get("path", "file.txt"))
            target = str(cwd / path)
            content = str(step.get("content", ""))
            agent = self.server.agent
            given = path if agent.write_path_as_given else target
            call: dict[str, Any] = {
                "toolCallId": call_id,
                "title": f"Write {path}",
                "kind": "edit",
                "status": "pending",
                "rawInput": {agent.write_path_key: given, "content": content},
                "locations": [{"path": target}],
            }
        elif tool == "shell":
            command = str(step.get("command", ""))
            raw_input: dict[str, Any] = {"command": command}
            if self.server.agent.shell_input_cwd:
                raw_input["cwd"] = str(cwd)
            call = {
                "toolCallId": call_id,
                "title": command,
                "kind": "execute",
                "status": "pending",
                "rawInput": raw_input,
            }
            if self.server.agent.shell_locations_cwd:
                call["locations"] = [{"path": str(cwd)}]
        else:
            name = str(step.get("name", "other"))
            kind = name if name in _TOOL_KINDS else "other"
            call = {
                "toolCallId": call_id,
                "title": name,
                "kind": kind,
                "status": "pending",
                "rawInput": dict(step.get("input") or {}),
            }
        style = self.server.agent.tool_style
        if style == "kimi":
            self.kimi_tool(step, call)
            return
        if style == "hermes" and tool == "write":
            self.hermes_write(step)
            return
        if style == "hermes" and tool == "shell":
            self.hermes_shell(step)
            return
        self.update({"sessionUpdate": "tool_call", **call})
        record: dict[str, Any] = {k: call[k] for k in ("toolCallId", "title", "kind")}
        self.turn.tools.append(record)
        if tool == "write" and not is_error:
            asked = {k: call[k] for k in ("toolCallId", "title", "kind", "status", "rawInput")}
            asked["locations"] = call.get("locations", [])
            allowed, why = self.permission(str(call["kind"]), asked)
            if not allowed:
                record["status"] = "failed"
                self.update(
                    {
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": call_id,
                        "status": "failed",
                        "rawOutput": why,
                        "content": [_text_content(why)],
                    }
                )
                self.check()
                return
        self.update(
            {"sessionUpdate": "tool_call_update", "toolCallId": call_id, "status": "in_progress"}
        )
        final: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        if tool == "write" and not is_error:
            rel = str(step.get("path", "file.txt"))
            written = cwd / rel
            old = written.read_text(encoding="utf-8") if written.is_file() else None
            self.write(rel, str(step.get("content", "")))
            text = str(output) if output is not None else f"Wrote {rel}"
            final.update(
                status="completed",
                rawOutput=text,
                content=[
                    {
                        "type": "diff",
                        "path": str(written),
                        "oldText": old,
                        "newText": str(step.get("content", "")),
                    }
                ],
            )
        else:
            text = str(output) if output is not None else ("error" if is_error else "")
            final.update(
                status="failed" if is_error else "completed",
                rawOutput=text,
                content=[_text_content(text)],
            )
        record["status"] = final["status"]
        self.update(final)

    def kimi_tool(self, step: Step, call: Mapping[str, Any]) -> None:
        """kimi-cli 1.51.0 (recordings/real/kimi/happy.jsonl, shell.jsonl): ``tool_call``
        ``in_progress`` titled ``WriteFile`` / ``Shell`` with empty text content and no
        ``kind`` / ``rawInput``; an update titled ``<Title>: <path or command>`` carrying the
        arguments as JSON text; a permission request for writes and shell commands (options
        approve / approve_for_session / reject); the ``completed`` update with the diff or
        the output. The call id is ``<step id>/<model's id>``."""
        tool = str(step.get("tool", "other"))
        cwd = Path(self.session.cwd)
        call_id = f"{self.step_id}/{call['toolCallId']}"
        is_error = bool(step.get("is_error", False))
        rel = str(step.get("path", "file.txt"))
        content = str(step.get("content", ""))
        command = str(step.get("command", ""))
        arguments: dict[str, Any]
        if tool == "write":
            title, detail = "WriteFile", rel
            arguments = {"path": str(cwd / rel), "content": content}
        elif tool == "shell":
            title, detail, arguments = "Shell", command, {"command": command}
        else:
            title, detail = str(call["title"]), ""
            arguments = dict(step.get("input") or {})
        full = f"{title}: {detail}" if detail else title
        begin = {"toolCallId": call_id, "title": title, "status": "in_progress"}
        self.update({"sessionUpdate": "tool_call", **begin, "content": [_text_content("")]})
        args_text = json.dumps(arguments, ensure_ascii=False)
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": call_id,
                "title": full,
                "status": "in_progress",
                "content": [_text_content(args_text)],
            }
        )
        record: dict[str, Any] = {"toolCallId": call_id, "title": full}
        self.turn.tools.append(record)
        written = cwd / rel
        old = written.read_text(encoding="utf-8") if written.is_file() else ""
        diff = {"type": "diff", "path": str(written), "oldText": old, "newText": content}
        if tool in ("write", "shell") and not is_error:
            if tool == "write":
                shown = [diff]
            else:
                ask = f"Requesting approval to perform: Run command `{command}`"
                shown = [_text_content(ask)]
            asked = {"toolCallId": call_id, "title": full, "content": shown}
            allowed, why = self.permission(str(call["kind"]), asked)
            if not allowed:
                record["status"] = "failed"
                failed = {"toolCallId": call_id, "status": "failed"}
                self.update(
                    {"sessionUpdate": "tool_call_update", **failed, "content": [_text_content(why)]}
                )
                self.check()
                return
        final: dict[str, Any] = {"sessionUpdate": "tool_call_update", "toolCallId": call_id}
        output = step.get("output")
        if tool == "write" and not is_error:
            self.write(rel, content)
            final.update(status="completed", content=[diff])
        else:
            text = str(output) if output is not None else ("error" if is_error else "")
            final.update(status="failed" if is_error else "completed")
            final["content"] = [_text_content(text)]
        record["status"] = final["status"]
        self.update(final)

    def hermes_shell(self, step: Step) -> None:
        """hermes-agent 0.19.0 (recordings/real/hermes/shell.jsonl): a ``terminal`` call is one
        ``tool_call`` (id ``tc-<12 hex>``, title ``terminal: <command>``, kind ``execute``, no
        locations, ``$ <command>`` as its content, no ``rawInput``, no status), then one
        ``completed`` update whose content is a markdown list of the output and the exit
        code. With ``--yolo`` nothing is asked. A failing command is reported ``failed`` with
        its exit code (not recorded live: the fake's choice, so the failure stays visible)."""
        command = str(step.get("command", ""))
        record = self.hermes_call(f"terminal: {command}", "execute", [], f"$ {command}")
        self.check()
        failed = bool(step.get("is_error", False))
        output = step.get("output")
        text = str(output) if output is not None else ("error" if failed else "")
        exit_code = int(step.get("exit_code", 1 if failed else 0))
        result = f"terminal result\n- **output:** {text.rstrip()}\n- **exit_code:** {exit_code}"
        self.hermes_close(record, "failed" if failed else "completed", result, kind="execute")

    def hermes_call(
        self, title: str, kind: str, locations: list[dict[str, str]], note: str
    ) -> dict[str, Any]:
        """Announce one hermes tool call (id ``tc-<12 hex>``, ``note`` as its content, no
        ``rawInput``, no status) and return its record in the turn."""
        call: dict[str, Any] = {
            "toolCallId": f"tc-{ids.uuid4_hex()[:12]}",
            "title": title,
            "kind": kind,
            "locations": locations,
        }
        self.update({"sessionUpdate": "tool_call", **call, "content": [_text_content(note)]})
        record: dict[str, Any] = {k: call[k] for k in ("toolCallId", "title", "kind")}
        self.turn.tools.append(record)
        return record

    def hermes_close(
        self, record: dict[str, Any], status: str, text: str, **extra: str
    ) -> None:
        """End a hermes tool call with one ``tool_call_update`` carrying ``text``."""
        record["status"] = status
        self.update(
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": record["toolCallId"],
                **extra,
                "status": status,
                "content": [_text_content(text)],
            }
        )

    def hermes_write(self, step: Step) -> None:
        """hermes-agent 0.19.0 (recordings/real/hermes/happy.jsonl): the write is one
        ``tool_call`` (id ``tc-<12 hex>``, title ``write: <path>``, kind ``edit``, the path as
        given in ``locations``, a note as its content, no ``rawInput``); the permission request
        is about a call of its own (``edit-approval-<n>``, ``rawInput {tool: write_file,
        arguments}``, options allow_once / deny). No ``tool_call_update`` follows an approved
        write. A rejected one is closed with a ``failed`` update (not recorded live: the
        fake's choice, so the denial is visible)."""
        rel = str(step.get("path", "file.txt"))
        content = str(step.get("content", ""))
        note = f"Preparing write to {rel}. Approval prompt shows the diff."
        record = self.hermes_call(f"write: {rel}", "edit", [{"path": rel}], note)
        if step.get("is_error"):
            output = step.get("output")
            self.hermes_close(record, "failed", str(output) if output is not None else "error")
            return
        self.session.approvals += 1
        asked = {
            "toolCallId": f"edit-approval-{self.session.approvals}",
            "title": f"Approve edit: {rel}",
            "kind": "edit",
            "status": "pending",
            "rawInput": {"tool": "write_file", "arguments": {"path": rel, "content": content}},
            "content": [{"type": "diff", "path": rel, "newText": content}],
        }
        allowed, why = self.permission("edit", asked)
        if not allowed:
            self.hermes_close(record, "failed", why)
            self.check()
            return
        self.write(rel, content)
        record["status"] = "completed"

    def write(self, path: str, content: str) -> None:
        """Write through ``run.write_file``, relative to the session's cwd."""
        saved = self.run.cwd
        self.run.cwd = Path(self.session.cwd)
        try:
            self.run.write_file(path, content)
        finally:
            self.run.cwd = saved

    def permission(self, kind: str, tool_call: dict[str, Any]) -> tuple[bool, str]:
        """wire §A.1.2 ``session/request_permission``: ask, and wait for the client.

        ``kind`` is the tool kind an ``allow_always`` answer covers for the session; the
        options are the agent's (their ``kind`` decides, their ids are per agent).
        """
        if self.server.auto_approve or kind in self.session.always_allowed:
            return True, ""
        request_id = self.server.next_id()
        options = self.server.agent.permission_options
        params = {
            "sessionId": self.session.session_id,
            "toolCall": tool_call,
            "options": [{"optionId": o, "name": n, "kind": k} for o, n, k in options],
        }
        self.server.send(
            {
                "jsonrpc": "2.0",
                "id": request_id,
                "method": "session/request_permission",
                "params": params,
            }
        )
        answer = self.server.channel.wait_response(request_id)
        outcomes = self.run.record.setdefault("permission_outcomes", [])
        if answer is None:
            outcomes.append("eof")
            raise _Stop
        result = answer.get("result")
        outcome = result.get("outcome") if isinstance(result, dict) else None
        chosen = outcome.get("optionId") if isinstance(outcome, dict) else None
        chosen_kind = {o: k for o, _, k in options}.get(chosen) if isinstance(chosen, str) else None
        if (
            isinstance(outcome, dict)
            and outcome.get("outcome") == "selected"
            and chosen_kind in ("allow_once", "allow_always")
        ):
            outcomes.append(str(chosen))
            if chosen_kind == "allow_always":
                self.session.always_allowed.add(kind)
            return True, ""
        if isinstance(outcome, dict) and outcome.get("outcome") == "cancelled":
            outcomes.append("cancelled")
            return False, "The user cancelled the permission request."
        outcomes.append(str(chosen) if chosen is not None else "invalid")
        return False, "The user rejected permission to use this tool."


def _text_content(text: str) -> dict[str, Any]:
    return {"type": "content", "content": {"type": "text", "text": text}}


# --------------------------------------------------------------------------- Go flag


@dataclass(frozen=True)
class GoFlagResult:
    values: dict[str, str]
    rest: list[str]


def go_flag_parse(
    flags: Mapping[str, str], args: Sequence[str], prog: str
) -> GoFlagResult | tuple[str, int]:
    """Go's ``flag.FlagSet.Parse`` (``ContinueOnError``): ``flags`` maps a name to
    ``bool`` or ``string``. Returns the values, or ``(message, 2)`` like Go does.

    Go accepts ``-name``, ``--name``, ``-name=value``; a string flag takes the next argument;
    a bool flag only ``-name`` or ``-name=true|false``; parsing stops at the first non-flag
    argument or ``--``.
    """
    values: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if len(arg) < 2 or not arg.startswith("-"):
            break
        index += 1
        if arg == "--":
            break
        name = arg[2:] if arg.startswith("--") else arg[1:]
        if not name or name.startswith("-") or name.startswith("="):
            return f"bad flag syntax: {arg}", 2
        name, eq, inline = name.partition("=")
        kind = flags.get(name)
        if kind is None:
            return f"flag provided but not defined: -{name}\nUsage of {prog}:", 2
        if kind == "bool":
            if eq and inline not in ("true", "false", "1", "0", "t", "f", "TRUE", "FALSE"):
                return f'invalid boolean value "{inline}" for -{name}: parse error', 2
            values[name] = inline if eq else "true"
            continue
        if eq:
            values[name] = inline
        elif index < len(args):
            values[name] = args[index]
            index += 1
        else:
            return f"flag needs an argument: -{name}\nUsage of {prog}:", 2
    return GoFlagResult(values, list(args[index:]))


# --------------------------------------------------------------------------- argv per agent


def _g(
    flags: Mapping[str, int],
    aliases: Mapping[str, str] | None = None,
    subcommands: Mapping[str, Grammar] | None = None,
    positionals: tuple[int, int] = (0, 0),
) -> Grammar:
    return Grammar(
        flags=dict(flags),
        aliases=dict(aliases or {}),
        subcommands=dict(subcommands or {}),
        positionals=positionals,
    )


_HELP = {"--help": 0}
_HELP_ALIAS = {"-h": "--help"}


def _vela_grammar(old: bool) -> Grammar:
    run = _g({**_HELP, "--runtime": 1, "--model": 1, "--cwd": 1}, _HELP_ALIAS)
    agent = _g(_HELP, _HELP_ALIAS, {"run": run})
    listing = _g({**_HELP, "--format": 1}, _HELP_ALIAS)
    model = _g(_HELP, _HELP_ALIAS, {"list": listing})
    return _g(
        {**_HELP, "--version": 0},
        {**_HELP_ALIAS, "-V": "--version"},
        {"agent": agent, "model": model},
    )


_DEVIN_GLOBAL = {"--permission-mode": 1, "--respect-workspace-trust": 1, "--model": 1}


def _devin_grammar(old: bool) -> Grammar:
    # commander: program options are recognised before and after the subcommand.
    acp = _g({**_HELP, **_DEVIN_GLOBAL}, _HELP_ALIAS)
    update = _g(_HELP, _HELP_ALIAS)
    return _g(
        {**_HELP, **_DEVIN_GLOBAL, "--version": 0},
        {**_HELP_ALIAS, "-v": "--version"},
        {"acp": acp, "update": update},
    )


def _hermes_grammar(old: bool) -> Grammar:
    acp = _g({**_HELP, "--accept-hooks": 0, "--yolo": 0}, _HELP_ALIAS)
    return _g(
        {**_HELP, "--version": 0, "--accept-hooks": 0, "--yolo": 0},
        _HELP_ALIAS,
        {"acp": acp},
    )


def _kimi_grammar(old: bool) -> Grammar:
    acp = _g(_HELP, _HELP_ALIAS)
    return _g(
        {
            **_HELP,
            "--version": 0,
            "--print": 0,
            "--output-format": 1,
            "--prompt": 1,
            "--model": 1,
            "--continue": 0,
            "--yolo": 0,
        },
        {**_HELP_ALIAS, "-V": "--version", "-p": "--prompt", "-m": "--model", "-C": "--continue"},
        {"acp": acp},
    )


def _kiro_grammar(old: bool) -> Grammar:
    acp = _g({**_HELP, "--agent": 1, "--model": 1, "--trust-all-tools": 0}, _HELP_ALIAS)
    return _g(
        {**_HELP, "--version": 0, "--verbose": 0},
        {**_HELP_ALIAS, "-V": "--version", "-v": "--verbose"},
        {"acp": acp},
    )


_KILO_GLOBAL = {"--print-logs": 0, "--log-level": 1}


def _kilo_grammar(old: bool) -> Grammar:
    acp = _g({**_HELP, **_KILO_GLOBAL, "--cwd": 1, "--port": 1, "--hostname": 1}, _HELP_ALIAS)
    run = _g(
        {**_HELP, **_KILO_GLOBAL, "--format": 1, "--model": 1, "--continue": 0, "--session": 1},
        {**_HELP_ALIAS, "-m": "--model", "-c": "--continue", "-s": "--session"},
        positionals=(0, -1),
    )
    return _g(
        {**_HELP, **_KILO_GLOBAL, "--version": 0},
        {**_HELP_ALIAS, "-v": "--version"},
        {"acp": acp, "run": run},
    )


#: reasonix ``acp`` flags (``internal/cli/acp.go``), parsed by :func:`go_flag_parse`.
_REASONIX_ACP_FLAGS = {
    "model": "string",
    "profile": "string",
    "planner": "string",
    "sandbox-network": "string",
    "sandbox-bash": "string",
    "workspace-only": "bool",
    "h": "bool",
    "help": "bool",
}


class AnyFlag(Mapping[str, int]):
    """Accepts every flag (arity 0): the real parse happens in the emulator."""

    def __getitem__(self, key: str) -> int:
        return 0

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0


def _reasonix_grammar(old: bool) -> Grammar:
    acp = Grammar(flags=AnyFlag(), positionals=(0, -1))
    return _g({**_HELP, "--version": 0}, {**_HELP_ALIAS, "-v": "--version"}, {"acp": acp})


def _reasonix_check(run: FakeRun) -> tuple[str, int] | None:
    index = run.argv.index("acp") + 1 if "acp" in run.argv else len(run.argv)
    parsed = go_flag_parse(_REASONIX_ACP_FLAGS, run.argv[index:], "acp")
    if isinstance(parsed, tuple):
        return parsed
    if parsed.rest:
        return f"Error: unexpected arguments: {parsed.rest!r}", 2
    choices: dict[str, tuple[str, ...]] = {
        "planner": ("auto", "off"),
        "sandbox-bash": ("auto", "enforce"),
        "sandbox-network": ("auto", "on", "off"),
    }
    for name, allowed in choices.items():
        value = parsed.values.get(name)
        if value is not None and value.strip().lower() not in allowed:
            return f"Error: {name} must be {' or '.join(allowed)}", 2
    run.record["acp_flags"] = parsed.values
    return None


def _devin_check(run: FakeRun) -> tuple[str, int] | None:
    value = run.parsed.value("--respect-workspace-trust")
    if value is not None and value not in ("true", "false"):
        return (
            f"error: option '--respect-workspace-trust <bool>' argument '{value}' is invalid. "
            "Allowed choices are true, false.",
            1,
        )
    return None


def _trae_grammar(old: bool) -> Grammar:
    serve = _g({**_HELP, "--yolo": 0, "--model": 1}, _HELP_ALIAS)
    acp = _g(_HELP, _HELP_ALIAS, {"serve": serve})
    return _g({**_HELP, "--version": 0}, {**_HELP_ALIAS, "-v": "--version"}, {"acp": acp})


def _vibe_grammar(old: bool) -> Grammar:
    return _g({**_HELP, "--version": 0}, _HELP_ALIAS)


def _help(prog: str, usage: str, options: Sequence[tuple[str, str]]) -> str:
    lines = [f"Usage: {prog} {usage}", "", "Options:"]
    lines += [f"  {flag:<34} {text}" for flag, text in options]
    return "\n".join(lines)


_VELA_MODELS = (
    ("anthropic/claude-sonnet-4-5", "Claude Sonnet 4.5"),
    ("openai/gpt-5.1", "GPT-5.1"),
    ("opencode/big-pickle", "Big Pickle"),
)


def _vela_models_output() -> str:
    data = [{"id": m, "name": n, "provider": m.split("/", 1)[0]} for m, n in _VELA_MODELS]
    return json.dumps({"source": "remote", "data": data}) + "\n"


_AGENTS: tuple[_Agent, ...] = (
    _Agent(
        agent_id="amr",
        prog="vela",
        version="0.9.4",
        version_output="0.9.4",
        style="commander",
        grammar=_vela_grammar,
        help_text=_help(
            "vela",
            "[options] [command]",
            [
                ("-V, --version", "output the version number"),
                ("agent run --runtime <name>", "run an agent runtime over ACP stdio"),
                ("model list --format <fmt>", "list models (json|text)"),
                ("-h, --help", "display help for command"),
            ],
        ),
        acp_command=("agent", "run"),
        info_name="vela",
        info_title="Vela (AMR)",
        auth_methods=({"id": "vela-login", "name": "Log in with Vela"},),
        model_channel="models",
        models=_VELA_MODELS,
        session_prefix="ses_",
        default_model_env="VELA_DEFAULT_MODEL",
        # seed 000 "AMR compaction continuation (ACP extension v1)".
        capability_meta={_CONTINUE_CAPABILITY: {"version": 1}},
        native_continue=True,
        models_args=("model", "list", "--format", "json"),
        models_output=_vela_models_output(),
    ),
    _Agent(
        agent_id="devin",
        prog="devin",
        version="2026.5.1-1",
        version_output="devin 2026.5.1-1",
        style="commander",
        grammar=_devin_grammar,
        help_text=_help(
            "devin",
            "[options] [command]",
            [
                ("--permission-mode <mode>", "tool permission mode (default, dangerous)"),
                ("--respect-workspace-trust <bool>", "honour workspace trust prompts"),
                ("--model <model>", "model to use"),
                ("-v, --version", "output the version number"),
                ("acp", "run Devin as an Agent Client Protocol server"),
                ("update", "update Devin for Terminal"),
            ],
        ),
        acp_command=("acp",),
        info_name="devin",
        info_title="Devin for Terminal",
        auth_methods=({"id": "devin-login", "name": "Log in to Devin"},),
        model_channel="models",
        models=(("swe-1.5", "SWE-1.5"), ("claude-sonnet-4.5", "Claude Sonnet 4.5")),
        # seed 000 §5.4: "--permission-mode dangerous avoids headless approval prompts".
        auto_approve=lambda p: p.value("--permission-mode") == "dangerous",
        check_argv=_devin_check,
    ),
    _Agent(
        agent_id="hermes",
        prog="hermes",
        version="0.8.0",
        version_output="Hermes Agent v0.8.0",
        style="argparse",
        grammar=_hermes_grammar,
        help_text=_help(
            "hermes",
            "[-h] [--version] [--accept-hooks] [--yolo] {acp} ...",
            [
                ("--accept-hooks", "auto-approve unseen shell hooks"),
                ("--yolo", "approve every tool call"),
                ("acp", "run Hermes as an ACP server"),
            ],
        ),
        acp_command=("acp",),
        info_name="hermes-agent",
        info_title="Hermes Agent",
        auth_methods=(),
        model_channel="models",
        models=(
            ("anthropic/claude-opus-4.5", "Claude Opus 4.5"),
            ("nous/hermes-4-405b", "Hermes 4"),
        ),
        auto_approve=lambda p: p.has("--yolo"),
        # Live differential against hermes-agent 0.19.0 (recordings/real/hermes/api_error
        # .jsonl): after its retries the error is an agent message and the turn ends.
        api_error_reply="API call failed after 3 retries: HTTP {status}: {message}",
        api_error_exit=0,
        # recordings/real/hermes/happy.jsonl: a write is a `tool_call` with no rawInput and
        # no update after it, asked for under its own id; the reply after a tool starts with
        # a blank line ("\n\nDone: ...").
        tool_style="hermes",
        text_separator="\n\n",
        permission_options=(
            ("allow_once", "Allow edit", "allow_once"),
            ("deny", "Deny", "reject_once"),
        ),
    ),
    _Agent(
        agent_id="kimi",
        prog="kimi",
        version="0.36.2",
        version_output="kimi, version 0.36.2",
        style="argparse",
        grammar=_kimi_grammar,
        help_text=_help(
            "kimi",
            "[OPTIONS] COMMAND [ARGS]...",
            [
                ("-V, --version", "show the version and exit"),
                ("--print", "run non-interactively"),
                ("--output-format [text|stream-json]", "print-mode output format"),
                ("-p, --prompt TEXT", "the prompt (print mode)"),
                ("-m, --model TEXT", "model to use"),
                ("-C, --continue", "continue the previous session"),
                ("--yolo", "approve every tool call"),
                ("acp", "run Kimi CLI as an ACP server"),
            ],
        ),
        acp_command=("acp",),
        info_name="Kimi CLI",
        info_title="Kimi CLI",
        auth_methods=({"id": "login", "name": "Login with Kimi account"},),
        model_channel="models",
        models=(("kimi-for-coding", "Kimi For Coding"), ("kimi-k2-turbo-preview", "Kimi K2 Turbo")),
        stdio_removed_in="0.37.0",
        auto_approve=lambda p: p.has("--yolo"),
        # Live differential against kimi-cli 1.51.0 (recordings/real/kimi/api_error.jsonl):
        # a failed model call ends the prompt with end_turn and no message at all.
        api_error_reply="",
        api_error_exit=0,
        # recordings/real/kimi/happy.jsonl, shell.jsonl: tool calls carry no kind and no
        # rawInput; titles "WriteFile" / "Shell", then "WriteFile: <path>" / "Shell: <cmd>".
        tool_style="kimi",
        permission_options=(
            ("approve", "Approve once", "allow_once"),
            ("approve_for_session", "Approve for this session", "allow_always"),
            ("reject", "Reject", "reject_once"),
        ),
    ),
    _Agent(
        agent_id="kiro",
        prog="kiro-cli",
        version="1.20.0",
        version_output="kiro-cli 1.20.0",
        style="clap",
        grammar=_kiro_grammar,
        help_text=_help(
            "kiro-cli",
            "[OPTIONS] [COMMAND]",
            [
                ("-v, --verbose", "increase logging verbosity"),
                ("-V, --version", "print version"),
                ("acp", "run as an Agent Client Protocol server"),
                ("acp --agent <AGENT>", "agent profile to use"),
                ("acp --trust-all-tools", "allow every tool without asking"),
            ],
        ),
        acp_command=("acp",),
        info_name="kiro-cli",
        info_title="Kiro CLI",
        auth_methods=({"id": "kiro-login", "name": "Log in with Kiro"},),
        model_channel="models",
        models=(("auto", "Auto"), ("claude-sonnet-4.5", "Claude Sonnet 4.5")),
        turn_end_update=True,
        auto_approve=lambda p: p.has("--trust-all-tools"),
    ),
    _Agent(
        agent_id="kilo",
        prog="kilo",
        version="7.7.7",
        version_output="7.7.7",
        style="yargs",
        grammar=_kilo_grammar,
        help_text=_help(
            "kilo",
            "[command]",
            [
                ("kilo acp", "start ACP (Agent Client Protocol) server"),
                ("kilo run [message..]", "run kilo with a message"),
                ("--print-logs", "print logs to stderr"),
                ("--log-level", "log level"),
                ("-v, --version", "show version number"),
            ],
        ),
        acp_command=("acp",),
        info_name="Kilo",
        info_title="Kilo Code",
        auth_methods=({"id": "kilo-login", "name": "Log in to Kilo Gateway"},),
        model_channel="config",
        models=(
            ("kilo/anthropic/claude-sonnet-4.5", "Claude Sonnet 4.5"),
            ("kilo/openai/gpt-5.1", "GPT-5.1"),
            ("kilo/x-ai/grok-code-fast-1", "Grok Code Fast 1"),
        ),
        auto_approve=lambda p: True,
        mcp_http=True,
        session_prefix="ses_",
        # Live differential against kilo 7.7.7 (recordings/real/kilo/shell.jsonl): write's
        # rawInput is {filePath, content}; bash's is {command, cwd} with the cwd in
        # ``locations``; after a failed prompt it still exits 0 at EOF.
        write_path_key="filePath",
        shell_locations_cwd=True,
        api_error_exit=0,
    ),
    _Agent(
        agent_id="reasonix",
        prog="reasonix",
        # recordings/real/reasonix/*.jsonl: npm reasonix 1.38.11 prints "reasonix v1.38.11"
        version="1.38.11",
        version_output="reasonix v1.38.11",
        style="commander",
        grammar=_reasonix_grammar,
        help_text=_help(
            "reasonix",
            "acp [flags]",
            [
                ("-model string", "provider name (default: config default_model)"),
                ("-profile string", "runtime profile: economy | balanced | delivery"),
                ("-planner string", "planner policy: auto | off"),
                ("-sandbox-network string", "sandbox network policy: auto | on | off"),
                ("-sandbox-bash string", "bash sandbox policy: auto | enforce"),
                ("-workspace-only", "confine writes to the session cwd"),
            ],
        ),
        acp_command=("acp",),
        info_name="reasonix",
        info_title="DeepSeek Reasonix",
        auth_methods=(),
        models=(
            ("deepseek/deepseek-v4-flash", "deepseek/deepseek-v4-flash"),
            ("deepseek/deepseek-v4-pro", "deepseek/deepseek-v4-pro"),
        ),
        env_format="map",
        model_channel="both",
        check_argv=_reasonix_check,
        # Live differential against reasonix 1.38.11 (recordings/real/reasonix/shell.jsonl):
        # bash's rawInput is only {command}.
        shell_input_cwd=False,
    ),
    _Agent(
        agent_id="trae-cli",
        prog="traecli",
        version="0.9.3",
        version_output="traecli 0.9.3",
        style="commander",
        grammar=_trae_grammar,
        help_text=_help(
            "traecli",
            "[options] [command]",
            [
                ("acp serve", "serve the Agent Client Protocol over stdio"),
                ("acp serve --yolo", "approve every tool call"),
                ("-v, --version", "output the version number"),
            ],
        ),
        acp_command=("acp", "serve"),
        info_name="traecli",
        info_title="Trae CLI",
        auth_methods=({"id": "trae-login", "name": "Log in to Trae"},),
        model_channel="models",
        models=(("doubao-seed-code", "Doubao Seed Code"), ("kimi-k2", "Kimi K2")),
        # seed 000 §5.9: "--yolo avoids headless approval prompts".
        auto_approve=lambda p: p.has("--yolo"),
    ),
    _Agent(
        agent_id="vibe",
        prog="vibe-acp",
        version="3.0.2",
        version_output="vibe-acp 3.0.2",
        style="argparse",
        grammar=_vibe_grammar,
        help_text=_help(
            "vibe-acp", "[-h] [--version]", [("--version", "show program's version number")]
        ),
        acp_command=(),
        info_name="@mistralai/mistral-vibe",
        info_title="Mistral Vibe",
        auth_methods=(),
        model_channel="models",
        models=(("devstral-2", "Devstral 2"), ("mistral-medium-3.1", "Mistral Medium 3.1")),
        # Live differential against vibe-acp 3.0.2 (recordings/real/vibe/happy.jsonl,
        # shell.jsonl): write_file's rawInput is {filePath (as the model gave it), content};
        # bash's is {command}, without a cwd; it never exits at stdin EOF (the host's
        # SIGTERM ends every run, a failed one too).
        write_path_key="filePath",
        write_path_as_given=True,
        shell_input_cwd=False,
        exits_at_eof=False,
    ),
)


def _main(agent: _Agent) -> Callable[[FakeRun], int]:
    def main(run: FakeRun) -> int:
        command = run.parsed.command
        if agent.models_args is not None and command == agent.models_args[:2]:
            return _list_models(run, agent)
        if command != agent.acp_command:
            expected = " ".join((agent.prog, *agent.acp_command))
            run.err(
                f"{agent.prog}: this fake emulates only the ACP server mode ({expected}); "
                f"got {' '.join(run.argv) or '(no arguments)'}\n"
            )
            return 2
        if agent.check_argv is not None:
            problem = agent.check_argv(run)
            if problem is not None:
                run.err(problem[0] + "\n")
                return problem[1]
        return _AcpServer(run, agent).serve()

    return main


def _list_models(run: FakeRun, agent: _Agent) -> int:
    """``vela model list [--format json|text]`` (the def's probe is answered by CliSpec)."""
    fmt = run.parsed.value("--format", "text")
    if fmt == "json":
        run.out_raw(agent.models_output.encode("utf-8"))
    elif fmt == "text":
        for model, name in agent.models:
            run.out(f"{model}\t{name}")
    else:
        run.err(
            f"error: option '--format <fmt>' argument '{fmt}' is invalid. "
            "Allowed choices are json, text.\n"
        )
        return 1
    return 0


SPECS: dict[str, CliSpec] = {
    agent.agent_id: CliSpec(
        agent_id=agent.agent_id,
        prog=agent.prog,
        version_output=agent.version_output,
        grammar=agent.grammar,
        style=agent.style,
        run=_main(agent),
        help_args=(("--help",), ("-h",)),
        help_text=agent.help_text,
        models_args=agent.models_args,
        models_output=agent.models_output,
        # seed 000 "AMR compaction continuation": only amr plays the compaction step.
        optional_steps=frozenset({"compaction"}) if agent.native_continue else frozenset(),
    )
    for agent in _AGENTS
}
