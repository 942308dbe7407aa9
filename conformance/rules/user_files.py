"""Rules for the user's files: what ``harness fakes install``, a recording and conform may write.

Enforced by ``harness/runtime/fakes_install.py``, ``harness/commands/fakes.py``,
``harness/recording/record.py`` (:class:`~harness.recording.record.RunRecorder`) and
``harness/commands/record.py`` and ``conformance/checks/defs.py``; tested in
``tests/fakes_install/``, ``tests/recording/test_user_files.py`` and
``tests/conformance/test_user_files.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (
    Rule(
        id="USERFILE-FAKES-001",
        tier=Tier.MANDATORY,
        statement=(
            "harness fakes install writes a name only when it is free or holds a shim it "
            "marked as its own, through a temp file linked or renamed into DIR, never "
            "following a symbolic link; every other name is left as it is and named with "
            "the reason, and the command then exits 1."
        ),
        citation="design §Reliability",
        formats=(),
    ),
    Rule(
        id="USERFILE-FAKES-002",
        tier=Tier.MANDATORY,
        statement=(
            "harness fakes install --agent ID writes exactly the names ID gets in a full "
            "install, never another def's binary."
        ),
        citation="design §Reliability",
        formats=(),
    ),
    Rule(
        id="USERFILE-RECORD-001",
        tier=Tier.MANDATORY,
        statement=(
            "harness run --record, harness record --out and harness live run --record stop "
            "with exit 2 and one line naming the file, before anything is spawned, when the "
            "file or a sibling the run would also write (<name>.continued<ext>, a later "
            "turn's file) already exists, unless --force is given."
        ),
        citation="design §Reliability",
        formats=(),
    ),
    Rule(
        id="USERFILE-RECORD-002",
        tier=Tier.MANDATORY,
        statement=(
            "A recorder never truncates a file: a new one is created exclusively, an existing "
            "one is replaced only when allowed and then whole, through a temp file renamed "
            "over it at the exit or on close, so a harness that dies mid-run leaves the old "
            "file and a failed write keeps it and names the temp file."
        ),
        citation="design §Reliability",
        formats=(),
    ),
    Rule(
        id="USERFILE-CONFORM-001",
        tier=Tier.MANDATORY,
        statement=(
            "harness conform writes only its reports (under --out): its property checks keep "
            "their caches in a temporary directory, so the working directory holds nothing "
            "new afterwards (no .hypothesis directory), unless the user chose that directory "
            "with HYPOTHESIS_STORAGE_DIRECTORY."
        ),
        citation="design §Reliability",
        formats=(),
    ),
)
