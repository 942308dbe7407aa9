"""The ``harness`` command: agents, detect, argv, parse (CLI-*)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from harness import __version__
from harness.cli import main
from harness.defs.registry import BUILTIN_DEFS


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.rule("CLI-VERSION-001")
def test_console_script_prints_its_version() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"adapter-harness {__version__}"


@pytest.mark.rule("CLI-AGENTS-001", "FIDELITY-RETIRED-001")
def test_agents_json_lists_every_builtin_with_its_contract(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run_cli(capsys, "agents", "--json")
    assert code == 0
    rows = json.loads(out)
    assert [r["id"] for r in rows] == [d.id for d in BUILTIN_DEFS]
    assert len(rows) == 29
    claude = next(r for r in rows if r["id"] == "claude")
    assert [r["id"] for r in rows if r["retired"]] == ["gemini"]  # FIDELITY-RETIRED-001
    assert claude["retired"] is None
    assert claude["prompt_delivery"] == "stdin"
    assert claude["prompt_input_format"] == "stream-json"
    assert claude["mcp_injection"] == "claude-mcp-json"
    assert claude["resume_style"] == "specify"
    assert {
        "id",
        "bin",
        "stream_format",
        "prompt_delivery",
        "resume_style",
        "mcp_injection",
    } <= set(claude)


@pytest.mark.rule("CLI-AGENTS-001", "DEFCHECK-LOAD-001")
@pytest.mark.parametrize("as_json", [False, True], ids=["table", "json"])
def test_agents_prints_format_and_parser_a_def_file_loads_back(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, as_json: bool
) -> None:
    """Every def's printed stream_format and event_parser, copied into a def file, load."""
    from conformance.checks.loader import load_def_file

    code, out, _ = run_cli(capsys, "agents", *(["--json"] if as_json else []))
    assert code == 0
    if as_json:
        shown = [(r["id"], r["stream_format"], r["event_parser"]) for r in json.loads(out)]
    else:
        lines = out.splitlines()
        head = lines[0].split()
        at = {c: head.index(c) for c in ("ID", "STREAM_FORMAT", "EVENT_PARSER")}
        cells = [line.split() for line in lines[1:-1]]
        shown = [
            (
                c[at["ID"]],
                c[at["STREAM_FORMAT"]],
                None if c[at["EVENT_PARSER"]] == "-" else c[at["EVENT_PARSER"]],
            )
            for c in cells
        ]
    assert ("codex", "json-event-stream", "codex") in shown
    by_id = {d.id: d for d in BUILTIN_DEFS}
    body = [
        "import dataclasses",
        "from harness.defs.registry import BUILTIN_REGISTRY",
        "AGENT_DEFS = [",
    ]
    for agent, fmt, parser in shown:
        assert (fmt, parser) == (by_id[agent].stream_format, by_id[agent].event_parser)
        body.append(
            f"    dataclasses.replace(BUILTIN_REGISTRY[{agent!r}], id={agent + '-copy'!r}, "
            f"stream_format={fmt!r}, event_parser={parser!r}),"
        )
    path = tmp_path / "copies.py"
    path.write_text("\n".join([*body, "]", ""]), encoding="utf-8")
    assert len(load_def_file(path)) == len(BUILTIN_DEFS)


@pytest.mark.rule("CLI-AGENTS-001", "FIDELITY-RETIRED-001")
def test_agents_table_has_a_row_per_def(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "agents")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0].startswith("ID")
    assert lines[-1].startswith("29 agents (28 current; retired, used only when asked for by id: ")
    assert "gemini (its local generation runtime was retired upstream" in lines[-1]
    assert len(lines) == 31


@pytest.mark.rule("CLI-AGENTS-001", "CLIERR-PROFILES-001")
def test_local_profiles_extend_the_list_and_a_bad_one_fails_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    profiles = tmp_path / "agents.json"
    profiles.write_text(json.dumps({"agents": [{"id": "zcode", "bin": "zcode"}]}))
    code, out, err = run_cli(capsys, "--profiles", str(profiles), "agents", "--json")
    assert code == 0 and err == ""
    ids = [r["id"] for r in json.loads(out)]
    assert ids[-1] == "zcode" and len(ids) == 30
    profiles.write_text(
        json.dumps({"agents": [{"id": "zcode", "bin": "zcode"}, {"id": "claude", "bin": "dup"}]})
    )
    code, out, err = run_cli(capsys, "--profiles", str(profiles), "agents", "--json")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("harness: error: [PROFILE-VALID-001] ")
    assert f"{profiles}: agents[1].id" in err and "built-in" in err


