"""``--def PATH.py`` on ``harness argv``, ``run`` and ``parse``: an author's def file, as
``harness conform --def`` takes it (CLI-DEF-001)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from tests.support.env import isolated_project

DERIVED = """\
import dataclasses
from harness.defs.claude import AGENT_DEF as CLAUDE

AGENT_DEF = dataclasses.replace(CLAUDE, id="my-claude", name="My Claude wrapper", bin="my-claude")
"""


@pytest.fixture
def def_file(tmp_path: Path) -> Path:
    path = tmp_path / "my_def.py"
    path.write_text(DERIVED, encoding="utf-8")
    return path


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return isolated_project(tmp_path, monkeypatch)


def _json(capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.mark.rule("CLI-DEF-001", "CLI-ARGV-001")
@pytest.mark.parametrize("named", [False, True], ids=["the-files-one-def", "by-id"])
def test_argv_builds_the_file_defs_argv(
    def_file: Path, capsys: pytest.CaptureFixture[str], named: bool
) -> None:
    words = ["argv", *(["my-claude"] if named else []), "--def", str(def_file)]
    assert main([*words, "--bin", "my-claude", "--json"]) == 0
    (shown,) = _json(capsys)
    assert shown["agent"] == "my-claude"
    argv = shown["argv"]
    assert isinstance(argv, list) and argv[0] == "my-claude"
    assert main(["argv", "claude", "--bin", "my-claude", "--json"]) == 0
    assert _json(capsys)[0]["argv"] == argv  # derived: the same flags as claude


@pytest.mark.rule("CLI-DEF-001", "DEFCHECK-LOAD-001")
def test_a_bad_def_file_or_no_agent_is_a_usage_error(
    tmp_path: Path, def_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("AGENT_DEF = 1 +\n", encoding="utf-8")
    assert main(["argv", "--def", str(broken)]) == 2
    err = capsys.readouterr().err
    assert f"{broken}:1:" in err and "syntax error" in err and "Traceback" not in err
    assert main(["argv"]) == 2
    assert "give AGENT (an agent id) or --def FILE" in capsys.readouterr().err
    two = tmp_path / "two.py"
    two.write_text(
        DERIVED + 'AGENT_DEFS = [AGENT_DEF, dataclasses.replace(AGENT_DEF, id="my-2")]\n',
        encoding="utf-8",
    )
    assert main(["argv", "--def", str(two)]) == 2
    assert "give AGENT: the --def files define my-claude, my-2" in capsys.readouterr().err


@pytest.mark.rule("CLI-DEF-001", "DEF-OPTIONS-001")
def test_an_acp_option_on_a_non_acp_def_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "acp_opt.py"
    path.write_text(
        DERIVED
        + "from harness.defs.types import AcpOptions\n"
        + "AGENT_DEF = dataclasses.replace(AGENT_DEF, acp=AcpOptions(stage_timeout_ms=5000))\n",
        encoding="utf-8",
    )
    assert main(["argv", "--def", str(path)]) == 2
    err = capsys.readouterr().err
    assert "AGENT_DEF.acp.stage_timeout_ms: def 'my-claude' sets it" in err
    assert "Traceback" not in err


@pytest.mark.rule("CLI-DEF-001", "CLI-PARSE-001")
def test_parse_reads_a_capture_with_the_file_defs_parser(
    tmp_path: Path, def_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture = tmp_path / "out.jsonl"
    capture.write_text(
        json.dumps(
            {
                "type": "assistant",
                "message": {"content": [{"type": "text", "text": "hi from my-claude"}]},
            }
        )
        + "\n",
        encoding="utf-8",
    )
    assert main(["parse", str(capture), "--def", str(def_file), "--json"]) == 0
    events = _json(capsys)
    assert "hi from my-claude" in json.dumps(events)
    assert not any(e["type"] == "raw" for e in events)


@pytest.mark.rule("CLI-DEF-001", "RUN-CLI-001", "RUN-FAKES-001")
def test_run_fake_plays_a_derived_def_with_its_builtins_fake(
    isolated: Path, def_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--def", str(def_file), "--fake", "--scenario", "happy"]
    assert main([*argv, "--cwd", str(isolated), "--json"]) == 0
    lines = _json(capsys)
    summary = lines[-1]["summary"]
    assert isinstance(summary, dict) and summary["status"] == "succeeded"
    assert (isolated / "hello.html").is_file()  # the claude fake wrote it, under my-claude
