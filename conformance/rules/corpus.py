"""Rules of the recordings corpus (``recordings/``, ``harness/recording/corpus.py``).

The corpus test (``tests/corpus/test_corpus.py``) holds every recording under
``recordings/`` to them, ``real/`` included.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        id="CORPUS-REPLAY-001",
        tier=Tier.MANDATORY,
        statement="Every recording in the corpus replays to the outcome its header expects, and "
        "the run-level checks over its replay fail no rule but the one it breaks on purpose.",
        citation="design §Recordings",
    ),
    Rule(
        id="CORPUS-CHUNKING-001",
        tier=Tier.MANDATORY,
        statement="Every recording gives the same events, frames and status replayed as recorded, "
        "by line, byte by byte and at two random chunkings (durations normalized).",
        citation="design §Recordings",
    ),
    Rule(
        id="CORPUS-SNAPSHOT-001",
        tier=Tier.MANDATORY,
        statement="The normalized events of every recording equal its JSON Lines snapshot; "
        "--snapshot-update re-records them.",
        citation="design §Recordings",
    ),
    Rule(
        id="CORPUS-UNUSED-001",
        tier=Tier.MANDATORY,
        statement="A corpus snapshot that no recording owns, or a recording without a snapshot, "
        "fails the suite.",
        citation="design §Recordings",
    ),
    Rule(
        id="CORPUS-README-001",
        tier=Tier.MANDATORY,
        statement="recordings/README.md has exactly one line per recording saying what it shows, "
        "and no line names a missing file.",
        citation="design §Recordings",
    ),
    Rule(
        id="CORPUS-GEN-001",
        tier=Tier.MANDATORY,
        statement="For every stream format a built-in def with a fake reaches, the corpus holds a "
        "recording of that fake for every planned scenario, with expect set; the def is chosen "
        "by data.",
        citation="design §Recordings",
    ),
    Rule(
        id="CORPUS-EDGE-001",
        tier=Tier.MANDATORY,
        statement="Each hand-written edge recording is named after a known rule of its format, "
        "equals its definition, and its replayed events show that rule.",
        citation="design §Recordings",
    ),
)
