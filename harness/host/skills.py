"""Skill composition and staging (seed 000 §4).

Skill delivery is shared engine behaviour, never a def field (seed 000 §4: "individual runtime
definitions do not select a native, prompt, or project-instruction strategy"). For each run:

* :func:`stage_skills` copies each selected skill directory into
  ``<cwd>/.od-skills/<basename>-<hash>/`` as real, dereferenced files (seed 000 §4 step 3);
* :func:`compose_skill_prompt` puts each ``SKILL.md`` body into the prompt behind a preamble
  naming the cwd-relative staged root, the absolute source root and the side files the body
  references, without inlining those side files (seed 000 §4 steps 2 and 4);
* :func:`context_skill_dirs` gives the staged roots for ``RuntimeContext.skill_dirs`` (defs that
  take skill directories as flags, e.g. ``--skill``; seed 000 §4 step 4).

Rules (``conformance/rules/skills.py``): SKILL-STAGE-001/002, SKILL-ISOLATE-001,
SKILL-LINK-001/002, SKILL-EXDEV-001, SKILL-ROOT-001, SKILL-PROMPT-001/002.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from harness.errors import HarnessError

__all__ = [
    "HASH_HEX_CHARS",
    "RECOVERABLE_COPY_ERRNOS",
    "SKILLS_DIR_NAME",
    "SKILL_FILE_NAME",
    "Skill",
    "SkillError",
    "SkillLinkError",
    "SkillStagingError",
    "StagedSkill",
    "compose_skill_prompt",
    "context_skill_dirs",
    "plan_staging",
    "referenced_side_files",
    "skill_body",
    "stage_skill",
    "stage_skills",
    "staged_segment",
]

#: seed 000 §4 step 3: ``<project-cwd>/.od-skills/<basename>-<source-path-hash>/``.
SKILLS_DIR_NAME = ".od-skills"
SKILL_FILE_NAME = "SKILL.md"
#: Length of the source-path hash in the staged folder name (first N hex of sha256).
HASH_HEX_CHARS = 12
#: seed 000 §4 step 3: "a recursive stream-copy fallback for recoverable cross-filesystem
#: failures". ref (upstream ``cwd-aliases.ts``): kernel copy offload is refused with EXDEV
#: across filesystems, EPERM on some overlay/ZFS mounts, ENOTSUP/EOPNOTSUPP where unsupported.
RECOVERABLE_COPY_ERRNOS = frozenset({errno.EXDEV, errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP})

_STREAM_CHUNK = 1024 * 1024
#: A token of a body that may name a side file: ``references/tone.md``, ``./assets/x.html``.
_PATH_TOKEN = re.compile(r"[\w./\\-]+")


class SkillError(HarnessError):
    """A selected skill that cannot be composed (e.g. no ``SKILL.md``)."""

    code = "SKILL_INVALID"


class SkillStagingError(SkillError):
    """A skill directory could not be staged into the project cwd."""

    code = "SKILL_STAGING_FAILED"


class SkillLinkError(SkillStagingError):
    """A link in a skill source that staging refuses to follow; ``link`` names it."""

    code = "SKILL_LINK_REFUSED"

    def __init__(self, link: str, target: str | None, problem: str, *, rule: str) -> None:
        where = f" -> {target}" if target else ""
        super().__init__(f"skill link {link}{where}: {problem}", rule=rule)
        self.link = link
        self.target = target


@dataclass(frozen=True)
class Skill:
    """One selected skill: its id and the directory that holds its ``SKILL.md``."""

    id: str
    source_dir: str


@dataclass(frozen=True)
class StagedSkill:
    """A skill's private copy under ``<cwd>/.od-skills/``."""

    skill_id: str
    #: Absolute source directory (as given, made absolute; the hash input).
    source_dir: str
    #: Absolute staged directory.
    staged_dir: str
    #: The staged directory relative to cwd, ``/``-separated (``.od-skills/<segment>``).
    relative_dir: str
    #: Every regular file copied, relative to the skill root, ``/``-separated, sorted.
    files: tuple[str, ...]
    #: Entries that are neither files nor directories (FIFOs, sockets, devices): not copied.
    skipped: tuple[str, ...] = ()
    #: True when the fast copy failed with a recoverable errno and the stream copy ran.
    used_fallback: bool = False


# --------------------------------------------------------------------------- naming


def staged_segment(source_dir: str) -> str:
    """``<basename>-<first 12 hex of sha256(absolute source path)>`` (SKILL-STAGE-002).

    seed 000 §4 step 3 names the folder ``<basename>-<source-path-hash>``; the path is made
    absolute and ``\\`` becomes ``/`` before hashing, so one source always maps to one folder
    and two sources with the same basename never share one.
    """
    absolute = os.path.abspath(source_dir)
    digest = hashlib.sha256(
        absolute.replace("\\", "/").encode("utf-8", "surrogatepass")
    ).hexdigest()[:HASH_HEX_CHARS]
    base = os.path.basename(absolute) or "skill"
    return f"{base}-{digest}"


