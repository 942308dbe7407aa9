"""USERFILE-RECORD-001, USERFILE-RECORD-002: a recording never truncates a file silently.

``harness run --record F``, ``harness record --out F`` and ``harness live run --record F``
stop before anything runs when F, or the ``F.continued`` sibling a continued run would
write, already exists, unless ``--force``. :class:`RunRecorder` creates a new file
exclusively and replaces an existing one whole (temp file + rename at the exit or on
close), so a harness that dies mid-run leaves the old file as it was.
"""

from __future__ import annotations

import errno
import io
import json
import os
import sys
from pathlib import Path

import pytest

from harness.cli import main
from harness.commands.record import recording_json
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.recording.record import (
    Direction,
    RecordingError,
    RunRecorder,
    continuation_path,
    load_recording,
)
from harness.runner import run_agent
from tests.runner.conftest import FakeWorld

REFUSE = "USERFILE-RECORD-001"
REPLACE = "USERFILE-RECORD-002"
OLD = "the user's earlier recording\n"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeWorld:
    made = FakeWorld(tmp_path / "world")
    for name in [k for k in os.environ if k.upper().endswith("_BIN")]:
        monkeypatch.delenv(name)
    for key, value in made.env().items():
        monkeypatch.setenv(key, value)
    return made


def _run(out: Path, project: Path, *extra: str) -> list[str]:
    return ["run", "qwen", "--fake", "--cwd", str(project), "--record", str(out), *extra]


def _record(out: Path, project: Path, *extra: str) -> list[str]:
    argv = ["record", "--agent", "qwen", "--out", str(out), "--cwd", str(project)]
    return [*argv, "--cli-version", "1", "--prompt", "hi", *extra, "--", "qwen"]


COMMANDS = {"run": _run, "record": _record}


@pytest.mark.rule(REFUSE)
@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("which", ["named", "continued"])
def test_an_existing_file_is_refused_before_anything_runs(
    world: FakeWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, which: str
) -> None:
    project = world.project()
    out = tmp_path / "rec.jsonl"
    taken = out if which == "named" else continuation_path(out)
    taken.write_text(OLD, encoding="utf-8")
    assert main(COMMANDS[command](out, project)) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no event: nothing was spawned
    assert captured.err.count("\n") == 1
    assert f"cannot write the recording {str(taken)!r}: it already exists" in captured.err
    assert "--force" in captured.err
    assert taken.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["world", taken.name])
    assert not any(project.iterdir())  # the fake never ran (it writes hello.html)


