"""conformance.forked: a function run in a forked copy of the process, and conform's argv
checks judged there exactly as they are judged in the process itself.

Each case runs in a fresh interpreter: a copy is only made while one thread runs, which a
pytest worker does not promise.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.checks import all_checks
from conformance.conform.plan import ConformPlan, builtin_targets, file_targets, plan_conform
from conformance.conform.run import ConformResult, run_conform
from conformance.forked import Forked
from conformance.rules import all_rules
from fake_clis.scenario import list_scenarios
from harness.defs.registry import BUILTIN_DEFS

ROOT = Path(__file__).resolve().parents[2]
BROKEN = Path(__file__).resolve().parent / "broken_defs"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="a copy is made on Linux only"
)


def _python(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.mark.rule("CONFORM-PLAN-001")
def test_the_copy_sends_items_then_its_result_and_changes_nothing_here() -> None:
    got = _python(
        "import json, os, sys\n"
        "from conformance.forked import Forked\n"
        "def flip(send):\n"
        "    sys.platform = 'win32'\n"
        "    send('first'); send({'second': 2})\n"
        "    return {'pid': os.getpid(), 'platform': sys.platform}\n"
        "copy = Forked.start(flip)\n"
        "items = []\n"
        "there = copy.result(items.append)\n"
        "print(json.dumps({'there': there, 'items': items, 'pid': os.getpid(),\n"
        "    'platform': sys.platform}))\n"
    )
    assert got["there"] == {"pid": got["there"]["pid"], "platform": "win32"}  # type: ignore[index]
    assert got["there"]["pid"] != got["pid"]  # type: ignore[index]
    assert got["platform"] == sys.platform
    assert got["items"] == ["first", {"second": 2}]


@pytest.mark.rule("CONFORM-PLAN-001")
def test_a_copy_that_raises_is_an_error_and_no_copy_is_made_beside_a_thread() -> None:
    got = _python(
        "import json, threading\n"
        "from conformance.forked import Forked, ForkedError\n"
        "def boom(send):\n"
        "    raise ValueError('no')\n"
        "try:\n"
        "    Forked.start(boom).result()\n"
        "    raised = False\n"
        "except ForkedError:\n"
        "    raised = True\n"
        "stop = threading.Event()\n"
        "worker = threading.Thread(target=stop.wait)\n"
        "worker.start()\n"
        "beside = Forked.start(lambda send: 1)\n"
        "stop.set(); worker.join()\n"
        "print(json.dumps({'raised': raised, 'beside': beside is None}))\n"
    )
    assert got == {"raised": True, "beside": True}


def test_no_copy_is_made_beside_a_thread_python_does_not_count() -> None:
    # A thread threading never registered (started with _thread, or one still exiting)
    # is still a thread of the process: forking beside it is what Python 3.12 warns of.
    got = _python(
        "import _thread, json, threading, time\n"
        "from conformance.forked import Forked\n"
        "_thread.start_new_thread(time.sleep, (2,))\n"
        "time.sleep(0.1)\n"
        "beside = Forked.start(lambda send: 1)\n"
        "print(json.dumps({'counted': threading.active_count(), 'beside': beside is None}))\n"
    )
    assert got == {"counted": 1, "beside": True}


def _verdicts(result: ConformResult) -> list[tuple[str, str, str, str]]:
    return sorted((c.def_id, c.rule_id, c.status.value, c.reason) for c in result.verdict.cells)


@pytest.mark.rule("CONFORM-PLAN-001", "DEF-PROMPT-001")
def test_argv_checks_judged_in_a_copy_or_here_give_the_same_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The argv checks of a failing def and a built-in one, with no fake run: judged here
    (no copy can be made), then in a copy (a fresh interpreter, one thread)."""
    defs = [str(BROKEN / "prompt_in_argv.py")]
    targets = builtin_targets(BUILTIN_DEFS, ["claude"])
    targets += file_targets(defs, reserved_ids=[d.id for d in BUILTIN_DEFS])
    serial = [
        r for r, c in all_checks("def").items() if c.func.__module__ == "conformance.checks.defs"
    ]
    plan = plan_conform(
        targets,
        def_checks=all_checks("def"),
        run_checks=all_checks("run"),
        catalog=all_rules(),
        scenarios=list_scenarios(),
        rule_filter=serial,
        siblings=[*BUILTIN_DEFS, *(t.defn for t in targets[1:])],
    )
    monkeypatch.setattr(Forked, "start", classmethod(lambda cls, func: None))
    here = _verdicts(run_conform(plan, work_dir=str(tmp_path)))
    assert ("broken-budget", "DEF-PROMPT-001", "fail") in [h[:3] for h in here]
    there = _python(
        "import json\n"
        "from conformance.conform.plan import builtin_targets, file_targets, plan_conform\n"
        "from conformance.conform.run import run_conform\n"
        "from conformance.forked import Forked\n"
        "from conformance.checks import all_checks\n"
        "from conformance.rules import all_rules\n"
        "from fake_clis.scenario import list_scenarios\n"
        "from harness.defs.registry import BUILTIN_DEFS\n"
        "made = []\n"
        "start = Forked.start.__func__\n"
        "def spy(cls, func):\n"
        "    copy = start(cls, func)\n"
        "    made.append(copy is not None)\n"
        "    return copy\n"
        "Forked.start = classmethod(spy)\n"
        f"targets = builtin_targets(BUILTIN_DEFS, ['claude'])\n"
        f"targets += file_targets({defs!r}, reserved_ids=[d.id for d in BUILTIN_DEFS])\n"
        "plan = plan_conform(targets, def_checks=all_checks('def'),\n"
        "    run_checks=all_checks('run'), catalog=all_rules(), scenarios=list_scenarios(),\n"
        f"    rule_filter={serial!r},\n"
        "    siblings=[*BUILTIN_DEFS, *(t.defn for t in targets[1:])])\n"
        "result = run_conform(plan)\n"
        "cells = sorted((c.def_id, c.rule_id, c.status.value, c.reason)\n"
        "    for c in result.verdict.cells)\n"
        "print(json.dumps({'made': made, 'cells': cells}))\n"
    )
    assert there["made"] == [True]
    assert [tuple(c) for c in there["cells"]] == here  # type: ignore[attr-defined]


