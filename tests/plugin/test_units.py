"""Units of the plugin that need no pytest session: which fake plays a def, the fake's
environment and record, how findings become a test's verdict, and the packaging
(PLUGIN-FAKE-001, PLUGIN-MARK-002, PLUGIN-ENTRY-001)."""

from __future__ import annotations

import dataclasses
import importlib
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.checks import failed, not_tested, passed, skipped
from conformance.pytest_plugin import (
    LEAK_MARK_VAR,
    AdapterPluginError,
    FakeCli,
    fake_env,
    judge_findings,
    resolve_emulator,
)
from conformance.rules import Rule, Tier
from harness.defs.registry import get_agent_def
from harness.defs.types import AgentDef

ROOT = Path(__file__).resolve().parents[2]


def _variant(base: str, **changes: Any) -> AgentDef:
    return dataclasses.replace(get_agent_def(base), **changes)


@pytest.mark.rule("PLUGIN-FAKE-001")
def test_a_new_def_is_played_by_the_first_builtin_reading_its_stream() -> None:
    mine = _variant("claude", id="my-claude", bin="my-claude", bin_env_key=None)
    assert resolve_emulator(mine, None) == "claude"
    # codebuddy and amp read claude-stream-json too, but claude comes first.
    opencode_like = _variant("mimo", id="my-mimo", bin="my-mimo")
    assert resolve_emulator(opencode_like, None) == "opencode"
    # A format reached through an alt transport (codex app-server) counts too.
    app_server = _variant(
        "claude",
        id="my-app",
        bin="my-app",
        stream_format="codex-app-server",
        event_parser=None,
    )
    assert resolve_emulator(app_server, None) == "codex"


@pytest.mark.rule("PLUGIN-FAKE-001")
def test_a_builtin_def_is_played_by_its_own_fake() -> None:
    assert resolve_emulator(get_agent_def("codebuddy"), None) == "codebuddy"
    assert resolve_emulator(get_agent_def("amp"), None) == "amp"


@pytest.mark.rule("PLUGIN-FAKE-001")
def test_fake_as_wins_and_must_speak_the_defs_stream() -> None:
    mine = _variant("claude", id="my-claude", bin="my-claude")
    assert resolve_emulator(mine, "codebuddy") == "codebuddy"
    with pytest.raises(AdapterPluginError, match=r"'codex'.*json-event-stream.*claude-stream"):
        resolve_emulator(mine, "codex")
    with pytest.raises(AdapterPluginError, match=r"no fake emulator by that id.*claude"):
        resolve_emulator(mine, "nope")


@pytest.mark.rule("PLUGIN-FAKE-001")
def test_a_stream_no_fake_speaks_is_an_error_naming_the_option() -> None:
    kimi_json = _variant("gemini", id="my-kimi", bin="my-kimi", event_parser="kimi")
    with pytest.raises(AdapterPluginError, match="--adapter-fake-as") as info:
        resolve_emulator(kimi_json, None)
    assert info.value.rule == "PLUGIN-FAKE-001"


@pytest.mark.rule("PLUGIN-FAKE-001")
def test_the_fake_env_puts_the_fake_first_and_inherits_no_secret(tmp_path: Path) -> None:
    mine = _variant("claude", id="my-claude", bin="my-claude", bin_env_key="MY_CLAUDE_BIN")
    base = {
        "PATH": os.pathsep.join(["/usr/local/bin", "/usr/bin"]),
        "LANG": "C.UTF-8",
        "ANTHROPIC_API_KEY": "sk-ant-not-a-real-key-000000000000",
        "GITHUB_TOKEN": "ghp_notarealtoken000000000000000000",
        "DB_PASSWORD": "hunter2hunter2",
        "FAKE_CLI_SCENARIO": "hang",
        "FAKE_CLI_OLD_VERSION": "1",
        "CLAUDE_BIN": "/opt/real/claude",
        "MY_CLAUDE_BIN": "/opt/real/my-claude",
        "OD_CODEX_TRANSPORT": "app-server",
    }
    env = fake_env(
        base,
        defn=mine,
        bin_dir=tmp_path / "bin",
        home=tmp_path / "home",
        scenario="happy",
        record=tmp_path / "record.json",
        mark="m1",
    )
    path_key = "Path" if sys.platform == "win32" and "Path" in env else "PATH"
    assert env[path_key].split(os.pathsep) == [str(tmp_path / "bin"), "/usr/local/bin", "/usr/bin"]
    assert env["HOME"] == env["USERPROFILE"] == str(tmp_path / "home")
    assert env["FAKE_CLI_SCENARIO"] == "happy"
    assert env["FAKE_CLI_RECORD"] == str(tmp_path / "record.json")
    assert env[LEAK_MARK_VAR] == "m1"
    assert env["LANG"] == "C.UTF-8"
    for gone in (
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "DB_PASSWORD",
        "FAKE_CLI_OLD_VERSION",
        "CLAUDE_BIN",
        "MY_CLAUDE_BIN",
        "OD_CODEX_TRANSPORT",
    ):
        assert gone not in env, gone


