"""EventStreamExtension and the normalization behind event snapshots (PLUGIN-SNAP-*).

The events here are written by hand from the documented event shapes
(``harness/events.py``, design §Normalized events), never copied from our own output.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from syrupy.constants import TEXT_ENCODING
from syrupy.exceptions import TaintedSnapshotError
from syrupy.filters import props

from conformance.snapshots import (
    HEADER_LINE,
    EventStreamExtension,
    SnapshotFormatError,
    events_of,
    normalize_events,
    parse_event_lines,
    serialize_events,
)
from harness.events import Status, TextDelta, ToolUse, Usage

SESSION = "0B7E6F3A-2C1D-4E5F-8A9B-0C1D2E3F4A5B"
OTHER = "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"


@pytest.mark.rule("PLUGIN-SNAP-002")
def test_clock_fields_become_ms_placeholders_and_nothing_else_changes() -> None:
    events = [
        Status(label="streaming", ttft_ms=812.5, elapsed_ms=1034.0, model="sonnet"),
        ToolUse(id="call_write_1", name="Write", input={"elapsed_ms": 3}, started_at_ms=1.7e12),
        Usage(usage={"input_tokens": 120}, cost_usd=0.0012, duration_ms=4021),
    ]
    assert normalize_events(events) == [
        {
            "type": "status",
            "label": "streaming",
            "model": "sonnet",
            "ttft_ms": "<ms>",
            "elapsed_ms": "<ms>",
        },
        {
            "type": "tool_use",
            "id": "call_write_1",
            "name": "Write",
            # Only the event's own clock fields: a tool's input is the model's data.
            "input": {"elapsed_ms": 3},
            "started_at_ms": "<ms>",
        },
        {
            "type": "usage",
            "usage": {"input_tokens": 120},
            "cost_usd": 0.0012,
            "duration_ms": "<ms>",
        },
    ]


@pytest.mark.rule("PLUGIN-SNAP-002")
def test_uuids_are_numbered_by_first_appearance_across_the_stream() -> None:
    events = [
        Status(label="initializing", session_id=SESSION),
        TextDelta(delta=f"resume with {SESSION.lower()} or {OTHER}"),
        Status(label="done", session_id="T-" + OTHER),
        # Not a UUID: part of a longer run of hex digits, and a scenario's own tool id.
        TextDelta(delta="a" + OTHER + "0"),
        ToolUse(id="toolu_01", name="Bash", input={"command": "ls"}),
    ]
    assert normalize_events(events) == [
        {"type": "status", "label": "initializing", "session_id": "<uuid-1>"},
        {"type": "text_delta", "delta": "resume with <uuid-1> or <uuid-2>"},
        {"type": "status", "label": "done", "session_id": "T-<uuid-2>"},
        {"type": "text_delta", "delta": "a" + OTHER + "0"},
        {"type": "tool_use", "id": "toolu_01", "name": "Bash", "input": {"command": "ls"}},
    ]


@pytest.mark.rule("PLUGIN-SNAP-002")
def test_timestamps_become_placeholders() -> None:
    events = [TextDelta(delta="at 2026-11-02T10:04:05.123Z and 2026-11-02 10:04:05+01:00, 2026")]
    assert normalize_events(events)[0]["delta"] == "at <timestamp> and <timestamp>, 2026"


@pytest.mark.rule("PLUGIN-SNAP-002")
def test_bound_directories_become_placeholders_at_path_boundaries(tmp_path: Path) -> None:
    real = tmp_path / "real"
    (real / "cwd").mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    cwd = link / "cwd"
    paths = {"cwd": str(cwd), "tmp": str(tmp_path)}
    events = [
        ToolUse(id="t1", name="Write", input={"file_path": f"{cwd}/hello.html"}),
        # The resolved spelling of the same directory (macOS /private/var, symlinks).
        TextDelta(delta=f"wrote {real / 'cwd'}{os.sep}hello.html"),
        # Not the directory: it only starts like it.
        TextDelta(delta=f"{cwd}2/x and {tmp_path}/other"),
        TextDelta(delta=str(cwd)),
    ]
    out = normalize_events(events, paths=paths)
    assert out[0]["input"] == {"file_path": "{cwd}/hello.html"}
    assert out[1]["delta"] == f"wrote {{cwd}}{os.sep}hello.html"
    assert out[2]["delta"] == "{tmp}/link/cwd2/x and {tmp}/other"
    assert out[3]["delta"] == "{cwd}"


@pytest.mark.rule("PLUGIN-SNAP-001")
def test_the_file_is_a_header_then_one_event_per_line() -> None:
    text = serialize_events([Status(label="initializing"), TextDelta(delta="two\nlines")])
    assert text.split("\n") == [
        HEADER_LINE,
        '{"type": "status", "label": "initializing"}',
        '{"type": "text_delta", "delta": "two\\nlines"}',
        "",
    ]
    assert json.loads(HEADER_LINE) == {"format": "adapter-harness-events", "version": 1}


@pytest.mark.rule("PLUGIN-SNAP-001")
def test_results_and_json_mappings_are_accepted_and_other_data_is_refused() -> None:
    class Result:
        events = (TextDelta(delta="hi"),)

    assert events_of(Result()) == [{"type": "text_delta", "delta": "hi"}]
    assert events_of([{"type": "raw", "line": "x"}]) == [{"type": "raw", "line": "x"}]
    with pytest.raises(TypeError, match="not dict"):
        events_of({"type": "raw"})
    with pytest.raises(TypeError, match=r"events\[1\]"):
        events_of([TextDelta(delta="a"), {"no": "type"}])


@pytest.mark.rule("PLUGIN-SNAP-001")
@settings(max_examples=200)
@given(st.lists(st.text(), min_size=0, max_size=5))
@example(["\r\x85\u2028", "\r\n", "\x00"])
def test_write_then_read_gives_back_the_same_text_and_events(deltas: list[str]) -> None:
    """The round trip goes through text-mode files exactly as syrupy writes and reads them."""
    events = [TextDelta(delta=d) for d in deltas]
    text = serialize_events(events)
    # One event per line for every tool: no raw line break of any kind inside a line.
    assert len(text.splitlines()) == len(deltas) + 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.jsonl"
        with open(path, "w", encoding=TEXT_ENCODING) as fh:
            fh.write(text)
        with open(path, encoding=TEXT_ENCODING) as fh:
            back = fh.read()
    assert back == text
    assert parse_event_lines(back) == [{"type": "text_delta", "delta": d} for d in deltas]


@pytest.mark.rule("PLUGIN-SNAP-001")
def test_reading_back_names_the_bad_line() -> None:
    with pytest.raises(SnapshotFormatError, match="line 1"):
        parse_event_lines('{"format": "adapter-harness-events", "version": 0}\n')
    with pytest.raises(SnapshotFormatError, match="line 3: not JSON"):
        parse_event_lines(HEADER_LINE + '\n{"type": "raw", "line": ""}\n{oops\n')
    with pytest.raises(SnapshotFormatError, match="line 2: not an event"):
        parse_event_lines(HEADER_LINE + "\n[1]\n")


@pytest.mark.rule("PLUGIN-SNAP-003")
def test_a_foreign_header_taints_the_snapshot(tmp_path: Path) -> None:
    ext = EventStreamExtension()
    good = tmp_path / "good.jsonl"
    good.write_text(serialize_events([TextDelta(delta="hi")]), encoding="utf-8")
    data = ext.read_snapshot_data_from_location(
        snapshot_location=str(good), snapshot_name="good", session_id="s"
    )
    assert data == good.read_text(encoding="utf-8")
    old = tmp_path / "old.jsonl"
    old.write_text('{"format": "adapter-harness-events", "version": 0}\n', encoding="utf-8")
    with pytest.raises(TaintedSnapshotError) as info:
        ext.read_snapshot_data_from_location(
            snapshot_location=str(old), snapshot_name="old", session_id="s"
        )
    assert info.value.snapshot_data == old.read_text(encoding="utf-8")


@pytest.mark.rule("PLUGIN-SNAP-001", "PLUGIN-SNAP-002")
def test_bound_extensions_stay_the_same_extension(tmp_path: Path) -> None:
    bound = EventStreamExtension.with_paths(cwd=tmp_path / "cwd", home=None)
    assert issubclass(bound, EventStreamExtension)
    assert (bound.__module__, bound.__qualname__) == (
        "conformance.snapshots",
        "EventStreamExtension",
    )
    assert bound.file_extension == "jsonl"
    assert dict(bound.placeholder_paths) == {"cwd": str(tmp_path / "cwd")}
    assert dict(EventStreamExtension.placeholder_paths) == {}
    text = bound().serialize([TextDelta(delta=f"{tmp_path / 'cwd'}/a")])
    assert isinstance(text, str)
    assert parse_event_lines(text) == [{"type": "text_delta", "delta": "{cwd}/a"}]


@pytest.mark.rule("PLUGIN-SNAP-001")
def test_syrupy_filters_apply_after_normalization() -> None:
    events = [Usage(usage={"input_tokens": 1}, cost_usd=0.5, duration_ms=3)]
    text = serialize_events(events, exclude=props("cost_usd"))
    assert parse_event_lines(text) == [
        {"type": "usage", "usage": {"input_tokens": 1}, "duration_ms": "<ms>"}
    ]
