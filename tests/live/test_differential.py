"""The differential check (LIVE-DIFF-*): fakes on both sides agree; a diverging pair fails
with evidence naming the side that diverged and both transcripts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.defs.registry import get_agent_def
from harness.events import Event, Raw, Status, TextDelta, ToolResult, ToolUse, TurnEnd
from harness.live.differential import (
    DIFF_RULES,
    Side,
    compare_sides,
    event_kinds,
    failure_reason,
    side_from_run,
)
from harness.live.session import run_live

ALL = tuple(DIFF_RULES)


def _side(
    label: str,
    events: list[Event],
    *,
    outcome: str = "succeeded",
    code: int = 0,
    sid: str | None = "s-1",
    files: tuple[tuple[str, str], ...] = (),
    cwd: str = "/w",
) -> Side:
    return Side(
        label,
        (tuple(events),),
        (outcome,),
        (code,),
        (sid,),
        files,
        paths=(("cwd", cwd), ("home", "/h"), ("tmp", "/t")),
    )


HAPPY: list[Event] = [
    Status(label="initializing", session_id="s-1"),
    TextDelta(delta="I'll create "),
    TextDelta(delta="the page."),
    ToolUse(id="t1", name="Write", input={"file_path": "/w/hello.html", "content": "<h1>"}),
    ToolResult(tool_use_id="t1", content="ok"),
    TextDelta(delta="Done: hello.html is ready."),
    TurnEnd(stop_reason="end_turn"),
]
FILES = (("hello.html", "<!doctype html>\n<h1>Hello</h1>\n"),)


@pytest.mark.rule(*ALL)
def test_identical_sides_pass_every_rule_despite_paths_and_chunking() -> None:
    real = _side("real", HAPPY, files=FILES)
    other: list[Event] = [
        Status(label="initializing", session_id="other-id"),
        TextDelta(delta="I'll create the page."),
        ToolUse(id="t9", name="Write", input={"file_path": "/x/hello.html", "content": "<h1>"}),
        ToolResult(tool_use_id="t9", content="Wrote hello.html"),
        TextDelta(delta="Done: hello.html is ready."),
        TurnEnd(stop_reason="end_turn"),
    ]
    fake = _side("fake", other, files=FILES, cwd="/x")
    found = compare_sides(real, fake, scenario="happy")
    assert [r for r, _f in found] == list(ALL)
    assert all(f.status.value == "pass" for _r, f in found), found


@pytest.mark.rule(*ALL)
def test_a_diverging_pair_fails_each_rule_and_names_the_side() -> None:
    real = _side("real", HAPPY, files=FILES)
    broken: list[Event] = [
        Status(label="initializing"),
        TextDelta(delta="I'll create the page!"),
        ToolUse(id="t1", name="Bash", input={"command": "touch hello.html"}),
        ToolUse(id="t2", name="Write", input={"file_path": "/x/hello.html", "content": "<h1>"}),
        ToolResult(tool_use_id="zz", content="nope", is_error=True),
    ]
    fake = _side("fake", broken, outcome="failed", code=1, sid=None, cwd="/x")
    found = dict(compare_sides(real, fake, scenario="happy", repro_command="harness live diff x"))
    assert all(found[r].status.value == "fail" for r in ALL), found
    # The scenario says the text and the exit code: the fake is the side that diverged.
    assert "the fake side diverged" in found["LIVE-DIFF-TEXT-001"].reason
    assert "the fake side diverged" in found["LIVE-DIFF-STATUS-001"].reason
    assert "the fake side diverged" in found["LIVE-DIFF-TOOLS-001"].reason
    assert "real and fake differ" in found["LIVE-DIFF-KINDS-001"].reason
    evidence = found["LIVE-DIFF-KINDS-001"].evidence
    assert evidence is not None and evidence.repro_command == "harness live diff x"
    heads = [f.data.split("\n", 1)[0] for f in evidence.transcript_slice]
    assert heads == ["[real turn 1]", "[fake turn 1]"]
    assert (
        "{cwd}" not in evidence.transcript_slice[0].data
        and "hello.html" in evidence.transcript_slice[0].data
    )


@pytest.mark.rule("LIVE-DIFF-TEXT-001", "LIVE-DIFF-STATUS-001")
def test_the_real_side_is_blamed_when_the_fake_matches_the_scenario() -> None:
    fake = _side("fake", HAPPY, files=FILES)
    real = _side(
        "real",
        [*HAPPY[:-2], TextDelta(delta="Something else.")],
        files=FILES,
        outcome="failed",
        code=2,
    )
    found = dict(compare_sides(real, fake, scenario="happy"))
    assert "the real side diverged" in found["LIVE-DIFF-TEXT-001"].reason
    assert "the real side diverged" in found["LIVE-DIFF-STATUS-001"].reason


@pytest.mark.rule("LIVE-DIFF-KINDS-001")
def test_event_kinds_drop_status_and_merge_deltas() -> None:
    assert event_kinds(HAPPY) == ["text_delta", "tool_use", "tool_result", "text_delta", "turn_end"]


@pytest.mark.rule("LIVE-DIFF-KINDS-001")
def test_a_run_of_unparsed_lines_counts_once() -> None:
    def noisy(n: int) -> list[Event]:
        return [*HAPPY[:3], *(Raw(line=f'{{"type":"bg","n":{i}}}') for i in range(n)), *HAPPY[3:]]

    assert event_kinds(noisy(22)) == event_kinds(noisy(23))
    assert event_kinds(noisy(1)).count("raw") == 1


@pytest.mark.rule("LIVE-DIFF-STATUS-001")
def test_a_succeeded_run_stopped_by_signal_after_its_turn_exits_clean() -> None:
    from types import SimpleNamespace

    from harness.live.differential import _exit_code

    stopped = SimpleNamespace(exit_code=None, signal=15, succeeded=True)
    failed = SimpleNamespace(exit_code=None, signal=9, succeeded=False)
    assert _exit_code(stopped) == 0
    assert _exit_code(failed) is None
    assert _exit_code(SimpleNamespace(exit_code=3, signal=None, succeeded=False)) == 3
    # The host terminates the tree once a cancel is acknowledged: who exits first is a race.
    cancelled = SimpleNamespace(value="cancelled")
    acked = SimpleNamespace(
        exit_code=None, signal=15, succeeded=False, status=cancelled, error=None
    )
    unanswered = SimpleNamespace(
        exit_code=None, signal=9, succeeded=False, status=cancelled, error=object()
    )
    assert _exit_code(acked) == 0
    assert _exit_code(unanswered) is None


@pytest.mark.rule(
    "LIVE-DIFF-KINDS-001",
    "LIVE-DIFF-TEXT-001",
    "LIVE-DIFF-TOOLS-001",
    "LIVE-DIFF-RESULTS-001",
    "LIVE-DIFF-SESSION-001",
    "LIVE-DIFF-STATUS-001",
)
def test_fake_against_fake_agrees_and_two_scenarios_disagree(tmp_path: Path) -> None:
    defn = get_agent_def("claude")
    runs = [run_live(defn, s, side="fake", work_base=tmp_path) for s in ("happy", "happy", "text")]
    try:
        a, b, c = (side_from_run(f"fake{i}", r) for i, r in enumerate(runs))
        same = compare_sides(a, b, scenario="happy")
        assert all(f.status.value == "pass" for _r, f in same), same
        assert dict(a.files)["hello.html"] == "<!doctype html>\n<h1>Hello</h1>\n"
        differ = dict(compare_sides(a, c))
        for rule in (
            "LIVE-DIFF-KINDS-001",
            "LIVE-DIFF-TEXT-001",
            "LIVE-DIFF-TOOLS-001",
            "LIVE-DIFF-RESULTS-001",
        ):
            assert differ[rule].status.value == "fail", rule
        assert differ["LIVE-DIFF-SESSION-001"].status.value == "pass"
    finally:
        for r in runs:
            r.dirs.cleanup()


@pytest.mark.rule("LIVE-DIFF-TEXT-001", "LIVE-RECIPE-001")
def test_volatile_text_of_the_recipe_is_masked_on_both_sides_only_there() -> None:
    import re

    from harness.live.recipes import VolatileText

    counts = VolatileText(re.compile(r"Tokens: \d+ sent"), "Tokens: N sent", "own tokenizer")

    def with_text(label: str, text: str) -> Side:
        return _side(label, [*HAPPY[:-2], TextDelta(delta=text), HAPPY[-1]], files=FILES)

    real = with_text("real", "Done. Tokens: 589 sent")
    fake = with_text("fake", "Done. Tokens: 120 sent")
    assert dict(compare_sides(real, fake))["LIVE-DIFF-TEXT-001"].status.value == "fail"
    masked = dict(compare_sides(real, fake, volatile=(counts,)))
    assert masked["LIVE-DIFF-TEXT-001"].status.value == "pass"
    # Masking never hides a difference outside the pattern.
    other = with_text("fake", "Done! Tokens: 120 sent")
    still = dict(compare_sides(real, other, volatile=(counts,)))["LIVE-DIFF-TEXT-001"]
    assert still.status.value == "fail" and still.evidence is not None
    assert "Done!" in (still.evidence.actual or "")


@pytest.mark.rule("LIVE-RECIPE-001")
def test_a_volatile_pattern_that_is_not_a_regex_is_named() -> None:
    from harness.live.recipes import RecipeError, parse_recipe

    raw = {
        "format": "live-recipe-v1",
        "agent": "aider",
        "skip": {"reason": "x"},
        "volatile_text": [{"pattern": "Tokens: (", "as": "", "why": "counts"}],
    }
    with pytest.raises(RecipeError) as info:
        parse_recipe(raw, path="aider.json")
    assert info.value.field == "volatile_text[0].pattern"
    assert "regular expression" in str(info.value)


@pytest.mark.rule("LIVE-DIFF-STATUS-001")
def test_a_real_crash_in_a_failing_scenario_is_the_real_sides_divergence() -> None:
    # Both fail with exit 1, as api_error scripts; only the fake reported the API error.
    real = replace(_side("real", [], outcome="failed", code=1), reasons=("crashed",))
    fake = replace(_side("fake", [], outcome="failed", code=1), reasons=("reported",))
    found = dict(compare_sides(real, fake, scenario="api_error"))
    status = found["LIVE-DIFF-STATUS-001"]
    assert status.status.value == "fail"
    assert "the real side diverged" in status.reason
    assert status.evidence is not None and '"crashed"' in status.evidence.expected
    same = replace(real, reasons=("reported",))
    assert (
        dict(compare_sides(same, fake, scenario="api_error"))["LIVE-DIFF-STATUS-001"].status.value
        == "pass"
    )


@pytest.mark.rule("LIVE-DIFF-SESSION-001")
def test_no_session_id_on_either_side_is_skipped_not_passed() -> None:
    real = _side("real", HAPPY, files=FILES, sid=None)
    fake = _side("fake", HAPPY, files=FILES, sid=None)
    finding = dict(compare_sides(real, fake, scenario="happy"))["LIVE-DIFF-SESSION-001"]
    assert finding.status.value == "skipped"
    assert "neither side captured a session id" in finding.reason


@pytest.mark.rule("LIVE-DIFF-STATUS-001")
def test_failure_reasons_name_who_said_the_run_failed(tmp_path: Path) -> None:
    from harness.runner.types import RunError

    def reason(source: str) -> str | None:
        return failure_reason(SimpleNamespace(error=RunError("X", "m", source=source)))

    assert reason("session") == reason("stream") == "reported"
    assert reason("process") == "crashed"
    assert reason("runner") == "X"
    assert failure_reason(SimpleNamespace(error=None)) is None
    run = run_live(get_agent_def("claude"), "api_error", side="fake", work_base=tmp_path)
    try:
        assert side_from_run("fake", run).reasons == ("reported",)
    finally:
        run.dirs.cleanup()


def _labels(found: Sequence[tuple[str, str, object]]) -> set[str]:
    return {label for _rule, label, _f in found}


@pytest.mark.rule("LIVE-SKIP-001")
def test_a_scenario_name_runs_exactly_that_case(tmp_path: Path) -> None:
    from harness.live.conform import real_findings

    # Nothing is installed under tmp_path: every case is skipped, and its label says
    # which cases were picked to run.
    found = real_findings(get_agent_def("codex"), scenarios=["text"], cache_dir=tmp_path)
    assert _labels(found) == {"text@exec-json", "text@app-server"}
    found = real_findings(get_agent_def("kilo"), scenarios=["text-resume"], cache_dir=tmp_path)
    assert _labels(found) == {"text-resume"}


@pytest.mark.rule("LIVE-SKIP-001")
def test_a_transport_selects_what_runs(tmp_path: Path) -> None:
    from harness.live.conform import real_findings

    codex = get_agent_def("codex")
    found = real_findings(codex, scenarios=["text"], transports=["app-server"], cache_dir=tmp_path)
    assert _labels(found) == {"text@app-server"}
    wrong = real_findings(codex, transports=["websocket"], cache_dir=tmp_path)
    assert {f.status.value for _r, _l, f in wrong} == {"skipped"}
    assert all("'websocket'" in f.reason for _r, _l, f in wrong)


@pytest.mark.rule("LIVE-NET-001")
def test_the_per_cli_report_sums_scenarios_requests_attempts_and_time(tmp_path: Path) -> None:
    from harness.live.conform import CliReport
    from harness.live.netns import NetAttempt, NetEvidence, Sealing

    run = run_live(get_agent_def("claude"), "text", side="fake", work_base=tmp_path)
    try:
        sealed = Sealing(("unshare", "--net"), "network namespace", strace="strace")
        run.net = NetEvidence(sealed, [NetAttempt("dns", "api.example", "version", "1")], 1, 1)
        run.cli_version = "9.9.9"
        report = CliReport("claude")
        report.add("text", run)
        report.add("happy", run)
        line = report.line()
        assert line.startswith("claude 9.9.9: 2 scenario(s) [text, happy], ")
        assert f"{2 * len(run.requests)} request(s)" in line
        assert "2 network attempt(s) (text version: dns api.example (1);" in line
        assert "wall " in line
        run.net = NetEvidence(Sealing((), "none", reason="not sealed on this OS (darwin): x"))
        report.add("shell", run)
        assert "not sealed on this OS (darwin)" in report.line()
    finally:
        run.dirs.cleanup()


#: A session id a CLI prints in a JSON line of its stdout.
_PRINTED_ID = re.compile(rb'"(?:session_?[iI][dD]|sessionId)"\s*:\s*"([^"]+)"')
_REAL_DIR = Path(__file__).resolve().parents[2] / "recordings" / "real"


#: Every real run, failed ones too (opencode names a failed run's session on its error
#: frame only).
_REAL = sorted(_REAL_DIR.glob("*/*.jsonl"))


@pytest.mark.rule(
    "LIVE-DIFF-SESSION-001", "GEMINI-SESSION-001", "COPILOT-SESSION-001", "OPENCODE-SESSION-001"
)
@pytest.mark.parametrize("path", _REAL, ids=lambda p: f"{p.parent.name}.{p.stem}")
def test_a_session_id_the_real_cli_printed_is_captured(path: Path) -> None:
    """Where a real CLI prints a session id, in a run that succeeds or fails, its parser
    captures it: the rule then compares ids instead of passing with nothing on either side."""
    from harness.recording.record import Direction, load_recording
    from harness.recording.replay import replay_recording

    recording = load_recording(path)
    printed = {
        m.group(1).decode() for m in _PRINTED_ID.finditer(recording.stream(Direction.STDOUT))
    }
    events = replay_recording(recording).events
    captured = {e.session_id for e in events if isinstance(e, Status) and e.session_id}
    assert printed <= captured, f"printed {sorted(printed)}, captured {sorted(captured)}"
    if path.parent.name in ("gemini", "copilot") and path.stem in ("text", "happy"):
        assert printed  # these CLIs print one: the check above is not empty
    if path.parent.name == "opencode" and path.stem == "api_error":
        assert printed  # on the error frame: the one line of the failed run


@pytest.mark.rule("LIVE-DIFF-SESSION-001")
@pytest.mark.parametrize(
    ("agent", "verdict"),
    [("gemini", "pass"), ("copilot", "pass"), ("qwen", "skipped"), ("aider", "skipped")],
)
def test_the_session_rule_compares_ids_where_the_cli_prints_one(
    tmp_path: Path, agent: str, verdict: str
) -> None:
    """gemini and copilot print a session id (their fakes too): the rule compares it; qwen
    and aider print plain text with none: the rule is skipped, not passed."""
    defn = get_agent_def(agent)
    runs = [run_live(defn, "text", side="fake", work_base=tmp_path) for _ in range(2)]
    try:
        a, b = (side_from_run(f"fake{i}", r) for i, r in enumerate(runs))
        finding = dict(compare_sides(a, b, scenario="text"))["LIVE-DIFF-SESSION-001"]
        assert finding.status.value == verdict, finding.reason
    finally:
        for r in runs:
            r.dirs.cleanup()
