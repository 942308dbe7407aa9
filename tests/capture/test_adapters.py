"""The per-format capture adapters, without a session (harness/capture/adapters.py).

Rules: CAPTURE-HOSTINPUT-001 (the request comes from the recorded client's stdin),
CAPTURE-SYNTH-001 (without it, from the capture), CAPTURE-IDORDER-001/002 (which
frames are requests and which captured lines are responses), CAPTURE-FRAMES-001
(normalization before comparing). Frames are written by hand from the shapes of
wire §A.1-§A.3.2, ref §2.6-§2.8 and seed 001 §6.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.capture import (
    HostInputError,
    SessionUnavailableError,
    adapter_for,
    parse_host_input,
    session_for,
    split_capture,
)
from harness.capture.adapters import (
    PLACEHOLDER_CWD,
    PLACEHOLDER_PARENT_SESSION,
    PLACEHOLDER_PROMPT,
    RECORDED_MODEL,
    AcpCaptureAdapter,
    AppServerCaptureAdapter,
    CaptureAdapter,
    DshCaptureAdapter,
    PiCaptureAdapter,
)
from harness.capture.driver import (
    CapturedResponse,
    PendingRequest,
    compare_frames,
    normalize_frame_values,
)
from harness.defs.registry import BUILTIN_DEFS
from harness.errors import HarnessError
from harness.formats import FORMATS, FormatSpec, SessionSpec, two_way_formats
from harness.protocols.base import SessionRequest

DATA = Path(__file__).parent / "data"

ACP = adapter_for("acp-json-rpc")
PI = adapter_for("pi-rpc")
DSH = adapter_for("dsh-profile-jsonl")
APP = adapter_for("codex-app-server")


def _values(name: str) -> list[Any]:
    return [line.value for line in split_capture((DATA / name).read_bytes())]


def _host(name: str) -> list[Any]:
    return parse_host_input((DATA / name).read_bytes())


# -- registry ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stream_format", "adapter_class"),
    [
        ("acp-json-rpc", AcpCaptureAdapter),
        ("pi-rpc", PiCaptureAdapter),
        ("dsh-profile-jsonl", DshCaptureAdapter),
        ("codex-app-server", AppServerCaptureAdapter),
    ],
)
def test_each_two_way_format_has_its_adapter(
    stream_format: str, adapter_class: type[CaptureAdapter]
) -> None:
    assert stream_format in two_way_formats()
    adapter = adapter_for(stream_format)
    assert type(adapter) is adapter_class
    assert adapter.stream_format == stream_format
    assert adapter_for(stream_format) is adapter


def test_a_one_way_format_has_no_adapter() -> None:
    with pytest.raises(HarnessError, match="two-way formats"):
        adapter_for("claude-stream-json")


@pytest.mark.parametrize(
    ("stream_format", "module", "class_name"),
    [
        ("acp-json-rpc", "harness.protocols.acp.session", "AcpSession"),
        ("dsh-profile-jsonl", "harness.protocols.dsh", "DshProfileSession"),
        ("pi-rpc", "harness.protocols.pi_rpc", "PiRpcSession"),
        ("codex-app-server", "harness.protocols.codex_app_server", "CodexAppServerSession"),
    ],
)
def test_session_for_builds_the_format_session(
    stream_format: str, module: str, class_name: str
) -> None:
    session_module = pytest.importorskip(module)
    session = session_for(stream_format)
    assert type(session) is getattr(session_module, class_name)


def test_session_for_uses_from_def_when_a_def_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness.protocols.acp import session as acp

    defn = next(d for d in BUILTIN_DEFS if d.stream_format == "acp-json-rpc")
    seen: list[str] = []
    original = acp.AcpSession.from_def.__func__  # type: ignore[attr-defined]

    def spy(cls: type[acp.AcpSession], /, given: Any, **overrides: Any) -> acp.AcpSession:
        seen.append(given.id)
        result: acp.AcpSession = original(cls, given, **overrides)
        return result

    monkeypatch.setattr(acp.AcpSession, "from_def", classmethod(spy))
    session = session_for("acp-json-rpc", defn)
    assert isinstance(session, acp.AcpSession)
    assert seen == [defn.id]
    session_for("acp-json-rpc")
    assert seen == [defn.id], "from_def must not be called without a def"


def test_a_missing_session_module_is_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    future = FormatSpec(
        name="future-format",
        session=SessionSpec(
            target="harness.protocols.no_such_session_module:Session",
            grace_keyword="cancel_grace_ms",
            capture_adapter="harness.capture.adapters:CaptureAdapter",
        ),
    )
    monkeypatch.setitem(FORMATS, future.name, future)
    with pytest.raises(SessionUnavailableError, match="no_such_session_module is not installed"):
        CaptureAdapter("future-format").create_session()


# -- requests and responses (CAPTURE-IDORDER-001/002) ------------------------------------------


@pytest.mark.rule("CAPTURE-IDORDER-001")
@pytest.mark.parametrize("adapter", [ACP, APP], ids=["acp", "app-server"])
def test_json_rpc_requests_and_responses(adapter: CaptureAdapter) -> None:
    assert adapter.pending_request({"id": 0, "method": "initialize", "params": {}}) == (
        PendingRequest(0, "initialize")
    )
    assert adapter.pending_request({"id": "a-1", "method": "turn/start"}) == PendingRequest(
        "a-1", "turn/start"
    )
    # Notifications and our replies to the agent's requests await nothing.
    assert adapter.pending_request({"method": "initialized"}) is None
    assert adapter.pending_request({"id": "u-1", "result": {"outcome": {}}}) is None
    assert adapter.pending_request({"id": True, "method": "x"}) is None
    assert adapter.captured_response({"id": 3, "result": {"stopReason": "end_turn"}}) == (
        CapturedResponse(3)
    )
    assert adapter.captured_response({"id": "s", "error": {"code": -32603, "message": "x"}}) == (
        CapturedResponse("s")
    )
    # An agent request (it has a method), a notification, an error with id null: not responses.
    assert adapter.captured_response({"id": 9, "method": "session/request_permission"}) is None
    assert adapter.captured_response({"method": "session/update", "params": {}}) is None
    assert adapter.captured_response({"id": None, "error": {"code": -32700}}) is None
    assert adapter.captured_response([1, 2]) is None
    assert adapter.with_response_id({"id": 0, "result": {}}, 7) == {"id": 7, "result": {}}


@pytest.mark.rule("CAPTURE-IDORDER-002")
def test_pi_responses_name_the_command_they_answer() -> None:
    assert PI.pending_request({"id": 1, "type": "prompt", "message": "hi"}) == PendingRequest(
        1, "prompt"
    )
    assert PI.pending_request({"id": 2, "type": "abort"}) == PendingRequest(2, "abort")
    # extension_ui_response answers the agent; it awaits nothing.
    assert PI.pending_request({"type": "extension_ui_response", "id": "u", "value": "a"}) is None
    response = {"id": "req-1", "type": "response", "command": "prompt", "success": True}
    assert PI.captured_response(response) == CapturedResponse("req-1", "prompt")
    assert PI.captured_response({"type": "response", "command": "new_session"}) == (
        CapturedResponse(None, "new_session")
    )
    assert PI.captured_response({"type": "agent_start"}) is None
    assert PI.captured_response({"type": "response", "id": 1.5, "command": "prompt"}) is None


def test_dsh_frames_have_no_request_ids() -> None:
    execute = _host("dsh_run.host.jsonl")[0]
    assert DSH.pending_request(execute) is None
    for value in _values("dsh_run.jsonl"):
        assert DSH.captured_response(value) is None


# -- host input (CAPTURE-HOSTINPUT-001) ------------------------------------------------------------


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_acp_host_input_gives_prompt_cwd_and_load() -> None:
    request = ACP.host_request(_host("acp_load_string_ids.host.jsonl"))
    assert request.prompt == "now make it blue"
    assert request.cwd == "/home/alice/project"
    assert request.resume_session_id == "sess-old-9"
    assert request.model is None

    fresh = ACP.host_request(_host("acp_ids_from_0.host.jsonl"))
    assert (fresh.prompt, fresh.cwd, fresh.resume_session_id) == (
        "hello",
        "/home/alice/project",
        None,
    )


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
@pytest.mark.parametrize(
    ("frame", "model"),
    [
        (
            {
                "id": 2,
                "method": "session/set_config_option",
                "params": {"configId": "Model", "value": "big"},
            },
            "big",
        ),
        ({"id": 2, "method": "session/set_model", "params": {"modelId": "m-2"}}, "m-2"),
        (
            {
                "id": 2,
                "method": "session/set_config_option",
                "params": {"configId": "mode", "value": "yolo"},
            },
            None,
        ),
    ],
)
def test_acp_host_input_model_comes_from_the_model_request(
    frame: dict[str, Any], model: str | None
) -> None:
    frames = [
        {"id": 0, "method": "session/new", "params": {"cwd": "/p", "mcpServers": []}},
        frame,
        {
            "id": 3,
            "method": "session/prompt",
            "params": {"prompt": [{"type": "text", "text": "go"}]},
        },
    ]
    assert ACP.host_request(frames).model == model


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_acp_host_input_keeps_mcp_servers_and_joins_text_blocks() -> None:
    server = {"type": "stdio", "name": "fs", "command": "mcp-fs", "args": [], "env": []}
    frames = [
        {"id": 1, "method": "session/new", "params": {"cwd": "/p", "mcpServers": [server]}},
        {
            "id": 2,
            "method": "session/prompt",
            "params": {
                "prompt": [
                    {"type": "text", "text": "one"},
                    {"type": "resource_link", "uri": "file:///p/a.png", "name": "a.png"},
                    {"type": "text", "text": "two"},
                ]
            },
        },
    ]
    request = ACP.host_request(frames)
    assert request.prompt == "one\ntwo"
    assert list(request.mcp_servers) == [server]


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_dsh_host_input_gives_the_execute_fields() -> None:
    request = DSH.host_request(_host("dsh_run.host.jsonl"))
    assert request == SessionRequest(
        prompt="Make a landing page",
        cwd="/home/alice/site",
        request_id="od-run-42",
        model="deepseek-official/deepseek-v4-pro",
        mcp_servers=[],
    )
    resumed = DSH.host_request(
        [
            {
                "v": 1,
                "type": "execute",
                "request_id": "r-2",
                "cwd": "/w",
                "prompt": "again",
                "resume_session_id": "dsh-sess-1",
                "reasoning_effort": "high",
                "mcp_servers": [],
            }
        ]
    )
    assert (resumed.resume_session_id, resumed.reasoning, resumed.model) == (
        "dsh-sess-1",
        "high",
        None,
    )


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_pi_host_input_gives_prompt_and_parent_session() -> None:
    request = PI.host_request(_host("pi_resume.host.jsonl"))
    assert request.prompt == "continue the page"
    assert request.resume_session_id == (
        "/home/alice/project/.pi/sessions/2026-11-29T10-00-00_abc.jsonl"
    )
    image = {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}
    with_image = PI.host_request(
        [{"id": 1, "type": "prompt", "message": "look", "images": [image]}]
    )
    assert list(with_image.images) == [image]
    assert with_image.resume_session_id is None
    # A new_session *after* the first prompt belongs to a later turn.
    later = PI.host_request(
        [
            {"id": 1, "type": "prompt", "message": "a"},
            {"id": 2, "type": "new_session", "parentSession": "/x.jsonl"},
        ]
    )
    assert later.resume_session_id is None


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_app_server_host_input_gives_thread_and_turn_fields() -> None:
    request = APP.host_request(_host("app_server_string_ids.host.jsonl"))
    assert (request.prompt, request.cwd, request.model, request.resume_session_id) == (
        "Say hello",
        "/home/alice/project",
        "mock-model",
        None,
    )
    resumed = APP.host_request(
        [
            {"method": "thread/resume", "id": 1, "params": {"threadId": "thr_old"}},
            {
                "method": "turn/start",
                "id": 2,
                "params": {
                    "threadId": "thr_old",
                    "input": [{"type": "text", "text": "more"}],
                    "cwd": "/w",
                    "effort": "high",
                },
            },
        ]
    )
    assert (resumed.resume_session_id, resumed.cwd, resumed.reasoning, resumed.prompt) == (
        "thr_old",
        "/w",
        "high",
        "more",
    )


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
@pytest.mark.parametrize(
    ("adapter", "frames", "problem"),
    [
        # A session/new without a prompt is a run refused before its prompt, replayed
        # (FIDELITY-REPLAY-002); a client that opened no session at all is bad input.
        (ACP, [{"id": 1, "method": "initialize", "params": {}}], "session/new, session/load"),
        (
            ACP,
            [
                {"id": 1, "method": "session/load", "params": {"cwd": "/p"}},
                {"id": 2, "method": "session/prompt", "params": {"prompt": []}},
            ],
            "sessionId",
        ),
        (DSH, [{"v": 1, "type": "cancel", "request_id": "r"}], "execute"),
        (DSH, [{"v": 1, "type": "execute", "prompt": "p", "mcp_servers": []}], "request_id"),
        (PI, [{"id": 1, "type": "get_state"}], "prompt command"),
        (PI, [{"id": 1, "type": "prompt", "message": "m", "images": "x"}], "images"),
        (APP, [{"id": 1, "method": "thread/start", "params": {}}], "turn/start"),
    ],
)
def test_host_input_without_the_request_is_rejected(
    adapter: CaptureAdapter, frames: list[Any], problem: str
) -> None:
    with pytest.raises(HostInputError, match=problem) as info:
        adapter.host_request(frames)
    assert info.value.rule == "CAPTURE-HOSTINPUT-001"


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_host_input_lines_must_be_json() -> None:
    assert parse_host_input(b'{"a":1}\r\n\n  \n[2]\n') == [{"a": 1}, [2]]
    with pytest.raises(HostInputError, match="line 2 is not a JSON value"):
        parse_host_input(b'{"a":1}\nnot json\n')


# -- synthesized requests (CAPTURE-SYNTH-001) ----------------------------------------------


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_dsh_request_id_comes_from_the_first_run_scoped_frame() -> None:
    request = DSH.synthesize_request(_values("dsh_run.jsonl"))
    assert request.request_id == "od-run-42"
    assert (request.prompt, request.cwd, request.resume_session_id) == (
        PLACEHOLDER_PROMPT,
        PLACEHOLDER_CWD,
        None,
    )
    # The ready frame and a protocol_error carry no run; the second run's id is not used.
    assert DSH.synthesize_request(_values("dsh_two_runs.jsonl")).request_id == "turn-1"
    assert (
        DSH.synthesize_request([{"v": 1, "type": "protocol_error", "request_id": "x"}]).request_id
        == "run-1"
    )


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_dsh_resume_is_inferred_from_the_session_or_result_frame() -> None:
    assert DSH.synthesize_request(_values("dsh_resume.jsonl")).resume_session_id == "dsh-sess-1"
    rejected = [
        {"v": 1, "type": "ready"},
        {
            "v": 1,
            "type": "result",
            "request_id": "r-9",
            "status": "failed",
            "session_id": "gone-1",
            "resume_rejected": True,
            "error": {"code": "E", "message": "m"},
        },
    ]
    assert DSH.synthesize_request(rejected).resume_session_id == "gone-1"
    # The second run of a two-run capture resumes; the first did not.
    assert DSH.synthesize_request(_values("dsh_two_runs.jsonl")).resume_session_id is None


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_acp_load_is_inferred_from_a_second_result_without_session_id() -> None:
    request = ACP.synthesize_request(_values("acp_load_string_ids.jsonl"))
    assert request.resume_session_id == "sess-old-9"
    assert ACP.synthesize_request(_values("acp_ids_from_0.jsonl")).resume_session_id is None


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_acp_model_change_is_inferred_from_a_third_result_before_the_prompt() -> None:
    assert ACP.synthesize_request(_values("acp_set_model.jsonl")).model == "mock-large"
    set_model = [
        {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 2, "result": {"sessionId": "s"}},
        {"jsonrpc": "2.0", "id": 3, "result": {}},
        {"jsonrpc": "2.0", "id": 4, "result": {"stopReason": "end_turn"}},
    ]
    assert ACP.synthesize_request(set_model).model == RECORDED_MODEL
    # Two prompt results are two turns, not a model change.
    assert ACP.synthesize_request(_values("acp_two_turns.jsonl")).model is None


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_pi_resume_is_inferred_from_a_new_session_response() -> None:
    assert PI.synthesize_request(_values("pi_resume.jsonl")).resume_session_id == (
        PLACEHOLDER_PARENT_SESSION
    )
    assert PI.synthesize_request(_values("pi_two_turns.jsonl")).resume_session_id is None


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_app_server_resume_is_inferred_when_no_thread_started_notification() -> None:
    assert APP.synthesize_request(_values("app_server_resume.jsonl")).resume_session_id == (
        "thr_old"
    )
    assert APP.synthesize_request(_values("app_server_string_ids.jsonl")).resume_session_id is None


# -- normalization (CAPTURE-FRAMES-001) ------------------------------------------------------------


@pytest.mark.rule("CAPTURE-FRAMES-001")
def test_normalization_ignores_ids_paths_and_timestamps_only() -> None:
    frame = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "session/new",
        "params": {
            "cwd": "relative/dir",
            "paths": ["/home/a/x", "C:\\Users\\b", "~/y", "file:///tmp/z", "not a path"],
            "createdAt": 1764460800,
            "updated_at": "yesterday",
            "when": "2026-11-29T10:00:00.123Z",
            "format": "json",
            "text": "see /tmp/x for details",
        },
    }
    assert normalize_frame_values(frame, drop_top_level=("id",)) == {
        "jsonrpc": "2.0",
        "method": "session/new",
        "params": {
            "cwd": "{path}",
            "paths": ["{path}", "{path}", "{path}", "{path}", "not a path"],
            "createdAt": "{timestamp}",
            "updated_at": "{timestamp}",
            "when": "{timestamp}",
            "format": "json",
            "text": "see /tmp/x for details",
        },
    }


@pytest.mark.rule("CAPTURE-FRAMES-001")
def test_each_adapter_drops_only_its_own_ids() -> None:
    assert ACP.normalize_frame({"id": 1, "method": "m", "params": {"id": 2}}) == {
        "method": "m",
        "params": {"id": 2},
    }
    assert PI.normalize_frame({"id": "req-1", "type": "prompt", "message": "hi"}) == {
        "type": "prompt",
        "message": "hi",
    }
    assert DSH.normalize_frame({"v": 1, "type": "cancel", "request_id": "od-1"}) == {
        "v": 1,
        "type": "cancel",
        "request_id": "{request_id}",
    }


@pytest.mark.rule("CAPTURE-FRAMES-001")
def test_comparison_reports_index_recorded_and_sent() -> None:
    recorded = [
        {"id": 0, "method": "initialize", "params": {"clientInfo": {"name": "other"}}},
        {"id": 1, "method": "session/new", "params": {"cwd": "/a", "mcpServers": []}},
        {"id": 2, "method": "authenticate", "params": {"methodId": "x"}},
        {"id": 3, "method": "session/prompt", "params": {"prompt": []}},
        {"id": 4, "method": "session/prompt", "params": {"prompt": []}},
    ]
    sent = [
        {"id": 1, "method": "initialize", "params": {"clientInfo": {"name": "ours"}}},
        {"id": 2, "method": "session/new", "params": {"cwd": "/b", "mcpServers": []}},
        {"id": 3, "method": "session/prompt", "params": {"prompt": []}},
        {"id": 4, "method": "session/cancel", "params": {}},
    ]
    result = compare_frames(recorded, sent, ACP)
    assert (result.recorded, result.sent, result.after_first_turn) == (4, 4, 1)
    assert [(d.index, d.sent_index, d.paths) for d in result.differences] == [
        (0, 0, ("$.params.clientInfo.name",)),
        (2, None, ("$",)),
        (None, 3, ("$",)),
    ]
    assert (
        result.differences[0]
        .describe()
        .startswith("frame 0 differs at $.params.clientInfo.name: recorded ")
    )
    assert "recorded frame 2 was not sent" in result.differences[1].describe()
    assert "sent frame 3 was not recorded" in result.differences[2].describe()
    assert not result.ok
    assert compare_frames(recorded[1:2], sent[1:2], ACP).ok


@pytest.mark.rule("CAPTURE-TURNS-001")
@pytest.mark.parametrize(
    ("adapter", "frames", "starts"),
    [
        (
            ACP,
            [{"method": "initialize"}, {"method": "session/prompt"}, {"method": "session/prompt"}],
            [1, 2],
        ),
        (APP, [{"method": "turn/start"}, {"method": "turn/interrupt"}], [0]),
        (PI, [{"type": "new_session"}, {"type": "prompt"}, {"type": "abort"}], [1]),
        (DSH, [{"type": "execute"}, {"type": "cancel"}, {"type": "execute"}], [0, 2]),
    ],
)
def test_turn_starts(adapter: CaptureAdapter, frames: list[Any], starts: list[int]) -> None:
    assert adapter.turn_starts(frames) == starts
