"""Run-level checks on synthetic runs: a correct run passes every check, and each broken
variant fails the one rule it breaks, with evidence that names the rule and shows the
events around the problem.

Rules: EVENT-SCHEMA-001, RUN-TOOL-PAIR-001, RUN-TOOL-ONCE-001, RUN-TERMINAL-001,
RUN-AFTER-TERMINAL-001, RUN-HAPPY-TEXT-001, RUN-HAPPY-FILE-001, RUN-USAGE-001,
RUN-SESSION-CAPTURE-001, RUN-FAULT-APIERROR-001, RUN-FAULT-CRASH-001, RUN-CANCEL-001,
RUN-SECRET-001, RUN-CONTINUE-001.
"""

from __future__ import annotations

import dataclasses
import json
import urllib.parse
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checks import Finding, all_checks
from conformance.checks.runs import RunObservation, evaluate_run, fault_free
from conformance.verdicts import Status
from fake_clis.scenario import Scenario, load_scenario
from harness.events import (
    Error,
    Event,
    Raw,
    TextDelta,
    ThinkingDelta,
    ToolInFlight,
    ToolResult,
    ToolUse,
    TurnEnd,
    Usage,
)
from harness.events import (
    Status as StatusEvent,
)
from tests.support.examples import fuzz_sized

RUN_RULES = sorted(all_checks("run"))
HAPPY = load_scenario("happy")
API_ERROR = load_scenario("api_error")
CRASH = load_scenario("crash_mid_line")
HANG = load_scenario("hang")
CONTENT = "<!doctype html>\n<h1>Hello</h1>\n"
SECRET = "sk-ant-test-0123456789abcdef"


def js(*events: Event) -> list[dict[str, Any]]:
    return [e.to_json() for e in events]


def happy_events() -> list[dict[str, Any]]:
    """A claude-shaped happy run, as the parser's normalized events."""
    return js(
        StatusEvent(label="initializing", session_id="sess-1"),
        ThinkingDelta(delta="The user wants a page."),
        TextDelta(delta="I'll create "),
        TextDelta(delta="the page."),
        ToolUse(id="call_write_1", name="Write", input={"file_path": "hello.html"}),
        TurnEnd(stop_reason="tool_use"),
        ToolResult(tool_use_id="call_write_1", content="Wrote hello.html"),
        TextDelta(delta="Done: hello.html is ready."),
        TurnEnd(stop_reason="end_turn"),
        Usage(usage={"input_tokens": 120, "output_tokens": 45}, stop_reason="end_turn"),
    )


def happy_run(**changes: Any) -> RunObservation:
    base = RunObservation(
        def_id="claude",
        stream_format="claude-stream-json",
        events=happy_events(),
        frames_in=['{"type":"user","message":{"role":"user","content":[]}}\n'],
        frames_out=['{"type":"system","subtype":"init","session_id":"sess-1"}\n'],
        exit_code=0,
        status="succeeded",
        stderr_tail="warning: something noisy\n",
        files_written=("hello.html",),
        files={"hello.html": CONTENT},
        scenario=HAPPY,
        resume_style="capture",
        session_id="sess-1",
        secrets=(SECRET,),
    )
    return dataclasses.replace(base, **changes)


def _exiting(scenario: Scenario, code: int) -> Scenario:
    """``scenario`` with another exit code (scenarios are plain slotted classes)."""
    fields = {name: getattr(scenario, name) for name in Scenario.__slots__}
    return Scenario(**{**fields, "exit_code": code})


def judge(obs: RunObservation, rule: str) -> Finding:
    return evaluate_run(obs, rule_ids=[rule])[rule]


def assert_fails(finding: Finding, rule: str, *needles: str) -> str:
    assert finding.status is Status.FAIL, finding.reason
    evidence = finding.evidence
    assert evidence is not None
    assert evidence.summary.startswith(f"{rule}: "), evidence.summary
    assert evidence.repro_command
    text = "\n".join((evidence.summary, evidence.expected, evidence.actual))
    for needle in needles:
        assert needle in text, f"{needle!r} not in evidence:\n{text}"
    return text


