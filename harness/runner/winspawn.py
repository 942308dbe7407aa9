"""How a Windows ``.cmd``/``.bat`` shim is started: the very command line the guards judged.

``subprocess`` on Windows turns an argument list into one line with ``list2cmdline`` (the C
runtime's quoting) and lets ``CreateProcess`` hand a batch file to ``cmd.exe``, which reads
that line with its own rules: ``%VAR%`` expands and ``&`` ends the command inside what
``list2cmdline`` quoted. The prompt-budget and command-line guards (BUDGET-CMDSHIM-001,
WIN-CMDLINE-SHIM-001) judge ``cmd.exe /d /s /c "<inner>"`` built by
:func:`harness.guards.windows_cmdline.cmd_shim_command_line`; the runner starts exactly that
line, with ``cmd.exe`` as the program, so what was judged is what runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harness.guards.windows_cmdline import cmd_shim_command_line, is_cmd_shim

__all__ = ["ShimLaunch", "shim_launch", "spawn_command_line"]

#: (program, command line): ``CreateProcess``'s application name and its whole command line.
ShimLaunch = tuple[str, str]


def shim_launch(
    launch_path: str, args: Sequence[str], *, platform: str, env: Mapping[str, str]
) -> ShimLaunch | None:
    """On Windows, the ``cmd.exe`` and the line that start the shim ``launch_path``; ``None``
    for any other launch (an executable's argv goes through ``list2cmdline`` unchanged)."""
    if platform != "win32" or not is_cmd_shim(launch_path):
        return None
    # Windows names are case-insensitive; the child's env is what the launch sees.
    system_root = next((v for k, v in env.items() if k.upper() == "SYSTEMROOT" and v), None)
    system_root = system_root or r"C:\Windows"
    program = system_root.rstrip("\\") + r"\System32\cmd.exe"
    return program, cmd_shim_command_line([launch_path, *args])


async def spawn_command_line(
    loop: asyncio.AbstractEventLoop,
    protocol_factory: Callable[[], asyncio.SubprocessProtocol],
    launch: ShimLaunch,
    **kwargs: Any,
) -> tuple[asyncio.SubprocessTransport, asyncio.SubprocessProtocol]:
    """Start ``launch`` with its command line verbatim and return what ``subprocess_exec``
    returns.

    ``loop.subprocess_exec`` only takes an argument list (which it joins with
    ``list2cmdline``), so this goes one step lower, to the transport factory every asyncio
    event loop implements (``_make_subprocess_transport``, the call ``subprocess_exec``
    itself makes), with the line as a string, which ``Popen`` on Windows passes to
    ``CreateProcess`` untouched.
    """
    program, line = launch
    protocol = protocol_factory()
    make = loop._make_subprocess_transport  # type: ignore[attr-defined]  # see the docstring
    transport = await make(
        protocol,
        line,
        False,
        kwargs.pop("stdin"),
        kwargs.pop("stdout"),
        kwargs.pop("stderr"),
        0,
        executable=program,
        **kwargs,
    )
    return transport, protocol
