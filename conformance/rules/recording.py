"""Rules of recordings (format v1) and of replaying them (``harness replay``).

Enforced by ``harness/recording/record.py`` (model, writer, reader, the runner tap),
``harness/secrets/scrub.py`` (secrets and path placeholders), ``harness/commands/record.py``
(``harness record``, ``harness run --record``), ``harness/recording/replay.py`` (the replay
engine) and ``harness/commands/replay.py`` (the command); proved by ``tests/recording/``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier
from harness.formats import two_way_formats

_TWO_WAY = two_way_formats()


def _rule(rule_id: str, statement: str, citation: str, formats: tuple[str, ...] = ("*",)) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, formats)


RULES = (
    _rule(
        "RECORD-FORMAT-001",
        "A recording is JSON Lines: a version-1 header, one line per chunk (time offset, "
        "direction, data), and an exit line last; every line validates against "
        "recording-v1.schema.json.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-BYTES-001",
        "Every chunk is kept with its boundaries and its exact bytes; bytes that are not "
        "UTF-8 are stored as base64, so writing and reading a recording is lossless.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-PATHS-001",
        "The run's cwd, home and temp directories are written as {cwd}, {home}, {tmp} in "
        "argv, env and data, and restored on replay; literal placeholder text survives the "
        "round trip.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-HOST-001",
        "The recording machine's host name (as given, its platform node name, and the short "
        "form of each) is written as {host} in argv, env and data wherever it stands as a "
        "whole token, never inside a longer word or dotted name, never when shorter than two "
        "characters, never a loopback name, JSON literal or number; replay leaves {host} as "
        "it is, and literal {host} text survives the round trip.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-SECRET-ENV-001",
        "An env var whose name looks like a key, token, secret, password, credential or auth "
        "is written with its value replaced by <redacted>.",
        "seed 001 §11",
    ),
    _rule(
        "RECORD-SECRET-SHAPE-001",
        "Key-shaped text (sk-, sk-ant-, ghp_/gho_/github_pat_, AKIA, xoxb-/xoxp-, AIza, "
        "Bearer tokens, JWTs) is redacted wherever it appears in argv, env or data.",
        "seed 001 §14",
    ),
    _rule(
        "RECORD-SECRET-LITERAL-001",
        "The value of every secret env var of the recorded run never appears in the "
        "recording, even when it arrives split across chunks.",
        "seed 001 §11",
    ),
    _rule(
        "RECORD-READ-001",
        "Reading a recording that is not format v1 raises a typed RecordingError naming the "
        "file and the line; another format version asks for the recording to be regenerated.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-ENV-001",
        "A recording's header env keeps only the names the def declares (its env, strip and "
        "value rules, transport selector, executable override, default-model variable) and "
        "the names the run itself set; every other name of the machine's env is left out.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-CLI-001",
        "harness record runs CMD ARGS given after -- under the def's prompt delivery, parser "
        "or session, records both directions, prints events and a one-line summary, exits 0 "
        "only when the run ended as expected, and names an unknown agent id (listing the "
        "known ones), a missing -- or CMD, and an unwritable output file.",
        "design §Who uses it",
    ),
    _rule(
        "RECORD-PARTIAL-001",
        "A recording is written and flushed line by line from the spawn on: a run that "
        "crashes or is interrupted keeps every chunk up to that point (the reader names the "
        "missing exit line), and a run refused before the spawn writes no file.",
        "design §Recordings",
    ),
    _rule(
        "RECORD-CONTINUE-001",
        "A run whose turn continues in a new process (seed 000 §12) is recorded as two "
        "complete files: the first process, its expect pinned to the interruption, and "
        "<name>.continued<ext> for the new one; replaying the second drives the continuing "
        "session and gives the live events from the continuation on.",
        "seed 000 §12 (AMR compaction continuation)",
    ),
    _rule(
        "RECORD-LADDER-001",
        "A recording of a cancelled run holds, between its chunks and in the order taken, "
        "a step line for each rung of the stop ladder from the cancel request on (cancel, "
        "grace, stdin closed, the graceful and the forced stop with the signal sent, the "
        "exit, the tree reaped); a recording without step lines still reads.",
        "design §Recordings; seed 001 §10",
    ),
    _rule(
        "RECORD-ROUNDTRIP-001",
        "Replaying the recording of a live run gives the live run's events, timing fields "
        "aside, and a two-way replay sends the frames the recorded stdin holds.",
        "design §Recordings",
    ),
    _rule(
        "REPLAY-CHUNK-001",
        "Replaying a recording gives the same events whether stdout is fed as recorded, by "
        "line, byte by byte, or at random cuts.",
        "design §Principles",
    ),
    _rule(
        "REPLAY-FRAMES-001",
        "Replaying a two-way recording, the session sends the frames the recorded stdin holds, "
        "modulo ids, paths and timestamps; a difference is a failed verdict.",
        "design §Recordings",
        _TWO_WAY,
    ),
    _rule(
        "REPLAY-STATUS-001",
        "A replay ends as the recording's header expects, or completed (or cancelled) for a "
        "two-way recording that states no expectation.",
        "design §Recordings",
    ),
    _rule(
        "REPLAY-TIMING-001",
        "With timing, each piece of stdout is delivered no earlier than the recorded offset of "
        "its last byte, measured by an injectable clock.",
        "design §Recordings",
    ),
    _rule(
        "REPLAY-CANCEL-LADDER-001",
        "Replaying a cancelled recording, its ladder is in order: one cancel first, the grace "
        "after it, stdin closed before the graceful stop, that stop no earlier than the grace "
        "unless the CLI answered or exited, the forced stop only after it and its recorded "
        "wait, the tree reaped once and last, and times never going back.",
        "design §Recordings; seed 001 §10",
    ),
    _rule(
        "REPLAY-CANCEL-FRAMES-001",
        "Replaying a cancelled two-way recording, the session is cancelled where the cancel "
        "step sits and, from there on, sends the frames the recorded stdin holds after the "
        "step, in order, modulo ids, paths and timestamps.",
        "design §Recordings; seed 001 §10",
        _TWO_WAY,
    ),
    _rule(
        "REPLAY-CANCEL-STATUS-001",
        "A replayed cancelled run ends cancelled with one terminal: the session finishes "
        "once and publishes nothing after, even for stdout the CLI wrote later; a one-way "
        "stream has at most one terminal turn and no content after it.",
        "design §Recordings; ref §10.1",
    ),
    _rule(
        "REPLAY-CANCEL-TIMING-001",
        "With timing, a cancel grace the recording let run out expires in the replay no "
        "earlier than the cancel step's time plus the recorded grace, by the injectable "
        "clock.",
        "design §Recordings; seed 001 §10",
        _TWO_WAY,
    ),
    _rule(
        "REPLAY-BUDGET-001",
        "Replay re-runs the prompt-budget guards on the recorded argv and prompt for linux, "
        "darwin and win32 (the POSIX floor, a .cmd shim, a direct .exe, or the --bin path) "
        "and reports each verdict; a launch a guard would refuse is a failed verdict naming "
        "the guard's rule.",
        "seed 002 §6.3; design §Recordings",
    ),
    _rule(
        "REPLAY-CLI-001",
        "harness replay replays a file or every recording under a directory, prints events and "
        "one verdict line per rule checked, and exits non-zero on any failure.",
        "design §Who uses it",
    ),
)
