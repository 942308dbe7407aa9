"""Windows command lines, as the two spawn paths build them (pure string functions).

On Windows a child gets one command-line string, not an argv array, and
``CreateProcess`` caps it at 32 767 UTF-16 units (seed 002 §6.1). A binary
reaches that cap along one of two paths, and each path quotes differently
(seed 002 §6.3; seed 000 §5.11; ref §4.2 / §4.3):

* a ``.cmd`` / ``.bat`` shim runs inside ``cmd.exe /d /s /c "<inner>"``; each
  argument is quoted by :func:`quote_for_windows_cmd_shim` (``"`` doubled,
  ``%`` escaped so cmd.exe cannot expand ``%NAME%`` from the daemon's env);
* any other Windows executable is started directly; each argument is quoted by
  :func:`quote_for_windows_direct_exe`, a mirror of libuv's ``quote_cmd_arg``.

Lengths are counted in UTF-16 code units (:func:`utf16_len`), the unit of the
``CreateProcess`` limit and of the JavaScript ``String.length`` upstream uses;
a character outside the BMP counts 2.

Everything here is a pure function of its arguments, so the same arithmetic
runs on every OS (seed 002 §6.3: "三个函数都刻意写成纯函数…macOS 上的测试可以传一个假的
C:\\…\\deepseek.cmd 路径跑同一套算术").
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = [
    "CMD_SHIM_PREFIX",
    "SAFE_COMMAND_LINE_LIMIT",
    "SAFE_MARGIN",
    "WINDOWS_COMMAND_LINE_LIMIT",
    "cmd_shim_command_line",
    "cmd_shim_inner",
    "direct_exe_command_line",
    "is_cmd_shim",
    "looks_like_windows_path",
    "quote_for_windows_cmd_shim",
    "quote_for_windows_direct_exe",
    "utf16_len",
]

#: ``CreateProcess`` ``lpCommandLine`` cap, in UTF-16 units (seed 002 §6.1, ref §4.2).
WINDOWS_COMMAND_LINE_LIMIT = 32_767
#: Head-room kept below the cap (ref §4.2: ``safeLimit = 32_767 - 256``).
SAFE_MARGIN = 256
#: The limit both Windows guards compare against: 32 511.
SAFE_COMMAND_LINE_LIMIT = WINDOWS_COMMAND_LINE_LIMIT - SAFE_MARGIN

#: What precedes the quoted inner command of a shim launch (ref §4.2; 17 characters).
CMD_SHIM_PREFIX = "cmd.exe /d /s /c "

#: ECMAScript ``\s`` (WhiteSpace + LineTerminator). Upstream's regexes are JavaScript; Python's
#: ``\s`` differs (it adds U+001C-U+001F and U+0085, and lacks U+FEFF), so the class is spelled out.
_JS_WHITESPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"

# ref §4.2: no quoting unless the value holds whitespace or one of ``"&<>|^%``.
_CMD_SHIM_NEEDS_QUOTES = re.compile(f'[{_JS_WHITESPACE}"&<>|^%]')
# ref §4.3: libuv quotes only values holding whitespace or ``"``.
_DIRECT_EXE_NEEDS_QUOTES = re.compile(f'[{_JS_WHITESPACE}"]')

# ref §4.2: ``/\.(bat|cmd)$/i`` (JavaScript ``$`` is end of input: ``\Z`` here, not ``$``).
_CMD_SHIM_SUFFIX = re.compile(r"\.(?:bat|cmd)\Z", re.IGNORECASE)
# ref §4.3: ``/^[a-zA-Z]:[\\/]/`` or a UNC path starting with two backslashes.
_DRIVE_PATH = re.compile(r"[a-zA-Z]:[\\/]")


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units (a lone surrogate counts 1, an astral character 2)."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def is_cmd_shim(resolved_bin: str | None) -> bool:
    """True iff the resolved binary is a ``.bat``/``.cmd`` shim (ref §4.2, case-insensitive)."""
    return bool(resolved_bin) and _CMD_SHIM_SUFFIX.search(resolved_bin or "") is not None


def looks_like_windows_path(resolved_bin: str | None) -> bool:
    """A drive path (``C:\\``, ``c:/``) or a UNC path (``\\\\host\\share``) (ref §4.3)."""
    if not resolved_bin:
        return False
    return _DRIVE_PATH.match(resolved_bin) is not None or resolved_bin.startswith("\\\\")


def quote_for_windows_cmd_shim(value: str) -> str:
    """Quote one argument of a ``cmd.exe /d /s /c "…"`` shim launch (ref §4.2).

    seed 002 §6.3 (BUDGET-CMDSHIM-001, BUDGET-CMDSHIM-002): every ``"`` becomes ``""``
    first, then every ``%`` becomes ``"^%"``, and the whole is wrapped in quotes. The
    ``%`` escape is a security rule, not only arithmetic: unescaped, a prompt mentioning
    ``%DEEPSEEK_API_KEY%`` would have cmd.exe expand the key from the daemon's env.
    A value without whitespace or ``"&<>|^%`` is passed as is.
    """
    if _CMD_SHIM_NEEDS_QUOTES.search(value) is None:
        return value
    return '"' + value.replace('"', '""').replace("%", '"^%"') + '"'


def quote_for_windows_direct_exe(value: str) -> str:
    """Quote one argument the way libuv's ``quote_cmd_arg`` does (ref §4.3 pseudo-code).

    seed 000 §5.11 (BUDGET-DIRECTEXE-001): every ``"`` becomes ``\\"`` and the
    backslashes right before a quote (including the closing one) are doubled.
    ``""`` for an empty value; no quotes unless the value holds whitespace or ``"``.
    Splitting at the quotes below is equivalent to the pseudo-code's character loop.
    """
    if value == "":
        return '""'
    if _DIRECT_EXE_NEEDS_QUOTES.search(value) is None:
        return value
    if "\\" not in value and '"' not in value:
        return '"' + value + '"'
    # Linear in len(value) (a regex over long backslash runs backtracks quadratically).
    pieces = value.split('"')
    out: list[str] = ['"']
    for index, piece in enumerate(pieces):
        body = piece.rstrip("\\")
        out.append(body)
        out.append("\\" * (2 * (len(piece) - len(body))))
        if index < len(pieces) - 1:
            out.append('\\"')
    out.append('"')
    return "".join(out)


def cmd_shim_inner(argv: Sequence[str]) -> str:
    """The command cmd.exe runs: each of ``[resolved_bin, *args]`` shim-quoted, space-joined."""
    return " ".join(quote_for_windows_cmd_shim(part) for part in argv)


def cmd_shim_command_line(argv: Sequence[str]) -> str:
    """The full ``CreateProcess`` line of a shim launch: ``cmd.exe /d /s /c "<inner>"``.

    ``/s`` makes cmd.exe strip exactly the first and the last quote of what follows
    ``/c``, so the wrapper quotes never reach the shim (``cmd /?``; ref §4.2 "+ 2 outer quotes").
    """
    return CMD_SHIM_PREFIX + '"' + cmd_shim_inner(argv) + '"'


def direct_exe_command_line(argv: Sequence[str]) -> str:
    """The full ``CreateProcess`` line of a direct launch: each part libuv-quoted, space-joined.

    ``argv[0]`` is the resolved binary (ref §4.3: no wrapper around the joined parts).
    """
    return " ".join(quote_for_windows_direct_exe(part) for part in argv)
