"""The three prompt-budget guards: fail before spawn instead of ``E2BIG``/``ENAMETOOLONG``.

Design: docs/design/guards.md#harness.guards.budget
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.defs.types import AgentDef
from harness.errors import PromptTooLargeError
from harness.guards.budget_generations import (
    DARWIN_ARGV_PROMPT_BUDGET,
    POSIX_ARGV_PROMPT_BUDGET,
    BudgetGeneration,
    budgets_for,
)
from harness.guards.windows_cmdline import (
    SAFE_COMMAND_LINE_LIMIT,
    cmd_shim_command_line,
    direct_exe_command_line,
    is_cmd_shim,
    looks_like_windows_path,
    utf16_len,
)
from harness.host.prompt import utf8_len

__all__ = [
    "ARGV_ADVICE",
    "DARWIN_ARGV_PROMPT_BUDGET",
    "POSIX_ARGV_PROMPT_BUDGET",
    "QUOTE_HEAVY_ADVICE",
    "ArgvPromptLimit",
    "argv_prompt_limit",
    "check_prompt_argv_budget",
    "check_prompt_budget",
    "check_windows_cmd_shim_budget",
    "check_windows_direct_exe_budget",
    "explain_argv_prompt_limit",
]

# The platform budgets, one named constant per upstream generation with its source, live
# in harness.guards.budget_generations; the current generation (ref §4.1) is the default.

#: ref §4.1: the advice sentence of the argv check (replaced by ``prompt_too_large_hint``).
ARGV_ADVICE = (
    "Reduce the selected skills/design-system context, shorten the conversation, "
    "or pick an adapter with stdin support."
)
#: ref §4.2 / §4.3: the advice sentence of both Windows checks.
QUOTE_HEAVY_ADVICE = (
    "Reduce quote-heavy content in the selected skills/design-system context, "
    "shorten the conversation, or pick an adapter with stdin support."
)


def _advice(defn: AgentDef, default: str) -> str:
    # A def-level hint replaces the advice sentence (ref §4.1 gives deepseek its own advice);
    # the engine never branches on the agent id (CONTRIBUTING "Definitions are data").
    return defn.prompt_too_large_hint or default


def argv_prompt_limit(
    max_prompt_arg_bytes: int,
    platform: str,
    generation: BudgetGeneration = BudgetGeneration.CURRENT,
) -> int:
    """The argv byte limit for ``platform`` (``sys.platform`` names; ref §4.1).

    ``win32`` uses the def's own number (it is sized for the 32 K command line); elsewhere
    the larger of it and ``generation``'s platform budget (current: 262 144 on darwin,
    100 000 on any other platform; FIDELITY-BUDGET-001).
    """
    floor = budgets_for(generation).floor(platform)
    return max_prompt_arg_bytes if floor is None else max(max_prompt_arg_bytes, floor)


@dataclass(frozen=True)
class ArgvPromptLimit:
    """The argv byte limit on a platform and where it comes from (BUDGET-ARGV-001)."""

    #: The limit :func:`check_prompt_argv_budget` applies.
    bytes: int
    #: ``"def"``: the def's ``max_prompt_arg_bytes``; ``"platform"``: the platform's budget,
    #: which is larger and wins.
    source: str
    max_prompt_arg_bytes: int
    #: The platform's own budget (``None`` on win32, which has none: the def's number is
    #: sized for its 32 K command line).
    platform_budget: int | None

    def describe(self, platform: str) -> str:
        """One phrase for a person: ``100000 bytes (linux argv budget; ...)``."""
        if self.platform_budget is None:
            return f"{self.bytes} bytes (the def's max_prompt_arg_bytes, used as is on {platform})"
        if self.source == "def":
            return (
                f"{self.bytes} bytes (the def's max_prompt_arg_bytes, above the {platform} "
                f"argv budget of {self.platform_budget})"
            )
        return (
            f"{self.bytes} bytes (the {platform} argv budget; the def's max_prompt_arg_bytes "
            f"{self.max_prompt_arg_bytes} is the limit on win32)"
        )


def explain_argv_prompt_limit(
    max_prompt_arg_bytes: int,
    platform: str,
    generation: BudgetGeneration = BudgetGeneration.CURRENT,
) -> ArgvPromptLimit:
    """:func:`argv_prompt_limit` with where its value comes from (the def or the platform)."""
    limit = argv_prompt_limit(max_prompt_arg_bytes, platform, generation)
    budget = budgets_for(generation).floor(platform)
    source = "platform" if budget is not None and budget > max_prompt_arg_bytes else "def"
    return ArgvPromptLimit(limit, source, max_prompt_arg_bytes, budget)


def check_prompt_argv_budget(
    defn: AgentDef,
    prompt: str,
    platform: str,
    generation: BudgetGeneration | None = None,
) -> PromptTooLargeError | None:
    """BUDGET-ARGV-001: fail iff the prompt's UTF-8 bytes exceed :func:`argv_prompt_limit`.

    ref §4.1; seed 002 §6.3 "第一道只看字节数". Bytes, not characters: ``"é"`` is 2. The
    platform budget is ``generation``'s, else the def's ``prompt_budget_generation``
    (FIDELITY-BUDGET-001).
    """
    if defn.max_prompt_arg_bytes is None:
        return None  # BUDGET-NOOP-001
    size = utf8_len(prompt)
    chosen = generation or defn.prompt_budget_generation
    limit = argv_prompt_limit(defn.max_prompt_arg_bytes, platform, chosen)
    if size <= limit:
        return None
    message = (
        f"{defn.name} requires the prompt as a command-line argument and this run's composed "
        f"prompt exceeds the safe size ({size} > {limit} bytes). {_advice(defn, ARGV_ADVICE)}"
    )
    return PromptTooLargeError(message, limit=limit, bytes_=size, rule="BUDGET-ARGV-001")


def check_windows_cmd_shim_budget(
    defn: AgentDef, resolved_bin: str | None, args: Sequence[str]
) -> PromptTooLargeError | None:
    """BUDGET-CMDSHIM-001: a ``.cmd``/``.bat`` launch must fit after cmd.exe quote-doubling.

    ref §4.2: length of ``cmd.exe /d /s /c "<inner>"`` (17 + inner + 2) against 32 511.
    Applies only when ``resolved_bin`` ends in ``.bat``/``.cmd`` (BUDGET-EXCLUSIVE-001).
    """
    if defn.max_prompt_arg_bytes is None:
        return None  # BUDGET-NOOP-001
    if resolved_bin is None or not is_cmd_shim(resolved_bin):
        return None
    length = utf16_len(cmd_shim_command_line([resolved_bin, *args]))
    if length <= SAFE_COMMAND_LINE_LIMIT:
        return None
    message = (
        f"{defn.name} on Windows runs through a .cmd shim and this run's prompt would expand "
        "past the CreateProcess command-line limit after cmd.exe quote-doubling "
        f"({length} > {SAFE_COMMAND_LINE_LIMIT} chars). {_advice(defn, QUOTE_HEAVY_ADVICE)}"
    )
    return PromptTooLargeError(
        message,
        limit=SAFE_COMMAND_LINE_LIMIT,
        command_line_length=length,
        rule="BUDGET-CMDSHIM-001",
    )


def check_windows_direct_exe_budget(
    defn: AgentDef, resolved_bin: str | None, args: Sequence[str]
) -> PromptTooLargeError | None:
    """BUDGET-DIRECTEXE-001: a direct Windows launch must fit after libuv quote-escaping.

    ref §4.3: length of the libuv-quoted ``[resolved_bin, *args]`` joined by spaces against
    32 511. Skips ``.bat``/``.cmd`` (owned by the shim check: BUDGET-EXCLUSIVE-001) and
    binaries that are not drive or UNC paths.
    """
    if defn.max_prompt_arg_bytes is None:
        return None  # BUDGET-NOOP-001
    if resolved_bin is None or is_cmd_shim(resolved_bin):
        return None
    if not looks_like_windows_path(resolved_bin):
        return None
    length = utf16_len(direct_exe_command_line([resolved_bin, *args]))
    if length <= SAFE_COMMAND_LINE_LIMIT:
        return None
    message = (
        f"{defn.name} on Windows builds a CreateProcess command line and this run's prompt "
        "would expand past the limit after libuv quote-escaping "
        f"({length} > {SAFE_COMMAND_LINE_LIMIT} chars). {_advice(defn, QUOTE_HEAVY_ADVICE)}"
    )
    return PromptTooLargeError(
        message,
        limit=SAFE_COMMAND_LINE_LIMIT,
        command_line_length=length,
        rule="BUDGET-DIRECTEXE-001",
    )


def check_prompt_budget(
    defn: AgentDef,
    prompt: str,
    *,
    platform: str,
    resolved_bin: str | None,
    args: Sequence[str],
    generation: BudgetGeneration | None = None,
) -> None:
    """Run the applicable guards in the chat-path order and raise the first error.

    BUDGET-ORDER-001 (ref §4, seed 002 §6.3 diagram): the argv byte check first, then the
    Windows check that owns ``resolved_bin``. The Windows checks look at the resolved binary,
    not at ``platform`` (seed 002 §6.3: pure, so a fake ``C:\\…\\x.cmd`` is checked anywhere).
    """
    error = (
        check_prompt_argv_budget(defn, prompt, platform, generation)
        or check_windows_cmd_shim_budget(defn, resolved_bin, args)
        or check_windows_direct_exe_budget(defn, resolved_bin, args)
    )
    if error is not None:
        raise error
