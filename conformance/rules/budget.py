"""Prompt delivery and prompt-budget rules.

Covers ``harness/host/prompt.py``, ``harness/guards/budget.py`` and
``harness/guards/windows_cmdline.py``. All rules are def-level (``formats=()``). The
budget rules apply only to defs that declare ``max_prompt_arg_bytes`` (argv delivery);
the stream-json rules only to stdin + ``prompt_input_format`` stream-json; the file rule
only to ``prompt_delivery`` file: those are CAPABILITY rules gated on that field.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

_BUDGETED = "max_prompt_arg_bytes"


def _capability(rule_id: str, capability: str, statement: str, citation: str) -> Rule:
    return Rule(
        id=rule_id,
        tier=Tier.CAPABILITY,
        statement=statement,
        citation=citation,
        formats=(),
        capability=capability,
    )


def _mandatory(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


RULES: tuple[Rule, ...] = (
    # --- budgets ------------------------------------------------------------------
    _mandatory(
        "BUDGET-NOOP-001",
        "A def without max_prompt_arg_bytes (stdin, file or protocol delivery) is never "
        "budgeted: all three prompt-budget guards return no error for any prompt and argv.",
        "ref §4",
    ),
    _capability(
        "BUDGET-ARGV-001",
        _BUDGETED,
        "The argv guard fails iff the prompt's UTF-8 byte count exceeds the platform limit: "
        "max_prompt_arg_bytes on win32, max(m, 262144) on darwin, max(m, 100000) elsewhere.",
        "ref §4.1",
    ),
    _capability(
        "BUDGET-CMDSHIM-001",
        _BUDGETED,
        'For a .bat/.cmd binary, the cmd.exe /d /s /c "…" line with shim-quoted arguments '
        "must not exceed 32511 UTF-16 units, else AGENT_PROMPT_TOO_LARGE before spawn.",
        "seed 002 §6.3",
    ),
    _capability(
        "BUDGET-CMDSHIM-002",
        _BUDGETED,
        'Shim quoting doubles every quote, then turns every % into "^%", so cmd.exe never '
        "expands %NAME% from the daemon's environment and special characters stay quoted.",
        "seed 002 §6.3",
    ),
    _capability(
        "BUDGET-DIRECTEXE-001",
        _BUDGETED,
        "For any other Windows drive/UNC binary, the libuv-quoted command line must not "
        "exceed 32511 UTF-16 units, else AGENT_PROMPT_TOO_LARGE before spawn.",
        "seed 000 §5.11",
    ),
    _capability(
        "BUDGET-DIRECTEXE-002",
        _BUDGETED,
        "The direct-exe quoting mirrors libuv quote_cmd_arg: the MS C runtime and "
        "CommandLineToArgvW split the built command line back into the original argv.",
        "ref §4.3",
    ),
    _capability(
        "BUDGET-EXCLUSIVE-001",
        _BUDGETED,
        "The two Windows guards are mutually exclusive by resolved binary: the shim guard "
        "owns .bat/.cmd, the direct-exe guard owns every other Windows-looking path.",
        "seed 000 §5.11",
    ),
    _capability(
        "BUDGET-ORDER-001",
        _BUDGETED,
        "check_prompt_budget runs the argv byte check first, then the owning Windows check, "
        "and raises the first error; the Windows checks depend on the binary, not the platform.",
        "seed 002 §6.3",
    ),
    _capability(
        "BUDGET-MESSAGE-001",
        _BUDGETED,
        "Every budget failure is one AGENT_PROMPT_TOO_LARGE error naming the def, the measured "
        "size and the limit, with the advice sentence or the def's prompt_too_large_hint.",
        "ref §4",
    ),
    # --- prompt delivery -------------------------------------------------------------
    _mandatory(
        "PROMPT-STDIN-001",
        "Stdin carries the prompt's UTF-8 bytes for text input, one stream-json user line for "
        "stream-json input, and nothing for file, argv or protocol delivery.",
        "seed 002 §6.2",
    ),
    _capability(
        "PROMPT-STREAMJSON-001",
        "prompt_input_format",
        'A stream-json prompt is exactly one JSONL line {"type":"user","message":'
        '{"role":"user","content":[{"type":"text","text":P}]}} that decodes to P.',
        "ref §2.1.8",
    ),
    _capability(
        "PROMPT-STREAMJSON-002",
        "prompt_input_format",
        "A stream-json stdin stays open through tool_use stops and closes at the first "
        "turn_end/usage whose stop_reason is not tool_use; text stdin is not held open.",
        "seed 002 §6.2",
    ),
    _capability(
        "PROMPT-FILE-001",
        "prompt_delivery",
        "A file-delivered prompt is written to prompt.md (mode 0600) in a private temp dir "
        "that is removed after the run, also when the run raises; other defs get no file.",
        "seed 002 §6.2",
    ),
)
