"""Rules of the pytest plugin for adapter authors and of the event-snapshot extension.

Enforced by ``conformance/pytest_plugin.py`` (fixtures, options, the ``adapter_rule``
marker, the leak check) and ``conformance/snapshots.py`` (``EventStreamExtension``);
proved by ``tests/plugin/`` (``pytester`` projects, one of them the documented example in
``docs/adapter-author-example/``).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, ())


RULES: tuple[Rule, ...] = (
    _rule(
        "PLUGIN-ENTRY-001",
        "The plugin is registered as the pytest11 entry point adapter_harness = "
        "conformance.pytest_plugin, and its options form one group, adapter-harness, each "
        "flag prefixed --adapter-.",
        "wire §B.1",
    ),
    _rule(
        "PLUGIN-DEF-001",
        "agent_def is the def of --adapter-def PATH.py (validated as data at session start; a "
        "bad file stops the session listing each problem with its field) or of "
        "--adapter-agent ID; with neither, a test that needs it errors saying how to give one.",
        "seed 000 §1",
    ),
    _rule(
        "PLUGIN-DEF-002",
        "A def returned by an author's own agent_def fixture is validated as data before any "
        "fake or run uses it, and the test fails naming each bad field as agent_def.<field>.",
        "seed 000 §1",
    ),
    _rule(
        "PLUGIN-FAKE-001",
        "fake_cli(scenario) installs the emulator of --adapter-fake-as, else of the built-in "
        "with the def's id, else of the first built-in sharing its stream format and parser, "
        "under the def's bin names in a private bin dir, with PATH first, the scenario, a "
        "record path and a private HOME in its env and no secret-named variable.",
        "design §Fake CLIs",
    ),
    _rule(
        "PLUGIN-RUN-001",
        "run_agent(prompt, scenario, **overrides) runs the def against its fake through the "
        "real runner in a private cwd and returns the RunResult; an unknown or reserved "
        "override is a TypeError naming it.",
        "design §Fake CLIs",
    ),
    _rule(
        "PLUGIN-LEAK-001",
        "A process started through the plugin (it carries the test's leak mark, or is a new "
        "child running from the sandbox or fake_clis) that is alive after the test fails the "
        "test, naming the process, and is killed.",
        "seed 001 §6",
    ),
    _rule(
        "PLUGIN-REPLAY-001",
        "replay(recording, **options) returns harness.recording.replay's ReplayResult for a "
        "recording path (relative to the test file first) or Recording.",
        "design §Recordings",
    ),
    _rule(
        "PLUGIN-MARK-001",
        "@pytest.mark.adapter_rule naming an id missing from the rule catalog (or no id) is a "
        "collection error naming the id and the test.",
        "design §Conformance model",
    ),
    _rule(
        "PLUGIN-MARK-002",
        "Each adapter_rule id that has a check is judged on the test's def or on each of its "
        "runs and replays; a failing check fails the test with the rule id and its evidence, "
        "and a failed marked test's report lists its rules with statement and citation.",
        "design §Conformance model",
    ),
    _rule(
        "PLUGIN-REPRO-001",
        "A failed check's reproduce command runs from the directory pytest was started in: "
        "the test's path is relative to it, not to the rootdir.",
        "design §Conformance model",
    ),
    _rule(
        "PLUGIN-SNAP-001",
        "EventStreamExtension writes one .jsonl file per snapshot: a format header line, then "
        "one normalized event per line; a second run against the file passes.",
        "wire §B.5",
    ),
    _rule(
        "PLUGIN-SNAP-002",
        "Before serialization, ttft/elapsed/duration/started_at times, UUIDs, ISO timestamps "
        "and the test's sandbox directories become stable placeholders; nothing else changes.",
        "wire §B.5",
    ),
    _rule(
        "PLUGIN-SNAP-003",
        "A changed stream fails the snapshot, --snapshot-update rewrites it, an unused "
        "snapshot fails the session (syrupy default), and a foreign header is regenerated, "
        "never crashed on.",
        "wire §B.5",
    ),
)
