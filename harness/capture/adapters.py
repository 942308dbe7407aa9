"""One small adapter per two-way wire format, for replaying a captured stdout.

Design: docs/design/capture.md#harness.capture.adapters
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeGuard

from harness.capture.driver import (
    CapturedResponse,
    CaptureReplay,
    HostInputError,
    PendingRequest,
    RequestId,
    normalize_frame_values,
    parse_host_input,
    replay_capture,
    split_capture,
)
from harness.defs.types import AgentDef
from harness.errors import HarnessError
from harness.events import json_safe
from harness.formats import (
    SessionUnavailableError,
    create_session,
    load_target,
    session_spec,
    two_way_formats,
)
from harness.protocols.acp.amr_extension import CONTINUE_METHOD, ContinuationEvidence, parse_cursor
from harness.protocols.acp.handshake import MODEL_CONFIG_IDS
from harness.protocols.base import SessionRequest, TwoWaySession
from harness.protocols.codex_app_server import APPROVAL_POLICIES, SANDBOX_MODES

__all__ = [
    "PLACEHOLDER_CWD",
    "PLACEHOLDER_PARENT_SESSION",
    "PLACEHOLDER_PROMPT",
    "RECORDED_MODEL",
    "AcpCaptureAdapter",
    "AppServerCaptureAdapter",
    "CaptureAdapter",
    "DshCaptureAdapter",
    "PiCaptureAdapter",
    "SessionUnavailableError",
    "adapter_for",
    "replay",
    "session_for",
]

PLACEHOLDER_PROMPT = "(replayed capture)"
#: The cwd of a synthesized request: absolute on every platform the sessions accept.
PLACEHOLDER_CWD = "/capture/cwd"
PLACEHOLDER_PARENT_SESSION = "/capture/parent-session.jsonl"
#: The model of a synthesized request when the capture shows a model change but not its value.
RECORDED_MODEL = "(recorded model)"


def _is_id(value: Any) -> TypeGuard[RequestId]:
    """A request id: a string or an integer, never a bool (``True == 1`` in Python)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _objects(frames: Sequence[Any]) -> list[dict[str, Any]]:
    return [f for f in frames if isinstance(f, dict)]


def _text_items(items: Any) -> list[str]:
    """The texts of the ``{"type": "text", "text": ...}`` entries of a list, in order."""
    return [
        item["text"]
        for item in (items if isinstance(items, list) else [])
        if isinstance(item, dict)
        and item.get("type") == "text"
        and isinstance(item.get("text"), str)
    ]


