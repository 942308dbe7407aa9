"""Windows safety rules: command lines that carry every argument unchanged, file names
that stay usable on Windows.

Covers ``harness/guards/command_line.py``, the loss finders of
``harness/guards/windows_cmdline.py`` and the device-name refusal of
``harness/host/artifacts.py``. Def-level (``formats=()``) and mandatory: every def
can be launched on Windows, whatever its prompt delivery, and any of its arguments (a
prompt, a model name, an extra directory) can be one a launch path would change.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]


def _mandatory(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(id=rule_id, tier=Tier.MANDATORY, statement=statement, citation=citation, formats=())


RULES: tuple[Rule, ...] = (
    _mandatory(
        "WIN-CMDLINE-SHIM-001",
        "A .cmd/.bat launch is refused before spawn (AGENT_ARGUMENT_UNREPRESENTABLE naming the "
        "argument, offset and characters) iff cmd.exe /d /s /c plus the C runtime would not "
        "give back every argument byte for byte (empty, CR, LF, NUL, a backslash before a "
        "quote or percent sign, a trailing backslash in a quoted argument).",
        "design §Reliability",
    ),
    _mandatory(
        "WIN-CMDLINE-EXE-001",
        "A direct Windows launch is refused before spawn iff the C runtime or "
        "CommandLineToArgvW would not give back every argument of the libuv-quoted command "
        "line byte for byte (a NUL anywhere; a quote in the program path, or a trailing "
        "backslash in a program path that needs quotes).",
        "design §Reliability",
    ),
    _mandatory(
        "WIN-SPAWN-SHIM-001",
        "A .cmd/.bat shim is started with exactly the command line the guards judged "
        '(cmd.exe /d /s /c "<inner>", cmd.exe as the program), never with the C runtime\'s '
        "list2cmdline quoting, under which cmd.exe would expand %VAR% and split at &.",
        "design §Reliability",
    ),
    _mandatory(
        "WIN-ARTIFACT-DEVICE-001",
        "An artifact named as a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9, superscript "
        "forms, CONIN$, CONOUT$; any case or extension) is refused on every platform, alone: "
        "the other artifacts are written and an error event names it and the reason.",
        "design §Reliability",
    ),
)
