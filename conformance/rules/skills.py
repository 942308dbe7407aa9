"""Rules for skill staging and composition.

Enforced by ``harness/host/skills.py``; tested in ``tests/skills/``. Def-level (``formats=()``):
seed 000 §4 makes skill delivery shared engine behaviour, the same for every def.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (
    Rule(
        id="SKILL-STAGE-001",
        tier=Tier.MANDATORY,
        statement=(
            "Each selected skill directory is copied into <cwd>/.od-skills/<segment>/ as real "
            "directories and regular files only: no symlink, junction or hard link to the source."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-STAGE-002",
        tier=Tier.MANDATORY,
        statement=(
            "The staged folder is <basename>-<first 12 hex of sha256(absolute source path)>; "
            "re-staging reuses it and replaces its contents with the current source."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-ISOLATE-001",
        tier=Tier.MANDATORY,
        statement="Editing or deleting anything in the staged copy never changes the source skill.",
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-LINK-001",
        tier=Tier.MANDATORY,
        statement=(
            "A link inside a skill source that resolves outside the source tree is refused with "
            "a typed error naming the link; nothing is staged and the link is never followed."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-LINK-002",
        tier=Tier.MANDATORY,
        statement=(
            "A link that stays inside the source tree is staged as the file or directory it "
            "points to; a dangling link or a link cycle is refused with a typed error."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-EXDEV-001",
        tier=Tier.MANDATORY,
        statement=(
            "When the fast copy fails with a recoverable cross-filesystem errno (EXDEV, EPERM, "
            "ENOTSUP, EOPNOTSUPP) a recursive stream copy stages the same files."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-ROOT-001",
        tier=Tier.MANDATORY,
        statement=(
            "Staging writes only inside the real <cwd>/.od-skills directory: a linked alias root "
            "is replaced (its target untouched), a non-directory or a source overlapping it is "
            "refused."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-PROMPT-001",
        tier=Tier.MANDATORY,
        statement=(
            "The composed prompt holds each selected SKILL.md body behind a preamble naming the "
            "cwd-relative staged root and the absolute source root."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-PROMPT-002",
        tier=Tier.MANDATORY,
        statement=(
            "The preamble lists the skill's side files the body references; their contents "
            "(e.g. references/*.md) are not inlined."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-RUN-001",
        tier=Tier.MANDATORY,
        statement=(
            "A run with a skill hands the CLI a prompt naming the staged .od-skills/<segment>/ "
            "root and the absolute source, and the staged root holds real files equal to the "
            "source's."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
    Rule(
        id="SKILL-RUN-002",
        tier=Tier.MANDATORY,
        statement=(
            "The runner composes skills into the prompt before build_args and the prompt budget "
            "see it, and refuses the run before any spawn when a skill links out of its source."
        ),
        citation="seed 000 §4",
        formats=(),
    ),
)