@pytest.mark.rule(REFUSE, REPLACE)
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_force_replaces_the_file_whole(
    world: FakeWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = tmp_path / "rec.jsonl"
    out.write_text(OLD, encoding="utf-8")
    out.chmod(0o640)
    assert main(COMMANDS[command](out, world.project(), "--force")) == 0, capsys.readouterr()
    recording = load_recording(out)
    assert recording.header.agent == "qwen" and recording.chunks
    assert OLD not in out.read_text(encoding="utf-8")
    if sys.platform != "win32":
        assert out.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rec.jsonl", "world"]  # no temp


@pytest.mark.rule(REFUSE)
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX symbolic links")
def test_a_symlink_is_refused_and_force_replaces_the_link_not_its_target(
    world: FakeWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "elsewhere.txt"
    target.write_text(OLD, encoding="utf-8")
    out = tmp_path / "rec.jsonl"
    out.symlink_to(target)
    project = world.project()
    assert main(_run(out, project)) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(_run(out, project, "--force")) == 0
    assert not out.is_symlink() and load_recording(out).header.agent == "qwen"
    assert target.read_text(encoding="utf-8") == OLD


@pytest.mark.rule(REFUSE)
def test_live_run_record_refuses_an_existing_file_or_turn_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "live.jsonl"
    for taken in (out, tmp_path / "live.turn2.jsonl"):
        taken.write_text(OLD, encoding="utf-8")
        argv = ["live", "run", "claude", "--scenario", "happy", "--record", str(out)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"cannot write the recording {str(taken)!r}: it already exists" in err
        assert taken.read_text(encoding="utf-8") == OLD
        taken.unlink()


# --------------------------------------------------------------------------- the recorder


def _spawn(recorder: RunRecorder, *, data: bytes = b"first chunk\n") -> None:
    recorder.spawned(get_agent_def("qwen", BUILTIN_DEFS), ["qwen", "-p", "hi"], {})
    recorder.data("stdout", data, 1.0)


def _partials(directory: Path) -> list[Path]:
    return sorted(directory.glob(".*.partial"))


@pytest.mark.rule(REPLACE)
def test_a_replacement_leaves_the_old_file_until_the_exit(tmp_path: Path) -> None:
    """A harness killed mid-run (no exit, no close) leaves the old file as it was."""
    out = tmp_path / "rec.jsonl"
    out.write_text(OLD, encoding="utf-8")
    recorder = RunRecorder(out, cwd=str(tmp_path), replace=True)
    _spawn(recorder)
    assert out.read_text(encoding="utf-8") == OLD
    (partial,) = _partials(tmp_path)
    assert b"first chunk" in partial.read_bytes()  # flushed as it goes
    recorder.exited(0, None, 5.0)
    assert recorder.complete and not _partials(tmp_path)
    assert load_recording(out).stream(Direction.STDOUT) == b"first chunk\n"
    recorder.close()
    assert load_recording(out).exit.code == 0


@pytest.mark.rule(REPLACE)
def test_an_interrupted_replacement_keeps_the_chunks_seen_so_far(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    out.write_text(OLD, encoding="utf-8")
    recorder = RunRecorder(out, cwd=str(tmp_path))
    _spawn(recorder)
    recorder.close()  # what the commands do on SIGINT
    assert not _partials(tmp_path)
    with pytest.raises(RecordingError, match="no exit line"):
        load_recording(out)
    assert b"first chunk" in out.read_bytes() and OLD.encode() not in out.read_bytes()


@pytest.mark.rule(REPLACE)
def test_a_new_file_is_written_in_place_from_the_spawn(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    recorder = RunRecorder(out, cwd=str(tmp_path), replace=False)
    _spawn(recorder)
    assert b"first chunk" in out.read_bytes() and not _partials(tmp_path)
    recorder.exited(0, None, 5.0)
    recorder.close()
    assert recorder.complete and load_recording(out).exit.code == 0


@pytest.mark.rule(REPLACE)
def test_without_replace_an_existing_file_is_left_alone(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    out.write_text(OLD, encoding="utf-8")
    recorder = RunRecorder(out, cwd=str(tmp_path), replace=False)
    _spawn(recorder)
    recorder.exited(0, None, 5.0)
    recorder.close()
    assert out.read_text(encoding="utf-8") == OLD
    assert isinstance(recorder.error, FileExistsError) and not recorder.complete
    assert recorder.lines == 0 and not _partials(tmp_path)


@pytest.mark.rule(REPLACE)
def test_without_replace_a_second_spawn_still_starts_its_own_file_over(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    recorder = RunRecorder(out, cwd=str(tmp_path), replace=False)
    _spawn(recorder, data=b"expired\n")
    recorder.exited(1, None, 5.0)
    _spawn(recorder, data=b"fresh\n")
    recorder.exited(0, None, 6.0)
    recorder.close()
    assert recorder.error is None and recorder.complete
    assert load_recording(out).stream(Direction.STDOUT) == b"fresh\n"


@pytest.mark.rule(REPLACE)
def test_a_continuation_never_replaces_a_sibling_it_may_not(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    sibling = continuation_path(out)
    sibling.write_text(OLD, encoding="utf-8")
    recorder = RunRecorder(out, cwd=str(tmp_path), replace=False)
    _spawn(recorder)
    recorder.exited(None, None, 5.0)
    recorder.continued(get_agent_def("qwen", BUILTIN_DEFS), ["qwen"], {})
    recorder.data("stdout", b"second\n", 1.0)
    recorder.exited(0, None, 2.0)
    recorder.close()
    assert sibling.read_text(encoding="utf-8") == OLD
    assert recorder.continuation_error == f"{sibling} already exists and was not replaced"
    assert load_recording(out).exit.code is None  # the first file is whole


@pytest.mark.rule(REPLACE)
def test_a_write_that_fails_mid_replacement_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "rec.jsonl"
    out.write_text(OLD, encoding="utf-8")
    recorder = RunRecorder(out, cwd=str(tmp_path))
    _spawn(recorder)

    class DiskFull(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

    real = recorder._out
    assert real is not None
    recorder._out = DiskFull()
    recorder.data("stdout", b"lost\n", 2.0)
    real.close()
    recorder.exited(0, None, 5.0)
    assert out.read_text(encoding="utf-8") == OLD
    assert recorder.partial is not None and b"first chunk" in recorder.partial.read_bytes()
    info = recording_json(recorder)
    assert info["partial"] == str(recorder.partial) and "No space left" in str(info["error"])


@pytest.mark.rule(REPLACE)
def test_a_continued_run_replaces_both_files_whole(world: FakeWorld, tmp_path: Path) -> None:
    request = world.request("amr", "compaction")
    out = tmp_path / "amr.jsonl"
    second = continuation_path(out)
    for path in (out, second):
        path.write_text(OLD, encoding="utf-8")
    recorder = RunRecorder(out, cwd=request.cwd, home=str(world.home))
    try:
        result = run_agent(request, tap=recorder)
    finally:
        recorder.close()
    assert result.continuations == 1 and recorder.error is None
    first = load_recording(out)
    assert first.header.expect is not None and first.header.expect.status == "failed"
    assert load_recording(second).exit.code == 0
    assert not _partials(tmp_path)
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["agent"] == "amr"
