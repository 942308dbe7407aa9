"""RUN-E2E-001: every built-in def, end to end, against its fake CLI.

For each of the registry's defs: ``harness fakes install`` puts the fake under the real
binary names in ``tmp/bin``; detection with ``PATH`` = that directory finds it; and
``harness run ID --fake --json`` on the happy scenario produces text, a tool call and its
result (plain formats have no tool events: their CLI writes the file and, when it echoes
the file as an ``<artifact>`` block, the runner reports and writes that artifact) and the
file ``hello.html``. A def whose emulator module does not exist yet is skipped with the
reason (fake_clis.catalog lists the modules).
"""

from __future__ import annotations

import importlib
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.cli import _build_parser, main
from harness.commands import run_command
from harness.defs.registry import BUILTIN_DEFS
from harness.defs.types import AgentDef
from harness.runtime.detect import detect_all_sync
from harness.runtime.fakes_install import list_fakes

ALL_IDS = [d.id for d in BUILTIN_DEFS]
#: Parsers that, like upstream's, do not map tool calls: the calls arrive as raw lines
#: (nothing is dropped silently). ref §2.2 cursor-agent "Tool calls are NOT recognized
#: (they become raw)"; ref §2.4 qoder maps only text and thinking blocks, the rest is raw.
TOOLS_AS_RAW = {"cursor-agent": "tool_call", "qoder": "tool_use"}
_EMULATED = {e.agent_id for e in list_fakes()}


def _needs_fake(agent_id: str) -> None:
    if agent_id not in _EMULATED:
        from fake_clis.catalog import EMULATOR_MODULES

        missing = [m for m in EMULATOR_MODULES if importlib.util.find_spec(m) is None]
        pytest.skip(f"no fake emulator for {agent_id!r} yet (missing modules: {missing})")


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("e2e")
    out = io.StringIO()
    args = _build_parser().parse_args(["fakes", "install", str(root / "bin"), "--json"])
    assert run_command(args, out) == 0
    (root / "home").mkdir()
    return root


@pytest.fixture(scope="module")
def happy_runs(installed: Path) -> Iterator[dict[str, dict[str, Any]]]:
    """``harness run ID --fake --json`` for every emulated def, a few at a time."""
    results: dict[str, dict[str, Any]] = {}
    home = installed / "home"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(home))
        mp.setenv("USERPROFILE", str(home))
        for defn in BUILTIN_DEFS:
            if defn.bin_env_key:
                mp.delenv(defn.bin_env_key, raising=False)
        mp.delenv("FAKE_CLI_SCENARIO", raising=False)
        gate = threading.Semaphore(4)

        def one(defn: AgentDef) -> None:
            with gate:
                project = installed / f"project-{defn.id}"
                project.mkdir()
                out = io.StringIO()
                args = _build_parser().parse_args(
                    ["run", defn.id, "--fake", "--json", "--cwd", str(project)]
                )
                code = run_command(args, out)
                lines = [json.loads(line) for line in out.getvalue().splitlines()]
                results[defn.id] = {"code": code, "lines": lines, "project": project}

        threads = [
            threading.Thread(target=one, args=(d,)) for d in BUILTIN_DEFS if d.id in _EMULATED
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        yield results


@pytest.mark.rule("RUN-E2E-001", "RUN-FAKES-001")
def test_detection_finds_every_installed_fake(installed: Path) -> None:
    emulated = [d for d in BUILTIN_DEFS if d.id in _EMULATED]
    home = installed / "home"
    results = detect_all_sync(
        emulated, env={"PATH": str(installed / "bin"), "HOME": str(home)}, home=str(home)
    )
    problems = [
        f"{r.id}: available={r.available} path={r.path} {[d.message for d in r.diagnostics]}"
        for r, d in zip(results, emulated, strict=True)
        if not r.available or r.path != str(installed / "bin" / d.bin) or not r.version
    ]
    assert not problems, "\n".join(problems)


@pytest.mark.rule("RUN-E2E-001", "RUN-CLI-001")
@pytest.mark.parametrize("agent_id", ALL_IDS)
def test_happy_run_end_to_end(agent_id: str, happy_runs: dict[str, dict[str, Any]]) -> None:
    _needs_fake(agent_id)
    run = happy_runs[agent_id]
    lines: list[dict[str, Any]] = run["lines"]
    summary = lines[-1]["summary"]
    events = lines[:-1]
    assert run["code"] == 0, (summary["error"], summary["stderr_tail"][-400:], events[-4:])
    assert summary["status"] == "succeeded" and summary["error"] is None
    kinds = [e["type"] for e in events]
    text = "".join(e["delta"] for e in events if e["type"] == "text_delta")
    assert "Done: hello.html is ready." in text
    if summary["stream_format"] == "plain":
        artifacts = [e for e in events if e["type"] == "artifact"]
        assert all(a["path"] in summary["artifacts_written"] for a in artifacts)
    elif agent_id in TOOLS_AS_RAW:
        marker = f'"{TOOLS_AS_RAW[agent_id]}"'
        raws = [e["line"] for e in events if e["type"] == "raw"]
        assert any(marker in line and "hello.html" in line for line in raws), raws
    else:
        assert "tool_use" in kinds and "tool_result" in kinds, kinds
    assert "hello.html" in summary["files_written"]
    page = Path(run["project"]) / "hello.html"
    assert page.read_text(encoding="utf-8") == "<!doctype html>\n<h1>Hello</h1>\n"


@pytest.mark.rule("RUN-E2E-001", "RUN-ARTIFACTS-001")
def test_a_plain_fake_answering_with_an_artifact_gets_it_written(installed: Path) -> None:
    """qwen writes hello.html with its tool, then answers with the page as an artifact
    block (its final answer, all it prints): the block is written beside it as -2."""
    _needs_fake("qwen")
    page = "<!doctype html>\n<h1>Hello</h1>\n"
    block = f'<artifact identifier="hello" type="text/html" title="hello.html">\n{page}</artifact>'
    scenario = installed / "qwen-artifact.json"
    steps = [
        {"kind": "tool", "tool": "write", "path": "hello.html", "content": page},
        {"kind": "text", "text": block},
    ]
    scenario.write_text(
        json.dumps({"name": "qwen-artifact", "description": "artifact answer", "steps": steps}),
        encoding="utf-8",
    )
    project = installed / "project-qwen-artifact"
    project.mkdir()
    out = io.StringIO()
    args = _build_parser().parse_args(
        ["run", "qwen", "--fake", "--json", "--scenario", str(scenario), "--cwd", str(project)]
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(installed / "home"))
        mp.delenv("FAKE_CLI_SCENARIO", raising=False)
        code = run_command(args, out)
    summary = json.loads(out.getvalue().splitlines()[-1])["summary"]
    assert code == 0, summary
    assert summary["artifacts_written"] == ["hello-2.html"]
    assert (project / "hello-2.html").read_text(encoding="utf-8") == "\n" + page


@pytest.mark.rule("RUN-CLI-001")
def test_cli_main_runs_a_fake(installed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _needs_fake("claude")
    project = installed / "project-main"
    project.mkdir()
    code = main(["run", "claude", "--fake", "--scenario", "text", "--cwd", str(project)])
    out = capsys.readouterr().out
    assert code == 0
    assert "text_delta" in out and "status:   succeeded (exit 0)" in out