def _norm(path: str) -> str:
    return os.path.normcase(os.path.normpath(path))


def _within(path: str, root: str) -> bool:
    """``path`` is ``root`` or below it (both already real paths)."""
    p, r = _norm(path), _norm(root)
    try:
        return os.path.commonpath([p, r]) == r
    except ValueError:  # different drives on Windows
        return False


# --------------------------------------------------------------------------- copying

CopyFile = Callable[[str, str], None]


def _fast_copy_file(src: str, dst: str) -> None:
    """The fast path: the OS copy offload (``copy_file_range``/``sendfile``/``fcopyfile``)."""
    shutil.copy2(src, dst)


def _stream_copy_file(src: str, dst: str) -> None:
    """The fallback: read and write the bytes in user space (no kernel copy offload)."""
    with open(src, "rb") as reader, open(dst, "wb") as writer:
        while True:
            chunk = reader.read(_STREAM_CHUNK)
            if not chunk:
                break
            writer.write(chunk)
    # The bytes are the deliverable; a filesystem that refuses chmod keeps its default mode.
    with contextlib.suppress(OSError):
        shutil.copymode(src, dst)


@dataclass
class _CopyJob:
    root_real: str
    copy_file: CopyFile
    files: list[str]
    skipped: list[str]


def _check_entry(job: _CopyJob, path: str, rel: str) -> str:
    """The real path of ``path``; refuse links that leave the source tree (SKILL-LINK-001/002).

    Every entry is resolved, not only ``islink`` ones, so a Windows junction or any other
    reparse point is held to the same rule as a symlink.
    """
    real = os.path.realpath(path)
    if not _within(real, job.root_real):
        # Security ("a skill copy never follows a link out of its source"):
        # dereferencing such a link would copy files the skill does not own.
        raise SkillLinkError(
            rel, real, "points outside the skill source; refusing to follow", rule="SKILL-LINK-001"
        )
    if not os.path.exists(real):
        raise SkillLinkError(rel, real, "dangling link", rule="SKILL-LINK-002")
    return real


def _copy_tree(job: _CopyJob, src: str, dst: str, rel: str, ancestors: frozenset[str]) -> None:
    """Copy ``src`` to a new ``dst`` as real directories and regular files only.

    seed 000 §4 step 3: "real, dereferenced project-private copies—not symlinks or junctions".
    A link inside the tree is copied as what it points to (SKILL-LINK-002); a directory link to
    one of its own ancestors would recurse forever and is refused.
    """
    os.mkdir(dst)
    with os.scandir(src) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        child_rel = f"{rel}/{entry.name}" if rel else entry.name
        real = _check_entry(job, entry.path, child_rel)
        info = os.stat(entry.path)  # follows links: the copy is dereferenced
        target = os.path.join(dst, entry.name)
        if stat.S_ISDIR(info.st_mode):
            key = _norm(real)
            if key in ancestors:
                raise SkillLinkError(
                    child_rel,
                    real,
                    "link cycle (points to its own ancestor)",
                    rule="SKILL-LINK-002",
                )
            _copy_tree(job, entry.path, target, child_rel, ancestors | {key})
        elif stat.S_ISREG(info.st_mode):
            job.copy_file(entry.path, target)
            job.files.append(child_rel)
        else:
            # Sockets, FIFOs and devices do not belong in a skill; copying one could hang.
            # Recorded in StagedSkill.skipped, never dropped silently (design principle 3).
            job.skipped.append(child_rel)


def _remove(path: str) -> None:
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
    else:
        shutil.rmtree(path)


def _prepare_alias_root(cwd: str) -> str:
    """``<cwd>/.od-skills`` as a real directory inside cwd (SKILL-ROOT-001)."""
    if not os.path.isdir(cwd):
        raise SkillStagingError(f"project cwd {cwd!r} is not a directory", rule="SKILL-ROOT-001")
    alias_root = os.path.join(cwd, SKILLS_DIR_NAME)
    if os.path.islink(alias_root):
        # Never write through a link: a linked alias root would put the "private" copies
        # wherever it points. The link itself is removed, never its target.
        os.unlink(alias_root)
    elif os.path.lexists(alias_root) and not os.path.isdir(alias_root):
        raise SkillStagingError(
            f"{alias_root} exists and is not a directory; refusing to stage", rule="SKILL-ROOT-001"
        )
    os.makedirs(alias_root, exist_ok=True)
    expected = os.path.join(os.path.realpath(cwd), SKILLS_DIR_NAME)
    if _norm(os.path.realpath(alias_root)) != _norm(expected):
        # e.g. a Windows junction, which os.path.islink does not report before Python 3.12.
        raise SkillStagingError(
            f"{alias_root} resolves outside the project cwd; refusing to stage",
            rule="SKILL-ROOT-001",
        )
    return alias_root


