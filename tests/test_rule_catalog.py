"""Meta-tests: the rule catalog and the tests stay bound both ways (CATALOG-*)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.rules import RULE_ID_PATTERN, Rule, Tier, all_rules

TESTS_DIR = Path(__file__).parent


class _Collector:
    def __init__(self) -> None:
        self.ids: dict[str, list[str]] = {}

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            for mark in item.iter_markers("rule"):
                for rid in mark.args:
                    self.ids.setdefault(str(rid), []).append(item.nodeid)


@pytest.fixture(scope="module")
def bound_ids() -> dict[str, list[str]]:
    collector = _Collector()
    code = pytest.main(
        [
            "--collect-only",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:randomly",
            # syrupy would call every snapshot "unused" in a collect-only session
            "-p",
            "no:syrupy",
            str(TESTS_DIR),
        ],
        plugins=[collector],
    )
    assert code == 0, f"collection failed with exit code {code}"
    return collector.ids


@pytest.mark.rule("CATALOG-BINDING-001")
def test_every_rule_has_at_least_one_test(bound_ids: dict[str, list[str]]) -> None:
    missing = sorted(set(all_rules()) - set(bound_ids))
    assert not missing, f"rules with no test marked @pytest.mark.rule(...): {missing}"


@pytest.mark.rule("CATALOG-BINDING-001")
def test_every_marked_id_is_a_known_rule(bound_ids: dict[str, list[str]]) -> None:
    unknown = sorted(set(bound_ids) - set(all_rules()))
    assert not unknown, f"tests name unknown rule ids: {unknown}"


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_rule_ids_and_fields_are_well_formed() -> None:
    rules = all_rules()
    assert rules, "the catalog is empty"
    for rule in rules.values():
        assert RULE_ID_PATTERN.match(rule.id)
        assert isinstance(rule.tier, Tier)


@pytest.mark.rule("CATALOG-FORMAT-001")
@pytest.mark.parametrize(
    ("kwargs", "problem"),
    [
        ({"id": "bad id"}, "does not match"),
        ({"tier": Tier.CAPABILITY}, "capability is set iff"),
        ({"statement": "two\nlines"}, "one non-empty line"),
        ({"citation": "somewhere"}, "citation"),
    ],
)
def test_rule_constructor_rejects_malformed_entries(
    kwargs: dict[str, object], problem: str
) -> None:
    base: dict[str, object] = {
        "id": "X-Y-001",
        "tier": Tier.MANDATORY,
        "statement": "A statement.",
        "citation": "seed 000 §1",
    }
    base.update(kwargs)
    with pytest.raises(ValueError, match=problem):
        Rule(**base)  # type: ignore[arg-type]
