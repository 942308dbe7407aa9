"""Rules of the text guards: role-marker (seed 002 §7.5, ref §3) and artifact echo (ref §2.1.6).

Enforced by :mod:`harness.guards.role_marker` and :mod:`harness.guards.artifact_echo`;
tests in ``tests/guards/``. The formats are those whose parser wires the guard
today (``claude-stream-json``); a parser that adds a guard adds its format here.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

#: Formats whose text channel runs the role-marker guard.
ROLE_MARKER_FORMATS = ("claude-stream-json",)
#: Formats whose text channel runs artifact-echo suppression.
ARTIFACT_ECHO_FORMATS = ("claude-stream-json",)

RULES = (
    # -- role-marker guard (generation 3) --------------------------------------
    Rule(
        id="RMG-REGEX-001",
        tier=Tier.MANDATORY,
        statement=(
            "A marker is a line start (or message start), blanks, '##', spaces or tabs, then "
            "lowercase user|assistant|assist|system followed by a character that is not a-z."
        ),
        citation="seed 002 §7.5",
        formats=ROLE_MARKER_FORMATS,
    ),
    Rule(
        id="RMG-HOLDBACK-001",
        tier=Tier.MANDATORY,
        statement=(
            "Text ending in a complete marker keyword whose next character has not arrived is "
            "withheld until the next chunk confirms (drop) or denies (release) it."
        ),
        citation="ref §3.2",
        formats=ROLE_MARKER_FORMATS,
    ),
    Rule(
        id="RMG-TAIL-001",
        tier=Tier.MANDATORY,
        statement=(
            "A 64-character tail of emitted text catches markers split across chunks; the "
            "start-of-message anchor applies only until that tail is first sliced."
        ),
        citation="seed 002 §7.5",
        formats=ROLE_MARKER_FORMATS,
    ),
    Rule(
        id="RMG-CUT-001",
        tier=Tier.MANDATORY,
        statement=(
            "On a confirmed marker the text before it is emitted, the marker and everything after "
            "it in the message are dropped, and the marker (trimmed) is reported once."
        ),
        citation="seed 002 §7.5",
        formats=ROLE_MARKER_FORMATS,
    ),
    Rule(
        id="RMG-THINKING-001",
        tier=Tier.MANDATORY,
        statement="Thinking text is never passed through the role-marker guard.",
        citation="seed 002 §7.5",
        formats=ROLE_MARKER_FORMATS,
    ),
    Rule(
        id="RMG-NOFLUSH-001",
        tier=Tier.ADVISORY,
        statement=(
            "Generation 3 has no flush: a message ending in a withheld marker keyword never emits "
            "it and is not flagged."
        ),
        citation="ref §3.2",
        formats=ROLE_MARKER_FORMATS,
    ),
    Rule(
        id="RMG-CHUNKING-001",
        tier=Tier.MANDATORY,
        statement=(
            "For any split, the guard never raises, emits a prefix of the text, and (when every "
            "marker fits the tail) gives the same verdict and marker as one whole chunk."
        ),
        citation="seed 002 §7.5",
        formats=ROLE_MARKER_FORMATS,
    ),
    # -- artifact-echo suppression ------------------------------------------------
    Rule(
        id="ECHO-ARM-001",
        tier=Tier.MANDATORY,
        statement=(
            "A Write/Edit/write_file/replace tool use with a web or markdown path, or string "
            "content/new_string, arms suppression and remembers the written text (last 5)."
        ),
        citation="ref §2.1.6",
        formats=ARTIFACT_ECHO_FORMATS,
    ),
    Rule(
        id="ECHO-SUPPRESS-001",
        tier=Tier.MANDATORY,
        statement=(
            "While armed, an <artifact> block whose normalized body equals a recent write is "
            "dropped; any other block is emitted unchanged."
        ),
        citation="seed 002 §7.2",
        formats=ARTIFACT_ECHO_FORMATS,
    ),
    Rule(
        id="ECHO-HOLD-001",
        tier=Tier.MANDATORY,
        statement=(
            "While armed, a trailing prefix of '<artifact' is held across chunks; held text is "
            "flushed at the next message_start and at end of output."
        ),
        citation="seed 002 §7.2",
        formats=ARTIFACT_ECHO_FORMATS,
    ),
    Rule(
        id="ECHO-NORMALIZE-001",
        tier=Tier.MANDATORY,
        statement=(
            "Bodies compare after dropping a leading BOM, turning CRLF/CR into LF and trimming "
            "whitespace and literal \\r / \\n sequences at both ends."
        ),
        citation="ref §2.1.6",
        formats=ARTIFACT_ECHO_FORMATS,
    ),
    Rule(
        id="ECHO-RESET-001",
        tier=Tier.MANDATORY,
        statement=(
            "Remembered writes are forgotten at a turn_end or a result whose stop reason is not "
            "tool_use."
        ),
        citation="ref §2.1.6",
        formats=ARTIFACT_ECHO_FORMATS,
    ),
    Rule(
        id="ECHO-CHUNKING-001",
        tier=Tier.MANDATORY,
        statement=(
            "For any split of the same text the concatenated output (including the final flush) "
            "is the same, and no input makes the guard raise."
        ),
        citation="seed 002 §7.2",
        formats=ARTIFACT_ECHO_FORMATS,
    ),
)
