"""The restore journal (SIG-JOURNAL-001/002/003): a user's config survives a killed harness.

A run that is "gone" is simulated with the pid and start time of a process that exited; a
reused pid with the start time of the process that had it before.
"""

from __future__ import annotations

import base64
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.defs.types import McpInjection
from harness.mcp import journal
from harness.mcp.apply import AppliedInjection, apply_injection, restore_injection
from harness.mcp.inject import plan_injection
from harness.mcp.journal import JOURNAL_NAME, JournalError, Owner
from tests.mcp._support import TOKENS, all_servers, builtin_with

posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX modes and pids")


def gone_owner() -> Owner:
    """The identity of a harness that was killed: its process no longer exists."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    started = psutil.Process(proc.pid).create_time()
    proc.kill()
    proc.wait()
    return Owner(proc.pid, started)


def injected_by(owner: Owner, project: Path, content: bytes = b'{"injected": "TOKEN"}\n') -> None:
    """What a run of ``owner`` leaves when it dies right after injecting ``.mcp.json``."""
    journal.begin(str(project), [".mcp.json"], owner=owner)
    (project / ".mcp.json").write_bytes(content)


def user_file(project: Path, content: bytes, mode: int) -> Path:
    path = project / ".mcp.json"
    path.write_bytes(content)
    path.chmod(mode)
    return path


@pytest.mark.rule("SIG-JOURNAL-001")
@posix
def test_begin_records_the_original_bytes_and_mode_privately(tmp_path: Path) -> None:
    user_file(tmp_path, b"USER CONFIG\n", 0o640)
    entries, _ = journal.begin(str(tmp_path), [".mcp.json"])
    path = tmp_path / JOURNAL_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # it holds the user's config
    doc = json.loads(path.read_text("utf-8"))
    assert doc["format"] == journal.JOURNAL_FORMAT
    [item] = doc["entries"]
    assert base64.b64decode(item["original"]) == b"USER CONFIG\n"
    assert item["mode"] == 0o640
    assert item["pid"] == os.getpid()
    assert entries[0].original.content == b"USER CONFIG\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == [JOURNAL_NAME, ".mcp.json"]  # no temp
    assert journal.finish(str(tmp_path), entries) == [str(tmp_path / ".mcp.json")]
    assert not path.exists()


@pytest.mark.rule("SIG-JOURNAL-002")
@posix
def test_recover_puts_back_the_file_of_a_run_that_is_gone_with_its_mode(tmp_path: Path) -> None:
    target = user_file(tmp_path, b"USER CONFIG\n", 0o640)
    injected_by(gone_owner(), tmp_path)
    report = journal.recover(str(tmp_path))
    assert report.restored == (str(target),)
    assert target.read_bytes() == b"USER CONFIG\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not (tmp_path / JOURNAL_NAME).exists()
    assert journal.recover(str(tmp_path)).restored == ()  # nothing left to do


@pytest.mark.rule("SIG-JOURNAL-002")
def test_recover_removes_a_file_that_did_not_exist_before(tmp_path: Path) -> None:
    injected_by(gone_owner(), tmp_path)
    report = journal.recover(str(tmp_path))
    assert report.removed == (str(tmp_path / ".mcp.json"),)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.rule("SIG-JOURNAL-003")
def test_a_live_run_is_never_recovered_by_another(tmp_path: Path) -> None:
    user_file(tmp_path, b"USER\n", 0o644)
    live = Owner.current()  # this test process stands for a harness that still runs
    injected_by(live, tmp_path)
    report = journal.recover(str(tmp_path))
    assert report.restored == () and [e.owner for e in report.live] == [live]
    assert (tmp_path / ".mcp.json").read_bytes() == b'{"injected": "TOKEN"}\n'
    assert len(journal.read_entries(str(tmp_path))) == 1


@pytest.mark.rule("SIG-JOURNAL-003")
def test_a_reused_pid_does_not_keep_a_dead_run_alive(tmp_path: Path) -> None:
    user_file(tmp_path, b"USER\n", 0o644)
    me = psutil.Process()
    impostor = Owner(me.pid, me.create_time() - 1000.0)  # same pid, an earlier process
    injected_by(impostor, tmp_path)
    assert journal.recover(str(tmp_path)).restored == (str(tmp_path / ".mcp.json"),)
    assert (tmp_path / ".mcp.json").read_bytes() == b"USER\n"


@pytest.mark.rule("SIG-JOURNAL-003")
@posix
def test_two_overlapping_runs_give_back_the_users_file_whichever_ends_last(
    tmp_path: Path,
) -> None:
    target = user_file(tmp_path, b"USER\n", 0o604)
    first, _ = journal.begin(str(tmp_path), [".mcp.json"])
    target.write_bytes(b"FIRST RUN\n")
    second, _ = journal.begin(str(tmp_path), [".mcp.json"])
    assert second[0].original.content == b"USER\n"  # not the first run's injected content
    target.write_bytes(b"SECOND RUN\n")
    assert journal.finish(str(tmp_path), first) == []  # the second run still holds it
    assert target.read_bytes() == b"SECOND RUN\n"
    assert journal.finish(str(tmp_path), second) == [str(target)]
    assert target.read_bytes() == b"USER\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o604
    assert not (tmp_path / JOURNAL_NAME).exists()


@pytest.mark.rule("SIG-JOURNAL-002")
def test_the_next_run_recovers_before_it_journals_again(tmp_path: Path) -> None:
    user_file(tmp_path, b"USER\n", 0o644)
    injected_by(gone_owner(), tmp_path)
    entries, report = journal.begin(str(tmp_path), [".mcp.json"])
    assert report.restored == (str(tmp_path / ".mcp.json"),)
    assert entries[0].original.content == b"USER\n"  # the user's bytes, not the leftover


@pytest.mark.rule("SIG-JOURNAL-002")
@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (b"{not json", "is not JSON"),
        (b'{"format": "other"}', "is not a harness-mcp-journal/1 journal"),
        (
            b'{"format": "harness-mcp-journal/1", "entries": [{"pid": 1, "started": 0, '
            b'"name": "../etc/passwd", "original": null}]}',
            "entries[0]: names '../etc/passwd'; only .mcp.json is restored",
        ),
        (
            b'{"format": "harness-mcp-journal/1", "entries": [{"pid": 1, "started": 0, '
            b'"name": ".mcp.json", "original": "***"}]}',
            "entries[0]: original is not valid base64",
        ),
        (
            b'{"format": "harness-mcp-journal/1", "entries": [{"pid": -3, "started": 0, '
            b'"name": ".mcp.json", "original": null}]}',
            "entries[0]: pid is not a positive integer",
        ),
    ],
)
def test_a_bad_journal_is_a_typed_error_naming_it_and_changes_nothing(
    tmp_path: Path, document: bytes, problem: str
) -> None:
    (tmp_path / JOURNAL_NAME).write_bytes(document)
    (tmp_path / ".mcp.json").write_bytes(b"KEEP\n")
    with pytest.raises(JournalError) as caught:
        journal.recover(str(tmp_path))
    assert str(tmp_path / JOURNAL_NAME) in str(caught.value)
    assert problem in str(caught.value)
    assert (tmp_path / ".mcp.json").read_bytes() == b"KEEP\n"
    assert (tmp_path / JOURNAL_NAME).read_bytes() == document


@pytest.mark.rule("SIG-JOURNAL-002")
@posix
def test_a_symlink_at_the_target_is_refused_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"OUTSIDE\n")
    project = tmp_path / "p"
    project.mkdir()
    injected_by(gone_owner(), project)
    (project / ".mcp.json").unlink()
    (project / ".mcp.json").symlink_to(outside)
    with pytest.raises(JournalError, match="no longer a regular file"):
        journal.recover(str(project))
    assert outside.read_bytes() == b"OUTSIDE\n"


_GONE: list[Owner] = []


@pytest.mark.rule("SIG-JOURNAL-002")
@posix
@settings(max_examples=40, deadline=None)
@given(
    original=st.one_of(st.none(), st.binary(max_size=300)),
    mode=st.sampled_from([0o600, 0o640, 0o644, 0o664, 0o400]),
    injected=st.binary(min_size=1, max_size=300),
)
def test_recovery_gives_back_exactly_what_was_there(
    tmp_path_factory: pytest.TempPathFactory, original: bytes | None, mode: int, injected: bytes
) -> None:
    if not _GONE:
        _GONE.append(gone_owner())
    project = tmp_path_factory.mktemp("p")
    if original is not None:
        user_file(project, original, mode)
    injected_by(_GONE[0], project, injected)
    journal.recover(str(project))
    target = project / ".mcp.json"
    if original is None:
        assert not target.exists()
    else:
        assert target.read_bytes() == original
        assert stat.S_IMODE(target.stat().st_mode) == mode
    assert sorted(p.name for p in project.iterdir()) == ([] if original is None else [".mcp.json"])


# --------------------------------------------------------------------------- through apply


CLAUDE = builtin_with(McpInjection.CLAUDE_MCP_JSON)


def _managed(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "projects"
    project = root / "p"
    project.mkdir(parents=True)
    return root, project


def _apply(project: Path, root: Path) -> AppliedInjection:
    plan = plan_injection(
        CLAUDE, all_servers(), TOKENS, cwd=str(project), managed_projects_root=str(root)
    )
    return apply_injection(plan)


@pytest.mark.rule("SIG-JOURNAL-001", "MCP-RUN-001")
@posix
def test_restore_after_a_run_keeps_the_users_mode(tmp_path: Path) -> None:
    root, project = _managed(tmp_path)
    target = user_file(project, b"USER\n", 0o644)
    applied = _apply(project, root)
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # the injected one holds tokens
    restore_injection(applied)
    assert target.read_bytes() == b"USER\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]


@pytest.mark.rule("SIG-JOURNAL-001", "SIG-JOURNAL-002")
@posix
def test_apply_journals_before_it_writes_so_a_killed_run_is_recoverable(
    tmp_path: Path,
) -> None:
    root, project = _managed(tmp_path)
    target = user_file(project, b"USER\n", 0o640)
    _apply(project, root)  # the harness "dies" here: no restore
    assert target.read_bytes() != b"USER\n"
    # Make the journal's owner a process that is gone (what kill -9 leaves).
    path = project / JOURNAL_NAME
    doc = json.loads(path.read_text("utf-8"))
    gone = gone_owner()
    for item in doc["entries"]:
        item["pid"], item["started"] = gone.pid, gone.started
    path.write_text(json.dumps(doc), "utf-8")
    assert journal.recover(str(project)).restored == (str(target),)
    assert target.read_bytes() == b"USER\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in project.iterdir()) == [".mcp.json"]


# --------------------------------------------------------------------------- harness mcp restore


@pytest.mark.rule("SIG-JOURNAL-002", "SIG-JOURNAL-003")
def test_mcp_restore_command_reports_what_it_did_and_leaves_live_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    gone_dir, live_dir = tmp_path / "gone", tmp_path / "live"
    gone_dir.mkdir()
    live_dir.mkdir()
    user_file(gone_dir, b"USER\n", 0o644)
    injected_by(gone_owner(), gone_dir)
    injected_by(Owner.current(), live_dir)
    assert main(["mcp", "restore", str(gone_dir)]) == 0
    assert f"restored: {gone_dir / '.mcp.json'}" in capsys.readouterr().out
    assert (gone_dir / ".mcp.json").read_bytes() == b"USER\n"
    assert main(["mcp", "restore", str(live_dir), "--json"]) == 1  # a live run holds it
    report = json.loads(capsys.readouterr().out)
    assert report["live_runs"] == [os.getpid()] and report["removed"] == []
    assert (live_dir / ".mcp.json").exists()
    assert main(["mcp", "restore", str(gone_dir)]) == 0
    assert "nothing to restore" in capsys.readouterr().out


@pytest.mark.rule("SIG-JOURNAL-002")
def test_mcp_restore_of_a_bad_journal_is_one_error_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    (tmp_path / JOURNAL_NAME).write_text("{broken", encoding="utf-8")
    assert main(["mcp", "restore", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("harness: error: ") and str(tmp_path / JOURNAL_NAME) in err
    assert len(err.strip().splitlines()) == 1
