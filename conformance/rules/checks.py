"""Rules judged by the executable checks of :mod:`conformance.checks`.

Two kinds, as the checks registry calls them:

* **def-level** (``formats=()``): judged on an :class:`~harness.defs.types.AgentDef` alone,
  with no run, so an adapter author's own def file can be checked before anything is
  spawned (:mod:`conformance.checks.defs`, :mod:`conformance.checks.loader`);
* **run-level** (formats set): judged on one observed run, live or replayed, by
  :mod:`conformance.checks.runs`.

Where a rule already exists elsewhere in the catalog the checks reuse its id instead of
declaring a twin: EVENT-SCHEMA-001 (events.py), DEF-REGISTRY-001, DEF-ID-001,
DEF-BUDGET-001/002, DEF-FORMAT-001, DEF-FILE-001, DEF-PROMPT-001 (defs.py), ARGV-PURE-001,
ARGV-CAPS-001, ARGV-HEADLESS-001 (argv.py). The ids below are the ones no other module
states. Tests: ``tests/conformance_checks/``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier
from harness.formats import jsonl_formats

__all__ = ["RULES", "STRUCTURED_FORMATS"]

#: Every wire format but the text streams: the formats whose streams can carry structured
#: usage (seed 000 §12: usage is preserved "when a CLI exposes" it; a plain stream is
#: text only and OpenDesign "does not invent token or billing data").
STRUCTURED_FORMATS: tuple[str, ...] = tuple(sorted(jsonl_formats()))


def _def(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


def _def_capability(rule_id: str, capability: str, statement: str, citation: str) -> Rule:
    return Rule(
        id=rule_id,
        tier=Tier.CAPABILITY,
        statement=statement,
        citation=citation,
        formats=(),
        capability=capability,
    )


def _run(rule_id: str, statement: str, citation: str, formats: tuple[str, ...] = ("*",)) -> Rule:
    return Rule(
        id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=formats
    )


RULES: tuple[Rule, ...] = (
    # --- the registry of checks itself ------------------------------------------------
    _def(
        "CHECKS-REGISTRY-001",
        "Every registered check names a known rule exactly once, and its level matches the "
        "rule: def-level checks judge def-level rules (no formats), run-level checks judge "
        "stream rules.",
        "design §Conformance model",
    ),
    # --- def files --------------------------------------------------------------------
    _def(
        "DEFCHECK-LOAD-001",
        "load_def_file never crashes on a broken file: a syntax or import error names the "
        "file and line, and a def that is not valid data names the file, the def and the "
        "field.",
        "design §Who uses it",
    ),
    # --- def-level --------------------------------------------------------------------
    _def(
        "DEFCHECK-PURE-001",
        "build_args has no side effects: a call writes no file, changes no environment "
        "variable, starts no process and opens no network connection.",
        "design §Principles",
    ),
    _def(
        "DEFCHECK-TOTAL-001",
        "build_args returns a list of strings for every combination of the def's documented "
        "models, reasoning options, platforms and session states when every capability was "
        "found; with other capability maps it raises nothing but a typed HarnessError.",
        "seed 000 §1",
    ),
    _def(
        "DEFCHECK-RESUME-001",
        "argv carries the resume id exactly when the def resumes through CLI arguments "
        "(specify, capture over a one-way stream, pi with resume via process args) and the "
        "host-minted id only on a specify-style first turn; other styles carry neither.",
        "seed 002 §3.1",
    ),
    _def_capability(
        "DEFCHECK-PROMPT-001",
        "prompt_delivery",
        "A def with argv prompt delivery passes the whole prompt as one argv element.",
        "seed 002 §6.2",
    ),
    _def_capability(
        "DEFCHECK-PROMPTFILE-001",
        "prompt_delivery",
        "A def with file prompt delivery passes RuntimeContext.prompt_file_path in argv.",
        "seed 002 §6.2",
    ),
    # --- run-level --------------------------------------------------------------------
    _run(
        "RUN-TOOL-PAIR-001",
        "Every tool_result names the id of a tool_use published before it.",
        "wire §B.3",
    ),
    _run(
        "RUN-TOOL-ONCE-001",
        "At most one tool_use is published per tool id (tool_in_flight rows excluded).",
        "wire §B.3",
    ),
    _run(
        "RUN-TERMINAL-001",
        "A run ends with exactly one outcome: a known status, at most one terminal error "
        "event and one terminal turn_end, and never succeeded after an in-stream error.",
        "seed 001 §6",
    ),
    _run(
        "RUN-AFTER-TERMINAL-001",
        "No event is published after a terminal error event or after the session finished.",
        "seed 001 §6",
    ),
    _run(
        "RUN-HAPPY-TEXT-001",
        "A run of a fault-free scenario shows the scenario's text: equal to it for a "
        "structured stream; for a plain one, containing the final text step, after any "
        "earlier ones it prints, in order (a plain CLI may print only its final answer; "
        "whitespace ignored).",
        "seed 002 §7.1",
    ),
    _run(
        "RUN-HAPPY-FILE-001",
        "A run of a fault-free scenario leaves every file its write tool steps name, with the "
        "scenario's content.",
        "seed 001 §8",
    ),
    _run(
        "RUN-USAGE-001",
        "A run of a fault-free scenario that reports usage publishes at least one usage event.",
        "seed 000 §12",
        formats=STRUCTURED_FORMATS,
    ),
    Rule(
        id="RUN-SESSION-CAPTURE-001",
        tier=Tier.CAPABILITY,
        statement=(
            "A successful run of a capture-style def reports the CLI's session id in a status "
            "event, and the run's session id is the last one reported."
        ),
        citation="seed 002 §3.1",
        formats=("*",),
        capability="resume_style",
    ),
    _run(
        "RUN-FAULT-APIERROR-001",
        "A run whose model API fails ends failed and reports the error, as an error event or "
        "as the run's error.",
        "ref §1.2",
    ),
    _run(
        "RUN-FAULT-CRASH-001",
        "A run whose CLI crashes ends failed and keeps the events published before the crash.",
        "seed 000 §8",
    ),
    _run(
        "RUN-CANCEL-001",
        "A run the host cancelled ends cancelled, never failed or succeeded.",
        "ref §10.1",
    ),
    _run(
        "CONFORM-BUDGET-LINUX-001",
        "The argv a run spawned, prompt included, passes the prompt-budget guards for a "
        "linux launch (the POSIX argv floor).",
        "seed 002 §6.3",
    ),
    _run(
        "CONFORM-BUDGET-DARWIN-001",
        "The argv a run spawned, prompt included, passes the prompt-budget guards for a "
        "darwin launch (the darwin argv floor).",
        "seed 002 §6.3",
    ),
    _run(
        "CONFORM-BUDGET-WIN32-001",
        "The argv a run spawned, prompt included, passes the prompt-budget guards for a "
        "win32 launch through a .cmd shim and as a direct .exe: the def's argv budget, the "
        "command-line budget, and every argument surviving the command line.",
        "seed 002 §6.3",
    ),
    _run(
        "RUN-SECRET-001",
        "The stderr tail kept for a run never contains a secret value given to the run.",
        "seed 001 §14",
    ),
)
