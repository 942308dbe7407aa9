"""The scenario files the fakes play (FAKE-SCENARIO-001)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fake_clis.scenario import (
    SCENARIO_DIR,
    ScenarioError,
    list_scenarios,
    load_scenario,
    validate_scenario,
)


@pytest.mark.rule("FAKE-SCENARIO-001")
@pytest.mark.parametrize("name", list_scenarios())
def test_every_bundled_scenario_is_valid(name: str) -> None:
    path = Path(SCENARIO_DIR) / f"{name}.json"
    validate_scenario(json.loads(path.read_text(encoding="utf-8")), source=str(path))
    assert load_scenario(name).name == name


@pytest.mark.rule("FAKE-SCENARIO-001")
def test_a_scenario_given_by_path_is_validated(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "steps": [{"kind": "nonsense"}]}), encoding="utf-8")
    with pytest.raises(ScenarioError) as info:
        load_scenario(str(bad))
    assert str(bad) in str(info.value) and "$.steps[0]" in str(info.value)


@pytest.mark.rule("FAKE-SCENARIO-001")
def test_a_bundled_scenario_is_not_revalidated(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(
        "fake_clis.scenario.validate_scenario", lambda raw, source: calls.append(source)
    )
    load_scenario("happy")
    assert calls == []


@pytest.mark.rule("FAKE-SCENARIO-001")
def test_a_fake_given_a_bad_scenario_names_it_and_exits_2(tmp_path: Path) -> None:
    import subprocess

    from harness.defs.registry import BUILTIN_DEFS
    from harness.runtime.fakes_install import install_fakes

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "steps": [{"kind": "nonsense"}]}), encoding="utf-8")
    report = install_fakes(tmp_path / "bin", BUILTIN_DEFS, agents=["claude"])
    shim = next(path for path, agent in report.written.items() if agent == "claude")
    proc = subprocess.run(
        [shim, "-p", "hi"],
        check=False,
        env={**os.environ, "FAKE_CLI_SCENARIO": str(bad)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert str(bad) in proc.stderr and "$.steps[0]" in proc.stderr
    assert "Traceback" not in proc.stderr