def stage_skill(cwd: str, skill: Skill) -> StagedSkill:
    """Copy one skill into ``<cwd>/.od-skills/<segment>/``; idempotent (SKILL-STAGE-001/002).

    The copy is built in a temporary sibling and swapped in, so a refused link or a failed copy
    leaves the previous staged copy (if any) untouched and no partial tree behind; a successful
    re-stage replaces the old copy wholesale (files removed from the source disappear).
    Raises :class:`SkillLinkError` or :class:`SkillStagingError`.
    """
    source_abs = os.path.abspath(skill.source_dir)
    if not os.path.isdir(source_abs):
        raise SkillStagingError(
            f"skill {skill.id!r}: source {source_abs!r} is not a directory", rule="SKILL-STAGE-001"
        )
    # ref (upstream cwd-aliases.ts): the source root itself may sit behind a link (a mounted
    # skills dir); it is followed, and "the source tree" is where it really is.
    root_real = os.path.realpath(source_abs)
    alias_root = _prepare_alias_root(cwd)
    alias_real = os.path.realpath(alias_root)
    if _within(alias_real, root_real) or _within(root_real, alias_real):
        raise SkillStagingError(
            f"skill {skill.id!r}: source {source_abs!r} overlaps the staging area {alias_root!r}",
            rule="SKILL-ROOT-001",
        )
    segment = staged_segment(source_abs)
    final = os.path.join(alias_root, segment)
    used_fallback = False
    job = _CopyJob(root_real, _fast_copy_file, [], [])
    tmp = os.path.join(alias_root, f".{segment}.tmp-{secrets.token_hex(4)}")
    try:
        try:
            _copy_tree(job, source_abs, tmp, "", frozenset({_norm(root_real)}))
        except OSError as exc:
            if exc.errno not in RECOVERABLE_COPY_ERRNOS:
                raise
            # seed 000 §4 step 3 (SKILL-EXDEV-001): "a recursive stream-copy fallback for
            # recoverable cross-filesystem failures". Start over; same checks, same result.
            shutil.rmtree(tmp, ignore_errors=True)
            job = _CopyJob(root_real, _stream_copy_file, [], [])
            used_fallback = True
            _copy_tree(job, source_abs, tmp, "", frozenset({_norm(root_real)}))
        if os.path.lexists(final):
            _remove(final)
        os.replace(tmp, final)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SkillStagingError(
            f"skill {skill.id!r}: staging {source_abs!r} into {final!r} failed: "
            f"{type(exc).__name__}: {exc}",
            rule="SKILL-STAGE-001",
        ) from exc
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return StagedSkill(
        skill_id=skill.id,
        source_dir=source_abs,
        staged_dir=final,
        relative_dir=f"{SKILLS_DIR_NAME}/{segment}",
        files=tuple(sorted(job.files)),
        skipped=tuple(sorted(job.skipped)),
        used_fallback=used_fallback,
    )


def stage_skills(cwd: str, skills: Sequence[Skill]) -> list[StagedSkill]:
    """:func:`stage_skill` for each selected skill, in order; one source is staged once.

    Raises on the first skill that cannot be staged. Callers that want the absolute-path
    fallback of seed 000 §4 step 4 for the others call :func:`stage_skill` per skill.
    """
    staged: list[StagedSkill] = []
    by_source: dict[str, StagedSkill] = {}
    for skill in skills:
        key = _norm(os.path.abspath(skill.source_dir))
        done = by_source.get(key)
        if done is None:
            done = stage_skill(cwd, skill)
            by_source[key] = done
        elif done.skill_id != skill.id:
            done = StagedSkill(
                skill_id=skill.id,
                source_dir=done.source_dir,
                staged_dir=done.staged_dir,
                relative_dir=done.relative_dir,
                files=done.files,
                skipped=done.skipped,
                used_fallback=done.used_fallback,
            )
        staged.append(done)
    return staged


def plan_staging(cwd: str, skill: Skill) -> StagedSkill:
    """Where :func:`stage_skill` would put ``skill``, without copying anything.

    For previews (``harness argv --skill DIR``): the staged paths follow the same naming
    (SKILL-STAGE-002); ``files`` are the source's regular files (links not followed).
    Raises :class:`SkillStagingError` when the source is not a directory.
    """
    source_abs = os.path.abspath(skill.source_dir)
    if not os.path.isdir(source_abs):
        raise SkillStagingError(
            f"skill {skill.id!r}: source {source_abs!r} is not a directory", rule="SKILL-STAGE-001"
        )
    segment = staged_segment(source_abs)
    return StagedSkill(
        skill_id=skill.id,
        source_dir=source_abs,
        staged_dir=os.path.join(os.path.abspath(cwd), SKILLS_DIR_NAME, segment),
        relative_dir=f"{SKILLS_DIR_NAME}/{segment}",
        files=tuple(_source_files(source_abs)),
    )


