"""Rules for the runner: spawn, prompt, pumps, timeouts, cancel, reap.

Enforced by ``harness/runner/``, ``harness/secrets/redact.py``,
``harness/runtime/fakes_install.py`` and ``harness/commands/run.py``; tested in ``tests/runner/``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier
from harness.formats import two_way_formats

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (
    Rule(
        id="RUN-SPAWN-001",
        tier=Tier.MANDATORY,
        statement=(
            "A run spawns what launch resolution selects, with the launch env and the def's "
            "argv, in the run's cwd; any failure before spawn is a failed result with a typed "
            "error and no process."
        ),
        citation="seed 002 §5",
    ),
    Rule(
        id="RUN-BUDGET-001",
        tier=Tier.MANDATORY,
        statement=(
            "An argv prompt over budget fails the run with AGENT_PROMPT_TOO_LARGE before "
            "anything is spawned."
        ),
        citation="seed 002 §6.3",
    ),
    Rule(
        id="RUN-STDIN-001",
        tier=Tier.MANDATORY,
        statement=(
            "Text stdin is written then closed; a stream-json line keeps stdin open until the "
            "first clean terminal turn (never at tool_use); file and argv delivery close stdin; "
            "protocol delivery writes the session's frames."
        ),
        citation="seed 002 §6.2",
    ),
    Rule(
        id="RUN-PUMP-001",
        tier=Tier.MANDATORY,
        statement=(
            "stdout and stderr are read concurrently with bounded buffering, so megabytes on "
            "both pipes at once never deadlock the run."
        ),
        citation="wire §B.7",
    ),
    Rule(
        id="RUN-TIMEOUT-FIRST-001",
        tier=Tier.MANDATORY,
        statement=(
            "No substantive event (status, raw and blank text do not count) before the "
            "first-output deadline terminates the tree and fails the run with "
            "RUN_FIRST_OUTPUT_TIMEOUT, keeping its events."
        ),
        citation="ref §10.1",
    ),
    Rule(
        id="RUN-TIMEOUT-IDLE-001",
        tier=Tier.MANDATORY,
        statement=(
            "No byte on stdout or stderr for the inactivity timeout terminates the tree and "
            "fails the run with RUN_INACTIVITY_TIMEOUT, keeping its events."
        ),
        citation="ref §10.1",
    ),
    Rule(
        id="RUN-CANCEL-ORDER-001",
        tier=Tier.MANDATORY,
        statement=(
            "Cancel sends the protocol cancel where the format has one, waits a bounded grace, "
            "closes stdin, terminates the owned tree, and force-kills it after a second bound."
        ),
        citation="seed 001 §10",
    ),
    Rule(
        id="RUN-REAP-001",
        tier=Tier.MANDATORY,
        statement=(
            "A run returns only once its leader is reaped and no process it started is alive "
            "(also when the awaiting task is cancelled), and reports cancel-to-reaped latency."
        ),
        citation="seed 001 §6",
    ),
    Rule(
        id="RUN-OWNED-001",
        tier=Tier.MANDATORY,
        statement=(
            "The runner signals only processes the run started (its own process group or "
            "snapshot descendants), never another process."
        ),
        citation="seed 001 §10",
    ),
    Rule(
        id="RUN-STDERR-REDACT-001",
        tier=Tier.MANDATORY,
        statement=(
            "stderr is kept as a bounded 64 KiB tail in which the prompt and secret-looking "
            "values are redacted; argv in a result is redacted the same way."
        ),
        citation="seed 001 §14",
    ),
    Rule(
        id="RUN-STATUS-001",
        tier=Tier.MANDATORY,
        statement=(
            "The close status is classified by a pure function in ref §10.1's order: cancel, "
            "runner failure, session or in-stream error, exit 0, clean completion + SIGTERM, "
            "artifact salvage, clean terminal turn, else failed."
        ),
        citation="ref §10.1",
    ),
    Rule(
        id="RUN-FILES-001",
        tier=Tier.MANDATORY,
        statement=(
            "files_written lists the cwd paths created or changed during the run, from "
            "snapshots taken before spawn and after reaping."
        ),
        citation="seed 001 §8",
    ),
    Rule(
        id="RUN-ARTIFACTS-001",
        tier=Tier.MANDATORY,
        statement=(
            "After a plain-stream run, <artifact> blocks are named against the project's "
            "existing files and written into the cwd, never outside it, nor after a cancel."
        ),
        citation="seed 000 §5.13",
        formats=("plain",),
    ),
    Rule(
        id="RUN-SESSION-001",
        tier=Tier.MANDATORY,
        statement=(
            "Two-way sessions get the run's request (pi images and session-file capture, "
            "argv-only resume, app-server sandbox), their deadlines are ticked, and a finished "
            "session's process is bounded by Terminate or the shutdown grace."
        ),
        citation="seed 000 §5.10",
        formats=two_way_formats(),
    ),
    Rule(
        id="RUN-API-001",
        tier=Tier.MANDATORY,
        statement=(
            "run_agent (synchronous, threading cancel) and run_agent_async give the same "
            "result shape; RunResult.to_json is plain JSON."
        ),
        citation="design §Principles",
    ),
    Rule(
        id="RUN-CONTINUE-001",
        tier=Tier.MANDATORY,
        statement=(
            "A turn interrupted with evidence its session accepts goes on in exactly one new "
            "process of the same command, started only once the first process tree is reaped; "
            "the run keeps both processes' events (a status 'continuation' between them), "
            "ends with the continued turn's outcome, and never starts a second continuation. "
            "Evidence the session refuses fails the run with no new process."
        ),
        citation="seed 000 §12 (AMR compaction continuation)",
        formats=("acp-json-rpc",),
    ),
    Rule(
        id="RUN-FAKES-001",
        tier=Tier.MANDATORY,
        statement=(
            "harness fakes install writes a shim for each def's bin and fallback bins that "
            "runs python -m fake_clis <id>, a def's own bin always running its own fake."
        ),
        citation="design §Fake CLIs",
        formats=(),
    ),
    Rule(
        id="RUN-FAKES-EXE-001",
        tier=Tier.MANDATORY,
        statement=(
            "On Windows each shim name also gets a <name>.exe: distlib's console launcher for "
            "the machine, a shebang naming the interpreter with -S, and a zip whose __main__ "
            "runs the fake's shim with the caller's arguments verbatim."
        ),
        citation="design §Fake CLIs",
        formats=(),
    ),
    Rule(
        id="RUN-CLI-001",
        tier=Tier.MANDATORY,
        statement=(
            "harness run prints each event live and a summary, and exits 0 when the run "
            "succeeded, 1 when it failed or was cancelled."
        ),
        citation="design §Fake CLIs",
        formats=(),
    ),
    Rule(
        id="RUN-E2E-001",
        tier=Tier.MANDATORY,
        statement=(
            "Every built-in def, installed as its fake, is found by detection and runs the "
            "happy scenario to text, a tool call and result (an artifact for plain) and "
            "hello.html."
        ),
        citation="design §Fake CLIs",
        formats=(),
    ),
)
