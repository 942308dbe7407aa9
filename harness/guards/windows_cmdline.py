"""Windows command lines, as the two spawn paths build them (pure string functions).

Design: docs/design/guards.md#harness.guards.windows_cmdline
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "CMD_SHIM_PREFIX",
    "SAFE_COMMAND_LINE_LIMIT",
    "SAFE_MARGIN",
    "WINDOWS_COMMAND_LINE_LIMIT",
    "ArgumentLoss",
    "cmd_shim_argument_loss",
    "cmd_shim_command_line",
    "cmd_shim_inner",
    "describe_sequence",
    "direct_exe_argument_loss",
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


# --- what each launch path cannot carry (WIN-CMDLINE-SHIM-001, WIN-CMDLINE-EXE-001) -------

#: cmd.exe ends the command token (the shim path) at these when they are not quoted, and
#: ``%*`` drops them at the start of the first forwarded argument.
_CMD_TOKEN_DELIMITERS = ",;=\u00ff"
# A backslash run right before a quote or a percent sign: shim quoting puts a ``"`` right
# after it (``"`` -> ``""``, ``%`` -> ``"^%"``), and the C runtime reads ``\"`` as a quote.
_BACKSLASH_BEFORE_QUOTE = re.compile(r'\\+(?=["%])')


@dataclass(frozen=True, slots=True)
class ArgumentLoss:
    """The first place a Windows launch path would change an argument."""

    #: Position in ``[resolved_bin, *args]``: 0 is the program, 1 the first argument.
    index: int
    #: Where the offending sequence starts inside that argument.
    offset: int
    #: The characters at fault (empty for an empty argument).
    sequence: str
    #: What the launch path does to them, one sentence without a final period.
    problem: str


def describe_sequence(sequence: str) -> str:
    """``sequence`` readable in a message: printable characters as they are, others named.

    ``'\\"'`` -> ``\\" (U+005C U+0022)``; ``'\\n'`` -> ``U+000A LINE FEED``.
    """
    if not sequence:
        return "(empty)"
    codes = " ".join(f"U+{ord(ch):04X}" for ch in sequence)
    if all(ch.isprintable() and ch != " " for ch in sequence):
        return f"{sequence} ({codes})"
    names = " ".join(
        f"U+{ord(ch):04X} {unicodedata.name(ch, _CONTROL_NAMES.get(ch, 'CONTROL'))}"
        for ch in sequence
    )
    return names


_CONTROL_NAMES = {
    "\x00": "NUL",
    "\t": "CHARACTER TABULATION",
    "\n": "LINE FEED",
    "\r": "CARRIAGE RETURN",
}


def _first(candidates: list[tuple[int, str, str]]) -> tuple[int, str, str] | None:
    return min(candidates, key=lambda c: c[0]) if candidates else None


def _nul(arg: str) -> tuple[int, str, str] | None:
    at = arg.find("\x00")
    if at == -1:
        return None
    return (at, "\x00", "CreateProcess ends the command line at a NUL character")


def _shim_program_loss(program: str) -> tuple[int, str, str] | None:
    if program == "":
        return (0, "", "an empty program path names nothing for cmd.exe to run")
    found: list[tuple[int, str, str]] = []
    for ch, problem in (
        ("\x00", "CreateProcess ends the command line at a NUL character"),
        ('"', "cmd.exe removes every double quote from the program path"),
        ("\n", "cmd.exe ends its command line at a line feed"),
        ("\r", "cmd.exe removes every carriage return"),
    ):
        if (at := program.find(ch)) != -1:
            found.append((at, ch, problem))
    if quote_for_windows_cmd_shim(program) == program:
        for ch in _CMD_TOKEN_DELIMITERS:
            if (at := program.find(ch)) != -1:
                problem = "cmd.exe ends an unquoted program path at , ; = or U+00FF"
                found.append((at, ch, problem))
    return _first(found)


def _shim_arg_loss(arg: str, *, first: bool) -> tuple[int, str, str] | None:
    if arg == "":
        return (0, "", "an empty argument vanishes from cmd.exe's command line")
    found: list[tuple[int, str, str]] = []
    nul = _nul(arg)
    if nul is not None:
        found.append(nul)
    if (at := arg.find("\n")) != -1:
        problem = (
            "cmd.exe ends its command line at a line feed, so the rest of this argument "
            "and every later one would be dropped"
        )
        found.append((at, "\n", problem))
    if (at := arg.find("\r")) != -1:
        found.append((at, "\r", "cmd.exe removes every carriage return"))
    match = _BACKSLASH_BEFORE_QUOTE.search(arg)
    if match is not None:
        follower = arg[match.end()]
        problem = (
            "the C runtime reads a backslash before a quote as an escaped quote, so the "
            "quoting ends early and the text after it would reach the CLI as other arguments"
            if follower == '"'
            else "the percent-sign escape puts a quote after the backslash, which the C "
            "runtime then reads as an escaped quote"
        )
        found.append((match.start(), match.group() + follower, problem))
    quoted = quote_for_windows_cmd_shim(arg) != arg
    if quoted and arg.endswith("\\"):
        body = arg.rstrip("\\")
        problem = (
            "a trailing backslash escapes the closing quote in the C runtime, so the "
            "argument would run on into the next ones"
        )
        found.append((len(body), arg[len(body) :], problem))
    if first and not quoted and arg[0] in _CMD_TOKEN_DELIMITERS:
        problem = "cmd.exe drops a leading , ; = or U+00FF of the first forwarded argument"
        found.append((0, arg[0], problem))
    return _first(found)


def cmd_shim_argument_loss(argv: Sequence[str]) -> ArgumentLoss | None:
    """The first argument of ``[shim, *args]`` a ``.cmd``/``.bat`` launch would change.

    WIN-CMDLINE-SHIM-001. :func:`cmd_shim_command_line` (upstream's quoting, kept for the
    budget arithmetic) cannot carry: an empty argument; CR, LF or NUL; a backslash run
    right before ``"`` or ``%``; a trailing backslash in a quoted argument; an unquoted
    leading ``,``/``;``/``=``/U+00FF in the first argument; and, in the program path, a
    quote, CR, LF, NUL, or an unquoted ``,``/``;``/``=``/U+00FF. Everything else
    round-trips, ``%NAME%`` included (it is escaped, never expanded). ``None``: lossless.
    """
    if not argv:
        return None
    head = _shim_program_loss(argv[0])
    if head is not None:
        return ArgumentLoss(0, *head)
    for index, arg in enumerate(argv[1:], start=1):
        loss = _shim_arg_loss(arg, first=index == 1)
        if loss is not None:
            return ArgumentLoss(index, *loss)
    return None


def direct_exe_argument_loss(argv: Sequence[str]) -> ArgumentLoss | None:
    """The first argument of ``[exe, *args]`` a direct launch would change.

    WIN-CMDLINE-EXE-001. libuv's quoting (:func:`direct_exe_command_line`) round-trips
    every argument through both the C runtime and ``CommandLineToArgvW`` except a NUL
    (the command line is a NUL-terminated string). The program path is read by the
    program-name rule, which has no escapes: it cannot hold a ``"``, nor end in a
    backslash when it needs quotes (the doubled backslashes would stay doubled).
    ``None``: lossless.
    """
    if not argv:
        return None
    program = argv[0]
    found: list[tuple[int, str, str]] = []
    nul = _nul(program)
    if nul is not None:
        found.append(nul)
    if (at := program.find('"')) != -1:
        problem = "a program path is read without escapes, so a quote in it cannot be carried"
        found.append((at, '"', problem))
    if quote_for_windows_direct_exe(program) != program and program.endswith("\\"):
        body = program.rstrip("\\")
        problem = "a quoted program path ending in a backslash keeps its doubled backslashes"
        found.append((len(body), program[len(body) :], problem))
    head = _first(found)
    if head is not None:
        return ArgumentLoss(0, *head)
    for index, arg in enumerate(argv[1:], start=1):
        loss = _nul(arg)
        if loss is not None:
            return ArgumentLoss(index, *loss)
    return None