def context_skill_dirs(staged: Iterable[StagedSkill]) -> tuple[str, ...]:
    """Absolute staged roots for ``RuntimeContext.skill_dirs`` (seed 000 §4 step 4)."""
    out: list[str] = []
    for item in staged:
        if item.staged_dir not in out:
            out.append(item.staged_dir)
    return tuple(out)


# --------------------------------------------------------------------------- composition


def _strip_frontmatter(text: str) -> str:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n") != "---":
        return text
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") == "---":
            return "".join(lines[index + 1 :]).lstrip("\r\n")
    return text


def skill_body(source_dir: str) -> str:
    """The ``SKILL.md`` body of a skill (YAML front matter removed)."""
    path = os.path.join(os.path.abspath(source_dir), SKILL_FILE_NAME)
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as exc:
        raise SkillError(
            f"cannot read {path!r}: {type(exc).__name__}: {exc}", rule="SKILL-PROMPT-001"
        ) from exc
    return _strip_frontmatter(text)


def _source_files(source_dir: str) -> list[str]:
    """Regular files under a source that was not staged (links are not followed)."""
    out: list[str] = []
    root = os.path.abspath(source_dir)
    for here, dirs, names in os.walk(root):
        dirs.sort()
        rel_dir = os.path.relpath(here, root).replace(os.sep, "/")
        for name in sorted(names):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if os.path.isfile(os.path.join(here, name)):
                out.append(rel)
    return out


def referenced_side_files(body: str, files: Iterable[str]) -> list[str]:
    """The files of the skill (other than ``SKILL.md``) that ``body`` names, sorted.

    seed 000 §4 step 2: the preamble "identifies side files referenced by the body so the agent
    can read them when needed". A token counts when, after dropping a leading ``./`` and
    trailing punctuation, it is exactly the skill-relative path of one of ``files``.
    """
    known = {f for f in files if f != SKILL_FILE_NAME}
    found: set[str] = set()
    for token in _PATH_TOKEN.findall(body):
        candidate = token.replace("\\", "/")
        while candidate.startswith("./"):
            candidate = candidate[2:]
        candidate = candidate.rstrip(".")
        if candidate in known:
            found.add(candidate)
    return sorted(found)


def _preamble(skill: Skill, source_abs: str, staged: StagedSkill | None, side: list[str]) -> str:
    lines = [f"> **Skill `{skill.id}`**"]
    if staged is not None:
        root = staged.relative_dir + "/"
        lines.append(f"> **Skill root (relative to project):** `{root}`")
    lines.append(f"> **Skill root (absolute fallback):** `{source_abs}`")
    lines.append(">")
    if staged is not None:
        example = f"{root}{side[0]}" if side else root
        lines.append(
            "> Paths in this skill are relative to its root. Prefer the project-relative root, "
            f"e.g. `{example}`; if it is not reachable from your working directory, use the "
            "absolute root instead. Both hold the same files."
        )
    else:
        lines.append(
            "> This skill was not staged into the project; paths in it are relative to the "
            "absolute root above."
        )
    if side:
        listed = ", ".join(f"`{name}`" for name in side)
        lines.append(">")
        lines.append(
            f"> Side files this skill references (not included here; read them when needed): "
            f"{listed}."
        )
    return "\n".join(lines)


def compose_skill_prompt(skills: Sequence[Skill], staged: Sequence[StagedSkill]) -> str:
    """Each selected ``SKILL.md`` body behind its root preamble (SKILL-PROMPT-001/002).

    seed 000 §4 steps 2 and 4: the prompt carries the body, "both the cwd-relative staged path
    and the absolute source fallback", and the names of the side files the body references;
    it "does not automatically inline every ``references/*.md`` file". A skill missing from
    ``staged`` (staging failed) gets the absolute root only.
    """
    by_source = {_norm(s.source_dir): s for s in staged}
    blocks: list[str] = []
    for skill in skills:
        source_abs = os.path.abspath(skill.source_dir)
        match = by_source.get(_norm(source_abs))
        body = skill_body(source_abs)
        files = list(match.files) if match is not None else _source_files(source_abs)
        side = referenced_side_files(body, files)
        preamble = _preamble(skill, source_abs, match, side)
        blocks.append(f"{preamble}\n\n{body.strip()}\n")
    return "\n".join(blocks)
