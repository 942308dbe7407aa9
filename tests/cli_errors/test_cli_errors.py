"""Bad input to the ``harness`` command: one ``harness: error:`` line, exit 2, no traceback."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import harness.commands
from harness.cli import main

ROOT = Path(__file__).resolve().parents[2]
DSH_RUN = ROOT / "tests" / "recording" / "data" / "dsh_run.jsonl"
DEEP = "[" * 100_000


def one_error_line(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    """Run ``harness ARGV``; assert exit 2 and a single error line; return that line."""
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("harness: error: "), err
    return lines[0]


@pytest.fixture
def no_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_AGENT_PROFILES", raising=False)
    monkeypatch.delenv("OD_AGENT_PROFILES_CONFIG", raising=False)


# -- structural ---------------------------------------------------------------------------------


@pytest.mark.rule("CLIERR-ONE-LINE-001")
def test_a_genuine_bug_is_not_turned_into_a_usage_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*_args: object) -> int:
        raise RuntimeError("a bug")

    monkeypatch.setattr(harness.commands, "run_command", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["agents"])


@pytest.mark.posix
@pytest.mark.rule("CLIERR-ONE-LINE-001", "CLIERR-UTF8-001")
def test_the_command_prints_one_line_for_undecodable_argv_bytes(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "argv", "claude", "--prompt", b"hi\xff"],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stdout == b""
    assert proc.stderr == (
        b"harness: error: [CLIERR-UTF8-001] argument 4 (the value of --prompt): 'hi\\xff' is "
        b"not UTF-8 text (character 3); the harness takes UTF-8 text arguments\n"
    )


# -- prompt files -------------------------------------------------------------------------------


@pytest.mark.rule("CLIERR-UTF8-001")
@pytest.mark.parametrize(
    ("argv", "label"),
    [
        (["argv", "claude", "--prompt-file", "{f}"], "--prompt-file {f}"),
        (["run", "claude", "--fake", "--prompt", "@{f}"], "--prompt @{f}"),
        (
            ["record", "--agent", "claude", "--out", "{o}", "--prompt-file", "{f}", "--", "true"],
            "--prompt-file {f}",
        ),
    ],
)
def test_a_prompt_file_that_is_not_utf8_names_file_line_and_column(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    no_profiles: None,
    argv: list[str],
    label: str,
) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"line one\nna\xefve\n")
    out = tmp_path / "rec.jsonl"
    words = [w.format(f=prompt, o=out) for w in argv]
    line = one_error_line(capsys, words)
    assert line == (
        f"harness: error: [CLIERR-UTF8-001] {label.format(f=prompt)}:2:3: is not UTF-8 text "
        "(byte 0xef: invalid continuation byte)"
    )
    assert not out.exists()


# -- JSON nested too deep -----------------------------------------------------------------------


@pytest.mark.rule("CLIERR-JSON-DEPTH-001")
@pytest.mark.parametrize(
    ("argv", "rule"),
    [
        (["--profiles", "{f}", "agents"], "PROFILE-VALID-001"),
        (["argv", "claude", "--mcp-config", "{f}"], "MCP-CONFIG-001"),
        (["mcp", "plan", "claude", "--mcp-config", "{f}"], "MCP-CONFIG-001"),
        (["run", "claude", "--fake", "--tool-bundle", "{f}"], "MCP-CONFIG-001"),
    ],
)
def test_deep_json_is_one_line_naming_the_file_line_and_column(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    no_profiles: None,
    argv: list[str],
    rule: str,
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    line = one_error_line(capsys, [w.format(f=deep) for w in argv])
    assert line == (
        f"harness: error: [{rule}] {deep}: JSON nested deeper than 128 levels (line 1 column 129)"
    )


@pytest.mark.rule("CLIERR-JSON-DEPTH-001", "CLIERR-PROFILES-001")
def test_deep_json_in_the_profiles_env_var_fails_with_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    monkeypatch.setenv("HARNESS_AGENT_PROFILES", str(deep))
    line = one_error_line(capsys, ["argv", "claude"])
    assert line.endswith(f"{deep}: JSON nested deeper than 128 levels (line 1 column 129)")


# -- a broken profiles file fails only the commands that load the defs --------------------------


@pytest.mark.rule("CLIERR-PROFILES-001")
@pytest.mark.parametrize(
    "case",
    [
        (None, "{f}: cannot read the file: No such file or directory"),
        ("{bad", "{f}: invalid JSON: "),
        ('[{"id": "mine", "bogus": 1}]', "{f}: agents[0].bogus: unknown field"),
    ],
)
@pytest.mark.parametrize(
    "argv",
    [["agents"], ["argv", "claude"], ["fakes", "install", "{d}"], ["detect", "--agent", "x"]],
)
def test_a_broken_profiles_file_fails_the_commands_that_use_it(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    case: tuple[str | None, str],
    argv: list[str],
) -> None:
    content, where = case
    profiles = tmp_path / "profiles.json"
    if content is not None:
        profiles.write_text(content)
    monkeypatch.setenv("HARNESS_AGENT_PROFILES", str(profiles))
    line = one_error_line(capsys, [w.format(d=tmp_path / "bin") for w in argv])
    assert line.startswith(f"harness: error: [PROFILE-VALID-001] {where.format(f=profiles)}")
    assert not (tmp_path / "bin").exists()


@pytest.mark.rule("CLIERR-PROFILES-001")
def test_every_bad_entry_is_counted_in_the_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profiles = tmp_path / "profiles.json"
    profiles.write_text(json.dumps([{"id": "a", "x": 1}, {"id": "ok"}, {"id": "claude"}, 3]))
    line = one_error_line(capsys, ["--profiles", str(profiles), "agents"])
    assert f"{profiles}: agents[0].x: unknown field" in line
    assert line.endswith("; and 2 more problem(s) in this file")


@pytest.mark.rule("CLIERR-PROFILES-001")
@pytest.mark.parametrize(
    "argv",
    [
        ["fakes", "list", "--json"],
        ["parse", "{p}", "--format", "plain"],
        ["replay", str(DSH_RUN)],
    ],
)
def test_a_broken_profiles_file_leaves_other_commands_alone(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
) -> None:
    monkeypatch.setenv("HARNESS_AGENT_PROFILES", str(tmp_path / "missing.json"))
    plain = tmp_path / "out.txt"
    plain.write_text("hello\n")
    code = main([w.format(p=plain) for w in argv])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert captured.err == "" and captured.out


# -- conform --out ------------------------------------------------------------------------------


@pytest.mark.rule("CLIERR-OUTDIR-001")
@pytest.mark.parametrize(("target", "problem"), [("", "is not a directory"), ("/sub", "cannot")])
def test_conform_out_naming_a_file_is_refused_before_anything_runs(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    no_profiles: None,
    target: str,
    problem: str,
) -> None:
    existing = tmp_path / "report.txt"
    existing.write_text("keep me")
    out = f"{existing}{target}"
    line = one_error_line(capsys, ["conform", "--agent", "claude", "--out", out])
    assert line.startswith(f"harness: error: [CLIERR-OUTDIR-001] --out {out}: {problem}")
    assert existing.read_text() == "keep me"


# -- replay --timing ----------------------------------------------------------------------------


def _with_time(tmp_path: Path, t: str) -> Path:
    """dsh_run.jsonl with the time of its first chunk (line 3) replaced by ``t``."""
    lines = DSH_RUN.read_text().splitlines()
    edited, count = re.subn(r'^\{"t": ?[0-9.]+,', f'{{"t": {t},', lines[2])
    assert count == 1, lines[2]
    lines[2] = edited
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.rule("CLIERR-TIMING-001")
@pytest.mark.parametrize(
    ("t", "problem"),
    [
        # no time at all: the recording is refused when read, with or without --timing
        ("1e999", "'t' must be a finite number >= 0, got inf"),
        (
            "1e300",
            "'t' is 1e+300 ms, after the recorded exit at 700.0 ms; --timing cannot wait for it",
        ),
    ],
)
def test_replay_timing_refuses_a_time_it_cannot_wait_for(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, t: str, problem: str
) -> None:
    path = _with_time(tmp_path, t)
    line = one_error_line(capsys, ["replay", "--timing", str(path)])
    assert line == f"harness: error: [RECORD-READ-001] {path}:3: {problem}"


# -- scenario names -----------------------------------------------------------------------------


@pytest.mark.rule("CLIERR-SCENARIO-001")
@pytest.mark.parametrize(
    "argv",
    [
        ["run", "claude", "--fake", "--scenario", "no-such-scenario"],
        ["live", "run", "claude", "--scenario", "no-such-scenario", "--cache", "{c}"],
        ["live", "diff", "claude", "--scenario", "no-such-scenario", "--cache", "{c}"],
    ],
)
def test_an_unknown_scenario_lists_the_known_names(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, no_profiles: None, argv: list[str]
) -> None:
    line = one_error_line(capsys, [w.format(c=tmp_path) for w in argv])
    assert line.startswith(
        "harness: error: [CLIERR-SCENARIO-001] --scenario no-such-scenario: unknown scenario; "
        "known: "
    )
    known = line.rpartition("known: ")[2].split(", ")
    assert {"happy", "api_error", "hang"} <= set(known)
    assert known == sorted(set(known))


@pytest.mark.rule("CLIERR-SCENARIO-001")
def test_a_scenario_file_that_cannot_be_read_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, no_profiles: None
) -> None:
    missing = tmp_path / "mine.json"
    line = one_error_line(capsys, ["run", "claude", "--fake", "--scenario", str(missing)])
    assert line.startswith(f"harness: error: [CLIERR-SCENARIO-001] --scenario: {missing}: ")


# -- parse: input of another format -------------------------------------------------------------


@pytest.mark.rule("CLIERR-PARSE-001")
@pytest.mark.parametrize("chunk", [[], ["--chunk", "1"], ["--chunk", "4"]])
def test_parse_of_input_with_no_frame_prints_the_events_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, chunk: list[str]
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("random words\nmore words\n")
    code = main(["parse", str(text), "--format", "claude-stream-json", "--json", *chunk])
    captured = capsys.readouterr()
    assert code == 1
    assert [json.loads(line)["type"] for line in captured.out.splitlines()] == ["raw", "raw"]
    assert captured.err == (
        f"harness: parse: {text}: no claude-stream-json frame in the input (2 raw line(s)); "
        "is it the right --format?\n"
    )


@pytest.mark.rule("CLIERR-PARSE-001")
def test_parse_with_one_frame_or_of_plain_text_exits_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    mixed = tmp_path / "mixed.txt"
    mixed.write_text('{"type":"system","subtype":"init","session_id":"s"}\nnoise\n')
    assert main(["parse", str(mixed), "--format", "claude-stream-json"]) == 0
    assert main(["parse", str(mixed), "--format", "plain"]) == 0
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert main(["parse", str(empty), "--format", "claude-stream-json"]) == 0
    assert capsys.readouterr().err == ""


# -- live run of a CLI that is not installed ----------------------------------------------------


@pytest.mark.rule("CLIERR-LIVE-INSTALL-001")
def test_live_run_of_a_cli_not_installed_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = one_error_line(
        capsys, ["live", "run", "claude", "--scenario", "happy", "--cache", str(tmp_path)]
    )
    assert line.startswith("harness: error: [CLIERR-LIVE-INSTALL-001] ")
    assert f"is not installed under {tmp_path}" in line
    assert line.endswith("(run `harness live install claude`)")