def _string(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


#: Frames are compared to this depth; a deeper value compares as one marker string (the
#: comparison walks recursively, and no frame a client or CLI sends nests this deep).
COMPARE_DEPTH = 64
_TOO_DEEP = f"(nested deeper than {COMPARE_DEPTH} levels)"


def comparable(frame: Any) -> Any:
    """``frame`` made safe to compare and report: :func:`~harness.events.json_safe`
    values, and nesting cut at :data:`COMPARE_DEPTH` (iteratively; never recurses)."""
    frame = json_safe(frame)
    if not isinstance(frame, (dict, list)):
        return frame
    root: dict[Any, Any] | list[Any] = {} if isinstance(frame, dict) else []
    stack: list[tuple[Any, dict[Any, Any] | list[Any], int]] = [(frame, root, 1)]
    while stack:
        source, target, depth = stack.pop()
        pairs = source.items() if isinstance(source, dict) else enumerate(source)
        for key, item in pairs:
            kept: Any = item
            if isinstance(item, (dict, list)):
                if depth >= COMPARE_DEPTH:
                    kept = _TOO_DEEP
                else:
                    kept = {} if isinstance(item, dict) else []
                    stack.append((item, kept, depth + 1))
            if isinstance(target, dict):
                target[key] = kept
            else:
                target.append(kept)
    return root


class CaptureAdapter:
    """Base: defaults shared by the formats; the format registry names the adapter of each
    two-way format and builds it with that format's name."""

    def __init__(self, stream_format: str) -> None:
        self.stream_format = stream_format

    # -- the session --------------------------------------------------------------------

    def create_session(
        self, defn: AgentDef | None = None, host_frames: Sequence[Any] | None = None
    ) -> TwoWaySession:
        """A fresh session: ``Class.from_def(defn)`` when both exist, else ``Class()``.

        ``host_frames`` (what the recorded client wrote) lets a format pick the session's
        mode the recording shows (ACP: the continuing session of a ``_session/continue``).
        """
        return self._build(defn, self.session_options(json_safe(list(host_frames or ()))))

    def session_options(self, host_frames: Sequence[Any]) -> dict[str, Any]:
        """Constructor options the recorded client's frames imply (none by default)."""
        return {}

    def _build(self, defn: AgentDef | None, options: Mapping[str, Any]) -> TwoWaySession:
        return create_session(self.stream_format, defn, options=options)

    # -- the driver's questions (ReplayAdapter) -------------------------------------------

    def pending_request(self, frame: Any) -> PendingRequest | None:
        return None

    def captured_response(self, value: Any) -> CapturedResponse | None:
        return None

    def with_response_id(self, value: dict[str, Any], new_id: RequestId) -> dict[str, Any]:
        return {**value, "id": new_id}

    def turn_starts(self, frames: Sequence[Any]) -> list[int]:
        return [i for i, frame in enumerate(frames) if self._starts_turn(frame)]

    def _starts_turn(self, frame: Any) -> bool:
        return False

    def normalize_frame(self, frame: Any) -> Any:
        """The frame as compared: :func:`comparable`, then the format's normalizer."""
        return self._normalize(comparable(frame))

    def _normalize(self, frame: Any) -> Any:
        return normalize_frame_values(frame, drop_top_level=("id",))

    # -- the request ----------------------------------------------------------------------

    def synthesize_request(self, values: Sequence[Any]) -> SessionRequest:
        """The request for a capture replayed without host input (CAPTURE-SYNTH-001).

        The values are read through :func:`~harness.events.json_safe` first, so no
        request field carries a lone surrogate or a non-finite number
        (ROBUST-SURROGATE-001); a field of the wrong type is ignored, never raised on
        (ROBUST-WRONGTYPE-001).
        """
        return self._synthesize(json_safe(list(values)))

    def host_request(self, frames: Sequence[Any]) -> SessionRequest:
        """The request the recorded client made, from its stdin (CAPTURE-HOSTINPUT-001).

        Read through :func:`~harness.events.json_safe` like :meth:`synthesize_request`;
        unusable input raises :class:`HostInputError`.
        """
        return self._host(json_safe(list(frames)))

    def _synthesize(self, values: Sequence[Any]) -> SessionRequest:
        return SessionRequest(prompt=PLACEHOLDER_PROMPT, cwd=PLACEHOLDER_CWD)

    def _host(self, frames: Sequence[Any]) -> SessionRequest:
        # Every built-in adapter overrides this; a format without one reports it as a
        # typed error rather than a bare NotImplementedError.
        raise HostInputError(
            f"--host-input is not supported for {self.stream_format}", rule="CAPTURE-HOSTINPUT-001"
        )

    def _missing(self, what: str) -> HostInputError:
        return HostInputError(
            f"host input for {self.stream_format} has no {what}", rule="CAPTURE-HOSTINPUT-001"
        )


# -- JSON-RPC (ACP and codex app-server) ---------------------------------------------------


class _JsonRpcAdapter(CaptureAdapter):
    """Requests carry ``method`` and ``id``; responses carry ``id`` and ``result``/``error``."""

    def pending_request(self, frame: Any) -> PendingRequest | None:
        if isinstance(frame, dict) and isinstance(frame.get("method"), str):
            rid = frame.get("id")
            if _is_id(rid):
                return PendingRequest(json_safe(rid), json_safe(frame["method"]))
        return None

    def captured_response(self, value: Any) -> CapturedResponse | None:
        if not isinstance(value, dict) or "method" in value:
            return None
        if "result" not in value and "error" not in value:
            return None
        rid = value.get("id")
        # An error with id null could not say which request failed: nothing to match.
        return CapturedResponse(json_safe(rid)) if _is_id(rid) else None

    @staticmethod
    def _responses(values: Sequence[Any]) -> list[dict[str, Any]]:
        return [
            v
            for v in _objects(values)
            if "method" not in v and "id" in v and ("result" in v or "error" in v)
        ]

    @staticmethod
    def _requests(frames: Sequence[Any], method: str) -> list[dict[str, Any]]:
        return [f for f in _objects(frames) if f.get("method") == method]

    @staticmethod
    def _params(frame: Mapping[str, Any] | None) -> dict[str, Any]:
        params = frame.get("params") if frame is not None else None
        return params if isinstance(params, dict) else {}


#: The requests whose answer ends an ACP turn (seed 000 §12 adds the continuation).
_ACP_TURN_METHODS = frozenset({"session/prompt", "_session/continue"})


class AcpCaptureAdapter(_JsonRpcAdapter):
    """``acp-json-rpc`` (wire §A.1; ref §2.6)."""

    def _starts_turn(self, frame: Any) -> bool:
        return isinstance(frame, dict) and _string(frame.get("method")) in _ACP_TURN_METHODS

    def session_options(self, host_frames: Sequence[Any]) -> dict[str, Any]:
        """seed 000 §12: a recording of the process that continued an interrupted turn
        (``session/load`` then ``_session/continue`` with the cursor) is replayed by the
        continuing session, built from the durable id and the cursor it sent."""
        continues = self._requests(host_frames, CONTINUE_METHOD)
        loads = self._requests(host_frames, "session/load")
        if not continues or not loads:
            return {}
        cursor = parse_cursor(self._params(continues[0]).get("continuation"))
        durable = _string(self._params(loads[0]).get("sessionId"))
        if cursor is None or durable is None:
            return {}
        return {"continuing": ContinuationEvidence(durable, cursor)}

    def _synthesize(self, values: Sequence[Any]) -> SessionRequest:
        responses = self._responses(values)
        resume: str | None = None
        if len(responses) >= 2 and "error" not in responses[1]:
            result = responses[1].get("result")
            if not (isinstance(result, dict) and _string(result.get("sessionId"))):
                # wire §A.1.2: a session/new result carries sessionId, a session/load result
                # does not; the load replays history as session/update before it answers.
                resume = self._update_session_id(values)
        model: str | None = None
        if len(responses) >= 4:
            third = responses[2]
            result = third.get("result")
            if "error" in third or not (isinstance(result, dict) and "stopReason" in result):
                # ref §2.6 step 3: set_config_option / set_model come before the prompt.
                model = self._configured_model(result) or RECORDED_MODEL
        return SessionRequest(
            prompt=PLACEHOLDER_PROMPT, cwd=PLACEHOLDER_CWD, model=model, resume_session_id=resume
        )

    @staticmethod
    def _update_session_id(values: Sequence[Any]) -> str | None:
        for value in _objects(values):
            if value.get("method") == "session/update":
                params = value.get("params")
                if isinstance(params, dict) and _string(params.get("sessionId")):
                    return str(params["sessionId"])
        return None

    @staticmethod
    def _configured_model(result: Any) -> str | None:
        options = result.get("configOptions") if isinstance(result, dict) else None
        for option in options if isinstance(options, list) else []:
            if (
                isinstance(option, dict)
                and isinstance(option.get("id"), str)
                and option["id"].lower() in MODEL_CONFIG_IDS
            ):
                return _string(option.get("currentValue"))
        return None

    def _host(self, frames: Sequence[Any]) -> SessionRequest:
        prompts = self._requests(frames, "session/prompt")
        if not prompts:
            prompts = self._requests(frames, "_session/continue")
        loads = self._requests(frames, "session/load")
        news = self._requests(frames, "session/new")
        if not prompts and not loads and not news:
            raise self._missing("session/new, session/load or session/prompt request")
        # FIDELITY-REPLAY-002: a run that failed before its prompt (the agent refused
        # session/new, e.g. "Authentication required") is replayed with the request the
        # client had opened; the session meets the agent's error as it did live.
        texts = _text_items(self._params(prompts[0]).get("prompt") if prompts else None)
        opener = self._params(loads[0] if loads else news[0] if news else None)
        resume = _string(opener.get("sessionId")) if loads else None
        if loads and resume is None:
            raise self._missing("sessionId in its session/load request")
        servers = opener.get("mcpServers")
        return SessionRequest(
            prompt="\n".join(texts) if prompts else PLACEHOLDER_PROMPT,
            cwd=_string(opener.get("cwd")) or PLACEHOLDER_CWD,
            model=self._chosen_model(frames, prompts[0] if prompts else None),
            resume_session_id=resume,
            mcp_servers=[s for s in servers if isinstance(s, dict)]
            if isinstance(servers, list)
            else (),
        )

    def _chosen_model(self, frames: Sequence[Any], first_prompt: Any) -> str | None:
        """The model the recorded client chose before its first prompt (the last
        ``session/set_config_option`` of a model option or ``session/set_model``)."""
        model: str | None = None
        for frame in _objects(frames):
            params = self._params(frame)
            if frame.get("method") == "session/set_config_option":
                config = params.get("configId")
                if isinstance(config, str) and config.lower() in MODEL_CONFIG_IDS:
                    model = _string(params.get("value")) or model
            elif frame.get("method") == "session/set_model":
                model = _string(params.get("modelId")) or model
            elif first_prompt is not None and frame is first_prompt:
                break
        return model


class AppServerCaptureAdapter(_JsonRpcAdapter):
    """``codex-app-server``: JSON-RPC without the ``jsonrpc`` member (wire §A.3.2)."""

    def _starts_turn(self, frame: Any) -> bool:
        return isinstance(frame, dict) and frame.get("method") == "turn/start"

    def _synthesize(self, values: Sequence[Any]) -> SessionRequest:
        objects = _objects(values)
        started = any(v.get("method") == "thread/started" for v in objects)
        resume: str | None = None
        if not started:
            # wire §A.3.2 / README: thread/resume "returns the same shape" as thread/start
            # and emits no thread/started notification.
            for response in self._responses(values):
                result = response.get("result")
                thread = result.get("thread") if isinstance(result, dict) else None
                if isinstance(thread, dict) and _string(thread.get("id")):
                    resume = str(thread["id"])
                    break
        return SessionRequest(
            prompt=PLACEHOLDER_PROMPT, cwd=PLACEHOLDER_CWD, resume_session_id=resume
        )

    def _host(self, frames: Sequence[Any]) -> SessionRequest:
        turns = self._requests(frames, "turn/start")
        if not turns:
            raise self._missing("turn/start request")
        turn = self._params(turns[0])
        inputs = turn.get("input")
        texts = _text_items(inputs)
        resumes = self._requests(frames, "thread/resume")
        starts = self._requests(frames, "thread/start")
        thread = self._params(resumes[0] if resumes else starts[0] if starts else None)
        resume = _string(thread.get("threadId")) if resumes else None
        if resumes and resume is None:
            raise self._missing("threadId in its thread/resume request")
        effort = _string(turn.get("effort"))
        return SessionRequest(
            prompt="\n".join(texts),
            cwd=_string(thread.get("cwd")) or _string(turn.get("cwd")) or PLACEHOLDER_CWD,
            model=_string(thread.get("model")) or _string(turn.get("model")),
            reasoning=effort,
            resume_session_id=resume,
            extra=self._extra(thread, turn, inputs),
        )

    @staticmethod
    def _extra(thread: dict[str, Any], turn: dict[str, Any], inputs: Any) -> dict[str, Any]:
        """The session's ``SessionRequest.extra`` keys the recorded client chose.

        Only values the session accepts are taken (its ``SANDBOX_MODES`` and
        ``APPROVAL_POLICIES``): another spelling would make ``start`` refuse the
        request, and the frame comparison reports the difference instead.
        """
        extra: dict[str, Any] = {}
        sandbox = thread.get("sandbox")
        if sandbox in SANDBOX_MODES:
            extra["sandbox"] = sandbox
        policy = thread.get("approvalPolicy")
        if policy in APPROVAL_POLICIES:
            extra["approval_policy"] = policy
        images = [
            item["path"]
            for item in (inputs if isinstance(inputs, list) else [])
            if isinstance(item, dict)
            and item.get("type") == "localImage"
            and _string(item.get("path"))
        ]
        if images:
            extra["image_paths"] = images
        tier = _string(turn.get("serviceTier"))
        if tier is not None:
            extra["service_tier"] = tier
        return extra


# -- pi rpc -----------------------------------------------------------------------------------


class PiCaptureAdapter(CaptureAdapter):
    """``pi-rpc``: commands ``{id, type}``; responses ``{type: response, id, command, success}``
    (wire §A.2; ref §2.7). A response names the command it answers, so matching is by kind."""

    def pending_request(self, frame: Any) -> PendingRequest | None:
        if not isinstance(frame, dict):
            return None
        kind = frame.get("type")
        rid = frame.get("id")
        # extension_ui_response answers the agent; every other command awaits a response.
        if isinstance(kind, str) and kind != "extension_ui_response" and _is_id(rid):
            return PendingRequest(json_safe(rid), json_safe(kind))
        return None

    def captured_response(self, value: Any) -> CapturedResponse | None:
        if not isinstance(value, dict) or value.get("type") != "response":
            return None
        rid = value.get("id")
        command = value.get("command")
        if rid is not None and not _is_id(rid):
            return None
        kind = json_safe(command) if isinstance(command, str) else None
        return CapturedResponse(json_safe(rid), kind)

    def _starts_turn(self, frame: Any) -> bool:
        return isinstance(frame, dict) and frame.get("type") == "prompt"

    def _synthesize(self, values: Sequence[Any]) -> SessionRequest:
        resume: str | None = None
        for value in _objects(values):
            if value.get("type") != "response":
                continue
            if value.get("command") == "prompt":
                break
            if value.get("command") == "new_session":
                resume = PLACEHOLDER_PARENT_SESSION
                break
        return SessionRequest(
            prompt=PLACEHOLDER_PROMPT, cwd=PLACEHOLDER_CWD, resume_session_id=resume
        )

    def _host(self, frames: Sequence[Any]) -> SessionRequest:
        objects = _objects(frames)
        prompt = next((f for f in objects if f.get("type") == "prompt"), None)
        if prompt is None:
            raise self._missing("prompt command")
        parent: str | None = None
        for frame in objects:
            if frame is prompt:
                break
            if frame.get("type") == "new_session":
                parent = _string(frame.get("parentSession"))
        images = prompt.get("images", [])
        if not isinstance(images, list) or not all(isinstance(i, dict) for i in images):
            raise HostInputError(
                "host input for pi-rpc: prompt.images must be a list of objects",
                rule="CAPTURE-HOSTINPUT-001",
            )
        message = prompt.get("message")
        return SessionRequest(
            prompt=message if isinstance(message, str) else "",
            cwd=PLACEHOLDER_CWD,
            resume_session_id=parent,
            images=images,
        )


# -- dsh profile -------------------------------------------------------------------------------


class DshCaptureAdapter(CaptureAdapter):
    """``dsh-profile-jsonl``: no request/response ids; host commands carry ``request_id``
    (seed 001 §6; ref §2.8)."""

    #: Frames that are not run-scoped (seed 001 §6: only these may lack request_id).
    _IDENTITY: ClassVar[frozenset[str]] = frozenset({"probe", "ready", "protocol_error"})

    def _starts_turn(self, frame: Any) -> bool:
        return isinstance(frame, dict) and frame.get("type") == "execute"

    def _normalize(self, frame: Any) -> Any:
        return normalize_frame_values(frame, placeholders={"request_id": "{request_id}"})

    def _synthesize(self, values: Sequence[Any]) -> SessionRequest:
        objects = _objects(values)
        run_scoped = [
            v
            for v in objects
            if _string(v.get("type")) not in self._IDENTITY and _string(v.get("request_id"))
        ]
        # seed 001 §6: after ready every run-scoped frame carries the active request_id.
        request_id = str(run_scoped[0]["request_id"]) if run_scoped else "run-1"
        resume: str | None = None
        for value in run_scoped:
            if value.get("request_id") != request_id:
                continue
            kind = value.get("type")
            if kind == "session" and value.get("resumed") is True:
                resume = _string(value.get("session_id"))
                break
            if kind == "result" and value.get("resume_rejected") is True:
                resume = _string(value.get("session_id"))
                break
            if kind in ("session", "result"):
                break
        return SessionRequest(
            prompt=PLACEHOLDER_PROMPT,
            cwd=PLACEHOLDER_CWD,
            request_id=request_id,
            resume_session_id=resume,
        )

    def _host(self, frames: Sequence[Any]) -> SessionRequest:
        execute = next((f for f in _objects(frames) if f.get("type") == "execute"), None)
        if execute is None:
            raise self._missing("execute command")
        request_id = _string(execute.get("request_id"))
        cwd = _string(execute.get("cwd"))
        if request_id is None or cwd is None:
            raise self._missing("request_id and cwd in its execute command")
        model = execute.get("model")
        model_name: str | None = None
        if isinstance(model, dict) and _string(model.get("provider")) and _string(model.get("id")):
            model_name = f"{model['provider']}/{model['id']}"  # ref §2.8 provider/model
        servers = execute.get("mcp_servers")
        prompt = execute.get("prompt")
        return SessionRequest(
            prompt=prompt if isinstance(prompt, str) else "",
            cwd=cwd,
            request_id=request_id,
            model=model_name,
            reasoning=_string(execute.get("reasoning_effort")),
            resume_session_id=_string(execute.get("resume_session_id")),
            mcp_servers=[s for s in servers if isinstance(s, dict)]
            if isinstance(servers, list)
            else (),
        )


@functools.cache
def adapter_for(stream_format: str) -> CaptureAdapter:
    """The capture adapter the format registry names for ``stream_format``."""
    try:
        target = session_spec(stream_format).capture_adapter
    except ValueError:
        raise HarnessError(
            f"no capture replay for stream format {stream_format!r}; "
            f"two-way formats: {sorted(two_way_formats())}"
        ) from None
    adapter: CaptureAdapter = load_target(target)(stream_format)
    return adapter


def session_for(stream_format: str, defn: AgentDef | None = None) -> TwoWaySession:
    """A fresh session for ``stream_format`` (from ``defn``'s fields when given)."""
    return adapter_for(stream_format).create_session(defn)


def replay(
    stream_format: str,
    cli_output: bytes,
    *,
    defn: AgentDef | None = None,
    host_input: bytes | None = None,
    chunk_size: int | None = None,
) -> CaptureReplay:
    """Replay ``cli_output`` through a fresh session; ``host_input`` is the client's stdin."""
    adapter = adapter_for(stream_format)
    host_frames = parse_host_input(host_input) if host_input is not None else None
    if host_frames is not None:
        request = adapter.host_request(host_frames)
        source = "host-input"
    else:
        request = adapter.synthesize_request([line.value for line in split_capture(cli_output)])
        source = "synthesized"
    session = adapter.create_session(defn, host_frames)
    return replay_capture(
        session,
        request,
        cli_output,
        adapter,
        host_frames=host_frames,
        chunk_size=chunk_size,
        request_source=source,
    )