@pytest.mark.rule("PLUGIN-FAKE-001")
def test_reading_a_record_the_fake_never_wrote_says_so(tmp_path: Path) -> None:
    fake = FakeCli(
        agent_id="my-claude",
        emulator="claude",
        scenario="happy",
        bin_dir=tmp_path,
        executable=tmp_path / "my-claude",
        env={"A": "1"},
        record_path=tmp_path / "record.json",
        cwd=tmp_path,
    )
    with pytest.raises(AdapterPluginError, match="wrote no record"):
        fake.record()
    (tmp_path / "record.json").write_text('{"argv": ["-p"]}', encoding="utf-8")
    assert fake.record() == {"argv": ["-p"]}
    copy = fake.env
    copy["A"] = "2"
    assert fake.env == {"A": "1"}


@pytest.mark.rule("PLUGIN-ENTRY-001")
def test_pyproject_declares_the_pytest11_entry_point() -> None:
    try:
        toml = importlib.import_module("tomllib")
    except ImportError:  # Python 3.10
        toml = pytest.importorskip("tomli")
    data = toml.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["entry-points"]["pytest11"] == {
        "adapter_harness": "conformance.pytest_plugin"
    }


@pytest.mark.rule("PLUGIN-ENTRY-001")
def test_an_installed_entry_point_names_the_plugin_module() -> None:
    from importlib.metadata import entry_points

    found = [ep for ep in entry_points(group="pytest11") if ep.name == "adapter_harness"]
    if not found:
        pytest.skip("the installed adapter-harness predates the entry point: pip install -e .")
    assert [ep.value for ep in found] == ["conformance.pytest_plugin"]


def _rule(tier: Tier) -> Rule:
    capability = "caps" if tier is Tier.CAPABILITY else None
    return Rule("X-TEST-001", tier, "The thing holds.", "design §Conformance model", (), capability)


@pytest.mark.rule("PLUGIN-MARK-002")
def test_a_failed_or_untested_finding_fails_the_test_naming_the_rule() -> None:
    bad = failed(
        "X-TEST-001: my-claude: the thing broke",
        repro_command="python -m pytest t.py::test",
        expected="one",
        actual="two",
        stderr="boom\n",
    )
    results = [("run 1", passed()), ("run 2", bad), ("run 3", not_tested("the check crashed"))]
    verdicts, failure = judge_findings(_rule(Tier.MANDATORY), results)
    assert verdicts == [
        "X-TEST-001: run 1: pass",
        "X-TEST-001: run 2: fail my-claude: the thing broke",
        "X-TEST-001: run 3: not_tested the check crashed",
    ]
    assert failure is not None
    assert failure.splitlines() == [
        "X-TEST-001 failed [mandatory; design §Conformance model]: The thing holds.",
        "  run 2: X-TEST-001: my-claude: the thing broke",
        "    expected: one",
        "    actual: two",
        "    stderr tail: boom",
        "    reproduce: python -m pytest t.py::test",
        "  run 3: not tested: the check crashed",
    ]
    _, capability = judge_findings(_rule(Tier.CAPABILITY), [("run 2", bad)])
    assert capability is not None and capability.startswith("X-TEST-001 failed [capability;")


@pytest.mark.rule("PLUGIN-MARK-002")
def test_advisory_passing_and_skipped_findings_never_fail_the_test() -> None:
    bad = failed("X-TEST-001: broke", repro_command="pytest")
    verdicts, failure = judge_findings(_rule(Tier.ADVISORY), [("run 1", bad)])
    assert failure is None
    assert verdicts == ["X-TEST-001: run 1: fail broke"]
    _, none = judge_findings(
        _rule(Tier.MANDATORY), [("run 1", passed()), ("run 2", skipped("no usage step"))]
    )
    assert none is None
