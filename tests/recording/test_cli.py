"""``harness replay FILE|DIR`` (``harness/commands/replay.py``).

Rules: REPLAY-CLI-001, REPLAY-CHUNK-001, REPLAY-TIMING-001. Runs ``harness.cli.main``
in-process, plus one real ``python -m harness.cli`` subprocess for the exit code.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.events import event_from_json

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).resolve().parents[2]


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["replay", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _truncated_copy(target: Path) -> Path:
    """dsh_run.jsonl without its result frame: the session fails the run."""
    lines = [json.loads(line) for line in (DATA / "dsh_run.jsonl").read_text().splitlines()]
    last = lines[-2]
    last["data"] = last["data"][: last["data"].index('{"v":1,"type":"result"')]
    target.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    return target


@pytest.mark.rule("REPLAY-CLI-001")
def test_a_directory_replays_every_recording_and_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = _run(capsys, str(DATA))
    assert code == 0, err
    assert (
        f"== {DATA / 'claude_hello.jsonl'}: claude (claude-stream-json), chunking recorded" in out
    )
    assert 'text_delta             "Writing /replay/cwd/index.html"' in out
    assert "verdict REPLAY-FRAMES-001 pass: 1 frame sent, matching the 1 recorded" in out
    assert "verdict REPLAY-STATUS-001 pass: completed" in out
    assert f"PASS {DATA / 'dsh_run.jsonl'} (5 events, exit 0)" in out
    assert out.rstrip().endswith("2 recordings: 2 passed, 0 failed, 0 unreadable")
    assert err == ""


@pytest.mark.rule("REPLAY-CLI-001", "REPLAY-CHUNK-001")
@pytest.mark.parametrize("mode", ["line", "1", "random"])
def test_every_chunking_prints_the_same_events(
    capsys: pytest.CaptureFixture[str], mode: str
) -> None:
    def body(out: str) -> list[str]:
        return [line for line in out.splitlines() if not line.startswith("== ")]

    _, recorded, _ = _run(capsys, str(DATA))
    code, other, _ = _run(capsys, str(DATA), "--chunking", mode, "--seed", "7")
    assert code == 0
    assert f"chunking {mode}" in other
    assert body(other) == body(recorded)


@pytest.mark.rule("REPLAY-CLI-001")
def test_json_output_is_recording_events_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, str(DATA / "dsh_run.jsonl"), "--json")
    assert code == 0
    objects = [json.loads(line) for line in out.splitlines()]
    assert objects[0]["recording"]["agent"] == "deepseek-harness"
    assert objects[0]["recording"]["path"] == str(DATA / "dsh_run.jsonl")
    verdict = objects[-1]["verdict"]
    assert verdict["ok"] is True and verdict["status"] == "completed"
    # The budget guards for linux, darwin and win32 (.cmd shim and .exe) by default.
    assert [f["rule"] for f in verdict["findings"]] == [
        "REPLAY-STATUS-001",
        "REPLAY-FRAMES-001",
        *["REPLAY-BUDGET-001"] * 4,
    ]
    events = [event_from_json(o) for o in objects[1:-1]]
    assert [e.type for e in events] == [
        "status",
        "text_delta",
        "tool_use",
        "tool_result",
        "usage",
    ]
    assert verdict["events"] == len(events)


@pytest.mark.rule("REPLAY-CLI-001")
def test_a_failing_recording_exits_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    shutil.copy(DATA / "claude_hello.jsonl", tmp_path / "a_ok.jsonl")
    bad = _truncated_copy(tmp_path / "b_truncated.jsonl")
    code, out, _ = _run(capsys, str(tmp_path))
    assert code == 1
    assert f"FAIL {bad}" in out
    assert "verdict REPLAY-STATUS-001 fail: failed (DSH_PROFILE_MISSING_RESULT" in out
    assert "2 recordings: 1 passed, 1 failed, 0 unreadable" in out


@pytest.mark.rule("REPLAY-CLI-001")
def test_an_unreadable_recording_is_named_and_the_rest_still_replay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copy(DATA / "dsh_run.jsonl", tmp_path / "good.jsonl")
    sub = tmp_path / "nested"
    sub.mkdir()
    broken = sub / "broken.jsonl"
    lines = (DATA / "dsh_run.jsonl").read_text().splitlines()
    broken.write_text("\n".join([lines[0], '{"t": 1, "dir": "sideways", "data": ""}']) + "\n")
    code, out, err = _run(capsys, str(tmp_path))
    assert code == 2
    assert f"harness: error: [RECORD-READ-001] {broken}:2: 'dir' must be" in err
    assert f"PASS {tmp_path / 'good.jsonl'}" in out
    assert "2 recordings: 1 passed, 0 failed, 1 unreadable" in out


@pytest.mark.rule("REPLAY-CLI-001")
def test_paths_without_recordings_are_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, _, err = _run(capsys, str(tmp_path))
    assert code == 2
    assert "no *.jsonl recording" in err
    code, _, err = _run(capsys, str(tmp_path / "missing.jsonl"))
    assert code == 2
    assert "no such file" in err
    with pytest.raises(SystemExit):
        main(["replay", str(DATA), "--chunking", "2"])


@pytest.mark.rule("REPLAY-CLI-001", "REPLAY-TIMING-001")
def test_timing_replays_in_a_real_process(tmp_path: Path) -> None:
    # A short recording, so real sleeping stays brief; the exit code is the verdict.
    lines: list[dict[str, Any]] = [
        json.loads(line) for line in (DATA / "dsh_run.jsonl").read_text().splitlines()
    ]
    for obj in lines[1:-1]:
        obj["t"] = obj["t"] / 100
    recording = tmp_path / "fast.jsonl"
    recording.write_text("".join(json.dumps(o) + "\n" for o in lines))
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "replay", str(recording), "--timing"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert f"PASS {recording}" in done.stdout
    failing = _truncated_copy(tmp_path / "failing.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "replay", str(failing)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
