"""Command lines through a real ``CreateProcess``: natively on Windows, under Wine elsewhere.

The programs come from ``scripts/windows-tier/`` (``install.sh`` builds them with mingw-w64):

* ``launch.exe LISTFILE`` passes each command line of the list to ``CreateProcessW``
  verbatim (``lpApplicationName`` NULL, as a spawn of a command-line string does), waits,
  and prints ``@@launch <index> exit=<code>`` (or ``error=<GetLastError()>``);
* ``argvdump.exe`` prints one ``argvdump {json}`` line: ``GetCommandLineW()`` and the
  arguments as its C runtime (msvcrt), ucrtbase's ``_configure_wide_argv`` and
  ``CommandLineToArgvW`` read them. Every string is the hex of its UTF-16 code units,
  four digits per unit, most significant first, so nothing is lost on the way.

Wine approximates Windows: its C runtimes and ``CommandLineToArgvW`` follow Microsoft's
rules closely, its ``cmd.exe`` is a reimplementation (see ``WINE_CMD_DEVIATIONS`` in
``test_cmd_shim.py``). On Windows the same programs run without Wine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BIN_ENV",
    "SECRET_NAME",
    "SECRET_VALUE",
    "Dump",
    "Launch",
    "TierOutputError",
    "WindowsTier",
    "decode_units",
    "encode_units",
    "locate",
    "parse_launcher_output",
]

#: Where the built programs are, when not in ``scripts/windows-tier/bin``.
BIN_ENV = "HARNESS_WINDOWS_TIER_BIN"
#: A variable set in the environment of every launch: a ``%NAME%`` must never expand to it.
SECRET_NAME = "HARNESS_TIER_SECRET"
SECRET_VALUE = "tier-secret-7d1f"

_REPO = Path(__file__).resolve().parents[2]
_DEFAULT_BIN = _REPO / "scripts" / "windows-tier" / "bin"
_PROGRAMS = ("argvdump.exe", "launch.exe")
#: ``ERROR_INTERNAL_ERROR``: what Wine's ``CreateProcessW`` sometimes reports for a
#: launch that succeeds when tried again.
_WINE_TRANSIENT_ERROR = 1359
_TRANSIENT_TRIES = 3
#: The environment variable the suite's leak check uses to find a test's processes; Wine's
#: server and services outlive single tests by design, so they must not carry it.
_LEAK_TOKEN_VAR = "HARNESS_TEST_LEAK_TOKEN"

#: A ``.cmd`` shim in the shape npm's cmd-shim writes: the program, a script, then ``%*``.
SHIM_TEXT = (
    '@ECHO off\r\nSETLOCAL\r\nSET "_prog=%~dp0argvdump.exe"\r\n"%_prog%" "%~dp0cli.js" %*\r\n'
)


class TierOutputError(ValueError):
    """The launcher's output does not have the shape ``launch.exe`` prints."""


def encode_units(text: str) -> str:
    """``text`` as hex, four digits per UTF-16 code unit (lone surrogates kept)."""
    return text.encode("utf-16-be", "surrogatepass").hex()


def decode_units(digits: str) -> str:
    """The inverse of :func:`encode_units`; a clear error for anything else."""
    if len(digits) % 4:
        raise TierOutputError(f"{len(digits)} hex digits do not make whole UTF-16 units")
    try:
        return bytes.fromhex(digits).decode("utf-16-be", "surrogatepass")
    except ValueError as exc:
        raise TierOutputError(f"not UTF-16 hex: {digits[:40]!r}: {exc}") from None


@dataclass(frozen=True)
class Dump:
    """What one ``argvdump.exe`` process received."""

    cmdline: str
    #: The startup code's ``wargv`` (mingw-w64 programs use msvcrt.dll).
    crt: tuple[str, ...]
    #: ucrtbase.dll's parse (Visual Studio 2015+ programs); ``None`` without the DLL.
    ucrt: tuple[str, ...] | None
    #: ``CommandLineToArgvW``.
    shell32: tuple[str, ...] | None


