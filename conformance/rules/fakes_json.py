"""Rules of the ``json-event-stream`` fake CLIs (``fake_clis/json_events/``).

The fakes stand in for codex (``exec --json``), cursor-agent, opencode, byok-opencode,
mimo and gemini (design §Fake CLIs: real processes, strict argv, scenario-driven). Each
rule is about the fake telling the truth about its CLI, so that a conformance verdict
reached against a fake means something for the real CLI. Tested in
``tests/fakes/test_json_events.py`` by running the fakes as real subprocesses and
feeding their stdout to the engine's parser.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_F = ("json-event-stream",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _F)


RULES = (
    # -- every json-event-stream fake -------------------------------------------------
    _rule(
        "FAKE-JSONEV-HAPPY-001",
        "For the happy scenario each fake's stdout parses into the scenario's text, a "
        "tool_use and a tool_result for the write tool (the file really written in the cwd), "
        "usage, and a clean exit 0.",
        "design §Fake CLIs",
    ),
    _rule(
        "FAKE-JSONEV-PROMPT-001",
        "Each fake reads the prompt the way its CLI does (stdin to EOF unless argv carries "
        "it) and records the prompt and how it came.",
        "seed 002 §6.2",
    ),
    _rule(
        "FAKE-JSONEV-TOOLS-001",
        "Shell and other tool steps render as the CLI's own tool frames, and is_error "
        "steps as failed results the dialect reports with is_error true.",
        "ref §2.2",
    ),
    _rule(
        "FAKE-JSONEV-APIERR-001",
        "An api_error step is reported the CLI's own way (codex error + turn.failed, "
        "opencode error frame, gemini error result, cursor stderr) and the fake exits 1.",
        "wire §A.5",
    ),
    _rule(
        "FAKE-JSONEV-FAULTS-001",
        "malformed writes a truncated real frame as one line, oversize one valid frame of "
        "exactly the asked byte count, and crash mid_line half a frame with no newline "
        "before exiting with the step's code; the frames around a fault parse intact.",
        "design §Fake CLIs",
    ),
    _rule(
        "FAKE-JSONEV-FOREIGN-001",
        "A foreign step writes a frame that names another session or thread than the "
        "run's own, and the run's own frames around it are unaffected.",
        "design §Fake CLIs",
    ),
    _rule(
        "FAKE-JSONEV-COMMON-001",
        "The common steps (noise, stderr, a plain crash, hang, lingering after the work) "
        "behave as fake_clis.base defines them inside every json-event-stream fake.",
        "design §Fake CLIs",
    ),
    _rule(
        "FAKE-JSONEV-ARGV-001",
        "Every def's own build_args output, with and without capabilities and on each "
        "branch (resume, platform, model, dirs), is accepted by its fake.",
        "design §Principles",
    ),
    _rule(
        "FAKE-JSONEV-PROBE-001",
        "Version, help, model-listing and auth probes answer in the shape the def's "
        "parsers read, so detection through a fake finds version, capabilities, live "
        "models and auth state.",
        "seed 002 §5.4",
    ),
    _rule(
        "FAKE-JSONEV-OLDVER-001",
        "An old build's help omits the optional flags and its grammar rejects them, so a "
        "def that passes them without probing fails.",
        "seed 002 §5.5",
    ),
    _rule(
        "FAKE-JSONEV-SESSION-001",
        "Resuming a session id saved under $HOME/.fake-cli continues it (the record shows "
        "resumed and the prior turn count); an unknown id fails as the CLI does.",
        "seed 000 §5.6",
    ),
    # -- codex exec --json ----------------------------------------------------------
    _rule(
        "FAKE-CODEXEXEC-ARGV-001",
        "codex parses argv like clap (unexpected argument, exit 2), and exec resume "
        "rejects --sandbox, -C and --add-dir.",
        "seed 002 §4.2",
    ),
    _rule(
        "FAKE-CODEXEXEC-EVENTS-001",
        "codex exec emits thread.started, turn.started, whole agent_message and reasoning "
        "items (no text deltas), file_change only as completed, and turn.completed usage.",
        "wire §A.3.1",
    ),
    _rule(
        "FAKE-CODEXEXEC-SANDBOX-001",
        "The effective sandbox comes from --sandbox or -c sandbox_mode and defaults to "
        "read-only, which rejects a write: no file and no file_change item.",
        "seed 000 §10",
    ),
    _rule(
        "FAKE-CODEXEXEC-APPSERVER-001",
        "codex app-server is accepted by the codex grammar and handed to "
        "fake_clis.codex_app_server.run_app_server, or exits 2 when that emulator is absent.",
        "seed 000 §5.3",
    ),
    # -- cursor-agent -----------------------------------------------------------------
    _rule(
        "FAKE-CURSOR-STREAM-001",
        "With --stream-partial-output cursor-agent streams timestamp_ms deltas and then "
        "replays each whole assistant message with model_call_id; without it, only whole "
        "messages; either way the parser yields the text exactly once.",
        "seed 002 §7.3",
    ),
    _rule(
        "FAKE-CURSOR-ARGV-001",
        "cursor-agent parses argv like commander (unknown option, exit 1) and refuses to "
        "run headless without --print.",
        "seed 000 §5.5",
    ),
    # -- opencode family ----------------------------------------------------------------
    _rule(
        "FAKE-OPENCODE-EVENTS-001",
        "Every opencode-family line is {type, timestamp, sessionID, part}, with whole text "
        "parts and step_finish tokens and cost.",
        "wire §A.5",
    ),
    _rule(
        "FAKE-OPENCODE-CONFIG-001",
        "OPENCODE_CONFIG_CONTENT (MIMOCODE_CONFIG_CONTENT for mimo) is recorded and must "
        "be a JSON object; anything else is the CLI's config error and exit 1.",
        "seed 002 §8.1",
    ),
    _rule(
        "FAKE-OPENCODE-ARGV-001",
        "The opencode family parses argv like yargs (Unknown argument, exit 1).",
        "seed 000 §5.6",
    ),
    # -- gemini ---------------------------------------------------------------------------
    _rule(
        "FAKE-GEMINI-ARGV-001",
        "gemini parses argv like yargs, rejects --yolo with --approval-mode, and fails "
        "without any prompt on stdin or in argv.",
        "wire §A.5",
    ),
)