def _fake_cli(bindir: Path, name: str, body: str) -> None:
    path = bindir / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


@pytest.mark.posix
@pytest.mark.rule("CLI-DETECT-001")
def test_detect_streams_one_json_object_per_agent(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    _fake_cli(bindir, "qwen", 'echo "0.24.4"')
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}/usr/bin:/bin", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "detect",
            "--json",
            "--agent",
            "qwen",
            "--agent",
            "aider",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    results = {r["id"]: r for r in map(json.loads, proc.stdout.splitlines())}
    assert set(results) == {"qwen", "aider"}
    assert results["qwen"]["available"] and results["qwen"]["version"] == "0.24.4"
    assert results["qwen"]["path"] == str(bindir / "qwen")
    assert not results["aider"]["available"]


@pytest.mark.rule("CLI-DETECT-001")
def test_detect_rejects_an_unknown_agent(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, "detect", "--agent", "nope")
    assert code == 2
    assert "unknown agent id 'nope'" in err and "claude" in err


@pytest.mark.rule("CLI-ARGV-001")
def test_argv_shows_the_exact_argv_delivery_and_budget(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(
        capsys, "argv", "codex", "--platform", "linux", "--bin", "/x/codex", "--cwd", "/p", "--json"
    )
    assert code == 0
    report = json.loads(out)
    assert report["argv"][:3] == ["/x/codex", "exec", "--json"]
    assert report["argv"][report["argv"].index("-C") : report["argv"].index("-C") + 2] == [
        "-C",
        "/p",
    ]
    assert report["prompt_delivery"] == "stdin" and report["budget"] == {"ok": True}
    code, out, _ = run_cli(
        capsys, "argv", "codex", "--platform", "linux", "--bin", "codex", "--resume", "T1", "--json"
    )
    argv = json.loads(out)["argv"]
    assert argv[1:3] == ["exec", "resume"] and argv[-1] == "T1" and "-C" not in argv


@pytest.mark.rule("CLI-ARGV-001")
def test_argv_capabilities_switch_optional_flags(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run_cli(
        capsys, "argv", "claude", "--bin", "claude", "--platform", "linux", "--json"
    )
    assert "--include-partial-messages" not in json.loads(out)["argv"]
    _, out, _ = run_cli(
        capsys,
        "argv",
        "claude",
        "--bin",
        "claude",
        "--platform",
        "linux",
        "--json",
        "--cap",
        "partialMessages",
    )
    assert "--include-partial-messages" in json.loads(out)["argv"]


@pytest.mark.rule("CLI-ARGV-002")
def test_argv_budget_failure_exits_non_zero_with_the_code(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    prompt = tmp_path / "p.txt"
    prompt.write_text("x" * 30_001)
    code, out, err = run_cli(
        capsys,
        "argv",
        "deepseek",
        "--prompt-file",
        str(prompt),
        "--platform",
        "win32",
        "--bin",
        r"C:\bin\deepseek.exe",
        "--json",
    )
    assert code == 1
    report = json.loads(out)
    assert report["budget"]["ok"] is False
    assert report["budget"]["code"] == "AGENT_PROMPT_TOO_LARGE"
    assert report["budget"]["limit"] == 30_000
    assert "AGENT_PROMPT_TOO_LARGE" in err
    code, out, _ = run_cli(
        capsys,
        "argv",
        "deepseek",
        "--prompt-file",
        str(prompt),
        "--platform",
        "linux",
        "--bin",
        "/usr/bin/deepseek",
        "--json",
    )
    assert code == 0 and json.loads(out)["argv"][-1] == "x" * 30_001


@pytest.mark.rule("CLI-ARGV-001", "BUDGET-ARGV-001")
@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("linux", (100_000, "platform", True)),
        ("darwin", (262_144, "platform", True)),
        ("win32", (30_000, "def", False)),
    ],
)
def test_argv_shows_the_effective_prompt_limit_and_its_source_alike_in_text_and_json(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    platform: str,
    expected: tuple[int, str, bool],
) -> None:
    """40,001 bytes for a def whose max_prompt_arg_bytes is 30,000: the limit shown is the
    one applied, and it says whose number it is."""
    limit, source, ok = expected
    prompt = tmp_path / "p.txt"
    prompt.write_text("x" * 40_001)
    words = ["argv", "deepseek", "--prompt-file", str(prompt), "--platform", platform]
    words += ["--bin", "deepseek.exe" if platform == "win32" else "/usr/bin/deepseek"]
    code, out, _ = run_cli(capsys, *words, "--json")
    report = json.loads(out)
    assert report["prompt_limit"]["bytes"] == limit
    assert report["prompt_limit"]["source"] == source
    assert report["prompt_limit"]["max_prompt_arg_bytes"] == report["max_prompt_arg_bytes"]
    assert report["budget"]["ok"] is ok and (code == 0) is ok
    if not ok:
        assert report["budget"]["limit"] == limit
    code, out, _ = run_cli(capsys, *words)
    (line,) = [x for x in out.splitlines() if x.startswith("limit:")]
    assert line.startswith(f"limit:    {limit} bytes (")
    assert ("max_prompt_arg_bytes" in line) and (platform in line)
    if source == "platform":
        assert f"the {platform} argv budget; the def's max_prompt_arg_bytes 30000" in line
    code, out, _ = run_cli(capsys, "argv", "claude", "--json")
    assert json.loads(out)["prompt_limit"] is None  # stdin: no argv limit


@pytest.mark.rule("CLI-ARGV-002")
def test_argv_usage_errors_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "argv", "claude", "--platform", "plan9")
    assert code == 2 and not out and "--platform 'plan9'" in err
    code, _, err = run_cli(capsys, "argv", "nope")
    assert code == 2 and "unknown agent id" in err


