"""Replaying captured stdout through the real sessions, and ``harness parse`` on top.

Rules: CAPTURE-FRAMING-001, CAPTURE-IDORDER-001/002, CAPTURE-HOSTINPUT-001,
CAPTURE-SYNTH-001, CAPTURE-FRAMES-001, CAPTURE-TURNS-001, CAPTURE-FAIL-001,
CAPTURE-EXIT-001 (conformance/rules/capture.py). The captures under ``data/`` are
written by hand from the documented wire shapes (wire §A.1-§A.3.2, ref §2.6-§2.8,
seed 001 §6, real-clis.md): ``*.jsonl`` is what the CLI wrote, ``*.host.jsonl`` what
the recorded client wrote to its stdin. The codex app-server cases skip until
``harness.protocols.codex_app_server`` exists.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness import __version__
from harness.capture import (
    CaptureReplay,
    HostInputError,
    adapter_for,
    replay,
    replay_capture,
    split_capture,
)
from harness.capture.adapters import PLACEHOLDER_PROMPT
from harness.cli import main
from harness.events import Error, TextDelta
from harness.protocols.base import Finished, RunStatus, SessionRequest
from harness.protocols.dsh import DshProfileSession

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _bytes(name: str) -> bytes:
    return (DATA / name).read_bytes().replace(b"{harness_version}", __version__.encode())


def _replay(fmt: str, name: str, host: str | None = None, **kwargs: Any) -> CaptureReplay:
    host_input = _bytes(host) if host is not None else None
    return replay(fmt, _bytes(name), host_input=host_input, **kwargs)


def _text(result: CaptureReplay) -> str:
    return "".join(e.delta for e in result.events if isinstance(e, TextDelta))


def _requests(result: CaptureReplay) -> list[str]:
    return [
        f["method"] for f in result.frames if isinstance(f, dict) and "id" in f and "method" in f
    ]


def _no_schema_violations(result: CaptureReplay) -> None:
    labels = [e.to_json().get("label") for e in result.events]
    assert "schema_violation" not in labels, [e.to_json() for e in result.events]


# -- response ids (CAPTURE-IDORDER-001/002) -------------------------------------------------------


@pytest.mark.rule("CAPTURE-IDORDER-001")
def test_acp_python_sdk_ids_from_zero_are_matched_by_order() -> None:
    # wire §A.1.4: the ACP Python SDK's client starts at 0; the session starts at 1.
    result = _replay("acp-json-rpc", "acp_ids_from_0.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert [(r.line, r.recorded, r.replayed, r.kind, r.reason) for r in result.id_rewrites] == [
        (1, 0, 1, "initialize", "order"),
        (2, 1, 2, "session/new", "order"),
        (5, 2, 3, "session/prompt", "order"),
    ]
    assert _text(result) == "Client sent: hello"
    assert result.remaining_lines == ()
    _no_schema_violations(result)


@pytest.mark.rule("CAPTURE-IDORDER-001")
def test_acp_string_ids_are_matched_by_order_and_agent_request_ids_are_kept() -> None:
    result = _replay("acp-json-rpc", "acp_load_string_ids.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert [(r.recorded, r.replayed) for r in result.id_rewrites] == [
        ("c-1", 1),
        ("c-2", 2),
        ("c-3", 3),
    ]
    # The agent's own request (a string UUID) is answered under its id, never rewritten.
    reply = result.frames[-1]
    assert reply["id"] == "7c0e2a3e-4f1b-4c55-9a0e-5b1f3c2d9e01"
    assert reply["result"] == {"outcome": {"outcome": "selected", "optionId": "allow"}}
    assert _text(result) == "Updated index.html."
    _no_schema_violations(result)


@pytest.mark.rule("CAPTURE-IDORDER-001")
def test_ids_that_already_match_are_not_rewritten() -> None:
    result = _replay("acp-json-rpc", "acp_two_turns.jsonl")
    assert result.id_rewrites == ()
    assert result.status is RunStatus.COMPLETED


@pytest.mark.rule("CAPTURE-IDORDER-001")
def test_app_server_string_ids_are_matched_by_order() -> None:
    pytest.importorskip("harness.protocols.codex_app_server")
    result = _replay("codex-app-server", "app_server_string_ids.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert [(r.recorded, r.kind) for r in result.id_rewrites] == [
        ("c-0", "initialize"),
        ("c-1", "thread/start"),
        ("c-2", "turn/start"),
    ]
    assert _requests(result) == ["initialize", "thread/start", "turn/start"]
    assert "jsonrpc" not in result.frames[0]  # wire §A.3.2: no jsonrpc member
    assert _text(result) == "Hello from the mock."


@pytest.mark.rule("CAPTURE-IDORDER-002")
def test_pi_string_ids_are_matched_by_command() -> None:
    # real-clis "pi": the driver sent {"id":"req-1",...}; the session numbers from 1.
    result = _replay("pi-rpc", "pi_string_ids.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert [(r.recorded, r.replayed, r.kind, r.reason) for r in result.id_rewrites] == [
        ("req-1", 1, "prompt", "kind")
    ]
    assert _text(result) == "Hello, world"


@pytest.mark.rule("CAPTURE-IDORDER-002")
def test_a_response_to_a_command_never_sent_cannot_answer_another() -> None:
    # The recorded client also sent get_state with id 1; that failed response must not be
    # read as the answer to the session's prompt (also id 1): "prompt rejected" would fail it.
    result = _replay("pi-rpc", "pi_foreign_command.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert [(r.line, r.recorded, r.replayed, r.reason) for r in result.id_rewrites] == [
        (1, 1, "capture-line-1", "unmatched"),
        (2, "req-7", 1, "kind"),
    ]
    assert _text(result) == "Still fine."


@pytest.mark.rule("CAPTURE-IDORDER-002", "CAPTURE-HOSTINPUT-001")
def test_host_input_tells_which_request_each_recorded_id_was() -> None:
    # The recorded client called authenticate (id 1), which the session never sends.
    with_host = _replay("acp-json-rpc", "acp_authenticate.jsonl", "acp_authenticate.host.jsonl")
    assert with_host.status is RunStatus.COMPLETED, with_host.error
    assert [(r.recorded, r.kind, r.reason) for r in with_host.id_rewrites] == [
        (0, "initialize", "kind")
    ]
    assert _text(with_host) == "Signed in."
    # Without it, order matching cannot know, and the replay takes another path.
    without = _replay("acp-json-rpc", "acp_authenticate.jsonl")
    assert without.status is RunStatus.FAILED


# -- host input (CAPTURE-HOSTINPUT-001) -----------------------------------------------------------


@pytest.mark.rule("FIDELITY-REPLAY-002", "CAPTURE-HOSTINPUT-001")
def test_a_run_refused_before_its_prompt_is_replayed_with_the_agents_error() -> None:
    """The agent answers session/new "Authentication required"; the recorded host then
    sent authenticate and never a prompt. The replay meets the same error."""
    result = _replay("acp-json-rpc", "acp_auth_required.jsonl", "acp_auth_required.host.jsonl")
    assert result.request_source == "host-input"
    assert result.request.cwd == "/home/alice/project"
    assert result.status is RunStatus.FAILED
    assert result.error is not None
    assert result.error.message == "json-rpc id 2: Authentication required"
    assert _requests(result) == ["initialize", "session/new"]
    assert result.comparison is not None
    assert [d.describe() for d in result.comparison.differences] == [
        'recorded frame 2 was not sent: {"jsonrpc":"2.0","method":"authenticate",'
        '"params":{"methodId":"login"}}'
    ]
    # Host input with neither an opened session nor a prompt is still bad input.
    with pytest.raises(HostInputError, match="session/new, session/load or session/prompt"):
        adapter_for("acp-json-rpc").host_request([{"id": 0, "method": "initialize"}])


@pytest.mark.rule("FIDELITY-REPLAY-002", "CAPTURE-EXIT-001")
def test_parse_reports_the_agents_error_for_a_run_refused_before_its_prompt(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(
        capsys,
        str(DATA / "acp_auth_required.jsonl"),
        "--format",
        "acp-json-rpc",
        "--host-input",
        str(DATA / "acp_auth_required.host.jsonl"),
    )
    assert code == 1
    assert (
        err.rstrip()
        .splitlines()[-1]
        .endswith("AGENT_EXECUTION_FAILED: json-rpc id 2: Authentication required")
    )


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_dsh_replay_follows_the_recorded_execute() -> None:
    result = _replay("dsh-profile-jsonl", "dsh_run.jsonl", "dsh_run.host.jsonl")
    assert result.request_source == "host-input"
    assert result.frames == [
        {
            "v": 1,
            "type": "execute",
            "request_id": "od-run-42",
            "cwd": "/home/alice/site",
            "prompt": "Make a landing page",
            "model": {"provider": "deepseek-official", "id": "deepseek-v4-pro"},
            "mcp_servers": [],
        }
    ]
    assert result.status is RunStatus.COMPLETED


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_acp_replay_follows_the_recorded_load() -> None:
    result = _replay("acp-json-rpc", "acp_load_string_ids.jsonl", "acp_load_string_ids.host.jsonl")
    load = result.frames[1]
    assert load["method"] == "session/load"
    assert load["params"] == {
        "sessionId": "sess-old-9",
        "cwd": "/home/alice/project",
        "mcpServers": [],
    }
    assert result.frames[2]["params"]["prompt"] == [{"type": "text", "text": "now make it blue"}]


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_pi_replay_follows_the_recorded_new_session() -> None:
    result = _replay("pi-rpc", "pi_resume.jsonl", "pi_resume.host.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert [(f["type"], f["id"]) for f in result.frames] == [("new_session", 1), ("prompt", 2)]
    assert result.frames[0]["parentSession"].endswith("2026-11-29T10-00-00_abc.jsonl")
    assert result.comparison is not None and result.comparison.ok


@pytest.mark.rule("CAPTURE-HOSTINPUT-001")
def test_app_server_replay_follows_the_recorded_thread_start() -> None:
    pytest.importorskip("harness.protocols.codex_app_server")
    result = _replay(
        "codex-app-server", "app_server_string_ids.jsonl", "app_server_string_ids.host.jsonl"
    )
    start = next(f for f in result.frames if f.get("method") == "thread/start")
    assert (start["params"]["cwd"], start["params"]["model"]) == (
        "/home/alice/project",
        "mock-model",
    )
    turn = next(f for f in result.frames if f.get("method") == "turn/start")
    assert turn["params"]["input"][0] == {"type": "text", "text": "Say hello"}


# -- synthesized requests (CAPTURE-SYNTH-001) ------------------------------------------------------


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_dsh_replay_without_host_input_adopts_the_captured_request_id() -> None:
    result = _replay("dsh-profile-jsonl", "dsh_run.jsonl")
    assert result.request.request_id == "od-run-42"
    assert result.status is RunStatus.COMPLETED, result.error
    assert _text(result) == "Writing index.html"
    # Under any other request id every frame is foreign (seed 001 §6) and no result arrives.
    session = DshProfileSession()
    foreign = replay_capture(
        session,
        SessionRequest(prompt="p", cwd="/w", request_id="other"),
        _bytes("dsh_run.jsonl"),
        adapter_for("dsh-profile-jsonl"),
    )
    assert foreign.status is RunStatus.FAILED
    assert foreign.error is not None and foreign.error.code == "DSH_PROFILE_MISSING_RESULT"
    assert session.counters["ignored_foreign_frames"] == 7


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_dsh_resumed_capture_replays_as_a_resume() -> None:
    result = _replay("dsh-profile-jsonl", "dsh_resume.jsonl")
    assert result.frames[0]["resume_session_id"] == "dsh-sess-1"
    assert result.status is RunStatus.COMPLETED, result.error


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_acp_capture_with_a_model_change_replays_the_change() -> None:
    result = _replay("acp-json-rpc", "acp_set_model.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    assert _requests(result) == [
        "initialize",
        "session/new",
        "session/set_config_option",
        "session/prompt",
    ]
    assert result.frames[2]["params"]["value"] == "mock-large"
    assert result.id_rewrites == ()
    _no_schema_violations(result)


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_acp_capture_of_a_load_replays_as_a_load() -> None:
    result = _replay("acp-json-rpc", "acp_load_string_ids.jsonl")
    assert _requests(result)[:2] == ["initialize", "session/load"]
    assert result.frames[2]["params"]["prompt"] == [{"type": "text", "text": PLACEHOLDER_PROMPT}]


@pytest.mark.rule("CAPTURE-SYNTH-001")
def test_app_server_capture_without_thread_started_replays_as_a_resume() -> None:
    pytest.importorskip("harness.protocols.codex_app_server")
    result = _replay("codex-app-server", "app_server_resume.jsonl")
    assert result.status is RunStatus.COMPLETED, result.error
    resume = next(f for f in result.frames if f.get("method") == "thread/resume")
    assert resume["params"]["threadId"] == "thr_old"


# -- frame comparison (CAPTURE-FRAMES-001) -------------------------------------------------------


@pytest.mark.rule("CAPTURE-FRAMES-001")
def test_matching_host_input_has_no_difference() -> None:
    # Same frames but for ids (0.. vs 1..) and the cwd path.
    result = _replay("acp-json-rpc", "acp_ids_from_0.jsonl", "acp_ids_from_0.matching.host.jsonl")
    assert result.comparison is not None
    assert (result.comparison.recorded, result.comparison.sent) == (3, 3)
    assert result.comparison.differences == ()
    assert result.ok
    dsh = _replay("dsh-profile-jsonl", "dsh_run.jsonl", "dsh_run.host.jsonl")
    assert dsh.comparison is not None and dsh.comparison.ok and dsh.ok


@pytest.mark.rule("CAPTURE-FRAMES-001")
def test_differing_host_input_is_a_finding() -> None:
    # The python SDK client sends no clientCapabilities and its own clientInfo.
    result = _replay("acp-json-rpc", "acp_ids_from_0.jsonl", "acp_ids_from_0.host.jsonl")
    assert result.status is RunStatus.COMPLETED
    assert result.comparison is not None
    [difference] = result.comparison.differences
    assert (difference.index, difference.sent_index) == (0, 0)
    assert "$.params.clientCapabilities" in difference.paths
    assert "$.params.clientInfo.name" in difference.paths
    assert difference.expected["params"]["clientInfo"]["name"] == "acp-example-client"
    assert difference.actual["params"]["clientInfo"]["name"] == "adapter-harness"
    assert not result.ok
    other = _replay("dsh-profile-jsonl", "dsh_run.jsonl", "dsh_run.other-client.host.jsonl")
    assert other.comparison is not None
    assert [d.paths for d in other.comparison.differences] == [("$.client",)]


@pytest.mark.rule("CAPTURE-FRAMES-001", "CAPTURE-TURNS-001")
def test_host_frames_of_a_later_turn_are_counted_not_compared() -> None:
    result = _replay("acp-json-rpc", "acp_two_turns.jsonl", "acp_two_turns.host.jsonl")
    assert result.comparison is not None
    assert result.comparison.after_first_turn == 1
    assert result.comparison.ok, [d.describe() for d in result.comparison.differences]
    assert result.ok


# -- turns (CAPTURE-TURNS-001) --------------------------------------------------------------------


@pytest.mark.rule("CAPTURE-TURNS-001", "FIDELITY-REPLAY-001")
@pytest.mark.parametrize(
    ("fmt", "name", "first", "remaining"),
    [
        ("acp-json-rpc", "acp_two_turns.jsonl", "First answer.", 2),
        ("pi-rpc", "pi_two_turns.jsonl", "First reply.", 4),
    ],
)
def test_a_later_turn_is_fed_and_counted_as_a_live_session_counts_it(
    fmt: str, name: str, first: str, remaining: int
) -> None:
    result = _replay(fmt, name)
    assert result.status is RunStatus.COMPLETED, result.error
    assert _text(result) == first
    assert len(result.remaining_lines) == remaining
    assert all(line.strip() for line in result.remaining_lines)
    assert not any(isinstance(e, Error) for e in result.events)
    assert result.late_error is None and result.ok
    total = len(split_capture(_bytes(name)))
    assert result.lines_consumed + remaining + (1 if fmt == "acp-json-rpc" else 0) == total


@pytest.mark.rule("FIDELITY-REPLAY-001", "DSH-RESULT-ONCE-001")
def test_a_dsh_frame_after_the_terminal_result_fails_the_replay_as_it_fails_a_live_run() -> None:
    result = _replay("dsh-profile-jsonl", "dsh_two_runs.jsonl")
    # The first run completed, as the session saw it; what came after is judged, not skipped.
    assert result.status is RunStatus.COMPLETED, result.error
    assert _text(result) == "Created index.html"
    assert len(result.remaining_lines) == 4
    assert result.late_error is not None
    assert result.late_error.code == "DSH_PROFILE_FRAME_AFTER_RESULT"
    assert "DSH-RESULT-ONCE-001" in result.late_error.message
    assert not result.ok
    assert result.summary_json()["late_error"]["code"] == "DSH_PROFILE_FRAME_AFTER_RESULT"


@pytest.mark.rule("FIDELITY-REPLAY-001")
def test_a_replay_ends_with_end_of_output_even_after_the_finish() -> None:
    """A live run calls end_of_output at EOF after Finished; a session that fails there (a
    dsh profile whose terminal result came with a frame cut short) fails the replay too."""
    whole = _bytes("dsh_run.jsonl")
    cut = whole + b'{"v":1,"type":"text_delta"'
    result = _replay("dsh-profile-jsonl", "dsh_run.jsonl")
    assert result.ok and result.late_error is None
    late = replay("dsh-profile-jsonl", cut)
    assert late.status is RunStatus.COMPLETED
    assert late.late_error is not None and not late.ok


@pytest.mark.rule("CAPTURE-TURNS-001")
def test_app_server_second_turn_is_reported() -> None:
    pytest.importorskip("harness.protocols.codex_app_server")
    result = _replay("codex-app-server", "app_server_string_ids.jsonl")
    assert [json.loads(line)["id"] for line in result.remaining_lines[:1]] == ["c-3"]
    assert len(result.remaining_lines) == 3


# -- failures (CAPTURE-FAIL-001) ------------------------------------------------------------------


@pytest.mark.rule("CAPTURE-FAIL-001")
@pytest.mark.parametrize(
    ("fmt", "name", "code", "recovered"),
    [
        (
            "dsh-profile-jsonl",
            "dsh_malformed.jsonl",
            "DSH_PROFILE_MALFORMED_FRAME",
            "Partial output",
        ),
        ("dsh-profile-jsonl", "dsh_truncated.jsonl", "DSH_PROFILE_TRUNCATED_FRAME", "Cut short"),
        ("acp-json-rpc", "acp_truncated.jsonl", "ACP_EXITED_EARLY", "Before the cut."),
    ],
)
def test_a_capture_that_fails_keeps_the_events_before_the_failure(
    fmt: str, name: str, code: str, recovered: str
) -> None:
    result = _replay(fmt, name)
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == code
    assert result.error.rule
    assert _text(result) == recovered
    assert not result.ok


# -- framing (CAPTURE-FRAMING-001) ----------------------------------------------------------------

_CASES = [
    ("acp-json-rpc", "acp_load_string_ids.jsonl", None),
    ("acp-json-rpc", "acp_ids_from_0.jsonl", "acp_ids_from_0.host.jsonl"),
    ("pi-rpc", "pi_string_ids.jsonl", None),
    ("dsh-profile-jsonl", "dsh_run.jsonl", "dsh_run.host.jsonl"),
    ("dsh-profile-jsonl", "dsh_truncated.jsonl", None),
]


def _outcome(result: CaptureReplay) -> dict[str, Any]:
    return {
        "events": [e.to_json() for e in result.events],
        "frames": result.frames,
        "controls": [repr(c) for c in result.controls],
        "summary": result.summary_json(),
        "remaining": result.remaining_lines,
    }


@pytest.mark.rule("CAPTURE-FRAMING-001")
@pytest.mark.parametrize(("fmt", "name", "host"), _CASES)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(chunk=st.integers(min_value=1, max_value=97))
def test_chunking_does_not_change_the_replay(
    fmt: str, name: str, host: str | None, chunk: int
) -> None:
    assert _outcome(_replay(fmt, name, host, chunk_size=chunk)) == _outcome(
        _replay(fmt, name, host)
    )


@pytest.mark.rule("CAPTURE-FRAMING-001")
@pytest.mark.parametrize(("fmt", "name", "host"), _CASES)
def test_crlf_capture_replays_like_lf(fmt: str, name: str, host: str | None) -> None:
    lf = _replay(fmt, name, host)
    crlf = replay(
        fmt,
        _bytes(name).replace(b"\n", b"\r\n"),
        host_input=_bytes(host) if host else None,
    )
    assert _outcome(crlf) == _outcome(lf)


@pytest.mark.rule("CAPTURE-FRAMING-001")
def test_the_last_line_is_fed_without_a_newline_it_did_not_have() -> None:
    lines = split_capture(b'{"a":1}\n{"b":\n{"c"')
    assert [(line.number, line.terminated) for line in lines] == [(1, True), (2, True), (3, False)]
    assert lines[0].value == {"a": 1}
    # A truncated last frame is reported as truncated, not as malformed JSON.
    result = _replay("dsh-profile-jsonl", "dsh_truncated.jsonl")
    assert result.error is not None and result.error.rule == "DSH-FRAME-TRUNCATED-001"


@pytest.mark.rule("CAPTURE-FRAMING-001")
def test_an_oversize_line_reaches_the_session_whole() -> None:
    head = _bytes("dsh_run.jsonl").split(b"\n")[:2]
    big = b'{"v":1,"type":"text","request_id":"od-run-42","content":"' + b"x" * 1_100_000 + b'"}'
    result = replay("dsh-profile-jsonl", b"\n".join([*head, big, b""]))
    assert result.error is not None and result.error.code == "DSH_PROFILE_FRAME_TOO_LARGE"


_FORMATS = ["acp-json-rpc", "pi-rpc", "dsh-profile-jsonl", "codex-app-server"]
_JSON_LINES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=8,
)


@pytest.mark.rule("CAPTURE-FRAMING-001")
@pytest.mark.parametrize("fmt", _FORMATS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=400), values=st.lists(_JSON_LINES, max_size=6))
def test_any_capture_replays_to_a_verdict_without_raising(
    fmt: str, data: bytes, values: list[Any]
) -> None:
    if fmt == "codex-app-server":
        pytest.importorskip("harness.protocols.codex_app_server")
    lines = b"".join(json.dumps(v).encode() + b"\n" for v in values)
    for capture in (data, lines + data):
        result = replay(fmt, capture)
        assert isinstance(result.finished, Finished)
        assert result.status in set(RunStatus)


# -- the parse command (CAPTURE-EXIT-001, CAPTURE-FAIL-001) ---------------------------------------


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["parse", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.rule("CAPTURE-EXIT-001")
def test_parse_replays_a_two_way_capture(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(
        capsys, str(DATA / "acp_ids_from_0.jsonl"), "--format", "acp-json-rpc", "--frames"
    )
    assert code == 0, err
    lines = out.splitlines()
    frames = [line for line in lines if line.startswith("> ")]
    assert [json.loads(f[2:])["method"] for f in frames] == [
        "initialize",
        "session/new",
        "session/prompt",
    ]
    first_frame = lines.index(frames[0])
    assert any(line.startswith("text_delta") for line in lines[:first_frame])
    assert not any(line.startswith("text_delta") for line in lines[first_frame:])
    assert "harness: replay acp-json-rpc: completed" in err
    assert "3 response ids rewritten" in err
    assert "line 1: response id 0 -> 1 (initialize, matched by order)" in err


@pytest.mark.rule("CAPTURE-EXIT-001")
def test_parse_json_mode_prints_events_frames_and_a_json_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(
        capsys, str(DATA / "pi_string_ids.jsonl"), "--format", "pi-rpc", "--json", "--frames"
    )
    assert code == 0, err
    objects = [json.loads(line) for line in out.splitlines()]
    events = [o for o in objects if "type" in o]
    frames = [o["frame"] for o in objects if "frame" in o]
    assert len(events) + len(frames) == len(objects)
    assert objects.index({"frame": frames[0]}) == len(events)  # frames come after events
    assert frames == [{"id": 1, "type": "prompt", "message": PLACEHOLDER_PROMPT}]
    assert {"type": "text_delta", "delta": "Hello"} in events
    summary = json.loads(err)["summary"]
    assert summary["status"] == "completed"
    assert summary["id_rewrites"] == [
        {"line": 1, "recorded": "req-1", "replayed": 1, "kind": "prompt", "reason": "kind"}
    ]


@pytest.mark.rule("CAPTURE-EXIT-001")
def test_parse_with_agent_uses_the_def(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(DATA / "dsh_run.jsonl"), "--agent", "deepseek-harness")
    assert code == 0, err
    assert "text_delta" in out and "Writing index.html" in out
    assert "harness: replay dsh-profile-jsonl: completed" in err


@pytest.mark.rule("CAPTURE-TURNS-001", "CAPTURE-EXIT-001")
def test_parse_reports_remaining_turns_and_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, str(DATA / "acp_two_turns.jsonl"), "--format", "acp-json-rpc")
    assert code == 0, err
    assert "2 lines left after the first turn" in err
    assert "First answer." in out


@pytest.mark.rule("FIDELITY-REPLAY-001", "CAPTURE-EXIT-001")
def test_parse_fails_a_dsh_frame_after_the_result_naming_the_rule(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, str(DATA / "dsh_two_runs.jsonl"), "--format", "dsh-profile-jsonl")
    assert code == 1, err
    assert "4 lines left after the first turn" in err
    assert "Made it blue" not in out
    assert (
        err.rstrip()
        .splitlines()[-1]
        .startswith(
            "harness: replay failed after the session finished: DSH_PROFILE_FRAME_AFTER_RESULT: "
        )
    )
    assert "DSH-RESULT-ONCE-001" in err


@pytest.mark.rule("CAPTURE-FAIL-001", "CAPTURE-EXIT-001")
def test_parse_prints_recovered_events_then_the_reason_and_exits_1(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(
        capsys, str(DATA / "dsh_malformed.jsonl"), "--format", "dsh-profile-jsonl"
    )
    assert code == 1
    assert "Partial output" in out
    assert err.rstrip().splitlines()[-1] == (
        "harness: replay failed: [DSH-FRAME-MALFORMED-001] DSH_PROFILE_MALFORMED_FRAME: "
        "DeepSeek Harness profile emitted malformed JSON (stdout line 4)."
    )
    code, out, err = _run(
        capsys, str(DATA / "dsh_malformed.jsonl"), "--format", "dsh-profile-jsonl", "--json"
    )
    assert code == 1
    assert {"type": "text_delta", "delta": "Partial output"} in [
        json.loads(x) for x in out.splitlines()
    ]
    assert json.loads(err)["summary"]["error"]["code"] == "DSH_PROFILE_MALFORMED_FRAME"


@pytest.mark.rule("CAPTURE-FRAMES-001", "CAPTURE-EXIT-001")
def test_parse_with_differing_host_input_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(
        capsys,
        str(DATA / "acp_ids_from_0.jsonl"),
        "--format",
        "acp-json-rpc",
        "--host-input",
        str(DATA / "acp_ids_from_0.host.jsonl"),
    )
    assert code == 1
    assert "harness: replay acp-json-rpc: completed" in err
    assert "1 of 3 frames differ from the host input" in err
    assert "harness: replay: frame 0 differs at $.params.clientInfo.name" in err


@pytest.mark.rule("CAPTURE-FRAMES-001", "CAPTURE-EXIT-001")
def test_parse_with_matching_host_input_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    host = tmp_path / "host.jsonl"
    host.write_bytes(_bytes("acp_ids_from_0.matching.host.jsonl"))
    code, _, err = _run(
        capsys,
        str(DATA / "acp_ids_from_0.jsonl"),
        "--format",
        "acp-json-rpc",
        "--host-input",
        str(host),
    )
    assert code == 0, err
    assert "0 of 3 frames differ from the host input" in err


@pytest.mark.rule("CAPTURE-EXIT-001")
@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["--format", "plain", "--frames"], "apply to two-way formats only"),
        (["--format", "dsh-profile-jsonl", "--host-input", "/no/such/host.jsonl"], "host.jsonl"),
        (["--format", "acp-json-rpc", "--host-input", "SELF"], "host input line 1"),
        (["--format", "dsh-profile-jsonl", "--chunk", "0"], "--chunk must be >= 1"),
    ],
)
def test_parse_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], problem: str
) -> None:
    not_json = tmp_path / "host.txt"
    not_json.write_text("initialize please\n")
    argv = [str(not_json) if a == "SELF" else a for a in argv]
    code, out, err = _run(capsys, str(DATA / "dsh_run.jsonl"), *argv)
    assert code == 2
    assert out == ""
    assert problem in err


def test_parse_one_way_formats_still_use_the_stream_parser(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = tmp_path / "plain.txt"
    capture.write_text("hello\n")
    code, out, _ = _run(capsys, str(capture), "--format", "plain", "--json")
    assert code == 0
    assert {"type": "text_delta", "delta": "hello\n"} in [json.loads(x) for x in out.splitlines()]


@pytest.mark.rule("CAPTURE-EXIT-001")
def test_python_m_harness_cli_parse(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "parse",
            str(DATA / "pi_two_turns.jsonl"),
            "--format",
            "pi-rpc",
            "--frames",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "First reply." in proc.stdout and "Second reply." not in proc.stdout
    assert '> {"id": 1, "type": "prompt"' in proc.stdout
    assert "4 lines left after the first turn" in proc.stderr


@pytest.mark.rule("CAPTURE-FAIL-001")
def test_the_reason_follows_the_recovered_events_on_a_terminal() -> None:
    # stderr merged into stdout, as a terminal shows them: events first, then the reason.
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "parse",
            str(DATA / "dsh_malformed.jsonl"),
            "--format",
            "dsh-profile-jsonl",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 1
    lines = proc.stdout.splitlines()
    event = next(i for i, line in enumerate(lines) if "Partial output" in line)
    reason = next(i for i, line in enumerate(lines) if line.startswith("harness: replay failed:"))
    summary = next(i for i, line in enumerate(lines) if line.startswith("harness: replay dsh"))
    assert event < summary < reason
    assert "DSH_PROFILE_MALFORMED_FRAME" in lines[reason]
