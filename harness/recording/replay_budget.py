"""The prompt-budget guards re-run on a recorded run, for each operating system.

Rules: BUDGET-CMDSHIM-001, BUDGET-DIRECTEXE-001, BUDGET-EXCLUSIVE-001, BUDGET-NOOP-001,
WIN-CMDLINE-EXE-001, WIN-CMDLINE-SHIM-001.
Design: docs/design/recording.md#harness.recording.replay_budget
"""

from __future__ import annotations

import ntpath
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext
from harness.guards.budget import (
    check_prompt_argv_budget,
    check_windows_cmd_shim_budget,
    check_windows_direct_exe_budget,
    explain_argv_prompt_limit,
)
from harness.guards.command_line import check_windows_command_line
from harness.guards.windows_cmdline import (
    SAFE_COMMAND_LINE_LIMIT,
    cmd_shim_command_line,
    direct_exe_command_line,
    is_cmd_shim,
    looks_like_windows_path,
    utf16_len,
)
from harness.host.prompt import utf8_len

__all__ = ["PLATFORMS", "BudgetVerdict", "budget_verdicts", "recorded_prompt"]

#: The platforms a recording is judged for (``sys.platform`` names).
PLATFORMS = ("linux", "darwin", "win32")
#: Where a Windows user's binary would be when no ``bin`` is given: npm's shim folder and
#: an installer's folder (any drive path behaves the same; only the suffix decides).
_NPM_SHIMS = "C:\\Users\\user\\AppData\\Roaming\\npm"
_PROGRAMS = "C:\\Program Files"
#: The marker prompt that shows where ``build_args`` puts the prompt.
_MARKER = "\x00adapter-harness-prompt\x00"


@dataclass(frozen=True)
class BudgetVerdict:
    """What one platform's launch would do with the recorded run: ``pass`` (it would be
    spawned), ``fail`` (a guard refuses it, named by ``rule``) or ``skipped``."""

    platform: str
    #: ``posix``, ``cmd-shim`` or ``direct-exe``.
    launch: str
    program: str
    verdict: str
    message: str
    rule: str | None = None

    def describe(self) -> str:
        return f"{self.platform} {self.launch} ({self.program}): {self.message}"

    def to_json(self) -> dict[str, Any]:
        return {
            "platform": self.platform,
            "launch": self.launch,
            "program": self.program,
            "verdict": self.verdict,
            "rule": self.rule,
            "message": self.message,
        }


def recorded_prompt(defn: AgentDef, args: Sequence[str]) -> str | None:
    """The prompt among the recorded ``args`` of an argv-delivery def, or ``None``."""
    if defn.prompt_delivery is not PromptDelivery.ARGV:
        return None
    try:
        built = list(defn.build_args(_MARKER, [], [], BuildOptions(), RuntimeContext()))
    except Exception:  # a def's arg builder is data; a failure means "not found"
        return None
    places = [i for i, arg in enumerate(built) if _MARKER in arg]
    if len(places) != 1:
        return None
    from_end = len(built) - places[0]
    if len(args) < len(built) or args[len(args) - from_end + 1 :] != built[places[0] + 1 :]:
        return None  # options only add arguments; what follows the prompt is fixed
    template = built[places[0]]
    arg = args[len(args) - from_end]
    head, _, tail = template.partition(_MARKER)
    if not (arg.startswith(head) and arg.endswith(tail)) or len(arg) < len(head) + len(tail):
        return None
    return arg[len(head) : len(arg) - len(tail)]


def _launches(platform: str, program: str, bin_path: str | None) -> list[tuple[str, str]]:
    if platform != "win32":
        return [("posix", bin_path or program)]
    if bin_path is not None:
        kind = "cmd-shim" if is_cmd_shim(bin_path) else "direct-exe"
        return [(kind, bin_path)]
    name = posixpath.basename(program.replace("\\", "/")) or "cli"
    stem = ntpath.splitext(name)[0]
    return [
        ("cmd-shim", ntpath.join(_NPM_SHIMS, f"{stem}.cmd")),
        ("direct-exe", ntpath.join(_PROGRAMS, stem, f"{stem}.exe")),
    ]


def _summary(
    defn: AgentDef, platform: str, program: str, args: Sequence[str], prompt: str | None
) -> str:
    parts: list[str] = []
    if defn.max_prompt_arg_bytes is None:
        parts.append(f"not budgeted (prompt by {defn.prompt_delivery.value})")
    elif prompt is not None:
        limit = explain_argv_prompt_limit(
            defn.max_prompt_arg_bytes, platform, defn.prompt_budget_generation
        )
        parts.append(f"prompt {utf8_len(prompt)} bytes within {limit.describe(platform)}")
    if is_cmd_shim(program):
        length = utf16_len(cmd_shim_command_line([program, *args]))
        parts.append(f"cmd.exe command line {length} <= {SAFE_COMMAND_LINE_LIMIT} chars")
    elif looks_like_windows_path(program):
        length = utf16_len(direct_exe_command_line([program, *args]))
        parts.append(f"command line {length} <= {SAFE_COMMAND_LINE_LIMIT} chars")
    if looks_like_windows_path(program):
        parts.append("every argument survives it")
    return "; ".join(parts)


def budget_verdicts(
    defn: AgentDef,
    argv: Sequence[str],
    *,
    platforms: Sequence[str] = PLATFORMS,
    bin_path: str | None = None,
) -> list[BudgetVerdict]:
    """Each platform's verdict on spawning ``argv`` (REPLAY-BUDGET-001), in the runner's
    order: the argv budget, the Windows launch's budget, then its command line."""
    if not argv:
        return [
            BudgetVerdict(p, "-", "-", "skipped", "the recording holds no argv") for p in platforms
        ]
    program, args = argv[0], list(argv[1:])
    prompt = recorded_prompt(defn, args)
    out: list[BudgetVerdict] = []
    for platform in platforms:
        for launch, path in _launches(platform, program, bin_path):
            if defn.max_prompt_arg_bytes is not None and prompt is None:
                out.append(
                    BudgetVerdict(
                        platform,
                        launch,
                        path,
                        "skipped",
                        "the prompt is not where build_args puts it in the recorded argv",
                    )
                )
                continue
            error = (
                check_prompt_argv_budget(defn, prompt or "", platform)
                or check_windows_cmd_shim_budget(defn, path, args)
                or check_windows_direct_exe_budget(defn, path, args)
                or check_windows_command_line(defn, path, args, prompt=prompt)
            )
            if error is not None:
                message = f"refused: {error}"
                out.append(BudgetVerdict(platform, launch, path, "fail", message, error.rule))
                continue
            summary = _summary(defn, platform, path, args, prompt)
            out.append(BudgetVerdict(platform, launch, path, "pass", summary))
    return out
