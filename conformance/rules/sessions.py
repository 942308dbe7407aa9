"""Rules for native-session bookkeeping.

Enforced by ``harness/host/native_sessions.py``; tested in ``tests/native_sessions/``. Def-level
(``formats=()``): the resume style a def declares (``AgentDef.resume_style``) selects which
handle is kept.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (
    Rule(
        id="SESSION-STORE-001",
        tier=Tier.MANDATORY,
        statement=(
            "Session records live in one JSON file keyed by conversation id, written atomically "
            "(temp file + rename); a malformed file raises a typed error, never reads as empty."
        ),
        citation="seed 001 §8",
        formats=(),
    ),
    Rule(
        id="SESSION-STORE-002",
        tier=Tier.MANDATORY,
        statement=(
            "A record holds only the opaque native handle, its resume style and the "
            "compatibility key, and round-trips through the store unchanged."
        ),
        citation="seed 001 §8",
        formats=(),
    ),
    Rule(
        id="SESSION-COMPAT-001",
        tier=Tier.MANDATORY,
        statement=(
            "A stored session is resumed only when validated, of the def's resume style, and "
            "equal to the current compatibility key in every field; otherwise the turn is fresh."
        ),
        citation="seed 001 §7",
        formats=(),
    ),
    Rule(
        id="SESSION-COMPAT-002",
        tier=Tier.MANDATORY,
        statement=(
            "The key's cwd is canonical (realpath) and its model route treats no model and "
            "'default' alike, so equal setups give equal keys."
        ),
        citation="seed 001 §7",
        formats=(),
    ),
    Rule(
        id="SESSION-RESUME-001",
        tier=Tier.MANDATORY,
        statement=(
            "A healthy resume passes the stored handle and sends only the new turn, never the "
            "bootstrap context or the transcript."
        ),
        citation="seed 001 §8",
        formats=(),
    ),
    Rule(
        id="SESSION-FRESH-001",
        tier=Tier.MANDATORY,
        statement=(
            "A fresh turn (first, mismatched, reseeded, or a def without native resume) sends the "
            "bootstrap context, the whole transcript and the new turn."
        ),
        citation="seed 001 §7",
        formats=(),
    ),
    Rule(
        id="SESSION-SPECIFY-001",
        tier=Tier.MANDATORY,
        statement=(
            "A fresh specify-style turn carries a host-minted session id, which is the handle "
            "stored once the CLI confirms it."
        ),
        citation="seed 002 §3.1",
        formats=(),
    ),
    Rule(
        id="SESSION-CAPTURE-001",
        tier=Tier.MANDATORY,
        statement=(
            "A capture-style (and protocol-style) fresh turn mints no id; the id the CLI reports "
            "in its stream (or the pi session file) is the handle stored."
        ),
        citation="seed 002 §3.1",
        formats=(),
    ),
    Rule(
        id="SESSION-EXPIRED-001",
        tier=Tier.MANDATORY,
        statement=(
            "When the CLI rejects a resumed handle as unknown, the record is cleared and the turn "
            "is reseeded with the full transcript on the same agent."
        ),
        citation="seed 000 §8",
        formats=(),
    ),
    Rule(
        id="SESSION-CANCEL-001",
        tier=Tier.MANDATORY,
        statement=(
            "Cancelling (or failing) a run after its session was validated keeps the handle for "
            "a later resume."
        ),
        citation="seed 001 §7",
        formats=(),
    ),
    Rule(
        id="SESSION-FAILED-001",
        tier=Tier.MANDATORY,
        statement=("A failed or cancelled run before any validated session stores nothing."),
        citation="seed 001 §7",
        formats=(),
    ),
    Rule(
        id="SESSION-ADVANCE-001",
        tier=Tier.MANDATORY,
        statement=(
            "A successful fresh turn that leaves no native handle clears the stored one, so no "
            "later turn resumes a session that missed a turn."
        ),
        citation="seed 000 §5.10",
        formats=(),
    ),
    Rule(
        id="SESSION-RUN-001",
        tier=Tier.MANDATORY,
        statement=(
            "A second turn of a conversation on the same agent resumes the native session the "
            "way the def's resume style says (argv id, ACP session/load, dsh resume_session_id, "
            "pi session file), sends only the new turn and stores the same handle."
        ),
        citation="seed 001 §7",
        formats=(),
    ),
    Rule(
        id="SESSION-RUN-002",
        tier=Tier.MANDATORY,
        statement=(
            "harness run --conversation decides fresh, healthy resume or expired reseed from the "
            "session store, stores the captured id after the run, and a reseed never changes the "
            "agent."
        ),
        citation="seed 000 §8",
        formats=(),
    ),
)
