"""Meta-tests: the rule catalog and the tests stay bound both ways (CATALOG-*)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conformance.rules import RULE_ID_PATTERN, Rule, Tier, all_rules
from conformance.rules.spec import (
    DOCUMENTS,
    SPEC_DIR,
    CitationError,
    anchors_in,
    check,
    render_blocks,
    resolve,
    write,
)

TESTS_DIR = Path(__file__).parent
ROOT = TESTS_DIR.parent


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


# -- citations resolve into docs/spec/ (CATALOG-FORMAT-001) --------------------


@pytest.mark.rule("CATALOG-FORMAT-001")
@pytest.mark.parametrize(
    ("citation", "links"),
    [
        pytest.param(
            "seed 002 §6.3", ("docs/spec/adapter-layer.md#seed-002-6.3",), id="seed-section"
        ),
        pytest.param(
            "wire §A.1.2; ref §2.6",
            ("docs/spec/wire-formats.md#wire-a.1.2", "docs/spec/upstream-behaviour.md#ref-2.6"),
            id="two-parts",
        ),
        pytest.param(
            "design §Live mode", ("docs/spec/design.md#design-live-mode",), id="named-section"
        ),
        pytest.param(
            "seed 000 §12 (AMR compaction continuation)",
            ("docs/spec/adapters.md#seed-000-12",),
            id="gloss-ignored",
        ),
        pytest.param(
            "design §Principles 3 (nothing dropped); claude 2.1.332 in recordings/real/claude",
            ("docs/spec/design.md#design-principles-3", "recordings/real/claude"),
            id="recorded-evidence",
        ),
    ],
)
def test_citation_resolves_to_links(citation: str, links: tuple[str, ...]) -> None:
    assert resolve(citation) == links


@pytest.mark.rule("CATALOG-FORMAT-001")
@pytest.mark.parametrize(
    ("citation", "problem"),
    [
        pytest.param("seed 003 §1", "part 1 'seed 003 §1'", id="unknown-document"),
        pytest.param("ref §2.6;", "part 2 ''", id="empty-part"),
        pytest.param("ref §", "part 1", id="no-section"),
        pytest.param("claude 2.1 in recordings/real/claude", "part 1", id="evidence-alone"),
        pytest.param("ref §2.6; somewhere else", "part 2 'somewhere else'", id="stray-part"),
    ],
)
def test_unresolvable_citation_is_a_clear_error(citation: str, problem: str) -> None:
    with pytest.raises(CitationError, match=re.escape(problem)):
        resolve(citation)


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_every_rule_links_to_an_anchor_that_exists() -> None:
    """Parse the Markdown: every link of every rule names an existing anchor (or path)."""
    anchors = {
        f"{SPEC_DIR}/{doc.file}": set(anchors_in((ROOT / SPEC_DIR / doc.file).read_text("utf-8")))
        for doc in DOCUMENTS.values()
    }
    missing: list[str] = []
    for rule in all_rules().values():
        for link in rule.links:
            file, _, anchor = link.partition("#")
            found = anchor in anchors.get(file, set()) if anchor else (ROOT / file).exists()
            if not found:
                missing.append(f"{rule.id} -> {link}")
    assert not missing, f"citations with no section in docs/spec/: {missing}"


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_spec_agrees_with_the_catalog() -> None:
    """No broken citation, no stale rule-id block (`python -m conformance.rules.spec --write`)."""
    problems = [str(p) for p in check()]
    assert not problems, "\n".join(problems)


def _spec_copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / SPEC_DIR, tmp_path / SPEC_DIR)
    shutil.copytree(ROOT / "recordings" / "real" / "claude", tmp_path / "recordings/real/claude")
    return tmp_path


def _rule(rule_id: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, "A statement.", citation)


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_checker_catches_a_citation_without_an_anchor(tmp_path: Path) -> None:
    rules = [*all_rules().values(), _rule("X-NOWHERE-001", "ref §99.9")]
    problems = [str(p) for p in check(_spec_copy(tmp_path), rules)]
    assert any("X-NOWHERE-001" in p and "has no anchor 'ref-99.9'" in p for p in problems), problems


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_checker_catches_an_unparsable_citation(tmp_path: Path) -> None:
    rules = [*all_rules().values(), _rule("X-BROKEN-001", "ref §2.6; elsewhere")]
    problems = [str(p) for p in check(_spec_copy(tmp_path), rules)]
    assert any(p.startswith("X-BROKEN-001:") and "part 2" in p for p in problems), problems


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_checker_catches_a_stale_block_and_write_fixes_it(tmp_path: Path) -> None:
    """A new rule citing an existing section makes the spec stale until it is regenerated."""
    root = _spec_copy(tmp_path)
    write(root)  # in step with the catalog as it stands, whatever others just added
    rules = [*all_rules().values(), _rule("X-NEWRULE-001", "ref §2.8")]
    problems = [str(p) for p in check(root, rules)]
    assert problems == [
        "docs/spec/upstream-behaviour.md: rule-id blocks are stale; "
        "run `python -m conformance.rules.spec --write`"
    ]
    citing = {"docs/spec/upstream-behaviour.md#ref-2.8": ["X-NEWRULE-001"]}
    path = root / SPEC_DIR / "upstream-behaviour.md"
    text = render_blocks(path.read_text("utf-8"), "upstream-behaviour.md", citing)
    assert "<!-- rules:begin ref-2.8 -->\nEnforced by 1 rule: `X-NEWRULE-001`.\n" in text


@pytest.mark.rule("CATALOG-FORMAT-001")
def test_checker_catches_a_removed_anchor_and_a_duplicate(tmp_path: Path) -> None:
    root = _spec_copy(tmp_path)
    path = root / SPEC_DIR / "dsh-profile.md"
    text = path.read_text("utf-8")
    text = text.replace('<a id="seed-001-9"></a>', "").replace(
        '<a id="seed-001-10"></a>', '<a id="seed-001-10"></a>\n<a id="seed-001-10"></a>'
    )
    path.write_text(text, "utf-8")
    problems = [str(p) for p in check(root)]
    assert any("has no anchor 'seed-001-9'" in p for p in problems), problems
    assert any("rules block for unknown anchor 'seed-001-9'" in p for p in problems), problems
    assert any("anchor 'seed-001-10' twice" in p for p in problems), problems
