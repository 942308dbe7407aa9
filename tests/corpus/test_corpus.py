"""The recordings corpus (``recordings/``): every ``*.jsonl`` under it, ``real/`` included.

Each recording is replayed at every chunking mode (CORPUS-CHUNKING-001), its events are
pinned by a JSON Lines snapshot (CORPUS-SNAPSHOT-001; ``--snapshot-update`` re-records
them), its ``expect`` must hold and the run-level checks over ``observe_replay`` must
fail no rule but the one an edge case breaks on purpose (CORPUS-REPLAY-001). The
corpus-level tests check the README (CORPUS-README-001), that every snapshot has a
recording and back (CORPUS-UNUSED-001: syrupy's own report is unreliable under xdist),
that the generator's plan is on disk (CORPUS-GEN-001) and that each edge case shows its
rule (CORPUS-EDGE-001). No recording names the machine that made it (RECORD-HOST-001).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from conformance.checks.runs import evaluate_run, observe_replay
from conformance.rules import all_rules
from conformance.snapshots import EventStreamExtension, normalize_events
from conformance.verdicts import Status
from fake_clis.scenario import Scenario, list_scenarios, load_scenario
from harness.recording.corpus import (
    CONTINUED_SUFFIX,
    CORPUS_DIR,
    EDGE_CASES,
    README_NAME,
    check,
    corpus_files,
    edge_case,
    format_choices,
    planned_paths,
    planned_scenarios,
    readme_entries,
    readme_problems,
    recording_id,
    relative,
    snapshot_mismatch,
    snapshot_name,
)
from harness.recording.record import (
    Direction,
    Recording,
    RecordingHeader,
    RecordingWriter,
    load_recording,
    parse_recording,
)
from harness.recording.replay import ReplayResult, replay_recording

RECORDINGS = corpus_files()
IDS = [recording_id(p) for p in RECORDINGS]
SNAPSHOT_DIR = Path(__file__).parent / "__snapshots__" / Path(__file__).stem
SNAPSHOT_TEST = "test_events_match_the_snapshot"
#: Formats whose events follow the reads: only the concatenated text is chunking-free
#: (PLAIN-TEXT-001), so adjacent text deltas are merged before comparing.
TEXT_STREAMS = frozenset({"plain"})
#: Known gaps outside the corpus, by recording: the rules its replay fails today, and why.
#: Strict both ways: a listed rule that passes fails the test, so a fix removes the line.
KNOWN_GAPS: dict[str, dict[str, str]] = {}
#: (mode, seed) besides ``recorded``.
OTHER_MODES = (("line", 0), ("1", 0), ("random", 1), ("random", 2))
#: Where a CLI's stdout frames name the machine it runs on: the frame's method, and the
#: keys down to the value (the codex app-server's RemoteControlStatusChangedNotification,
#: ``harness/schemas/codex-app-server/ServerNotification.json``). Recorded, it is ``{host}``.
MACHINE_NAME_FIELDS: dict[str, tuple[str, ...]] = {
    "remoteControl/status/changed": ("params", "serverName"),
}


def _outcome(result: ReplayResult) -> dict[str, Any]:
    """What must not depend on the chunking: events (durations normalized), frames sent,
    status and error code."""
    events = [e.to_json() for e in result.events]
    if result.header.stream_format in TEXT_STREAMS:
        merged: list[dict[str, Any]] = []
        for event in events:
            if event["type"] == "text_delta" and merged and merged[-1]["type"] == "text_delta":
                merged[-1] = {**merged[-1], "delta": merged[-1]["delta"] + event["delta"]}
            else:
                merged.append(event)
        events = merged
    return {
        "events": normalize_events(events),
        "frames": result.frames,
        "status": result.status.value if result.status else None,
        "error": result.error.code if result.error else None,
    }


@cache
def _planned() -> frozenset[str]:
    return frozenset(planned_paths())


@cache
def _live_statuses() -> dict[str, str | None]:
    return {e.path: e.live_status for e in readme_entries()}


def _machine_names(recording: Recording) -> list[Any]:
    """The values at :data:`MACHINE_NAME_FIELDS` in the recording's stdout frames."""
    data = b"".join(c.data for c in recording.chunks if c.direction is Direction.STDOUT)
    found: list[Any] = []
    for line in data.decode("utf-8", "replace").split("\n"):
        try:
            frame = json.loads(line)
        except ValueError:
            continue
        keys = MACHINE_NAME_FIELDS.get(frame.get("method")) if isinstance(frame, dict) else None
        value: Any = frame
        for key in keys or ():
            value = value.get(key) if isinstance(value, dict) else None
        if keys:
            found.append(value)
    return found


