"""Rules the stream-format fake CLIs keep: claude, codebuddy, amp, copilot, qoder
and the plain CLIs (``fake_clis/claude_stream.py``, ``copilot.py``, ``qoder.py``,
``plain.py``).

A fake is only useful if it tells the truth about the CLI it stands in for (design §Fake
CLIs, principle 7): it reads the prompt the real way, refuses the argv the real CLI
refuses, and writes the real frames, which the engine's own parser must read back.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_CLAUDE = ("claude-stream-json",)
_COPILOT = ("copilot-stream-json",)
_QODER = ("qoder-stream-json",)
_PLAIN = ("plain",)

RULES = (
    Rule(
        "FAKE-SCENARIO-001",
        Tier.MANDATORY,
        "Every bundled scenario file is valid against scenario.schema.json (the fakes trust "
        "them without re-validating); a scenario given by path is validated and a bad one "
        "is refused naming the file and the JSON path of the first problem.",
        "design §Fake CLIs",
        (),
    ),
    # --- claude, codebuddy, amp ------------------------------------------------------
    Rule(
        "FAKE-CLAUDE-001",
        Tier.MANDATORY,
        "The claude fake's happy run parses to thinking, text, one Write tool_use and its "
        "tool_result, the file written in the cwd, usage and a clean end_turn.",
        "seed 000 §5.1; wire §A.4",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-002",
        Tier.MANDATORY,
        "The claude fake refuses what Claude Code 2.1.x refuses: stream-json output without "
        "--verbose in print mode, wrong-mode flags, unknown options, bad choices (exit 1).",
        "seed 000 §5.1; wire §A.4",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-003",
        Tier.MANDATORY,
        "With stream-json input each stdin line is one user turn, turns share one process "
        "and session, and the fake exits only when stdin closes; text input reads argv/stdin.",
        "seed 002 §6.2; ref §2.1.8",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-004",
        Tier.MANDATORY,
        "Frames follow 2.1.332: system/init first; one assistant wrapper per block with "
        "stop_reason null, before the block's content_block_stop; the message ends before "
        "the tool's result; stop reason in deltas and result.",
        "ref §2.1.3",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-005",
        Tier.MANDATORY,
        "--session-id creates a session (an id in use or not a UUID fails), --resume and "
        "--continue continue a saved one, an unknown id fails with Claude's message, exit 1.",
        "seed 002 §4.1",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-006",
        Tier.MANDATORY,
        "A write runs only under bypassPermissions, acceptEdits, "
        "--dangerously-skip-permissions or an allowed tool; otherwise the result is Claude's "
        "permission denial and no file is written.",
        "seed 000 §10",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-007",
        Tier.MANDATORY,
        "An API error is a synthetic assistant message with error, then a result with "
        "is_error true and the API Error text, and the fake exits non-zero.",
        "ref §2.1.4",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-008",
        Tier.MANDATORY,
        "Every scenario step kind is rendered in Claude frames: malformed and oversize lines, "
        "a foreign sub-agent frame, mid-line crashes, exit codes, noise, hangs, process trees.",
        "design §Fake CLIs",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-009",
        Tier.MANDATORY,
        "The claude fake answers the def's probes: version, `-p --help` listing optional "
        "flags only for a current build (an old build also rejects them), auth status JSON.",
        "seed 002 §4.1",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CLAUDE-010",
        Tier.MANDATORY,
        "Every argv the claude, codebuddy and amp defs build, with and without probed "
        "capabilities, is accepted by the matching fake.",
        "design §Fake CLIs",
        _CLAUDE,
    ),
    Rule(
        "FAKE-CODEBUDDY-001",
        Tier.MANDATORY,
        "The codebuddy fake takes its own argv (-y) and writes the same Claude-shaped frames "
        "the claude-stream-json parser reads.",
        "seed 000 §3",
        _CLAUDE,
    ),
    Rule(
        "FAKE-AMP-001",
        Tier.MANDATORY,
        "The amp fake reads a text prompt from stdin in execute mode and prints whole "
        "Claude-shaped messages with real stop reasons, thread ids and its own tool names.",
        "seed 000 §3",
        _CLAUDE,
    ),
    Rule(
        "FAKE-AMP-002",
        Tier.MANDATORY,
        "The amp fake refuses --stream-json outside execute mode, unknown options and modes, "
        "and rejects shell commands without --dangerously-allow-all.",
        "seed 000 §10",
        _CLAUDE,
    ),
    # --- copilot ------------------------------------------------------------------------
    Rule(
        "FAKE-COPILOT-001",
        Tier.MANDATORY,
        "The copilot fake's happy run writes dotted events with data payloads and a top-level "
        "result that the copilot parser maps to thinking, text, tool use/result and usage.",
        "ref §2.3; wire §A.5",
        _COPILOT,
    ),
    Rule(
        "FAKE-COPILOT-002",
        Tier.MANDATORY,
        "Without -p the copilot fake reads the prompt from stdin; -p - is the literal "
        "one-character prompt '-'.",
        "seed 000 §5.7",
        _COPILOT,
    ),
    Rule(
        "FAKE-COPILOT-003",
        Tier.MANDATORY,
        "Without --allow-all-tools (or a matching --allow-tool) a tool call completes with "
        "success false and a permission denial, and nothing is written.",
        "seed 000 §5.7",
        _COPILOT,
    ),
    Rule(
        "FAKE-COPILOT-004",
        Tier.MANDATORY,
        "The copilot fake accepts every argv its def builds and refuses unknown options and "
        "bad choices commander's way (exit 1).",
        "seed 000 §5.7",
        _COPILOT,
    ),
    Rule(
        "FAKE-COPILOT-005",
        Tier.MANDATORY,
        "Errors and faults in copilot frames: session.error with result success false and "
        "exit 1; malformed, foreign, oversize lines and mid-line crashes.",
        "ref §2.3",
        _COPILOT,
    ),
    Rule(
        "FAKE-COPILOT-006",
        Tier.MANDATORY,
        "The copilot fake resumes a saved session by id (an unknown id fails) and answers "
        "its version and help probes.",
        "seed 000 §5.7",
        _COPILOT,
    ),
    # --- qoder ----------------------------------------------------------------------------
    Rule(
        "FAKE-QODER-001",
        Tier.MANDATORY,
        "The qoder fake's happy run writes system/init with qodercli_version, assistant "
        "records and a result that the qoder parser maps to status, thinking, text and usage.",
        "seed 000 §5.8; ref §2.4",
        _QODER,
    ),
    Rule(
        "FAKE-QODER-002",
        Tier.MANDATORY,
        "The qoder fake accepts every argv its def builds, needs an existing -w directory and "
        "--attachment files, and refuses unknown options (exit 1).",
        "seed 000 §5.8",
        _QODER,
    ),
    Rule(
        "FAKE-QODER-003",
        Tier.MANDATORY,
        "A failed model call or a missing login ends in a result with is_error true and "
        "exit 1; without --yolo a tool call is denied and nothing is written.",
        "seed 000 §5.8",
        _QODER,
    ),
    Rule(
        "FAKE-QODER-004",
        Tier.MANDATORY,
        "Every step kind is rendered in qoder records (unclaimed ones stay raw); stream-json "
        "input is one turn per line; a saved session resumes by id, an unknown id fails.",
        "seed 000 §5.8; ref §2.4",
        _QODER,
    ),
    # --- plain --------------------------------------------------------------------------
    Rule(
        "FAKE-PLAIN-001",
        Tier.MANDATORY,
        "Each plain fake reads the prompt as its CLI does: aider --message, deepseek exec "
        "positional, grok and atomcode --prompt-file, agy -p - and qwen on stdin.",
        "seed 002 §6.2",
        _PLAIN,
    ),
    Rule(
        "FAKE-PLAIN-002",
        Tier.MANDATORY,
        "Each plain fake prints the answer as text and writes the file itself; the qwen fake "
        "prints only its final answer (as qwen 0.24.4 does), and an artifact block in that "
        "answer is extracted by the plain parser.",
        "seed 000 §5.13",
        _PLAIN,
    ),
    Rule(
        "FAKE-PLAIN-003",
        Tier.MANDATORY,
        "Each plain fake refuses unknown flags in its argument library's style and exit code "
        "and accepts every argv its def builds.",
        "seed 002 §1",
        _PLAIN,
    ),
    Rule(
        "FAKE-PLAIN-004",
        Tier.MANDATORY,
        "The agy fake is silent on stdout and stderr when it fails and reports only in the "
        "--log-file, which stays empty when --log-file comes after -p.",
        "seed 002 §4.4",
        _PLAIN,
    ),
    Rule(
        "FAKE-PLAIN-005",
        Tier.MANDATORY,
        "The deepseek fake streams text on stdout and tool notifications on stderr; without "
        "its headless flag a plain fake does not run the tool.",
        "seed 000 §5.11",
        _PLAIN,
    ),
    Rule(
        "FAKE-PLAIN-006",
        Tier.MANDATORY,
        "Every step kind is rendered by the plain fakes (API errors each CLI's way, faults, "
        "crashes, exit codes) and probes and sessions answer as the CLIs do.",
        "design §Fake CLIs",
        _PLAIN,
    ),
)