@pytest.mark.rule(*RUN_RULES)
def test_a_correct_run_passes_every_check() -> None:
    findings = evaluate_run(happy_run())
    assert sorted(findings) == RUN_RULES
    statuses = {rule: f.status for rule, f in findings.items()}
    applicable = [
        "EVENT-SCHEMA-001",
        "RUN-TOOL-PAIR-001",
        "RUN-TOOL-ONCE-001",
        "RUN-TERMINAL-001",
        "RUN-HAPPY-TEXT-001",
        "RUN-HAPPY-FILE-001",
        "RUN-USAGE-001",
        "RUN-SESSION-CAPTURE-001",
        "RUN-SECRET-001",
    ]
    assert {r: statuses[r] for r in applicable} == dict.fromkeys(applicable, Status.PASS)
    for rule in set(RUN_RULES) - set(applicable):
        assert statuses[rule] is Status.SKIPPED, rule
        assert findings[rule].reason.startswith("not applicable: ")


# --------------------------------------------------------------------------- the stream


@pytest.mark.rule("EVENT-SCHEMA-001")
def test_an_event_off_the_schema_fails() -> None:
    events = happy_events()
    events[3] = {"type": "text_delta", "text": "wrong key"}
    text = assert_fails(judge(happy_run(events=events), "EVENT-SCHEMA-001"), "EVENT-SCHEMA-001")
    assert ">> #3" in text  # the slice marks the offending event
    unknown = [*happy_events(), {"type": "file_write", "path": "x"}]
    assert_fails(judge(happy_run(events=unknown), "EVENT-SCHEMA-001"), "EVENT-SCHEMA-001", "#10")


_EVENT_TYPES = (
    "status",
    "text_delta",
    "thinking_start",
    "thinking_delta",
    "thinking_end",
    "tool_use",
    "tool_input_delta",
    "tool_in_flight",
    "tool_result",
    "usage",
    "turn_end",
    "error",
    "raw",
    "artifact",
    "fabricated_role_marker",
    "file_write",
)
_json_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)
_EVENT_KEYS = (
    "label",
    "delta",
    "id",
    "name",
    "input",
    "tool_use_id",
    "content",
    "is_error",
    "stop_reason",
    "message",
    "line",
    "source",
    "marker",
    "usage",
    "terminal",
)


@pytest.mark.rule("EVENT-SCHEMA-001")
@fuzz_sized(300)
@given(
    st.one_of(st.sampled_from(_EVENT_TYPES), _json_scalars),
    st.dictionaries(st.sampled_from(_EVENT_KEYS), _json_values, max_size=5),
)
def test_checking_an_event_by_its_type_agrees_with_the_whole_schema(
    kind: Any, fields: dict[str, Any]
) -> None:
    from conformance.checks.runs import _event_validator, event_schema_error

    event = {**fields, "type": kind}
    assert (event_schema_error(event) is None) == _event_validator().is_valid(event)
    for real in happy_events():
        assert event_schema_error(real) is None


@pytest.mark.rule("RUN-TOOL-PAIR-001")
def test_a_tool_result_for_an_unknown_tool_fails() -> None:
    events = happy_events()
    events[6] = ToolResult(tool_use_id="call_other", content="?").to_json()
    finding = judge(happy_run(events=events), "RUN-TOOL-PAIR-001")
    assert_fails(finding, "RUN-TOOL-PAIR-001", "'call_other'", "['call_write_1']", ">> #6")