def _first_difference(a: Sequence[Any], b: Sequence[Any]) -> str:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"#{i}: {json.dumps(x)[:300]} != {json.dumps(y)[:300]}"
    return f"lengths {len(a)} != {len(b)}"


def _scenario_of(recording: Recording, path: Path) -> Scenario | None:
    """The fake scenario a generated recording ran (``<format>/<scenario>.jsonl``).

    ``None`` for the two files of a run continued in a new process (``<scenario>.jsonl``
    and ``<scenario>.continued.jsonl``, RECORD-CONTINUE-001): the scenario describes the
    whole run, and each file holds one process of it, so only the per-process rules judge
    them; the whole run is judged live (RUN-CONTINUE-001 in tests/runner).
    """
    rel = relative(path)
    if rel.count("/") != 1 or not rel.startswith(recording.header.stream_format + "/"):
        return None
    name = path.stem
    if path.with_name(f"{name}{CONTINUED_SUFFIX}").exists():
        return None
    return load_scenario(name) if name in list_scenarios() else None


def _shown_in_order(
    events: Sequence[Mapping[str, Any]], wanted: Sequence[Mapping[str, Any]]
) -> str:
    """``""`` when each wanted subset matches an event, in order; else what is missing."""
    at = 0
    for item in wanted:
        while at < len(events) and any(events[at].get(k) != v for k, v in item.items()):
            at += 1
        if at == len(events):
            return f"no event {item} (in order) among {[dict(e) for e in events]}"
        at += 1
    return ""


# -- per recording ---------------------------------------------------------------------------------


@pytest.mark.rule("CORPUS-CHUNKING-001", "REPLAY-CHUNK-001")
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_every_chunking_gives_the_same_events(path: Path) -> None:
    recording = load_recording(path)
    recorded = _outcome(replay_recording(recording, chunking="recorded"))
    for mode, seed in OTHER_MODES:
        other = _outcome(replay_recording(recording, chunking=mode, seed=seed))
        for key in recorded:
            if other[key] != recorded[key]:
                detail = (
                    _first_difference(recorded[key], other[key])
                    if isinstance(recorded[key], list)
                    else f"{recorded[key]!r} != {other[key]!r}"
                )
                pytest.fail(
                    f"{relative(path)}: {key} differ at chunking {mode} seed {seed}: {detail}"
                )


@pytest.mark.rule("CORPUS-SNAPSHOT-001")
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_events_match_the_snapshot(path: Path, snapshot: SnapshotAssertion) -> None:
    result = replay_recording(load_recording(path))
    assert snapshot.use_extension(EventStreamExtension) == result


@pytest.mark.rule("CORPUS-REPLAY-001", "REPLAY-STATUS-001", "REPLAY-FRAMES-001")
@pytest.mark.parametrize("path", RECORDINGS, ids=IDS)
def test_replay_ends_as_expected_and_breaks_no_other_rule(path: Path) -> None:
    rel = relative(path)
    recording = load_recording(path)
    result = replay_recording(recording)
    if rel in _planned():
        assert recording.header.expect is not None, f"{rel}: the header has no expect"
    broken = {f.rule: f.message for f in result.findings if f.verdict == "fail"}
    case = edge_case(rel)
    allowed = {case.rule, *case.breaks} if case is not None else set()
    obs = observe_replay(result, recording, scenario=_scenario_of(recording, path))
    broken.update(
        (rid, finding.reason)
        for rid, finding in evaluate_run(obs).items()
        if finding.status in (Status.FAIL, Status.NOT_TESTED) and rid not in allowed
    )
    gaps = KNOWN_GAPS.get(rel, {})
    assert set(broken) == set(gaps), f"{rel}: fails {broken}; known gaps {gaps}"
    # A generated recording's replay is classified as its live run was (ref §10.1).
    live = _live_statuses().get(rel)
    if live is not None:
        assert obs.status == live, f"{rel}: replay classified {obs.status}, the live run {live}"


# -- the corpus as a whole -------------------------------------------------------------------------