def split_plan() -> ConformPlan:
    """claude and a def whose argv fails, on three scenarios: 6 runs, more than 2 lanes."""
    targets = builtin_targets(BUILTIN_DEFS, ["claude"])
    wrong = [str(BROKEN / "wrong_argv.py")]
    targets += file_targets(wrong, reserved_ids=[d.id for d in BUILTIN_DEFS])
    return plan_conform(
        targets,
        def_checks=[],
        run_checks=all_checks("run"),
        catalog=all_rules(),
        scenarios=["happy", "text", "hang"],
        siblings=[*BUILTIN_DEFS, *(t.defn for t in targets[1:])],
    )


@pytest.mark.rule("CONFORM-PLAN-001", "RUN-HAPPY-TEXT-001")
def test_fake_runs_split_with_a_copy_give_the_same_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More runs than lanes: a copy makes every second run. Judged so in a fresh
    interpreter, and all here (no copy), the verdicts are the same."""
    monkeypatch.setattr(Forked, "start", classmethod(lambda cls, func: None))
    result = run_conform(split_plan(), jobs=2, work_dir=str(tmp_path))
    here = [v[:3] for v in _verdicts(result)]
    assert result.runs == 6 and ("broken-argv", "RUN-HAPPY-TEXT-001", "fail") in here
    there = _python(
        "import json\n"
        "from conformance.conform.run import run_conform\n"
        "from conformance.forked import Forked\n"
        "from tests.conformance.test_forked import split_plan\n"
        "made = []\n"
        "start = Forked.start.__func__\n"
        "def spy(cls, func):\n"
        "    copy = start(cls, func)\n"
        "    made.append(copy is not None)\n"
        "    return copy\n"
        "Forked.start = classmethod(spy)\n"
        "done = []\n"
        "result = run_conform(split_plan(), jobs=2, on_progress=done.append)\n"
        "cells = sorted((c.def_id, c.rule_id, c.status.value) for c in result.verdict.cells)\n"
        "reported = sum(1 for u in done if u.current.startswith('scenario'))\n"
        "print(json.dumps({'made': made, 'cells': cells, 'runs': result.runs,\n"
        "    'reported': reported}))\n"
    )
    assert there["made"] == [True]  # the runs' copy (no argv check in this plan)
    assert there["runs"] == 6
    assert there["reported"] == 6  # the copy's runs, too, are shown as they finish
    assert [tuple(c) for c in there["cells"]] == here  # type: ignore[attr-defined]
