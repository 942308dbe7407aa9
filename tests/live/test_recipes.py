"""Recipes and schema (LIVE-RECIPE-001) and the explicit skip (LIVE-SKIP-001)."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from harness.defs.registry import BUILTIN_REGISTRY, get_agent_def
from harness.live.conform import LIVE_RULES, real_findings
from harness.live.recipes import (
    RECIPE_DIR,
    RecipeError,
    check_recipe_against_def,
    load_recipe,
    load_recipes,
    parse_recipe,
    recipe_for,
)
from harness.live.session import LiveUnavailable, run_live

GOOD: dict[str, Any] = {
    "format": "live-recipe-v1",
    "agent": "claude",
    "package": {"manager": "npm", "name": "x", "version": "1.2.3", "bin": "x"},
    "provider": "anthropic",
    "env": {"K": "{base_url}"},
    "files": [{"path": ".x/c.json", "json": {"u": "{base_url}/v1", "k": "{fake_key}"}}],
    "scenarios": ["text", {"scenario": "text", "turns": 2}],
}


@pytest.mark.rule("LIVE-RECIPE-001")
def test_every_shipped_recipe_is_valid_and_matches_its_def() -> None:
    recipes = load_recipes()
    assert {"claude", "codex", "pi", "qoder"} <= set(recipes)
    for agent, recipe in recipes.items():
        assert Path(recipe.path).stem == agent
        if agent in BUILTIN_REGISTRY:
            check_recipe_against_def(recipe, BUILTIN_REGISTRY[agent])
    codex = recipes["codex"]
    assert codex.transport_names(get_agent_def("codex")) == ("exec-json", "app-server")


@pytest.mark.rule("LIVE-RECIPE-001")
def test_a_good_recipe_parses_with_defaults() -> None:
    recipe = parse_recipe(GOOD, path="claude.json", expect_agent="claude")
    assert [c.id for c in recipe.scenarios] == ["text", "text-resume"]
    assert recipe.scenarios[1].turns == 2
    assert recipe.scenarios[1].cancel_after_ms is None
    assert recipe.isolate_tmpdir and recipe.isolate_pwd and recipe.timeout_s == 120.0
    assert recipe.files[0].is_json


@pytest.mark.rule("LIVE-RECIPE-001")
def test_a_cancel_case_names_when_the_user_cancels() -> None:
    raw = copy.deepcopy(GOOD)
    raw["scenarios"] = [{"id": "cancel", "scenario": "hang", "cancel_after_ms": 500}]
    (case,) = parse_recipe(raw, path="claude.json", expect_agent="claude").scenarios
    assert (case.id, case.scenario, case.cancel_after_ms) == ("cancel", "hang", 500)
    raw["scenarios"][0]["cancel_after_ms"] = -1
    with pytest.raises(RecipeError, match="cancel_after_ms"):
        parse_recipe(raw, path="claude.json", expect_agent="claude")


def _mutate(path: str, value: Any) -> dict[str, Any]:
    raw = copy.deepcopy(GOOD)
    *parents, last = path.split(".")
    node: Any = raw
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    if value is KeyError:
        del node[last]
    elif last.isdigit():
        node[int(last)] = value
    else:
        node[last] = value
    return raw


@pytest.mark.rule("LIVE-RECIPE-001")
@pytest.mark.parametrize(
    ("path", "value", "field", "words"),
    [
        ("package.version", "^1.2", "package.version", "does not match"),
        ("package.manager", "cargo", "package.manager", "is not one of"),
        ("provider", "openai", "provider", "is not one of"),
        ("env.K", "{bse_url}", "env.K", "unknown placeholder {bse_url}"),
        ("files.0.path", "../x", "files[0].path", "'..'"),
        ("files.0.path", "/etc/x", "files[0].path", "relative to HOME"),
        ("scenarios.0", "no_such_scenario", "scenarios[0]", "no scenario file"),
        ("scenarios.1", "text", "scenarios[1]", "listed twice"),
        ("package", KeyError, "$", "'package' is a required property"),
        ("surprise", 1, "$", "Additional properties"),
        ("package.pythons", ["3.13"], "package.pythons", "installed with npm, not pypi"),
        ("package.pythons", ["3.13", "3.13"], "package.pythons", "non-unique"),
        ("package.pythons", ["3.13.0"], "package.pythons[0]", "does not match"),
    ],
)
def test_errors_name_the_file_and_the_field(path: str, value: Any, field: str, words: str) -> None:
    with pytest.raises(RecipeError) as info:
        parse_recipe(_mutate(path, value), path="recipes/claude.json")
    err = info.value
    assert (err.path, err.field) == ("recipes/claude.json", field), str(err)
    assert words in err.problem and err.rule == "LIVE-RECIPE-001"


@pytest.mark.rule("LIVE-RECIPE-001")
def test_pythons_name_the_versions_a_pypi_cli_runs_on() -> None:
    pypi = {"manager": "pypi", "name": "x", "version": "1.0", "bin": "x", "python": "3.12"}
    recipe = parse_recipe({**GOOD, "package": {**pypi, "pythons": ["3.13", "3.14"]}}, path="c")
    assert recipe.package is not None and recipe.package.pythons == ("3.13", "3.14")
    with pytest.raises(RecipeError) as info:
        parse_recipe({**GOOD, "package": {**pypi, "pythons": ["3.13", "3.11"]}}, path="c")
    assert info.value.field == "package.pythons[1]"
    assert "3.11 is below the package's minimum Python 3.12" in info.value.problem
    kimi = recipe_for("kimi")
    # kimi-cli 1.51.0 fails at start on 3.11 and 3.12 (TypeError: super(type, obj))
    assert kimi is not None and kimi.package is not None and kimi.package.pythons == ("3.13",)


@pytest.mark.rule("LIVE-RECIPE-001")
def test_file_stem_must_equal_agent_and_json_errors_are_located(tmp_path: Path) -> None:
    wrong = tmp_path / "codex.json"
    wrong.write_text(json.dumps(GOOD))
    with pytest.raises(RecipeError, match=r"codex.json: agent: is 'claude'"):
        load_recipe(wrong)
    broken = tmp_path / "claude.json"
    broken.write_text('{"format": ')
    with pytest.raises(RecipeError, match=r"claude.json: \$: not JSON"):
        load_recipe(broken)


@pytest.mark.rule("LIVE-RECIPE-001")
def test_recipe_is_checked_against_the_defs_transports_and_resume() -> None:
    recipe = parse_recipe({**GOOD, "transports": ["app-server"]}, path="claude.json")
    with pytest.raises(RecipeError, match=r"transports\[0\].*not a transport of def 'claude'"):
        check_recipe_against_def(recipe, get_agent_def("claude"))
    no_resume = next(d for d in BUILTIN_REGISTRY.values() if d.resume_style.value == "none")
    two_turns = parse_recipe({**GOOD, "agent": no_resume.id}, path="x.json")
    with pytest.raises(RecipeError, match=r"scenarios\[1\]\.turns"):
        check_recipe_against_def(two_turns, no_resume)


@pytest.mark.rule("LIVE-SKIP-001")
def test_a_skip_recipe_is_never_launched_and_every_verdict_is_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    recipe = recipe_for("qoder")
    assert recipe is not None and recipe.skipped
    assert "public IP" in (recipe.skip_reason or "")
    # An empty PATH and no installs: any launch attempt would fail differently.
    monkeypatch.setenv("PATH", "")
    with pytest.raises(LiveUnavailable) as info:
        run_live(get_agent_def("qoder"), "text")
    assert info.value.reason == recipe.skip_reason
    found = real_findings(get_agent_def("qoder"))
    assert [r for r, _s, _f in found] == list(LIVE_RULES)
    assert all(f.status.value == "skipped" and "public IP" in f.reason for _r, _s, f in found)


@pytest.mark.rule("LIVE-SKIP-001")
def test_not_installed_and_no_recipe_are_skipped_with_the_reason(tmp_path: Path) -> None:
    found = real_findings(get_agent_def("claude"), scenarios=["text"], cache_dir=tmp_path)
    assert found and all(f.status.value == "skipped" for _r, _s, f in found)
    assert (
        "not installed" in found[0][2].reason
        and "harness live install claude" in found[0][2].reason
    )
    # every built-in def has a recipe (a run or a skip with evidence); a user's own def has none
    assert all((RECIPE_DIR / f"{d.id}.json").exists() for d in BUILTIN_REGISTRY.values())
    no_recipe = dataclasses.replace(get_agent_def("claude"), id="my-claude")
    found = real_findings(no_recipe)
    assert all(f.status.value == "skipped" and "no live recipe" in f.reason for _r, _s, f in found)


#: What a skip reason must not say: it is read by users on their own machines, so it speaks
#: of the CLI (a login, a vendor script, a download at install time), never of the machine
#: the harness was built on or how its packages were looked up.
_NOT_ABOUT_THE_CLI = re.compile(r"(?i)this machine|\bhere\b|registr|name lists?\b|searched")


@pytest.mark.rule("LIVE-SKIP-001")
def test_a_skip_reason_speaks_of_the_cli_not_of_the_machine() -> None:
    skips = {a: r for a, r in load_recipes().items() if r.skipped}
    assert {"qoder", "amp", "deepseek"} <= set(skips)
    for agent, recipe in skips.items():
        for what, text in (
            ("skip.reason", recipe.skip_reason or ""),
            ("description", recipe.description),
        ):
            found = _NOT_ABOUT_THE_CLI.search(text)
            assert found is None, f"{agent} {what}: {found.group(0)!r} in {text!r}"
    # deepseek: the fact that holds for its users
    assert "downloads its binary at install time" in (skips["deepseek"].skip_reason or "")
