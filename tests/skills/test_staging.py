"""Skill staging into ``<cwd>/.od-skills/`` (seed 000 §4 step 3).

Rules: SKILL-STAGE-001, SKILL-STAGE-002, SKILL-ISOLATE-001, SKILL-LINK-001, SKILL-LINK-002,
SKILL-EXDEV-001, SKILL-ROOT-001 (conformance/rules/skills.py). Every test stages real files in
``tmp_path``; links are real symlinks (skipped where the OS refuses to create them).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

import pytest

import harness.host.skills as skills_mod
from harness.host.skills import (
    SKILLS_DIR_NAME,
    Skill,
    SkillLinkError,
    SkillStagingError,
    context_skill_dirs,
    stage_skill,
    stage_skills,
    staged_segment,
)

SKILL_MD = (
    "---\nname: landing\ndescription: A landing page.\n---\n# Landing\n\nUse references/tone.md.\n"
)


def make_skill(root: Path, name: str = "landing") -> Path:
    src = root / name
    (src / "references").mkdir(parents=True)
    (src / "assets" / "img").mkdir(parents=True)
    (src / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    (src / "references" / "tone.md").write_text("TONE-CONTENT\n", encoding="utf-8")
    (src / "assets" / "template.html").write_text("<html></html>\n", encoding="utf-8")
    (src / "assets" / "img" / "logo.svg").write_bytes(b"<svg/>\x00\xff")
    return src


def symlink(target: Path | str, link: Path, *, directory: bool = False) -> None:
    try:
        os.symlink(target, link, target_is_directory=directory)
    except (OSError, NotImplementedError) as exc:  # e.g. Windows without the privilege
        pytest.skip(f"cannot create symlinks here: {exc}")


def tree(root: Path) -> dict[str, bytes | None]:
    """Every entry under ``root``: files -> bytes, directories -> None (links not followed)."""
    out: dict[str, bytes | None] = {}
    for here, dirs, files in os.walk(root):
        for name in dirs:
            out[os.path.relpath(os.path.join(here, name), root).replace(os.sep, "/")] = None
        for name in files:
            path = os.path.join(here, name)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            out[rel] = Path(path).read_bytes() if os.path.isfile(path) else b"<link>"
    return out


def assert_only_real_entries(root: Path) -> None:
    for here, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = os.path.join(here, name)
            info = os.lstat(path)
            assert not stat.S_ISLNK(info.st_mode), f"{path} is a link"
            assert stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode), path
            if stat.S_ISREG(info.st_mode):
                assert info.st_nlink == 1, f"{path} is hard-linked"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    cwd = tmp_path / "project"
    cwd.mkdir()
    return cwd


# --------------------------------------------------------------------------- SKILL-STAGE-001


@pytest.mark.rule("SKILL-STAGE-001")
def test_stage_copies_real_files_with_the_same_bytes(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    staged = stage_skill(str(project), Skill("landing", str(src)))
    dest = Path(staged.staged_dir)
    assert dest.parent == project / SKILLS_DIR_NAME
    assert tree(dest) == tree(src)
    assert_only_real_entries(dest)
    for rel in staged.files:
        assert not os.path.samefile(dest / rel, src / rel)
    assert staged.files == (
        "SKILL.md",
        "assets/img/logo.svg",
        "assets/template.html",
        "references/tone.md",
    )
    assert staged.skipped == ()
    assert staged.used_fallback is False


@pytest.mark.rule("SKILL-STAGE-001")
def test_stage_skills_stages_each_source_once(tmp_path: Path, project: Path) -> None:
    a = make_skill(tmp_path / "skills", "a")
    b = make_skill(tmp_path / "skills", "b")
    result = stage_skills(
        str(project), [Skill("a", str(a)), Skill("b", str(b)), Skill("a2", str(a))]
    )
    assert [s.skill_id for s in result] == ["a", "b", "a2"]
    assert result[0].staged_dir == result[2].staged_dir
    assert result[0].staged_dir != result[1].staged_dir
    assert sorted(os.listdir(project / SKILLS_DIR_NAME)) == sorted(
        [staged_segment(str(a)), staged_segment(str(b))]
    )
    assert context_skill_dirs(result) == (result[0].staged_dir, result[1].staged_dir)


@pytest.mark.rule("SKILL-STAGE-001")
def test_missing_source_is_a_typed_error(tmp_path: Path, project: Path) -> None:
    with pytest.raises(SkillStagingError) as info:
        stage_skill(str(project), Skill("ghost", str(tmp_path / "nope")))
    assert "nope" in str(info.value)
    assert info.value.code == "SKILL_STAGING_FAILED"


@pytest.mark.posix
@pytest.mark.rule("SKILL-STAGE-001")
def test_special_files_are_reported_not_copied(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    os.mkfifo(src / "pipe")
    staged = stage_skill(str(project), Skill("landing", str(src)))
    assert staged.skipped == ("pipe",)
    assert not os.path.lexists(os.path.join(staged.staged_dir, "pipe"))


# --------------------------------------------------------------------------- SKILL-STAGE-002


@pytest.mark.rule("SKILL-STAGE-002")
def test_segment_is_basename_and_12_hex_of_the_absolute_source_path(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = make_skill(tmp_path / "skills")
    monkeypatch.chdir(tmp_path)
    staged = stage_skill(str(project), Skill("landing", os.path.join("skills", "landing")))
    absolute = str(tmp_path / "skills" / "landing").replace("\\", "/")
    digest = hashlib.sha256(absolute.encode("utf-8")).hexdigest()[:12]
    assert os.path.basename(staged.staged_dir) == f"landing-{digest}"
    assert staged.relative_dir == f".od-skills/landing-{digest}"
    assert staged.source_dir == str(src)


@pytest.mark.rule("SKILL-STAGE-002")
def test_same_basename_different_sources_get_different_folders(tmp_path: Path) -> None:
    one = staged_segment(str(tmp_path / "x" / "landing"))
    two = staged_segment(str(tmp_path / "y" / "landing"))
    assert one.startswith("landing-") and two.startswith("landing-")
    assert one != two


@pytest.mark.rule("SKILL-STAGE-002")
def test_restaging_reuses_the_folder_and_refreshes_it(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    first = stage_skill(str(project), Skill("landing", str(src)))
    (src / "references" / "tone.md").unlink()
    (src / "references" / "new.md").write_text("NEW\n", encoding="utf-8")
    (src / "SKILL.md").write_text("# changed\n", encoding="utf-8")
    second = stage_skill(str(project), Skill("landing", str(src)))
    assert second.staged_dir == first.staged_dir
    assert tree(Path(second.staged_dir)) == tree(src)
    assert not (Path(second.staged_dir) / "references" / "tone.md").exists()
    assert os.listdir(project / SKILLS_DIR_NAME) == [os.path.basename(first.staged_dir)]


# --------------------------------------------------------------------------- SKILL-ISOLATE-001


@pytest.mark.rule("SKILL-ISOLATE-001")
def test_editing_the_staged_copy_never_touches_the_source(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    symlink("references/tone.md", src / "tone-link.md")
    before = tree(src)
    staged = Path(stage_skill(str(project), Skill("landing", str(src))).staged_dir)
    (staged / "SKILL.md").write_text("overwritten by the agent\n", encoding="utf-8")
    (staged / "tone-link.md").write_text("edited through the staged link copy\n", encoding="utf-8")
    with open(staged / "assets" / "template.html", "a", encoding="utf-8") as handle:
        handle.write("appended\n")
    (staged / "references" / "tone.md").unlink()
    assert tree(src) == before
    assert (src / "references" / "tone.md").read_text(encoding="utf-8") == "TONE-CONTENT\n"


# --------------------------------------------------------------------------- SKILL-LINK-001


@pytest.mark.rule("SKILL-LINK-001")
def test_file_link_out_of_the_source_is_refused(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    secret = tmp_path / "secret.txt"
    secret.write_text("PRIVATE\n", encoding="utf-8")
    symlink(secret, src / "references" / "leak.md")
    with pytest.raises(SkillLinkError) as info:
        stage_skill(str(project), Skill("landing", str(src)))
    assert info.value.link == "references/leak.md"
    assert "references/leak.md" in str(info.value)
    assert info.value.rule == "SKILL-LINK-001"
    assert info.value.code == "SKILL_LINK_REFUSED"
    alias = project / SKILLS_DIR_NAME
    assert os.listdir(alias) == [], "nothing (not even a partial copy) may be left"
    assert "PRIVATE" not in "".join(
        p.read_text(encoding="utf-8", errors="replace") for p in alias.rglob("*") if p.is_file()
    )


@pytest.mark.rule("SKILL-LINK-001")
def test_directory_link_out_of_the_source_is_refused(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    outside = tmp_path / "home" / ".ssh"
    outside.mkdir(parents=True)
    (outside / "id_rsa").write_text("KEY\n", encoding="utf-8")
    symlink(outside, src / "assets" / "more", directory=True)
    with pytest.raises(SkillLinkError) as info:
        stage_skill(str(project), Skill("landing", str(src)))
    assert info.value.link == "assets/more"


@pytest.mark.rule("SKILL-LINK-001")
def test_refused_restage_keeps_the_previous_copy(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    first = stage_skill(str(project), Skill("landing", str(src)))
    snapshot = tree(Path(first.staged_dir))
    symlink(tmp_path, src / "escape", directory=True)
    with pytest.raises(SkillLinkError):
        stage_skill(str(project), Skill("landing", str(src)))
    assert tree(Path(first.staged_dir)) == snapshot
    assert os.listdir(project / SKILLS_DIR_NAME) == [os.path.basename(first.staged_dir)]


# --------------------------------------------------------------------------- SKILL-LINK-002


@pytest.mark.rule("SKILL-LINK-002")
def test_links_inside_the_source_are_copied_as_real_files(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    symlink("references/tone.md", src / "tone.md")
    symlink("assets", src / "assets-alias", directory=True)
    staged = stage_skill(str(project), Skill("landing", str(src)))
    dest = Path(staged.staged_dir)
    assert_only_real_entries(dest)
    assert (dest / "tone.md").read_text(encoding="utf-8") == "TONE-CONTENT\n"
    assert (dest / "assets-alias" / "img" / "logo.svg").read_bytes() == b"<svg/>\x00\xff"
    assert "tone.md" in staged.files and "assets-alias/template.html" in staged.files


@pytest.mark.rule("SKILL-LINK-002")
def test_a_staged_source_root_behind_a_link_is_followed(tmp_path: Path, project: Path) -> None:
    real = make_skill(tmp_path / "store")
    mounted = tmp_path / "mounted"
    symlink(real, mounted, directory=True)
    symlink("references/tone.md", real / "tone.md")  # inside the real tree
    staged = stage_skill(str(project), Skill("landing", str(mounted)))
    assert (Path(staged.staged_dir) / "tone.md").read_text(encoding="utf-8") == "TONE-CONTENT\n"
    assert os.path.basename(staged.staged_dir) == staged_segment(str(mounted))


@pytest.mark.rule("SKILL-LINK-002")
def test_dangling_link_is_refused(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    symlink("references/missing.md", src / "gone.md")
    with pytest.raises(SkillLinkError) as info:
        stage_skill(str(project), Skill("landing", str(src)))
    assert info.value.link == "gone.md"
    assert info.value.rule == "SKILL-LINK-002"


@pytest.mark.rule("SKILL-LINK-002")
@pytest.mark.parametrize("target", [".", "..", "../.."])
def test_link_cycle_is_refused(tmp_path: Path, project: Path, target: str) -> None:
    src = make_skill(tmp_path / "skills")
    symlink(target, src / "assets" / "img" / "loop", directory=True)
    with pytest.raises(SkillLinkError) as info:
        stage_skill(str(project), Skill("landing", str(src)))
    assert info.value.link == "assets/img/loop"
    assert os.listdir(project / SKILLS_DIR_NAME) == []


# --------------------------------------------------------------------------- SKILL-EXDEV-001


@pytest.mark.rule("SKILL-EXDEV-001")
@pytest.mark.parametrize("code", [errno.EXDEV, errno.EPERM, errno.EOPNOTSUPP])
def test_cross_device_failure_falls_back_to_a_stream_copy(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    src = make_skill(tmp_path / "skills")
    symlink("references/tone.md", src / "tone.md")
    calls: list[str] = []
    real_fast = skills_mod._fast_copy_file

    def flaky_fast(source: str, dest: str) -> None:
        calls.append(source)
        if len(calls) == 2:  # the first file copies, the second hits the other filesystem
            raise OSError(code, os.strerror(code), source)
        real_fast(source, dest)

    monkeypatch.setattr(skills_mod, "_fast_copy_file", flaky_fast)
    staged = stage_skill(str(project), Skill("landing", str(src)))
    assert staged.used_fallback is True
    assert len(calls) == 2, "the fast path is abandoned after the first recoverable failure"
    dest = Path(staged.staged_dir)
    assert_only_real_entries(dest)
    assert tree(dest) == tree(src)
    assert os.listdir(project / SKILLS_DIR_NAME) == [dest.name]


@pytest.mark.rule("SKILL-EXDEV-001")
def test_unrecoverable_copy_error_fails_without_fallback(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = make_skill(tmp_path / "skills")

    def full_disk(source: str, dest: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", dest)

    def must_not_run(source: str, dest: str) -> None:
        raise AssertionError("the stream fallback is only for cross-filesystem errors")

    monkeypatch.setattr(skills_mod, "_fast_copy_file", full_disk)
    monkeypatch.setattr(skills_mod, "_stream_copy_file", must_not_run)
    with pytest.raises(SkillStagingError) as info:
        stage_skill(str(project), Skill("landing", str(src)))
    assert "No space left" in str(info.value)
    assert os.listdir(project / SKILLS_DIR_NAME) == []


# --------------------------------------------------------------------------- SKILL-ROOT-001


@pytest.mark.rule("SKILL-ROOT-001")
def test_linked_alias_root_is_replaced_and_its_target_untouched(
    tmp_path: Path, project: Path
) -> None:
    src = make_skill(tmp_path / "skills")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    symlink(elsewhere, project / SKILLS_DIR_NAME, directory=True)
    staged = stage_skill(str(project), Skill("landing", str(src)))
    alias = project / SKILLS_DIR_NAME
    assert not alias.is_symlink() and alias.is_dir()
    assert os.listdir(elsewhere) == []
    assert Path(staged.staged_dir).parent == alias


@pytest.mark.rule("SKILL-ROOT-001")
def test_alias_root_that_is_a_file_is_refused(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    (project / SKILLS_DIR_NAME).write_text("user data\n", encoding="utf-8")
    with pytest.raises(SkillStagingError) as info:
        stage_skill(str(project), Skill("landing", str(src)))
    assert info.value.rule == "SKILL-ROOT-001"
    assert (project / SKILLS_DIR_NAME).read_text(encoding="utf-8") == "user data\n"


@pytest.mark.rule("SKILL-ROOT-001")
def test_source_containing_the_project_is_refused(tmp_path: Path) -> None:
    src = make_skill(tmp_path / "skills")
    with pytest.raises(SkillStagingError) as info:
        stage_skill(str(src), Skill("landing", str(src)))
    assert "overlaps" in str(info.value)


@pytest.mark.rule("SKILL-ROOT-001")
def test_a_staged_copy_cannot_be_restaged_onto_itself(tmp_path: Path, project: Path) -> None:
    src = make_skill(tmp_path / "skills")
    staged = stage_skill(str(project), Skill("landing", str(src)))
    with pytest.raises(SkillStagingError):
        stage_skill(str(project), Skill("landing", staged.staged_dir))
    assert (Path(staged.staged_dir) / "SKILL.md").is_file()