@pytest.mark.rule("RUN-TOOL-PAIR-001")
def test_a_tool_result_before_its_tool_use_fails() -> None:
    events = happy_events()
    events[4], events[6] = events[6], events[4]
    assert_fails(judge(happy_run(events=events), "RUN-TOOL-PAIR-001"), "RUN-TOOL-PAIR-001")
    no_id = [*happy_events(), ToolResult(tool_use_id=None, content="").to_json()]
    assert_fails(judge(happy_run(events=no_id), "RUN-TOOL-PAIR-001"), "RUN-TOOL-PAIR-001", "None")


@pytest.mark.rule("RUN-TOOL-ONCE-001")
def test_a_repeated_tool_use_fails_but_an_in_flight_row_does_not_count() -> None:
    in_flight = ToolInFlight(id="call_write_1", name="Write", input={}).to_json()
    events = happy_events()
    events.insert(4, in_flight)
    assert judge(happy_run(events=events), "RUN-TOOL-ONCE-001").status is Status.PASS
    twice = happy_events()
    twice.insert(7, dict(twice[4]))
    finding = judge(happy_run(events=twice), "RUN-TOOL-ONCE-001")
    assert_fails(finding, "RUN-TOOL-ONCE-001", "'call_write_1'", "#4 and #7")


@pytest.mark.rule("RUN-TERMINAL-001")
def test_an_unknown_status_fails() -> None:
    for status in (None, "running", "done"):
        finding = judge(happy_run(status=status), "RUN-TERMINAL-001")
        assert_fails(finding, "RUN-TERMINAL-001", f"status {status!r}")
    assert judge(happy_run(status="completed"), "RUN-TERMINAL-001").status is Status.PASS


@pytest.mark.rule("RUN-TERMINAL-001")
def test_two_terminal_events_fail() -> None:
    sub_agent_end = [*happy_events(), TurnEnd(stop_reason="end_turn").to_json()]
    finding = judge(happy_run(events=sub_agent_end), "RUN-TERMINAL-001")
    assert_fails(finding, "RUN-TERMINAL-001", "2 terminal turn_end")
    errors = js(
        Error(message="API Error: 500", code="server_error", terminal=True),
        Error(message="again", terminal=True),
    )
    finding = judge(happy_run(events=errors, status="failed"), "RUN-TERMINAL-001")
    assert_fails(finding, "RUN-TERMINAL-001", "2 terminal error events")


@pytest.mark.rule("RUN-TERMINAL-001")
def test_success_after_an_error_fails() -> None:
    events = [*happy_events(), Error(message="Internal server error").to_json()]
    finding = judge(happy_run(events=events), "RUN-TERMINAL-001")
    assert_fails(finding, "RUN-TERMINAL-001", "succeeded despite an error event")
    run_error = {"code": "RUN_EXIT_NONZERO", "message": "exit 1"}
    finding = judge(happy_run(error=run_error), "RUN-TERMINAL-001")
    assert_fails(finding, "RUN-TERMINAL-001", "despite a run error", "RUN_EXIT_NONZERO")


@pytest.mark.rule("RUN-AFTER-TERMINAL-001")
def test_events_after_the_terminal_error_fail() -> None:
    events = js(
        StatusEvent(label="initializing"),
        Error(message="API Error: 500", code="server_error", terminal=True),
    )
    ok = happy_run(events=events, status="failed", scenario=API_ERROR)
    assert judge(ok, "RUN-AFTER-TERMINAL-001").status is Status.PASS
    late = dataclasses.replace(ok, events=[*events, TextDelta(delta="late").to_json()])
    finding = judge(late, "RUN-AFTER-TERMINAL-001")
    assert_fails(finding, "RUN-AFTER-TERMINAL-001", "after the terminal error #1", "text_delta")


@pytest.mark.rule("RUN-AFTER-TERMINAL-001")
def test_events_after_the_session_finished_fail() -> None:
    assert judge(happy_run(events_at_finish=10), "RUN-AFTER-TERMINAL-001").status is Status.PASS
    finding = judge(happy_run(events_at_finish=8), "RUN-AFTER-TERMINAL-001")
    assert_fails(finding, "RUN-AFTER-TERMINAL-001", "2 event(s) after the session finished")
    assert judge(happy_run(), "RUN-AFTER-TERMINAL-001").status is Status.SKIPPED


