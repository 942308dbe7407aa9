"""``harness conform``: planning (pure), running defs against their fakes, the three broken
defs, baselines, flaky re-runs, ``--def`` errors, ``--real`` and the progress views.

The fake runs are narrowed with ``--scenario`` / ``--rule`` so the module stays fast;
the run over every built-in def and scenario is the last test (the README's main job).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import os
import subprocess
import sys
import types
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

import conformance.conform.plan
from conformance.checks import Finding, all_checks, failed, passed
from conformance.checks.defs import PROMPT_TOKEN
from conformance.conform.fake_runs import (
    INACTIVITY_TIMEOUT_MS,
    LINGER_INACTIVITY_TIMEOUT_MS,
    WAITING_LANES_PER_JOB,
    Runner,
)
from conformance.conform.plan import (
    NO_FAKE_RULE,
    REAL_RULE,
    ConformError,
    ConformPlan,
    DefTarget,
    RunJob,
    builtin_targets,
    file_targets,
    plan_conform,
    resolve_emulator,
)
from conformance.conform.progress import ProgressUpdate, Tracker
from conformance.conform.run import run_conform
from conformance.reports.json_report import load_schema
from conformance.rules import Rule, Tier, all_rules
from conformance.verdicts import Disposition, Status
from fake_clis.scenario import list_scenarios
from harness.cli import main
from harness.commands.conform import LineProgress, TtyProgress, report_kinds
from harness.defs.registry import BUILTIN_DEFS, BUILTIN_REGISTRY
from harness.defs.types import PromptDelivery

BROKEN = Path(__file__).resolve().parent / "broken_defs"
ROOT = Path(__file__).resolve().parents[2]


def _conform(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["conform", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _report(out_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((out_dir / "conform.json").read_text(encoding="utf-8"))
    jsonschema.validate(data, load_schema())
    return data


def _cell(report: dict[str, Any], def_id: str, rule_id: str) -> dict[str, Any]:
    for cell in report["cells"]:
        if cell["def_id"] == def_id and cell["rule_id"] == rule_id:
            return cell  # type: ignore[no-any-return]
    raise AssertionError(f"no cell {def_id}:{rule_id}")


def _evidence(cell: dict[str, Any]) -> dict[str, Any]:
    index = cell["evidence_from"]
    assert index is not None, cell
    evidence: dict[str, Any] = cell["outcomes"][index]["evidence"]
    return evidence


# ---------------------------------------------------------------------------- planning (pure)


def _targets(*ids: str) -> list[DefTarget]:
    return builtin_targets(BUILTIN_DEFS, list(ids))


def _plan(targets: list[DefTarget], **kw: Any) -> ConformPlan:
    settings: dict[str, Any] = {
        "def_checks": all_checks("def"),
        "run_checks": all_checks("run"),
        "catalog": all_rules(),
        "scenarios": list_scenarios(),
        "siblings": BUILTIN_DEFS,
    }
    settings.update(kw)
    return plan_conform(targets, **settings)


@pytest.mark.rule("CONFORM-PLAN-001")
def test_plan_gives_every_def_every_check_and_every_scenario() -> None:
    plan = _plan(_targets("claude", "deepseek-harness", "amr"))
    claude, dsh, amr = plan.defs
    assert set(claude.def_rules) == set(all_checks("def"))
    assert set(claude.run_rules) == set(all_checks("run"))
    # seed 001 §5: a noise line is a fault for a profile runtime; the run checks judge it.
    # Only a fake that emulates an optional step (compaction: AMR, seed 000 §12) gets its
    # scenario; the others leave it out and say why.
    common = tuple(s for s in list_scenarios() if s != "compaction")
    assert claude.scenarios == dsh.scenarios == common
    assert amr.scenarios == tuple(list_scenarios())
    why = "the claude fake does not emulate scenario step 'compaction'"
    assert claude.left_out == (("compaction", why),) and amr.left_out == ()
    jobs = plan.jobs
    assert len(jobs) == 2 * len(common) + len(list_scenarios())
    assert jobs[0].scenario == "happy"
    assert {j.scenario for j in jobs if j.cancel} >= {"hang", "stall", "spawn_tree"}
    assert not any(j.cancel for j in jobs if j.scenario in ("happy", "api_error"))
    assert set(plan.applicable["claude"]) == {*claude.def_rules, *claude.run_rules}


@pytest.mark.rule("CONFORM-PLAN-001")
def test_plan_leaves_out_a_scenario_that_does_not_apply_and_says_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    why = "seed 001 §5: not for a profile runtime"
    monkeypatch.setattr(
        conformance.conform.plan, "SCENARIO_EXCLUSIONS", {"noise": {"dsh-profile-jsonl": why}}
    )
    plan = _plan(_targets("claude", "deepseek-harness"), scenario_filter=["noise"])
    claude, dsh = plan.defs
    assert claude.scenarios == ("noise",) and claude.left_out == ()
    assert dsh.scenarios == () and dsh.left_out == (("noise", why),)
    assert [(j.index, j.scenario) for j in plan.jobs] == [(0, "noise")]
    plan = _plan(
        _targets("deepseek-harness"), scenario_filter=["noise"], rule_filter=["RUN-TERMINAL-001"]
    )
    result = run_conform(plan, work_dir=str(tmp_path))
    cell = result.verdict.cell("deepseek-harness", "RUN-TERMINAL-001")
    assert result.runs == 0
    assert cell is not None and cell.disposition is Disposition.SKIPPED and why in cell.reason


@pytest.mark.rule("CONFORM-PLAN-001")
def test_plan_picks_up_checks_it_is_given_and_narrows_by_rule_and_scenario() -> None:
    catalog = dict(all_rules())
    catalog["ZZ-NEW-001"] = Rule("ZZ-NEW-001", Tier.MANDATORY, "a new check.", "design §X", ())
    plan = _plan(
        _targets("codex"),
        def_checks=[*all_checks("def"), "ZZ-NEW-001"],
        catalog=catalog,
        rule_filter=["ZZ-NEW-001", "RUN-USAGE-001"],
        scenario_filter=["happy"],
    )
    (codex,) = plan.defs
    assert codex.def_rules == ("ZZ-NEW-001",)
    assert codex.run_rules == ("RUN-USAGE-001",)
    assert codex.scenarios == ("happy",)
    only_def = _plan(_targets("codex"), rule_filter=["DEF-ID-001"])
    assert only_def.defs[0].scenarios == () and only_def.jobs == ()


@pytest.mark.rule("CONFORM-PLAN-001", "CONFORM-CLI-001")
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"scenario_filter": ["nope"]}, "unknown scenario"),
        ({"rule_filter": ["NOPE-NOPE-001"]}, "unknown rule id"),
        ({"rule_filter": ["CONFORM-REAL-001"]}, "live rules need --real"),
    ],
)
def test_plan_refuses_what_it_cannot_judge(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(ConformError, match=message):
        _plan(_targets("claude"), **kw)


@pytest.mark.rule("CONFORM-PLAN-001")
def test_plan_refuses_a_def_id_given_twice() -> None:
    with pytest.raises(ConformError, match="given twice"):
        _plan([*_targets("claude"), *_targets("claude")])


@pytest.mark.rule("CONFORM-PLAN-001")
def test_emulator_resolution_by_id_then_by_format() -> None:
    emulators = {d.id for d in BUILTIN_DEFS}
    claude = BUILTIN_REGISTRY["claude"]
    assert resolve_emulator(claude, BUILTIN_DEFS, emulators) == ("claude", "")
    mine = dataclasses.replace(claude, id="my-claude")
    emulator, _ = resolve_emulator(mine, BUILTIN_DEFS, emulators)
    assert emulator is not None
    assert BUILTIN_REGISTRY[emulator].stream_format == claude.stream_format
    none, why = resolve_emulator(mine, BUILTIN_DEFS, set())
    assert none is None and "claude-stream-json" in why


@pytest.mark.rule("CONFORM-REAL-001")
def test_plan_makes_live_rules_applicable_only_with_real() -> None:
    catalog = dict(all_rules())
    live = Rule("LIVEX-DIFF-001", Tier.MANDATORY, "real and fake agree.", "design §Live mode")
    catalog[live.id] = live
    without = _plan(_targets("kimi"), catalog=catalog, live_rules=[live.id])
    assert live.id not in without.applicable["kimi"]
    assert REAL_RULE not in without.applicable["kimi"]
    real = _plan(_targets("kimi"), catalog=catalog, live_rules=[live.id], real=True)
    assert {live.id, REAL_RULE} <= set(real.applicable["kimi"])


# ---------------------------------------------------------------------------- runs on fakes


@pytest.fixture(scope="module")
def builtin_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str, Path]]:
    out_dir = tmp_path_factory.mktemp("conform-builtin")
    stdout = io.StringIO()
    real_stdout = sys.stdout
    sys.stdout = stdout
    try:
        code = main(
            [
                "conform",
                *("--agent", "claude", "--agent", "codex", "--agent", "kimi"),
                *("--scenario", "happy", "--scenario", "api_error", "--scenario", "hang"),
                *("--out", str(out_dir), "--jobs", "4"),
            ]
        )
    finally:
        sys.stdout = real_stdout
    yield code, stdout.getvalue(), out_dir


@pytest.mark.rule("CONFORM-CLI-001", "CONFORM-EXIT-001", "CONFORM-PLAN-001")
def test_builtin_defs_pass_and_write_all_four_reports(builtin_run: tuple[int, str, Path]) -> None:
    code, stdout, out_dir = builtin_run
    assert code == 0, stdout
    report = _report(out_dir)
    assert report["exit_code"] == 0 and report["conformant"] is True
    assert report["defs"] == ["claude", "codex", "kimi"]
    cell = _cell(report, "codex", "RUN-HAPPY-TEXT-001")
    assert cell["disposition"] == "pass"
    assert {s for o in cell["outcomes"] for s in o["scenarios"]} == {"happy", "api_error", "hang"}
    assert _cell(report, "kimi", "RUN-CANCEL-001")["disposition"] == "pass"
    assert _cell(report, "claude", "RUN-FAULT-APIERROR-001")["disposition"] == "pass"
    assert _cell(report, "claude", "DEF-BUDGET-001")["disposition"] in ("pass", "skipped")
    tree = ET.parse(out_dir / "conform.junit.xml")
    suites = tree.getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["claude", "codex", "kimi"]
    assert all(s.get("failures") == "0" for s in suites)
    page = (out_dir / "conform.html").read_text(encoding="utf-8")
    assert "RUN-HAPPY-TEXT-001" in page and "<script" in page
    assert "http://" not in page.replace("http://www.w3.org", "") and 'src="http' not in page
    assert "Verdict: CONFORMANT (exit 0)" in stdout
    assert "report: " in stdout


@pytest.fixture(scope="module")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any]]:
    out_dir = tmp_path_factory.mktemp("conform-broken")
    argv = ["conform", "--scenario", "happy", "--report", "json", "--out", str(out_dir)]
    for name in ("wrong_argv.py", "prompt_in_argv.py", "text_into_stream_json.py"):
        argv += ["--def", str(BROKEN / name)]
    code = main(argv)
    return code, _report(out_dir)


@pytest.mark.rule("CONFORM-CLI-001", "CONFORM-EVIDENCE-001", "RUN-HAPPY-TEXT-001")
def test_wrong_argv_fails_naming_the_rule_with_the_cli_stderr(
    broken_run: tuple[int, dict[str, Any]],
) -> None:
    code, report = broken_run
    assert code == 1 and report["exit_code"] == 1
    cell = _cell(report, "broken-argv", "RUN-HAPPY-TEXT-001")
    assert cell["disposition"] == "fail" and cell["fails_run"] is True
    evidence = _evidence(cell)
    assert evidence["summary"].startswith("RUN-HAPPY-TEXT-001")
    assert "--yolo" in evidence["stderr_tail"]
    assert "--def" in evidence["repro_command"] and "wrong_argv.py" in evidence["repro_command"]
    assert "--scenario happy" in evidence["repro_command"]
    # the def-level checks cannot see it: only the run does
    assert _cell(report, "broken-argv", "DEF-PROMPT-001")["disposition"] == "pass"


@pytest.mark.rule("CONFORM-REPORT-TERM-001", "CONFORM-PROGRESS-001", "CONFORM-EVIDENCE-001")
def test_the_terminal_shows_the_clis_error_once_and_counts_fails_like_the_table(
    capsys: pytest.CaptureFixture[str],
) -> None:
    wrong = str(BROKEN / "wrong_argv.py")
    code, stdout, stderr = _conform(
        capsys, "--def", wrong, "--scenario", "happy", "--report", "terminal"
    )
    assert code == 1
    (row,) = [line for line in stdout.splitlines() if line.startswith("broken-argv ")]
    fails = int(row.split()[1])
    assert f"broken-argv: 1/1 runs done, {fails} rule(s) failed" in stderr
    assert stdout.count("CLI stderr: error: unknown option '--yolo'") == 1
    assert f"{fails - 1} more failures from the same CLI error:" in stdout
    assert f"reproduce: harness conform --def {wrong}" in stdout
    assert "Skipped (" in stdout and "DEF-BUDGET-001" in stdout


@pytest.mark.rule("CONFORM-CLI-001", "CONFORM-EVIDENCE-001", "DEF-PROMPT-001")
def test_prompt_in_argv_without_budget_fails_naming_the_rule(
    broken_run: tuple[int, dict[str, Any]],
) -> None:
    _, report = broken_run
    cell = _cell(report, "broken-budget", "DEF-PROMPT-001")
    assert cell["disposition"] == "fail" and cell["tier"] == "mandatory"
    evidence = _evidence(cell)
    assert evidence["summary"].startswith("DEF-PROMPT-001")
    assert PROMPT_TOKEN in evidence["actual"]
    assert "prompt_in_argv.py" in evidence["repro_command"]


@pytest.mark.rule("CONFORM-CLI-001", "CONFORM-EVIDENCE-001", "RUN-HAPPY-TEXT-001")
def test_stream_mismatch_fails_a_mandatory_rule_with_the_stdin_frame(
    broken_run: tuple[int, dict[str, Any]],
) -> None:
    _, report = broken_run
    cell = _cell(report, "broken-stream", "RUN-HAPPY-TEXT-001")
    assert cell["disposition"] == "fail" and cell["tier"] == "mandatory"
    evidence = _evidence(cell)
    frames = evidence["transcript_slice"]
    assert any(f["dir"] == "stdin" and "Create hello.html" in f["data"] for f in frames)
    assert "streaming input" in evidence["stderr_tail"]
    # the same def with the claude defaults passes: the stream setting alone breaks it
    assert _cell(report, "broken-stream", "DEF-PROMPT-001")["disposition"] == "pass"


@pytest.mark.rule("CONFORM-BASELINE-001", "CONFORM-EXIT-001")
def test_baseline_entry_turns_a_failure_into_exit_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("broken-argv:RUN-HAPPY-TEXT-001  # waiting on a fix\n", encoding="utf-8")
    args = ["--def", str(BROKEN / "wrong_argv.py"), "--scenario", "happy"]
    args += ["--rule", "RUN-HAPPY-TEXT-001", "--report", "json", "--out", str(tmp_path)]
    code, _, _ = _conform(capsys, *args)
    assert code == 1
    code, stdout, _ = _conform(capsys, *args, "--baseline", str(baseline))
    assert code == 0, stdout
    cell = _cell(_report(tmp_path), "broken-argv", "RUN-HAPPY-TEXT-001")
    assert cell["disposition"] == "expected_fail"
    assert cell["baseline_entries"] == ["broken-argv:RUN-HAPPY-TEXT-001"]


@pytest.mark.rule("CONFORM-BASELINE-STALE-001", "CONFORM-EXIT-001")
def test_stale_baseline_entry_fails_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("claude:RUN-HAPPY-TEXT-001\n", encoding="utf-8")
    code, stdout, _ = _conform(
        capsys,
        *("--agent", "claude", "--scenario", "happy", "--rule", "RUN-HAPPY-TEXT-001"),
        *("--baseline", str(baseline), "--out", str(tmp_path)),
    )
    assert code == 1
    assert "STALE BASELINE" in stdout
    cell = _cell(_report(tmp_path), "claude", "RUN-HAPPY-TEXT-001")
    assert cell["status"] == "pass" and cell["disposition"] == "stale"


@pytest.mark.rule("CONFORM-FLAKY-001")
def test_flaky_listed_failure_is_rerun_solo_and_still_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flaky = tmp_path / "flaky.txt"
    flaky.write_text("broken-argv:RUN-HAPPY-TEXT-001\n", encoding="utf-8")
    code, _, _ = _conform(
        capsys,
        *("--def", str(BROKEN / "wrong_argv.py"), "--scenario", "happy"),
        *("--rule", "RUN-HAPPY-TEXT-001", "--flaky", str(flaky)),
        *("--report", "json", "--out", str(tmp_path)),
    )
    assert code == 1
    cell = _cell(_report(tmp_path), "broken-argv", "RUN-HAPPY-TEXT-001")
    assert [o["attempt"] for o in cell["outcomes"]] == [1, 2, 3]
    assert cell["disposition"] == "fail" and "failed all 3 attempts" in cell["reason"]


@pytest.mark.rule("CONFORM-RUN-NOFAKE-001", "CONFORM-VERDICT-001")
def test_a_def_no_fake_can_play_is_not_tested(tmp_path: Path) -> None:
    target = DefTarget(BUILTIN_REGISTRY["claude"], None, None, "no fake emulator reads this format")
    plan = _plan([target], rule_filter=["RUN-HAPPY-TEXT-001"], scenario_filter=["happy"])
    assert plan.jobs == ()
    result = run_conform(plan, work_dir=str(tmp_path))
    assert result.runs == 0
    verdict = result.verdict
    for rule in ("RUN-HAPPY-TEXT-001", NO_FAKE_RULE):
        cell = verdict.cell("claude", rule)
        assert cell is not None and cell.disposition is Disposition.NOT_TESTED
        assert "no fake emulator" in cell.reason
    assert verdict.exit_code == 1


# ---------------------------------------------------------------------------- --def errors


@pytest.mark.rule("CONFORM-CLI-001", "DEFCHECK-LOAD-001", "DEF-BUDGET-001")
def test_def_file_with_argv_delivery_and_no_budget_is_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "argv_no_budget.py"
    bad.write_text(
        "import dataclasses\n"
        "from harness.defs.claude import AGENT_DEF as C\n"
        "from harness.defs.types import PromptDelivery\n"
        "AGENT_DEF = dataclasses.replace(C, id='argv-no-budget',"
        " prompt_delivery=PromptDelivery.ARGV)\n",
        encoding="utf-8",
    )
    out_dir = tmp_path / "reports"
    code, stdout, stderr = _conform(capsys, "--def", str(bad), "--out", str(out_dir))
    assert code == 2
    assert "argv_no_budget.py" in stderr and "AGENT_DEF.max_prompt_arg_bytes" in stderr
    assert not out_dir.exists() and stdout == ""  # nothing ran


@pytest.mark.rule("CONFORM-CLI-001", "DEFCHECK-LOAD-001")
def test_def_file_with_a_syntax_error_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken_syntax.py"
    bad.write_text("AGENT_DEF = (\n", encoding="utf-8")
    code, _, stderr = _conform(capsys, "--def", str(bad), "--out", str(tmp_path / "r"))
    assert code == 2 and "broken_syntax.py:" in stderr and "syntax error" in stderr


@pytest.mark.rule("CONFORM-CLI-001")
def test_bad_options_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert _conform(capsys, "--agent", "no-such-agent")[0] == 2
    assert _conform(capsys, "--report", "pdf")[0] == 2
    assert _conform(capsys, "--jobs", "0")[0] == 2
    assert report_kinds(None) == ["json", "junit", "html", "terminal"]
    assert report_kinds(["json,html", "json"]) == ["json", "html"]


# ---------------------------------------------------------------------------- --real


def _real_plan(*ids: str) -> ConformPlan:
    return _plan(_targets(*ids), real=True, rule_filter=["CONFORM-REAL-001"])


@pytest.mark.rule("CONFORM-REAL-001")
def test_real_without_the_live_module_is_not_tested(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "harness.live.conform", None)  # import raises ImportError
    result = run_conform(_real_plan("claude"), work_dir=str(tmp_path))
    cell = result.verdict.cell("claude", REAL_RULE)
    assert cell is not None and cell.disposition is Disposition.NOT_TESTED
    assert "harness.live is not available" in cell.reason
    assert result.verdict.exit_code == 1


def _fake_live(monkeypatch: pytest.MonkeyPatch, findings: list[tuple[str, str, Finding]]) -> list:
    calls: list[dict[str, Any]] = []

    def real_findings(defn: Any, **kw: Any) -> list[tuple[str, str, Finding]]:
        calls.append({"def": defn.id, **kw})
        kw["on_progress"]("scenario", "happy")
        return findings

    module = types.ModuleType("harness.live.conform")
    module.real_findings = real_findings  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "harness.live.conform", module)
    return calls


@pytest.mark.rule("CONFORM-REAL-001")
def test_real_findings_are_judged_with_the_fake_ones(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = failed("real CLI printed no text", repro_command="harness live run claude")
    calls = _fake_live(monkeypatch, [("RUN-HAPPY-TEXT-001", "happy", bad)])
    code, stdout, stderr = _conform(
        capsys,
        *("--agent", "claude", "--real", "--rule", "CONFORM-REAL-001"),
        *("--rule", "RUN-HAPPY-TEXT-001", "--scenario", "happy", "--out", str(tmp_path)),
        *("--cache-dir", str(tmp_path / "cache")),
    )
    assert code == 1, stdout
    assert calls == [
        {
            "def": "claude",
            "scenarios": ["happy"],
            "cache_dir": str(tmp_path / "cache"),
            "record_dir": None,
            "on_progress": calls[0]["on_progress"],
        }
    ]
    assert "claude: real: scenario happy" in stderr  # the plain progress line
    report = _report(tmp_path)
    cell = _cell(report, "claude", "RUN-HAPPY-TEXT-001")
    assert cell["disposition"] == "fail"
    assert {s: o["status"] for o in cell["outcomes"] for s in o["scenarios"]} == {
        "happy": "pass",
        "real:happy": "fail",
    }
    assert _cell(report, "claude", "CONFORM-REAL-001")["disposition"] == "pass"


@pytest.mark.rule("CONFORM-REAL-001")
def test_real_passes_when_the_live_findings_pass(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_live(monkeypatch, [("RUN-HAPPY-TEXT-001", "happy", passed())])
    result = run_conform(_real_plan("codex"), work_dir=str(tmp_path))
    assert result.verdict.exit_code == 0
    cell = result.verdict.cell("codex", REAL_RULE)
    assert cell is not None and cell.status is Status.PASS


@pytest.mark.rule("CONFORM-REAL-001")
@pytest.mark.parametrize(
    ("findings", "why"),
    [
        ([], "found nothing"),
        ([("NOPE-NOPE-001", "happy", passed())], "unknown rule"),
    ],
)
def test_real_with_nothing_or_nonsense_is_not_tested(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    findings: list[tuple[str, str, Finding]],
    why: str,
) -> None:
    _fake_live(monkeypatch, findings)
    result = run_conform(_real_plan("codex"), work_dir=str(tmp_path))
    cell = result.verdict.cell("codex", REAL_RULE)
    assert cell is not None and cell.disposition is Disposition.NOT_TESTED
    assert why in cell.reason
    assert result.verdict.exit_code == 1


@pytest.mark.rule("CONFORM-REAL-001")
def test_real_crash_is_not_tested(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    module = types.ModuleType("harness.live.conform")

    def real_findings(defn: Any, **kw: Any) -> list[tuple[str, str, Finding]]:
        raise RuntimeError("npm exploded")

    module.real_findings = real_findings  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "harness.live.conform", module)
    result = run_conform(_real_plan("codex"), work_dir=str(tmp_path))
    cell = result.verdict.cell("codex", REAL_RULE)
    assert cell is not None and cell.disposition is Disposition.NOT_TESTED
    assert "npm exploded" in cell.reason


# ---------------------------------------------------------------------------- progress


@pytest.mark.rule("CONFORM-PROGRESS-001")
def test_run_reports_progress_per_def_until_done(tmp_path: Path) -> None:
    plan = _plan(
        _targets("claude", "qwen"),
        scenario_filter=["happy", "stderr"],
        rule_filter=["DEF-ID-001", "RUN-TERMINAL-001"],
    )
    updates: list[ProgressUpdate] = []
    result = run_conform(plan, on_progress=updates.append, jobs=2, work_dir=str(tmp_path))
    assert result.runs == 4 and result.verdict.exit_code == 0
    for def_id in ("claude", "qwen"):
        mine = [u for u in updates if u.def_id == def_id]
        assert "DEF-ID-001" in [u.current for u in mine]
        assert [u.done for u in mine if u.current.startswith("scenario")] == [1, 2]
        assert mine[-1].finished and mine[-1].done == mine[-1].total == 2
        assert sum(u.finished for u in mine) == 1


@pytest.mark.rule("CONFORM-PROGRESS-001")
def test_tty_progress_redraws_one_line_per_def() -> None:
    plan = _plan(_targets("claude", "codex", "kimi"), scenario_filter=["happy", "hang"])
    stream = io.StringIO()
    view = TtyProgress(stream, rows=24, cols=100)
    view.start(plan, 4)
    view(ProgressUpdate("codex", 1, 2, "scenario happy"))
    view(ProgressUpdate("claude", 2, 2, "done", finished=True))
    lines = view.lines()
    assert len(lines) == 3
    assert lines[0].startswith("codex") and "1/2" in lines[0] and "scenario happy" in lines[0]
    assert lines[2].startswith("claude") and "2/2" in lines[2] and "done" in lines[2]
    assert "\x1b[3F" in stream.getvalue()  # redrawn in place, not appended
    small = TtyProgress(io.StringIO(), rows=4, cols=100)
    small.start(plan, 4)
    assert small.lines()[-1].startswith("… 2 more def(s)")


@pytest.mark.rule("CONFORM-PROGRESS-001")
def test_line_progress_prints_a_line_per_finished_def() -> None:
    plan = _plan(_targets("claude"), scenario_filter=["happy"])
    stream = io.StringIO()
    view = LineProgress(stream)
    view.start(plan, 3)
    view(ProgressUpdate("claude", 0, 1, "DEF-ID-001"))
    view(ProgressUpdate("claude", 1, 1, "done", failures=2, finished=True, expected=1))
    assert stream.getvalue().splitlines() == [
        "conform: 1 def(s), 1 fake run(s), 3 at a time",
        "conform: claude: 1/1 runs done, 2 rule(s) failed, 1 expected",
    ]
    assert "\x1b" not in stream.getvalue()


@pytest.mark.rule("CONFORM-PROGRESS-001")
def test_line_progress_says_how_far_the_runs_are_when_no_def_finished_for_a_while() -> None:
    plan = _plan(_targets("claude", "codex"), scenario_filter=["happy", "text"])
    stream = io.StringIO()
    now = [0.0]
    view = LineProgress(stream, every_s=10.0, clock=lambda: now[0])
    view.start(plan, 2)
    for step, def_id in enumerate(("claude", "codex", "claude")):
        now[0] = 6.0 * (step + 1)
        view(ProgressUpdate(def_id, 1, 2, "scenario happy"))
    assert stream.getvalue().splitlines()[1:] == [
        "conform: 2/4 fake runs done, 0/2 def(s) finished",  # at 12 s; at 18 s: too soon
    ]


@pytest.mark.rule("CONFORM-PROGRESS-001", "CONFORM-BASELINE-001")
def test_the_progress_failed_count_is_the_tables_and_a_def_ends_after_its_checks(
    tmp_path: Path,
) -> None:
    from conformance.baseline import parse_entries
    from conformance.verdicts import Disposition

    (target,) = file_targets([str(BROKEN / "wrong_argv.py")], [d.id for d in BUILTIN_DEFS])
    plan = _plan([target], scenario_filter=["happy", "text"], siblings=[*BUILTIN_DEFS, target.defn])
    baseline = parse_entries(
        "broken-argv:RUN-HAPPY-TEXT-001\n", source="b.txt", kind="baseline", known_rules=all_rules()
    )
    updates: list[ProgressUpdate] = []
    result = run_conform(
        plan, on_progress=updates.append, jobs=2, baseline=baseline, work_dir=str(tmp_path)
    )
    (last,) = [u for u in updates if u.finished]
    cells = result.verdict.cells
    assert last.failures == sum(c.disposition is Disposition.FAIL for c in cells) > 1
    assert last.expected == sum(c.disposition is Disposition.EXPECTED_FAIL for c in cells) == 1
    checked = {u.current for u in updates[: updates.index(last)]}
    assert {"MCP-RUN-001", "SKILL-RUN-001"} <= checked  # its adapter-layer checks came first


@pytest.mark.rule("CONFORM-BASELINE-STALE-001")
def test_narrowing_to_one_agent_notes_no_other_defs_baseline_entries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("codex:RUN-HAPPY-TEXT-001\nclaude:RUN-USAGE-001\n", encoding="utf-8")
    code, stdout, _ = _conform(
        capsys,
        *("--agent", "claude", "--scenario", "happy", "--rule", "RUN-HAPPY-TEXT-001"),
        *("--baseline", str(baseline), "--report", "terminal"),
    )
    assert code == 0, stdout
    assert "codex:RUN-HAPPY-TEXT-001" not in stdout
    assert "baseline entry 'claude:RUN-USAGE-001'" in stdout and "matched no cell" in stdout


# ---------------------------------------------------------------------------- the main job


@pytest.mark.stress
@pytest.mark.timeout(1200)
@pytest.mark.rule("CONFORM-CLI-001", "CONFORM-PLAN-001", "CONFORM-EXIT-001")
def test_main_job_conform_over_every_builtin_def_exits_0(tmp_path: Path) -> None:
    """The README's main job: every built-in def, every scenario, every check, exit 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FAKE_CLI_")}
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "conform", "--out", str(tmp_path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1150,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = _report(tmp_path)
    assert set(report["defs"]) == set(BUILTIN_REGISTRY)
    assert report["summary"]["by_disposition"]["fail"] == 0
    for name in ("conform.json", "conform.junit.xml", "conform.html"):
        assert (tmp_path / name).is_file()
    assert "Verdict: CONFORMANT (exit 0)" in proc.stdout


@pytest.mark.rule("DEFCHECK-LOAD-001", "DEF-PROMPT-001")
def test_broken_budget_def_loads_as_stdin_delivery() -> None:
    """The budget case in a file goes through the loader only as stdin delivery (the
    loader refuses argv delivery without a budget: see the test above)."""
    from conformance.checks.loader import load_def_file

    (defn,) = load_def_file(BROKEN / "prompt_in_argv.py")
    assert defn.prompt_delivery is PromptDelivery.STDIN and defn.max_prompt_arg_bytes is None


@pytest.mark.rule("CONFORM-BASELINE-BUILTIN-001")
def test_the_builtin_baseline_is_valid_and_every_gap_has_a_real_recording() -> None:
    from conformance.baseline import load_baseline
    from conformance.conform.plan import BUILTIN_BASELINE
    from conformance.rules import all_rules

    entries = load_baseline(str(BUILTIN_BASELINE), known_rules=all_rules()).entries
    assert entries, "the built-in baseline lists no gap"
    recordings = Path(__file__).resolve().parents[2] / "recordings" / "real"
    for entry in entries:
        assert entry.def_id is not None
        assert any((recordings / entry.def_id).glob("*.jsonl")), entry


@pytest.mark.rule("CONFORM-BASELINE-BUILTIN-001", "CONFORM-BASELINE-STALE-001")
def test_the_builtin_baseline_applies_without_a_baseline_of_ones_own(tmp_path: Path) -> None:
    from harness.cli import main

    out = tmp_path / "out"
    args = ["conform", "--agent", "hermes", "--scenario", "api_error", "--report", "json"]
    code = main([*args, "--out", str(out)])
    report = json.loads((out / "conform.json").read_text(encoding="utf-8"))
    cells = {(c["def_id"], c["rule_id"]): c for c in report["cells"]}
    assert code == 0, report["reasons"]
    assert cells[("hermes", "RUN-FAULT-APIERROR-001")]["disposition"] == "expected_fail"
    empty = tmp_path / "empty.txt"
    empty.write_text("# no gaps\n", encoding="utf-8")
    assert main([*args, "--out", str(out), "--baseline", str(empty)]) == 1


@pytest.mark.rule("CONFORM-PLAN-001", "RUN-TIMEOUT-IDLE-001")
def test_a_lingering_scenario_gets_the_short_inactivity_timeout(tmp_path: Path) -> None:
    """A fake that lingers after its answer is ended by the watchdog: conform gives that
    run a short inactivity timeout so it does not hold a job slot for 30 s."""
    plan = _plan(_targets("aider"))
    runner = Runner(plan, tmp_path, Tracker(plan, None), dict(os.environ))
    linger = runner._request(0, "ignore_stdin")
    happy = runner._request(0, "happy")
    assert linger.inactivity_timeout_ms == LINGER_INACTIVITY_TIMEOUT_MS
    assert happy.inactivity_timeout_ms == INACTIVITY_TIMEOUT_MS
    assert LINGER_INACTIVITY_TIMEOUT_MS < INACTIVITY_TIMEOUT_MS
    assert linger.first_output_timeout_ms == happy.first_output_timeout_ms
    # The watchdog, not the host, ends such a run (a text-stdin CLI has no completion
    # signal), and the run is judged as usual.
    result = run_conform(
        _plan(_targets("aider"), scenario_filter=["ignore_stdin"]), work_dir=str(tmp_path)
    )
    assert result.runs == 1 and result.verdict.failing_cells == ()
    cell = result.verdict.cell("aider", "RUN-TERMINAL-001")
    assert cell is not None and cell.disposition is Disposition.PASS, cell


@pytest.mark.rule("CONFORM-PLAN-001")
def test_a_judged_runs_directories_are_removed_while_conform_goes_on(tmp_path: Path) -> None:
    """Each run's cwd and home go once the run is judged, not all together at the end
    (the shims stay: later runs of the def use them)."""
    plan = _plan(_targets("claude"), scenario_filter=["text"])
    runner = Runner(plan, tmp_path, Tracker(plan, None), dict(os.environ))
    (job,) = plan.jobs
    try:
        outcomes = asyncio.run(runner.run_one(job))
    finally:
        runner.sweeper.close()
    assert outcomes and all(o.scenario == "text" for o in outcomes)
    assert sorted(p.name for p in (tmp_path / "d0").iterdir()) == ["bin"]


@pytest.mark.rule("CONFORM-PLAN-001")
def test_runs_that_wait_on_a_timer_are_marked_and_get_a_lane_of_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run the host cancels, or whose fake lingers for the idle watchdog, waits; such runs
    do not take the lanes of the working runs (``--jobs``)."""
    plan = _plan(_targets("claude"), scenario_filter=["happy", "hang", "stall", "ignore_stdin"])
    waits = {j.scenario: j.waits for j in plan.jobs}
    assert waits == {"happy": False, "hang": True, "stall": True, "ignore_stdin": True}
    runner = Runner(plan, tmp_path, Tracker(plan, None), dict(os.environ))
    at_once: list[str] = []
    peak: list[int] = []

    async def run_one(job: RunJob, rule_ids: Any = None) -> list[Any]:
        at_once.append(job.scenario)
        for _ in range(5):  # every job has started before any ends, if the lanes let it
            await asyncio.sleep(0)
        peak.append(len(at_once))
        at_once.remove(job.scenario)
        return []

    monkeypatch.setattr(runner, "run_one", run_one)
    asyncio.run(runner.run_all(plan.jobs, concurrency=1))
    assert max(peak) == 1 + min(3, WAITING_LANES_PER_JOB)