@pytest.mark.rule("RECORD-HOST-001")
def test_no_recording_names_the_machine_that_made_it() -> None:
    """Every frame that names the CLI's machine holds ``{host}``; some recording has one,
    so the check is not vacuous."""
    names = {relative(p): _machine_names(load_recording(p)) for p in RECORDINGS}
    named = {rel: found for rel, found in names.items() if any(v != "{host}" for v in found)}
    assert not named, f"recordings naming the machine that made them: {named}"
    assert any(names.values()), f"no recording holds a frame of {sorted(MACHINE_NAME_FIELDS)}"


@pytest.mark.rule("RECORD-HOST-001")
def test_machine_names_finds_an_unscrubbed_name() -> None:
    header = RecordingHeader(
        agent="codex",
        stream_format="codex-app-server",
        event_parser=None,
        transport="app-server",
        argv=("codex", "app-server"),
        prompt_delivery="stdin",
        platform="linux",
        cli_version=None,
    )
    frame = {"method": "remoteControl/status/changed", "params": {"serverName": "vm"}}
    other = {"method": "mcpServer/elicitation/request", "params": {"serverName": "docs"}}
    body = (json.dumps(other) + "\n" + json.dumps(frame) + "\n").encode()
    for hosts, expected in (((), "vm"), (("vm",), "{host}")):
        writer = RecordingWriter(header, cwd="/w", home="/h", tmp="/t", hosts=hosts)
        text = writer.header_line() + writer.chunk("stdout", body, 0.0) + writer.exit(0, None, 1)
        assert _machine_names(parse_recording(text.encode())) == [expected]


@pytest.mark.rule("CORPUS-UNUSED-001")
def test_every_snapshot_has_a_recording_and_back(request: pytest.FixtureRequest) -> None:
    if request.config.getoption("update_snapshots", default=False):
        pytest.skip("snapshots are being re-recorded in this session")
    stray, missing = snapshot_mismatch(CORPUS_DIR, SNAPSHOT_DIR, SNAPSHOT_TEST)
    assert not stray, f"snapshots without a recording (delete them): {stray}"
    assert not missing, f"recordings without a snapshot (run --snapshot-update): {missing}"


@pytest.mark.rule("CORPUS-UNUSED-001")
def test_snapshot_mismatch_names_strays_and_missing_snapshots(tmp_path: Path) -> None:
    corpus = tmp_path / "recordings"
    (corpus / "fmt" / "edge").mkdir(parents=True)
    (corpus / "real" / "agent").mkdir(parents=True)
    for rel in ("fmt/a.jsonl", "fmt/edge/X-Y-001.jsonl", "real/agent/run 1.jsonl"):
        (corpus / rel).write_text("{}\n", encoding="utf-8")
    (corpus / "fmt" / "notes.txt").write_text("not a recording", encoding="utf-8")
    snaps = tmp_path / "snaps"
    snaps.mkdir()
    ids = [recording_id(p, corpus) for p in corpus_files(corpus)]
    assert ids == ["fmt.a", "fmt.edge.X-Y-001", "real.agent.run.1"]
    for name in (snapshot_name("t", "fmt.a"), snapshot_name("t", "gone.b"), "other[fmt.a].jsonl"):
        (snaps / name).write_text("x", encoding="utf-8")
    stray, missing = snapshot_mismatch(corpus, snaps, "t")
    assert stray == ["t[gone.b].jsonl"]
    assert missing == ["t[fmt.edge.X-Y-001].jsonl", "t[real.agent.run.1].jsonl"]
    (snaps / "t[gone.b].jsonl").unlink()
    for rec_id in ("fmt.edge.X-Y-001", "real.agent.run.1"):
        (snaps / snapshot_name("t", rec_id)).write_text("x", encoding="utf-8")
    assert snapshot_mismatch(corpus, snaps, "t") == ([], [])


@pytest.mark.rule("CORPUS-UNUSED-001")
def test_snapshot_names_are_the_files_syrupy_writes() -> None:
    assert RECORDINGS, "the corpus is empty"
    assert len(set(IDS)) == len(IDS), "two recordings share a test id"
    for rec_id in IDS:
        name = snapshot_name(SNAPSHOT_TEST, rec_id)
        assert _syrupy_file_name(name) == name


def _syrupy_file_name(name: str) -> str:
    """The file name syrupy makes of a snapshot name (renamed between syrupy 6 and 7)."""
    # syrupy 7 spells it ``_sanitize_filename``; syrupy 6 (what pip resolves on Python 3.10)
    # keeps a name-mangled private ``__clean_filename``.
    for attr in ("_sanitize_filename", "_SingleFileSnapshotExtension__clean_filename"):
        sanitize = getattr(EventStreamExtension, attr, None)
        if sanitize is not None:
            break
    assert sanitize is not None, "syrupy renamed its file-name sanitiser again"
    result = sanitize(name)
    assert isinstance(result, str)
    return result