# --------------------------------------------------------------------------- scenarios


@pytest.mark.rule("RUN-HAPPY-TEXT-001")
def test_text_that_differs_from_the_scenario_fails() -> None:
    events = [e for e in happy_events() if e.get("delta") != "the page."]
    finding = judge(happy_run(events=events), "RUN-HAPPY-TEXT-001")
    assert_fails(finding, "RUN-HAPPY-TEXT-001", "differs", "I'll create the page.")
    # A paragraph newline between messages is not a difference (codex joins with "\n").
    spaced = happy_events()
    spaced[7] = TextDelta(delta="\nDone: hello.html is ready.\n").to_json()
    assert judge(happy_run(events=spaced), "RUN-HAPPY-TEXT-001").status is Status.PASS


@pytest.mark.rule("RUN-HAPPY-TEXT-001")
def test_a_plain_stream_contains_the_final_text_after_the_earlier_ones() -> None:
    banner = (
        "Aider v0.86\nI'll create the page.\nApplied edit to hello.html\nDone: hello.html is ready."
    )
    plain = happy_run(
        stream_format="plain", events=js(TextDelta(delta=banner)), resume_style="none"
    )
    assert judge(plain, "RUN-HAPPY-TEXT-001").status is Status.PASS
    swapped = "Done: hello.html is ready.\nI'll create the page."
    finding = judge(
        dataclasses.replace(plain, events=js(TextDelta(delta=swapped))), "RUN-HAPPY-TEXT-001"
    )
    assert_fails(finding, "RUN-HAPPY-TEXT-001", "final text", "Done: hello.html is ready.")
    # qwen 0.24.4 prints only its final answer: the earlier text step may be absent ...
    final = js(TextDelta(delta="Done: hello.html is ready.\n"))
    final_only = dataclasses.replace(plain, events=final)
    assert judge(final_only, "RUN-HAPPY-TEXT-001").status is Status.PASS
    # ... the final one may not.
    earlier_only = dataclasses.replace(plain, events=js(TextDelta(delta="I'll create the page.")))
    assert_fails(
        judge(earlier_only, "RUN-HAPPY-TEXT-001"),
        "RUN-HAPPY-TEXT-001",
        "final text",
        "Done: hello.html is ready.",
    )


@pytest.mark.rule("RUN-HAPPY-TEXT-001", "RUN-HAPPY-FILE-001", "RUN-USAGE-001")
def test_scenario_checks_apply_to_fault_free_runs_only() -> None:
    for obs, why in (
        (happy_run(scenario=None), "no scenario"),
        (happy_run(cancel_requested=True), "cancelled"),
        (happy_run(scenario=CRASH, status="failed"), "fault steps (crash)"),
        (happy_run(scenario=_exiting(HAPPY, 2)), "exits 2"),
    ):
        assert why in (fault_free(obs) or "")
        for rule in ("RUN-HAPPY-TEXT-001", "RUN-HAPPY-FILE-001", "RUN-USAGE-001"):
            assert judge(obs, rule).status is Status.SKIPPED


@pytest.mark.rule("RUN-HAPPY-FILE-001")
def test_a_happy_run_missing_the_file_fails() -> None:
    finding = judge(happy_run(files_written=(), files={}), "RUN-HAPPY-FILE-001")
    assert_fails(finding, "RUN-HAPPY-FILE-001", "'hello.html' was not written")
    wrong = judge(happy_run(files={"hello.html": "<h1>Bye</h1>"}), "RUN-HAPPY-FILE-001")
    assert_fails(wrong, "RUN-HAPPY-FILE-001", "scenario's content", "<h1>Bye</h1>")
    replay = judge(happy_run(files=None), "RUN-HAPPY-FILE-001")
    assert replay.status is Status.SKIPPED and "replay" in replay.reason
    no_write = judge(happy_run(scenario=load_scenario("text")), "RUN-HAPPY-FILE-001")
    assert no_write.status is Status.SKIPPED


