"""RUN-CLI-001 (``harness run``) and RUN-FAKES-001 (``harness fakes install|list``)."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest

import fake_clis
from harness.cli import main
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.runtime.fakes_install import (
    SHIM_MARKER,
    install_fakes,
    list_fakes,
    shim_name,
    shim_text,
)
from tests.support.env import isolated_project


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_project(tmp_path, monkeypatch)


# --------------------------------------------------------------------------- harness run


@pytest.mark.rule("RUN-CLI-001")
def test_run_prints_json_events_then_a_summary(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "codex",
            "--fake",
            "--transport",
            "exec-json",
            "--scenario",
            "text",
            "--cwd",
            str(isolated),
            "--json",
        ]
    )
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 0
    assert all("type" in line for line in lines[:-1])
    assert "".join(e.get("delta", "") for e in lines) == "Hello from the fake model. PONG."
    summary = lines[-1]["summary"]
    assert summary["status"] == "succeeded" and summary["transport"] == "exec-json"
    assert summary["session_id"]  # codex reports its thread id


@pytest.mark.rule("RUN-CLI-001")
def test_a_failed_run_exits_1_with_the_error(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "qwen", "--fake", "--scenario", "exit_code", "--cwd", str(isolated)])
    out = capsys.readouterr().out
    assert code == 1
    assert "status:   failed (exit 7)" in out and "RUN_EXIT_NONZERO" in out


@pytest.mark.rule("RUN-CLI-001", "RUN-CONTINUE-001")
def test_a_continued_run_says_so_in_the_summary(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "amr", "--fake", "--scenario", "compaction", "--cwd", str(isolated)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert 'label="continuation"' in out
    assert "continue: 1 new process after AMR_CONTINUATION_INCOMPLETE" in out
    assert (isolated / "notes.md").read_text(encoding="utf-8") == "# Notes\n\nWritten once.\n"


@pytest.mark.rule("RUN-CLI-001", "RUN-CANCEL-ORDER-001")
def test_cancel_after_exits_1_and_reports_the_reap_time(
    isolated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "run",
            "claude",
            "--fake",
            "--scenario",
            "hang",
            "--cancel-after",
            "2",
            "--cwd",
            str(isolated),
        ]
    )
    out = capsys.readouterr().out
    assert code == 1
    assert "status:   cancelled" in out and "tree reaped" in out


@pytest.mark.rule("RUN-CLI-001")
def test_prompt_from_a_file_and_specify_style_session_id(
    isolated: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prompt_file = tmp_path / "prompt.txt"
    prompt_file.write_text("from a file", encoding="utf-8")
    record = tmp_path / "record.json"
    monkeypatch.setenv("FAKE_CLI_RECORD", str(record))
    code = main(
        [
            "run",
            "claude",
            "--fake",
            "--scenario",
            "text",
            "--prompt",
            f"@{prompt_file}",
            "--cwd",
            str(isolated),
            "--json",
        ]
    )
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])["summary"]
    assert code == 0
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert seen["prompt"] == "from a file"
    # claude is specify-style: the command mints the id and passes --session-id.
    assert "--session-id" in seen["argv"]
    assert seen["argv"][seen["argv"].index("--session-id") + 1] == summary["session_id"]


@pytest.mark.rule("RUN-CLI-001")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "claude"], "give --prompt"),
        (["run", "claude", "--prompt", "x", "--scenario", "hang"], "--scenario needs --fake"),
        (["run", "claude", "--fake", "--prompt", "@/no/such/file"], "--prompt @/no/such/file"),
        (["run", "no-such-agent", "--prompt", "x"], "unknown agent id"),
    ],
)
def test_bad_usage_exits_2(
    isolated: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- harness fakes


@pytest.mark.rule("RUN-FAKES-001")
def test_shim_text_per_platform() -> None:
    shim = os.path.join(os.path.dirname(os.path.abspath(fake_clis.__file__)), "_shim.py")
    assert shim_text("claude", "/opt/py 3/bin/python", "linux") == (
        f"#!/bin/sh\n# {SHIM_MARKER}\n"
        f'exec "/opt/py 3/bin/python" -S "{shim}" fake_clis.claude_stream claude "$@"\n'
    )
    # sh would expand $, ` and \\ inside double quotes.
    assert shim_text("x", '/a$b`c\\d"e', "darwin").splitlines()[2] == (
        f'exec "/a\\$b\\`c\\\\d\\"e" -S "{shim}" - x "$@"'
    )
    assert shim_text("qwen", r"C:\Py 3%\python.exe", "win32") == (
        f'@rem {SHIM_MARKER}\r\n@"C:\\Py 3%%\\python.exe" -S "{shim}" fake_clis.plain qwen %*\r\n'
    )
    assert shim_name("claude", "win32") == "claude.cmd" and shim_name("claude", "linux") == "claude"


@pytest.mark.rule("RUN-FAKES-001")
def test_install_writes_bins_and_fallbacks_without_stealing(tmp_path: Path) -> None:
    report = install_fakes(tmp_path / "bin", BUILTIN_DEFS, platform="linux")
    by_name = {Path(p).name: agent for p, agent in report.written.items()}
    emulated = {e.agent_id for e in list_fakes()}
    for defn in BUILTIN_DEFS:
        if defn.id in emulated:
            assert by_name[defn.bin] == defn.id, defn.id  # every def's own bin is its own
    assert by_name["openclaude"] == "claude"
    assert by_name["opencode"] == "opencode" and by_name["opencode-cli"] == "opencode"
    assert any("byok-opencode" in s and "'opencode'" in s for s in report.skipped)
    for path in report.written:
        mode = os.stat(path).st_mode
        assert mode & stat.S_IXUSR and mode & stat.S_IXOTH
        text = Path(path).read_text(encoding="utf-8")
        assert text == shim_text(report.written[path], sys.executable, "linux")


@pytest.mark.rule("RUN-FAKES-001")
def test_install_for_windows_writes_cmd_shims_and_exe_launchers(tmp_path: Path) -> None:
    claude = get_agent_def("claude", BUILTIN_DEFS)
    report = install_fakes(tmp_path, [claude], python=r"C:\py\python.exe", platform="win32")
    assert sorted(Path(p).name for p in report.written) == [
        "claude.cmd",
        "claude.exe",
        "openclaude.cmd",
        "openclaude.exe",
    ]
    assert not any(".exe" in s for s in report.skipped)


@pytest.mark.rule("RUN-FAKES-001")
def test_fakes_cli_install_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fakes", "install", str(tmp_path / "bin"), "--agent", "kilo", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(Path(p).name for p in data["written"]) == ["kilo", "kilocode"]
    assert main(["fakes", "list", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    modules = {f["agent"]: f["module"] for f in listing["fakes"]}
    assert modules["claude"] == "fake_clis.claude_stream" and modules["qwen"] == "fake_clis.plain"
    assert {"happy", "hang", "spawn_tree"} <= set(listing["scenarios"])
    assert main(["fakes", "install", str(tmp_path), "--agent", "nope"]) == 2
    assert main(["fakes"]) == 2