@pytest.mark.rule("CORPUS-README-001")
def test_the_readme_has_one_line_per_recording() -> None:
    assert readme_problems() == []


@pytest.mark.rule("CORPUS-README-001")
def test_readme_problems_names_unlisted_recordings_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "fmt").mkdir()
    for name in ("a", "b", "c"):
        (tmp_path / "fmt" / f"{name}.jsonl").write_text("{}\n", encoding="utf-8")
    assert readme_problems(tmp_path) == [f"{tmp_path / README_NAME}: missing"]
    (tmp_path / README_NAME).write_text(
        "# corpus\n\n- `fmt/a.jsonl` — shows a\n- `fmt/gone.jsonl` — shows nothing here\n"
        "- `fmt/a.jsonl` — again\n- `fmt/c.jsonl` — \n",
        encoding="utf-8",
    )
    assert readme_problems(tmp_path) == [
        f"{README_NAME}:4: fmt/gone.jsonl names no recording",
        f"{README_NAME}:5: fmt/a.jsonl is listed twice (first at 3)",
        f"{README_NAME}:6: fmt/c.jsonl says nothing about what it shows",
        f"fmt/b.jsonl has no line in {README_NAME}",
    ]


@pytest.mark.rule("CORPUS-GEN-001")
def test_the_generated_corpus_is_complete_and_edges_are_current() -> None:
    assert check() == []


@pytest.mark.rule("CORPUS-GEN-001")
def test_every_format_a_fake_speaks_has_a_def_chosen_by_data() -> None:
    from fake_clis.catalog import all_specs
    from harness.defs.registry import BUILTIN_DEFS
    from harness.defs.transport import select_transport, transport_names

    specs = all_specs()
    reachable = {
        select_transport(d, name=n).stream_format
        for d in BUILTIN_DEFS
        if d.id in specs
        for n in transport_names(d)
    }
    choices = format_choices()
    assert [c.stream_format for c in choices] == sorted(reachable)
    order = [d.id for d in BUILTIN_DEFS]
    for choice in choices:
        assert choice.defn.stream_format == choice.stream_format
        earlier = [
            d.id
            for d in BUILTIN_DEFS[: order.index(choice.agent)]
            if d.id in specs
            and choice.stream_format
            in {select_transport(d, name=n).stream_format for n in transport_names(d)}
        ]
        assert not earlier, f"{choice.stream_format}: {earlier} come before {choice.agent}"
        names = planned_scenarios(choice.stream_format)
        assert {"happy", "api_error", "malformed"} <= set(names)
        for name in names:
            assert (CORPUS_DIR / choice.stream_format / f"{name}.jsonl").is_file()


@pytest.mark.rule("CORPUS-GEN-001")
def test_check_reports_a_missing_recording_and_a_stale_edge(tmp_path: Path) -> None:
    case = EDGE_CASES[0]
    target = tmp_path / case.path
    target.parent.mkdir(parents=True)
    target.write_text(case.text().replace('"t":10,', '"t":11,', 1), encoding="utf-8")
    problems = check(tmp_path, [case.stream_format])
    assert f"{case.path}: differs from its definition in harness/recording/corpus.py" in problems
    happy = f"{case.stream_format}/happy.jsonl"
    assert f"{happy}: missing (run: python -m harness.recording.corpus regen)" in problems


@pytest.mark.rule("CORPUS-EDGE-001")
@pytest.mark.parametrize("case", EDGE_CASES, ids=[c.rule for c in EDGE_CASES])
def test_each_edge_case_shows_its_rule(case: Any) -> None:
    rules = all_rules()
    assert case.rule in rules, f"{case.rule} is not in the rule catalog"
    formats = rules[case.rule].formats
    assert "*" in formats or case.stream_format in formats, (case.rule, formats)
    path = CORPUS_DIR / case.path
    assert path.read_text(encoding="utf-8") == case.text()
    result = replay_recording(load_recording(path))
    events = [e.to_json() for e in result.events]
    missing = _shown_in_order(events, case.shows)
    assert not missing, f"{case.path}: {missing}"
    if case.expect.status == "failed":
        assert result.error is not None
        assert result.error.rule == case.rule, f"{case.path}: failed by {result.error.rule}"