@pytest.mark.rule("RUN-USAGE-001")
def test_a_missing_usage_event_fails_except_on_plain_streams() -> None:
    events = [e for e in happy_events() if e["type"] != "usage"]
    finding = judge(happy_run(events=events), "RUN-USAGE-001")
    assert_fails(finding, "RUN-USAGE-001", "no usage event")
    plain = judge(happy_run(events=events, stream_format="plain"), "RUN-USAGE-001")
    assert plain.status is Status.SKIPPED and "plain" in plain.reason


@pytest.mark.rule("RUN-SESSION-CAPTURE-001")
def test_a_capture_style_run_must_report_its_session_id() -> None:
    events = [e for e in happy_events() if "session_id" not in e]
    finding = judge(happy_run(events=events, session_id=None), "RUN-SESSION-CAPTURE-001")
    assert_fails(finding, "RUN-SESSION-CAPTURE-001", "reported no session id")
    stale = judge(happy_run(session_id="sess-0"), "RUN-SESSION-CAPTURE-001")
    assert_fails(stale, "RUN-SESSION-CAPTURE-001", "'sess-0'", "'sess-1'")
    specify = judge(happy_run(events=events, resume_style="specify"), "RUN-SESSION-CAPTURE-001")
    assert specify.status is Status.SKIPPED


@pytest.mark.rule("RUN-FAULT-APIERROR-001")
def test_an_api_error_must_end_failed_and_reported() -> None:
    error = js(Error(message="Internal server error"))
    ok = happy_run(scenario=API_ERROR, events=error, status="failed", files={})
    assert judge(ok, "RUN-FAULT-APIERROR-001").status is Status.PASS
    session_error = {"code": "AGENT_EXECUTION_FAILED", "message": "prompt failed"}
    acp = dataclasses.replace(ok, events=[], error=session_error)
    assert judge(acp, "RUN-FAULT-APIERROR-001").status is Status.PASS
    succeeded = dataclasses.replace(ok, events=js(Raw(line="session.error")), status="succeeded")
    assert_fails(
        judge(succeeded, "RUN-FAULT-APIERROR-001"),
        "RUN-FAULT-APIERROR-001",
        "ended 'succeeded' without reporting an error",
    )
    silent = dataclasses.replace(ok, events=[], error=None)
    assert_fails(judge(silent, "RUN-FAULT-APIERROR-001"), "RUN-FAULT-APIERROR-001", "without")


@pytest.mark.rule("RUN-FAULT-CRASH-001")
def test_a_crash_must_end_failed() -> None:
    events = js(StatusEvent(label="initializing"), TextDelta(delta="Starting."))
    ok = happy_run(scenario=CRASH, events=events, status="failed", exit_code=3)
    assert judge(ok, "RUN-FAULT-CRASH-001").status is Status.PASS
    succeeded = dataclasses.replace(ok, status="succeeded")
    assert_fails(judge(succeeded, "RUN-FAULT-CRASH-001"), "RUN-FAULT-CRASH-001", "exit_code=3")


