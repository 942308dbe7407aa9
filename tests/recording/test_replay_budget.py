"""REPLAY-BUDGET-001: replay re-runs the prompt-budget guards per operating system.

A recording of an argv-delivery def (the real ``aider`` corpus run, and recordings built
here with a prompt of a chosen size and shape) is judged for linux, darwin and win32:
the POSIX floor, the ``.cmd`` shim and the direct ``.exe``. The verdicts are those the
guards give directly (``harness/guards/budget.py``, ``command_line.py``); ``harness
replay --platform P --bin PATH`` prints them and fails on a refusal.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import BuildOptions, RuntimeContext
from harness.guards.budget import POSIX_ARGV_PROMPT_BUDGET
from harness.recording.corpus import CORPUS_DIR
from harness.recording.record import (
    Chunk,
    Direction,
    ExitInfo,
    Recording,
    RecordingHeader,
    format_recording,
    load_recording,
)
from harness.recording.replay import replay_recording
from harness.recording.replay_budget import (
    PLATFORMS,
    BudgetVerdict,
    budget_verdicts,
    recorded_prompt,
)

AIDER = get_agent_def("aider", BUILTIN_DEFS)
CLAUDE = get_agent_def("claude", BUILTIN_DEFS)


def _aider_recording(prompt: str) -> Recording:
    args = AIDER.build_args(prompt, [], [], *_defaults())
    header = RecordingHeader(
        agent="aider",
        stream_format=AIDER.stream_format,
        event_parser=AIDER.event_parser,
        transport="default",
        argv=("{tmp}/bin/aider", *args),
        prompt_delivery="argv",
        platform="linux",
        cli_version=None,
    )
    return Recording(header, (Chunk(5.0, Direction.STDOUT, b"ok\n"),), ExitInfo(0, None, 9.0))


def _defaults() -> tuple[BuildOptions, RuntimeContext]:
    return BuildOptions(), RuntimeContext()


def _by_launch(verdicts: list[BudgetVerdict]) -> dict[tuple[str, str], BudgetVerdict]:
    return {(v.platform, v.launch): v for v in verdicts}


@pytest.mark.rule("REPLAY-BUDGET-001")
def test_the_prompt_is_found_where_build_args_puts_it() -> None:
    args = AIDER.build_args("make it so", [], [], *_defaults())
    assert recorded_prompt(AIDER, args) == "make it so"
    assert recorded_prompt(AIDER, ["--message"]) is None  # too short to hold it
    assert recorded_prompt(CLAUDE, ["-p", "x"]) is None  # not an argv-delivery def


@pytest.mark.rule("REPLAY-BUDGET-001", "BUDGET-ARGV-001")
def test_one_prompt_is_safe_on_posix_and_refused_on_windows() -> None:
    # Over aider's own 30 000 (the win32 limit), under the POSIX floor of 100 000.
    prompt = "x" * 40_000
    assert AIDER.max_prompt_arg_bytes is not None
    assert AIDER.max_prompt_arg_bytes < len(prompt) < POSIX_ARGV_PROMPT_BUDGET
    result = replay_recording(_aider_recording(prompt), platforms=PLATFORMS)
    verdicts = _by_launch(result.budget)
    assert set(verdicts) == {
        ("linux", "posix"),
        ("darwin", "posix"),
        ("win32", "cmd-shim"),
        ("win32", "direct-exe"),
    }
    assert verdicts["linux", "posix"].verdict == "pass"
    assert "40000 bytes" in verdicts["linux", "posix"].message
    for launch in ("cmd-shim", "direct-exe"):
        win = verdicts["win32", launch]
        assert win.verdict == "fail" and win.rule == "BUDGET-ARGV-001"
    assert not result.ok
    budget = [f for f in result.findings if f.rule == "REPLAY-BUDGET-001"]
    assert [f.verdict for f in budget] == ["pass", "pass", "fail", "fail"]


@pytest.mark.rule("REPLAY-BUDGET-001", "BUDGET-CMDSHIM-001", "BUDGET-DIRECTEXE-001")
def test_a_quote_heavy_prompt_fails_only_the_launch_that_doubles_it() -> None:
    # Under the argv byte limit, but cmd.exe's quote doubling takes it past 32 511 chars.
    prompt = '"' * 20_000
    verdicts = _by_launch(budget_verdicts(AIDER, _aider_recording(prompt).header.argv))
    shim = verdicts["win32", "cmd-shim"]
    assert shim.verdict == "fail" and shim.rule == "BUDGET-CMDSHIM-001"
    exe = verdicts["win32", "direct-exe"]
    assert exe.verdict == "fail" and exe.rule == "BUDGET-DIRECTEXE-001"
    assert verdicts["darwin", "posix"].verdict == "pass"


@pytest.mark.rule("REPLAY-BUDGET-001", "WIN-CMDLINE-SHIM-001")
def test_a_prompt_cmd_exe_would_mangle_is_refused_for_the_shim_only() -> None:
    prompt = 'copy "C:\\tmp\\" --yolo now'
    verdicts = _by_launch(budget_verdicts(AIDER, _aider_recording(prompt).header.argv))
    shim = verdicts["win32", "cmd-shim"]
    assert shim.verdict == "fail" and shim.rule == "WIN-CMDLINE-SHIM-001"
    assert verdicts["win32", "direct-exe"].verdict == "pass"


@pytest.mark.rule("REPLAY-BUDGET-001", "BUDGET-NOOP-001")
def test_a_stdin_def_is_not_budgeted_but_its_command_line_is_checked() -> None:
    recording = load_recording(CORPUS_DIR / "claude-stream-json" / "happy.jsonl")
    result = replay_recording(recording, platforms=PLATFORMS)
    assert [b.verdict for b in result.budget] == ["pass"] * 4
    assert all("not budgeted (prompt by stdin)" in b.message for b in result.budget)
    assert "every argument survives" in _by_launch(result.budget)["win32", "cmd-shim"].message
    # Without platforms nothing is judged (library callers and the corpus).
    assert replay_recording(recording).budget == []


@pytest.mark.rule("REPLAY-BUDGET-001")
def test_the_real_aider_recording_is_safe_on_all_three() -> None:
    recording = load_recording(CORPUS_DIR / "real" / "aider" / "text.jsonl")
    result = replay_recording(recording, platforms=PLATFORMS)
    assert [b.verdict for b in result.budget] == ["pass"] * 4, result.budget
    assert all("bytes within" in b.message for b in result.budget)


@pytest.mark.rule("REPLAY-BUDGET-001")
def test_bin_names_the_windows_launch() -> None:
    argv = _aider_recording("hello").header.argv
    (exe,) = budget_verdicts(AIDER, argv, platforms=("win32",), bin_path="D:\\tools\\aider.exe")
    assert (exe.launch, exe.program) == ("direct-exe", "D:\\tools\\aider.exe")
    (shim,) = budget_verdicts(AIDER, argv, platforms=("win32",), bin_path="D:\\npm\\aider.cmd")
    assert shim.launch == "cmd-shim"
    (posix,) = budget_verdicts(AIDER, argv, platforms=("linux",), bin_path="/opt/aider")
    assert posix.program == "/opt/aider"


@pytest.mark.rule("REPLAY-BUDGET-001", "REPLAY-CLI-001")
def test_harness_replay_prints_each_platform_and_fails_on_a_refusal(tmp_path: Path) -> None:
    path = tmp_path / "aider.jsonl"
    path.write_text(format_recording(_aider_recording("y" * 40_000)), encoding="utf-8")

    def replay(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "harness", "replay", str(path), *extra],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    linux = replay("--platform", "linux")
    assert linux.returncode == 0, linux.stdout + linux.stderr
    assert "verdict REPLAY-BUDGET-001 pass: linux posix" in linux.stdout
    windows = replay("--platform", "win32", "--bin", "C:\\npm\\aider.cmd", "--json")
    assert windows.returncode == 1
    verdict = json.loads(windows.stdout.splitlines()[-1])["verdict"]
    (budget,) = verdict["budget"]
    assert (budget["platform"], budget["launch"], budget["rule"]) == (
        "win32",
        "cmd-shim",
        "BUDGET-ARGV-001",
    )
    every = replay()
    lines = [line for line in every.stdout.splitlines() if "REPLAY-BUDGET-001" in line]
    assert [line.split(":")[0].split()[-1] for line in lines] == ["pass", "pass", "fail", "fail"]


@pytest.mark.rule("REPLAY-BUDGET-001")
def test_a_recording_of_an_unknown_agent_is_skipped() -> None:
    recording = _aider_recording("hi")
    other = replace(recording, header=replace(recording.header, agent="no-such-agent"))
    result = replay_recording(other, platforms=("linux",))
    (finding,) = [f for f in result.findings if f.rule == "REPLAY-BUDGET-001"]
    assert finding.verdict == "skipped" and "no-such-agent" in finding.message