@dataclass(frozen=True)
class Launch:
    """One command line of a launcher run and what came of it."""

    command_line: str
    #: The process's exit code; ``None`` when ``CreateProcessW`` failed.
    exit_code: int | None
    #: ``GetLastError()`` of a failed ``CreateProcessW``.
    error: int | None
    dumps: tuple[Dump, ...]
    #: Other stdout lines (cmd.exe's own messages), in order.
    output: tuple[str, ...]


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TierOutputError(f"{where}: expected a list of hex strings, got {value!r}")
    return tuple(decode_units(v) for v in value)


def _dump(payload: str, line_no: int) -> Dump:
    try:
        data = json.loads(payload)
    except json.JSONDecodeError as exc:
        raise TierOutputError(f"line {line_no}: argvdump JSON does not parse: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("cmdline"), str):
        raise TierOutputError(f"line {line_no}: argvdump JSON has no cmdline: {payload[:80]!r}")
    return Dump(
        cmdline=decode_units(data["cmdline"]),
        crt=_strings(data.get("crt"), f"line {line_no} crt"),
        ucrt=_strings(data["ucrt"], f"line {line_no} ucrt") if "ucrt" in data else None,
        shell32=(
            _strings(data["shell32"], f"line {line_no} shell32") if "shell32" in data else None
        ),
    )


def parse_launcher_output(text: str, command_lines: Sequence[str]) -> list[Launch]:
    """Split ``launch.exe``'s stdout into one :class:`Launch` per command line, in order."""
    launches: list[Launch] = []
    dumps: list[Dump] = []
    other: list[str] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.startswith("argvdump "):
            dumps.append(_dump(line[len("argvdump ") :], line_no))
            continue
        if not line.startswith("@@launch "):
            other.append(line)
            continue
        fields = line.split()
        index = len(launches)
        if len(fields) != 3 or fields[1] != str(index) or index >= len(command_lines):
            raise TierOutputError(
                f"line {line_no}: expected the marker of launch {index}, got {line!r}"
            )
        key, _, value = fields[2].partition("=")
        if key not in ("exit", "error") or not value.isdigit():
            raise TierOutputError(f"line {line_no}: bad launch outcome {fields[2]!r}")
        launches.append(
            Launch(
                command_line=command_lines[index],
                exit_code=int(value) if key == "exit" else None,
                error=int(value) if key == "error" else None,
                dumps=tuple(dumps),
                output=tuple(other),
            )
        )
        dumps, other = [], []
    if len(launches) != len(command_lines):
        raise TierOutputError(
            f"the launcher reported {len(launches)} of {len(command_lines)} launches; "
            f"unattributed output: {(other or ['(none)'])[-1]!r}"
        )
    return launches


def locate() -> tuple[Path | None, str | None, str]:
    """``(bin_dir, wine, why_not)``: the programs, the Wine loader (``None`` on Windows).

    ``why_not`` is empty when the tier can run, else the skip reason.
    """
    bin_dir = Path(os.environ.get(BIN_ENV) or _DEFAULT_BIN)
    missing = [name for name in _PROGRAMS if not (bin_dir / name).is_file()]
    if missing:
        return (
            None,
            None,
            f"Windows tier programs {', '.join(missing)} not built in {bin_dir} "
            "(run: bash scripts/windows-tier/install.sh)",
        )
    if sys.platform == "win32":
        return bin_dir, None, ""
    wine = shutil.which("wine") or shutil.which("wine64")
    if wine is None:
        return None, None, "wine is not installed (run: bash scripts/windows-tier/install.sh)"
    if shutil.which("wineserver") is None:
        return None, None, "wineserver is not installed (run: bash scripts/windows-tier/install.sh)"
    return bin_dir, wine, ""


class WindowsTier:
    """A work directory with the programs and a shim, and a way to launch command lines.

    Under Wine it owns a private prefix and a persistent ``wineserver`` for its lifetime
    (one server start per test session, not one per launch); :meth:`close` stops it.
    """

    def __init__(self, work: Path, bin_dir: Path, wine: str | None) -> None:
        self.wine = wine
        #: A directory with a space in its name, like ``Program Files``.
        self.dir = work / "Program Files" / "tier"
        self.dir.mkdir(parents=True)
        for name in _PROGRAMS:
            shutil.copy2(bin_dir / name, self.dir / name)
        (self.dir / "cli.cmd").write_bytes(SHIM_TEXT.encode("ascii"))
        (self.dir / "cli.js").write_text("", encoding="ascii")
        self._prefix = work / "wineprefix"
        self.env = self._environment()
        self.argvdump = self.windows_path(self.dir / "argvdump.exe")
        self.shim = self.windows_path(self.dir / "cli.cmd")
        self.script = self.windows_path(self.dir / "cli.js")
        #: How long :meth:`start` took (prefix creation and server start under Wine).
        self.startup_seconds = 0.0

    def _environment(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k != _LEAK_TOKEN_VAR}
        env[SECRET_NAME] = SECRET_VALUE
        if self.wine is not None:
            env.update(
                WINEPREFIX=str(self._prefix),
                WINEDEBUG="-all",
                # No Mono or Gecko install prompt when the prefix is created.
                WINEDLLOVERRIDES="mscoree,mshtml=",
            )
        return env

    def windows_path(self, path: Path) -> str:
        """``path`` as a Windows program sees it (Wine maps ``/`` to drive ``Z:``)."""
        if self.wine is None:
            return str(path)
        return "Z:" + str(path.resolve()).replace("/", "\\")

    def start(self) -> None:
        """Under Wine: create the prefix and start its server, persistent until :meth:`close`."""
        if self.wine is None:
            return
        started = time.monotonic()
        self._prefix.mkdir()
        subprocess.run(["wineserver", "-p"], env=self.env, check=True, timeout=60)
        self.run([f'"{self.argvdump}"'])  # fills the prefix (the slow part)
        self.startup_seconds = time.monotonic() - started

    def close(self) -> None:
        if self.wine is None:
            return
        subprocess.run(["wineserver", "-k"], env=self.env, check=False, timeout=60)
        subprocess.run(["wineserver", "-w"], env=self.env, check=False, timeout=60)

    def run(self, command_lines: Sequence[str], timeout: float = 600) -> list[Launch]:
        """Launch each line with ``CreateProcessW``, one launcher process for all of them.

        Under Wine, ``CreateProcessW`` now and then fails with ``ERROR_INTERNAL_ERROR``
        for a line that starts on the next try (a race inside the Wine server, not an
        answer about the command line); those lines are launched again, a few times.
        """
        for line in command_lines:
            if "\x00" in line:
                raise ValueError(f"a command line cannot hold NUL: {line!r}")
        launches = self._launch_all(command_lines, timeout)
        for _ in range(_TRANSIENT_TRIES - 1):
            again = [i for i, launch in enumerate(launches) if self._transient(launch)]
            if not again:
                break
            retried = self._launch_all([command_lines[i] for i in again], timeout)
            for i, launch in zip(again, retried, strict=True):
                launches[i] = launch
        return launches

    def _transient(self, launch: Launch) -> bool:
        return self.wine is not None and launch.error == _WINE_TRANSIENT_ERROR

    def _launch_all(self, command_lines: Sequence[str], timeout: float) -> list[Launch]:
        with tempfile.NamedTemporaryFile(
            "w", suffix=".txt", dir=self.dir, delete=False, encoding="ascii"
        ) as listing:
            listing.write("".join(encode_units(line) + "\n" for line in command_lines))
        launcher = [str(self.dir / "launch.exe"), self.windows_path(Path(listing.name))]
        if self.wine is not None:
            launcher.insert(0, self.wine)
        # Files, not pipes: a Wine service started by a launch inherits the handles and
        # would hold a pipe open long after the launcher exits.
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            try:
                code = subprocess.run(
                    launcher,
                    env=self.env,
                    cwd=self.dir,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=err,
                    timeout=timeout,
                    check=False,
                ).returncode
            finally:
                os.unlink(listing.name)
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        if code != 0:
            raise TierOutputError(f"launch.exe exited {code}: {stderr.decode(errors='replace')!r}")
        return parse_launcher_output(stdout.decode("utf-8", "replace"), command_lines)