@pytest.mark.rule("RUN-FAULT-CRASH-001")
def test_a_crash_keeps_the_events_before_it() -> None:
    wire = [
        '{"type":"stream_event","event":{"delta":{"type":"text_delta","text":"Starting."}}}\n',
        '{"type":"assistant","message":{"content":[{"type":"te',
    ]
    kept = js(StatusEvent(label="initializing"), TextDelta(delta="Starting."))
    ok = happy_run(scenario=CRASH, events=kept, status="failed", frames_out=wire)
    assert judge(ok, "RUN-FAULT-CRASH-001").status is Status.PASS
    dropped = dataclasses.replace(ok, events=kept[:1])
    assert_fails(
        judge(dropped, "RUN-FAULT-CRASH-001"),
        "RUN-FAULT-CRASH-001",
        "'Starting.' reached stdout before the crash",
    )
    # Text only inside the half-written last frame never reached the host (amp's case).
    half = dataclasses.replace(dropped, frames_out=[wire[1] + 'xt","text":"Starting.'])
    assert judge(half, "RUN-FAULT-CRASH-001").status is Status.PASS
    # Without recorded stdout, some event must still be kept.
    nothing = dataclasses.replace(ok, frames_out=(), events=[])
    assert_fails(judge(nothing, "RUN-FAULT-CRASH-001"), "RUN-FAULT-CRASH-001", "no event")


@pytest.mark.rule("RUN-CANCEL-001")
def test_a_cancelled_run_must_end_cancelled() -> None:
    base = happy_run(scenario=HANG, cancel_requested=True, events=[], files={})
    assert judge(dataclasses.replace(base, status="cancelled"), "RUN-CANCEL-001").status is (
        Status.PASS
    )
    for status in ("failed", "succeeded"):
        finding = judge(dataclasses.replace(base, status=status), "RUN-CANCEL-001")
        assert_fails(finding, "RUN-CANCEL-001", f"ended {status!r}")
    assert judge(happy_run(), "RUN-CANCEL-001").status is Status.SKIPPED


@pytest.mark.rule("RUN-SECRET-001")
def test_a_secret_in_the_stderr_tail_fails_without_being_repeated() -> None:
    leaky = happy_run(stderr_tail=f"debug: using key {SECRET} for the request\n")
    finding = judge(leaky, "RUN-SECRET-001")
    text = assert_fails(finding, "RUN-SECRET-001", "secret #1", "[SECRET]")
    assert finding.evidence is not None
    assert SECRET not in text
    assert SECRET not in finding.evidence.stderr_tail
    assert SECRET not in str(finding.evidence.to_json())
    redacted = happy_run(stderr_tail="debug: using key [REDACTED:secret]\n")
    assert judge(redacted, "RUN-SECRET-001").status is Status.PASS
    assert judge(happy_run(secrets=("short",)), "RUN-SECRET-001").status is Status.SKIPPED


@pytest.mark.rule("RUN-SECRET-001", "SECRET-ENCODED-001")
@pytest.mark.parametrize(
    "spell",
    [
        lambda s: json.dumps(s, ensure_ascii=True)[1:-1],
        lambda s: urllib.parse.quote(s, safe=""),
        urllib.parse.quote_plus,
    ],
    ids=["json-u-escaped", "percent", "percent-plus"],
)
def test_a_secret_printed_encoded_in_the_stderr_tail_fails_too(spell: Any) -> None:
    secret = "sk-\u00e9t\u00e9 key/with+signs"
    leaky = happy_run(stderr_tail=f"request: {spell(secret)} sent\n", secrets=(secret,))
    finding = judge(leaky, "RUN-SECRET-001")
    text = assert_fails(finding, "RUN-SECRET-001", "secret #1", "[SECRET]")
    assert spell(secret) not in text


@pytest.mark.rule("RUN-SECRET-001")
def test_every_failure_masks_the_secrets() -> None:
    events = [*happy_events(), Error(message=f"bad key {SECRET}").to_json()]
    finding = judge(happy_run(events=events), "RUN-TERMINAL-001")
    assert finding.evidence is not None
    assert SECRET not in str(finding.evidence.to_json())
    assert "[SECRET]" in finding.evidence.actual


# --------------------------------------------------------------------------- robustness

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
_EVENT = st.fixed_dictionaries(
    {"type": st.sampled_from(["tool_use", "tool_result", "error", "turn_end", "status", "x"])},
    optional={
        "id": _JSON,
        "tool_use_id": _JSON,
        "terminal": _JSON,
        "stop_reason": _JSON,
        "session_id": _JSON,
        "delta": _JSON,
    },
)


