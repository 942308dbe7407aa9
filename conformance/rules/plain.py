"""Rules of the ``plain`` stream and its artifact handoff (seed 000 §5.13, ref §2.5)."""

from __future__ import annotations

from conformance.rules import Rule, Tier

_FORMAT = ("plain",)

RULES = (
    Rule(
        "PLAIN-TEXT-001",
        Tier.MANDATORY,
        "Plain stdout becomes text_delta events whose concatenated text is the UTF-8 decoded "
        "stdout, identical for any chunking, with no character broken at a read boundary.",
        "seed 000 §5.13",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-EVENT-001",
        Tier.MANDATORY,
        "At end of output the whole stdout is scanned once and each supported artifact block "
        "yields one artifact event (name, identifier, artifact type), in order.",
        "seed 000 §5.13; ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-OPENER-001",
        Tier.MANDATORY,
        "An opener is '<artifact' followed by '>' or whitespace; its tag ends at the first '>' "
        "outside quotes; attributes are name=\"v\" or name='v'.",
        "ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-FENCE-001",
        Tier.MANDATORY,
        "Openers inside fenced code blocks (``` at line start, unclosed to EOF, not ~~~ or "
        "indented) or inline code spans (equal backtick runs within one block) are ignored.",
        "ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-RESYNC-001",
        Tier.MANDATORY,
        "A real opener before the current tag's end or close restarts the scan there; an "
        "artifact with no close tag is skipped.",
        "ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-TYPES-001",
        Tier.MANDATORY,
        "Types html/css/svg/markdown (and their MIME forms) map to .html/.css/.svg/.md; a "
        "missing type with an HTML document body is text/html; other blocks are skipped.",
        "seed 000 §5.13; ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-SLUG-001",
        Tier.MANDATORY,
        "The file stem is identifier, else title, else 'artifact', lowercased, runs outside "
        "[a-z0-9_-] replaced by '-', trimmed of '-', cut to 60, else 'artifact'.",
        "seed 000 §5.13; ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-COLLIDE-001",
        Tier.MANDATORY,
        "A name taken by a project file or an earlier artifact of the run gets -2, -3, … up to "
        "-9999; beyond that allocation fails with a typed error.",
        "seed 000 §5.13; ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ARTIFACT-MAX-001",
        Tier.MANDATORY,
        "At most 50 artifacts are extracted per run; output without '<artifact' yields none.",
        "ref §2.5",
        _FORMAT,
    ),
    Rule(
        "PLAIN-ROBUST-001",
        Tier.MANDATORY,
        "The plain parser and the artifact extractor never raise on any input.",
        "seed 000 §5.13",
        _FORMAT,
    ),
    Rule(
        "ARTIFACT-WRITE-CONFINE-001",
        Tier.MANDATORY,
        "The artifact writer refuses names that could resolve outside the project directory "
        "(absolute, '..', separators, drive letters, symlinked targets, device names).",
        "seed 000 §5.13",
        _FORMAT,
    ),
    Rule(
        "ARTIFACT-WRITE-NOCLOBBER-001",
        Tier.MANDATORY,
        "The artifact writer never replaces an existing project file; collisions are resolved "
        "by name suffixes at extraction.",
        "seed 000 §5.13",
        _FORMAT,
    ),
)