@pytest.mark.rule("CLI-PARSE-001")
def test_parse_prints_one_json_event_per_line_at_any_chunk_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = tmp_path / "out.jsonl"
    capture.write_text(
        '{"type":"thread.started","thread_id":"T1"}\n'
        "not json\n"
        '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"Hi"}}\n'
    )
    outputs = []
    for chunk in (None, "1", "7"):
        args = ["parse", str(capture), "--agent", "codex", "--json"]
        if chunk:
            args += ["--chunk", chunk]
        code, out, _ = run_cli(capsys, *args)
        assert code == 0
        outputs.append([json.loads(line) for line in out.splitlines()])
    assert outputs[0] == outputs[1] == outputs[2]
    assert [e["type"] for e in outputs[0]] == ["status", "raw", "text_delta"]
    assert outputs[0][0]["session_id"] == "T1"


@pytest.mark.rule("CLI-PARSE-001")
def test_parse_human_output_and_format_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    capture = tmp_path / "out.jsonl"
    capture.write_text('{"type":"assistant.message_delta","data":{"deltaContent":"Yo"}}\n')
    code, out, _ = run_cli(capsys, "parse", str(capture), "--format", "copilot-stream-json")
    assert code == 0 and out.startswith("text_delta") and '"Yo"' in out


@pytest.mark.rule("CLI-PARSE-002")
def test_parse_errors_name_the_problem(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run_cli(capsys, "parse", str(tmp_path / "missing"), "--format", "plain")
    assert code == 2 and "missing" in err
    code, _, err = run_cli(capsys, "parse", str(tmp_path), "--format", "nope")
    assert code == 2
    code, _, err = run_cli(capsys, "parse", "x")
    assert code == 2 and "--agent" in err


@pytest.mark.rule("SIG-CANCEL-001")
def test_ctrl_c_outside_a_run_exits_130_without_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C that lands before a command installs its own handling stops quietly."""
    import harness.commands

    def interrupted(*_: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(harness.commands, "run_command", interrupted)
    assert main(["agents"]) == 130
    err = capsys.readouterr().err
    assert err == "harness: interrupted\n"