@pytest.mark.rule(*RUN_RULES)
@settings(max_examples=60)
@given(
    events=st.lists(st.one_of(_EVENT, _JSON), max_size=8),
    status=st.sampled_from([None, "succeeded", "failed", "cancelled", "odd"]),
    cancel=st.booleans(),
)
def test_checks_never_crash_on_arbitrary_events(
    events: list[Any], status: str | None, cancel: bool
) -> None:
    obs = happy_run(events=events, status=status, cancel_requested=cancel, scenario=CRASH)
    for rule, finding in evaluate_run(obs).items():
        assert finding.status is not Status.NOT_TESTED, f"{rule}: {finding.reason}"


def _compaction_scenario(**options: Any) -> Any:
    from fake_clis.scenario import parse_scenario

    steps = [
        {"kind": "text", "text": "Writing."},
        {"kind": "compaction", **options},
        {"kind": "text", "text": "Recovered and finished."},
    ]
    return parse_scenario({"name": "compaction", "steps": steps})


def _continued_events(marks: int = 1, final: str = "Recovered and finished.") -> list[Any]:
    mark = StatusEvent(label="continuation", session_id="ses_1", detail="_session/continue")
    return js(TextDelta(delta="Writing."), *([mark] * marks), TextDelta(delta=final))


@pytest.mark.rule("RUN-CONTINUE-001")
def test_an_interrupted_turn_must_continue_exactly_as_its_evidence_allows() -> None:
    ok = happy_run(
        def_id="amr",
        stream_format="acp-json-rpc",
        scenario=_compaction_scenario(),
        events=_continued_events(),
        files={},
        files_written=(),
    )
    assert judge(ok, "RUN-CONTINUE-001").status is Status.PASS
    assert_fails(
        judge(dataclasses.replace(ok, events=_continued_events(0)), "RUN-CONTINUE-001"),
        "RUN-CONTINUE-001",
        "0 continuation(s) started; the interruption allows 1",
    )
    assert_fails(
        judge(dataclasses.replace(ok, events=_continued_events(2)), "RUN-CONTINUE-001"),
        "RUN-CONTINUE-001",
        "2 continuation(s)",
    )
    assert_fails(
        judge(dataclasses.replace(ok, status="failed"), "RUN-CONTINUE-001"),
        "RUN-CONTINUE-001",
        "must succeed",
    )
    assert_fails(
        judge(dataclasses.replace(ok, events=_continued_events(final="x")), "RUN-CONTINUE-001"),
        "RUN-CONTINUE-001",
        "continued turn's text",
    )
    # Evidence the session must refuse: no new process, and the run fails.
    for options in ({"evidence": "legacy"}, {"pending_tool": True}, {"advertise": None}):
        refused = dataclasses.replace(
            ok,
            scenario=_compaction_scenario(**options),
            events=_continued_events(0),
            status="failed",
        )
        assert judge(refused, "RUN-CONTINUE-001").status is Status.PASS, options
        continued = dataclasses.replace(refused, events=_continued_events(1))
        assert_fails(judge(continued, "RUN-CONTINUE-001"), "RUN-CONTINUE-001", "allows 0")
    # A continuation whose history is gone, or that is interrupted again, still fails.
    for options in ({"history": "missing"}, {"repeat": True}):
        once = dataclasses.replace(ok, scenario=_compaction_scenario(**options), status="failed")
        assert judge(once, "RUN-CONTINUE-001").status is Status.PASS, options
        assert_fails(
            judge(dataclasses.replace(once, status="succeeded"), "RUN-CONTINUE-001"),
            "RUN-CONTINUE-001",
            "must fail",
        )
    assert judge(happy_run(), "RUN-CONTINUE-001").status is Status.SKIPPED
