"""Rules of bounded memory: plain runs, and the files ``harness parse`` / ``harness replay`` read.

Enforced by :mod:`harness.streams.plain`, :mod:`harness.commands.parse`,
:mod:`harness.recording.replay` and :mod:`harness.runner.engine` (``EventRetention``); tests in
``tests/streams/test_plain_bound.py``, ``tests/recording/test_replay_stream.py`` and
``tests/memory/`` (the latter measure a child process's peak RSS on inputs of tens of MB).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "PLAIN-TEXT-BOUND-001",
        Tier.MANDATORY,
        "Plain stdout is delivered as it arrives and never held: one text_delta carries the "
        "text of at most 64 KiB of stdout, cut at fixed stdout offsets whatever the reads.",
        "design §Reliability",
        ("plain",),
    ),
    Rule(
        "PLAIN-ARTIFACT-BOUND-001",
        Tier.MANDATORY,
        "For artifact extraction the plain parser holds at most 8 Mi characters, dropping only "
        "text that cannot change the extraction; an <artifact> it could not hold ends in one "
        "ARTIFACT_TEXT_LIMIT error event, never a partial extraction.",
        "design §Reliability",
        ("plain",),
    ),
    Rule(
        "PARSE-MEMORY-001",
        Tier.MANDATORY,
        "harness parse reads its capture in 64 KiB chunks (or --chunk) and holds only what its "
        "output needs, so a 200 MB capture stays under 100 MiB of peak RSS.",
        "design §Reliability",
    ),
    Rule(
        "REPLAY-MEMORY-001",
        Tier.MANDATORY,
        "harness replay checks a recording line by line, then streams its stdout chunks through "
        "the parser or session and prints each event as it comes, keeping only counts and what "
        "the verdicts read: a 200 MB recording stays under 100 MiB of peak RSS, and the output "
        "is what a replay of the recording read whole prints.",
        "design §Reliability",
    ),
    Rule(
        "RUN-MEMORY-001",
        Tier.MANDATORY,
        "harness run prints every event and keeps only a bounded head and tail of them for its "
        "result, counting the rest as events_dropped: a plain run whose CLI prints one 200 MB "
        "line stays under 100 MiB of peak RSS. A library run keeps every event by default.",
        "design §Reliability",
    ),
)
