"""Skill composition into the prompt (seed 000 §4 steps 2 and 4).

Rules: SKILL-PROMPT-001, SKILL-PROMPT-002 (conformance/rules/skills.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.host.skills import (
    Skill,
    SkillError,
    compose_skill_prompt,
    referenced_side_files,
    skill_body,
    stage_skill,
)

BODY = """# Landing page

Read references/tone.md before writing copy, then start from ./assets/template.html.
The checklist lives at `references/checklist.md`. (Ignore references/missing.md.)
"""


def make_skill(root: Path, name: str = "landing") -> Path:
    src = root / name
    (src / "references").mkdir(parents=True)
    (src / "assets").mkdir()
    (src / "SKILL.md").write_text(
        "---\nname: landing\ndescription: Landing pages.\n---\n" + BODY, encoding="utf-8"
    )
    (src / "references" / "tone.md").write_text("TONE-SECRET-BODY\n", encoding="utf-8")
    (src / "references" / "checklist.md").write_text("CHECKLIST-BODY\n", encoding="utf-8")
    (src / "references" / "unused.md").write_text("UNUSED-BODY\n", encoding="utf-8")
    (src / "assets" / "template.html").write_text("<html>TEMPLATE-BODY</html>\n", encoding="utf-8")
    return src


@pytest.fixture
def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir()
    return cwd


@pytest.mark.rule("SKILL-PROMPT-001")
def test_prompt_names_the_staged_and_the_source_root(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    skill = Skill("landing", str(src))
    staged = stage_skill(str(project), skill)
    prompt = compose_skill_prompt([skill], [staged])
    assert f"`{staged.relative_dir}/`" in prompt
    assert staged.relative_dir.startswith(".od-skills/landing-")
    assert f"`{src}`" in prompt
    assert BODY.strip() in prompt
    assert "description: Landing pages." not in prompt, "front matter is not part of the body"
    assert prompt.index(staged.relative_dir) < prompt.index("# Landing page")


@pytest.mark.rule("SKILL-PROMPT-001")
def test_each_selected_skill_is_composed_in_order(tmp_path: Path, project: Path) -> None:
    a = make_skill(tmp_path / "skills", "alpha")
    b = tmp_path / "skills" / "beta"
    b.mkdir()
    (b / "SKILL.md").write_text("# Beta skill body\n", encoding="utf-8")
    skills = [Skill("alpha", str(a)), Skill("beta", str(b))]
    staged = [stage_skill(str(project), s) for s in skills]
    prompt = compose_skill_prompt(skills, staged)
    assert prompt.index("# Landing page") < prompt.index("# Beta skill body")
    for item in staged:
        assert item.relative_dir in prompt
    assert str(b) in prompt


@pytest.mark.rule("SKILL-PROMPT-001")
def test_unstaged_skill_gets_the_absolute_root_only(tmp_path: Path) -> None:
    src = make_skill(tmp_path / "skills")
    prompt = compose_skill_prompt([Skill("landing", str(src))], [])
    assert ".od-skills" not in prompt
    assert f"`{src}`" in prompt
    assert "not staged" in prompt
    assert "`references/tone.md`" in prompt


@pytest.mark.rule("SKILL-PROMPT-001")
def test_missing_skill_md_is_a_typed_error(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SkillError) as info:
        compose_skill_prompt([Skill("empty", str(empty))], [])
    assert "SKILL.md" in str(info.value)


@pytest.mark.rule("SKILL-PROMPT-001")
def test_body_without_front_matter_is_kept_whole(tmp_path: Path) -> None:
    src = tmp_path / "plain"
    src.mkdir()
    (src / "SKILL.md").write_text("--- not front matter\nbody\n", encoding="utf-8")
    assert skill_body(str(src)) == "--- not front matter\nbody\n"


@pytest.mark.rule("SKILL-PROMPT-002")
def test_referenced_side_files_are_listed_not_inlined(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    skill = Skill("landing", str(src))
    staged = stage_skill(str(project), skill)
    prompt = compose_skill_prompt([skill], [staged])
    listing = next(line for line in prompt.splitlines() if "Side files" in line)
    for name in ("assets/template.html", "references/checklist.md", "references/tone.md"):
        assert f"`{name}`" in listing
    assert "unused.md" not in listing, "only files the body references are listed"
    assert "missing.md" not in listing, "only files that exist are listed"
    for content in ("TONE-SECRET-BODY", "CHECKLIST-BODY", "UNUSED-BODY", "TEMPLATE-BODY"):
        assert content not in prompt, f"{content} was inlined"
    assert f"{staged.relative_dir}/assets/template.html" in prompt


@pytest.mark.rule("SKILL-PROMPT-002")
@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("see references/a.md.", ["references/a.md"]),
        ("see ./references/a.md, then assets/b.html", ["assets/b.html", "references/a.md"]),
        ("see references\\a.md", ["references/a.md"]),
        ("see xreferences/a.md or references/a.mdx", []),
        ("SKILL.md only", []),
    ],
)
def test_side_file_tokens(body: str, expected: list[str]) -> None:
    files = ["SKILL.md", "references/a.md", "assets/b.html"]
    assert referenced_side_files(body, files) == expected
