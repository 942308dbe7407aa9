"""Refuse a Windows launch whose command line would hand the CLI different arguments.

Rules: BUDGET-EXCLUSIVE-001.
Design: docs/design/guards.md#harness.guards.command_line
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import AgentDef, PromptDelivery
from harness.errors import HarnessError
from harness.guards.windows_cmdline import (
    ArgumentLoss,
    cmd_shim_argument_loss,
    describe_sequence,
    direct_exe_argument_loss,
    is_cmd_shim,
    looks_like_windows_path,
)

__all__ = ["UnfaithfulCommandLineError", "check_windows_command_line"]


class UnfaithfulCommandLineError(HarnessError):
    """An argument the Windows launch path would not deliver byte for byte."""

    code = "AGENT_ARGUMENT_UNREPRESENTABLE"

    def __init__(self, message: str, *, rule: str, loss: ArgumentLoss, launch: str) -> None:
        super().__init__(message, rule=rule)
        #: Position in ``[resolved_bin, *args]`` (0 is the program).
        self.index = loss.index
        self.offset = loss.offset
        self.sequence = loss.sequence
        #: ``cmd-shim`` or ``direct-exe``.
        self.launch = launch


def _which(loss: ArgumentLoss, args: Sequence[str], prompt: str | None) -> str:
    if loss.index == 0:
        return "the program path"
    carries_prompt = prompt is not None and prompt != "" and prompt in args[loss.index - 1]
    return f"argument {loss.index}" + (" (it carries the prompt)" if carries_prompt else "")


def _advice(defn: AgentDef) -> str:
    others = [t.name for t in defn.alt_transports if t.prompt_delivery is not PromptDelivery.ARGV]
    if defn.prompt_delivery is PromptDelivery.ARGV and others:
        return (
            "Nothing was started. Change that text, or use the "
            + " or ".join(repr(name) for name in others)
            + " transport, which does not put the prompt on the command line."
        )
    return "Nothing was started. Change that text, or pick an adapter with stdin support."


def check_windows_command_line(
    defn: AgentDef,
    resolved_bin: str | None,
    args: Sequence[str],
    *,
    prompt: str | None = None,
) -> UnfaithfulCommandLineError | None:
    """WIN-CMDLINE-SHIM-001 / WIN-CMDLINE-EXE-001: ``None`` iff every argument survives.

    ``prompt`` only lets the message say which argument carries it; it is never quoted.
    """
    if resolved_bin is None:
        return None
    argv = [resolved_bin, *args]
    if is_cmd_shim(resolved_bin):
        loss = cmd_shim_argument_loss(argv)
        rule, launch = "WIN-CMDLINE-SHIM-001", "cmd-shim"
        how = "runs through a .cmd shim (cmd.exe /d /s /c), which"
    elif looks_like_windows_path(resolved_bin):
        loss = direct_exe_argument_loss(argv)
        rule, launch = "WIN-CMDLINE-EXE-001", "direct-exe"
        how = "is started with one CreateProcess command line, which"
    else:
        return None
    if loss is None:
        return None
    message = (
        f"{defn.name} on Windows {how} cannot carry {_which(loss, args, prompt)} as written: "
        f"{describe_sequence(loss.sequence)} at offset {loss.offset}: {loss.problem}. "
        f"{_advice(defn)}"
    )
    return UnfaithfulCommandLineError(message, rule=rule, loss=loss, launch=launch)
