"""Windows command-line splitters, written from the documented rules (test-only code).

The budget guards build Windows command lines; these functions read them back the way
Windows programs do, so tests can prove the quoting round-trips. Nothing here is used by
the engine.

Direct launches (no shell), two documented parsers:

* :func:`split_ucrt` — the Microsoft C runtime (UCRT, VS 2008+) that fills ``argv`` /
  ``wargv`` of a C/C++ program such as ``node.exe``. Rules from Microsoft Learn "Parsing
  C++ command-line arguments": arguments are separated by space or tab; a ``"`` toggles
  quoted mode; ``2n`` backslashes before ``"`` give ``n`` backslashes and a delimiter
  quote, ``2n+1`` give ``n`` backslashes and a literal ``"``; other backslashes are
  literal; inside quoted mode ``""`` is a literal ``"`` and quoted mode continues.
  ``argv[0]`` follows the program-name rule: quotes toggle, backslashes are literal,
  it ends at the first space/tab outside quotes.
* :func:`split_shell32` — ``CommandLineToArgvW`` (the pre-2008 CRT rule for ``""``: inside
  quoted mode ``""`` emits ``"`` and *leaves* quoted mode; implemented as Wine's shell32
  documents it with its ``qcount % 3`` counter). ``argv[0]``: a leading ``"`` runs to the
  next ``"``, otherwise up to the first space/tab.

Shim launches (``cmd.exe /d /s /c "<inner>"`` running a ``.cmd`` that forwards ``%*`` to
a C program, as npm's cmd-shim does): :func:`split_cmd_shim` models

1. ``/s``: ``cmd /?`` — "strip the leading character and remove the last quote character
   on the command line, preserving any text after the last quote character";
2. the command-line parser phases as documented by jeb and dbenham ("How does the Windows
   Command Interpreter (CMD.EXE) parse scripts?"): phase 1 truncates at the first
   ``<LF>`` and expands ``%name%`` — on the command line an undefined name is left as is
   and scanning resumes at its closing ``%`` (their example: ``set b=a`` then
   ``echo %a %b% c%`` prints ``%a a c%``); phase 1.5 removes ``<CR>``; phase 2 toggles a
   quote flag at every ``"``, and outside quotes ``^`` escapes the next character (the
   caret is removed) while ``& | < >`` split or redirect the command;
3. the batch line ``"%_prog%" "%dp0%\\cli.js" %*``: ``%*`` inserts the arguments as cmd
   received them (carets already removed; the inserted text is not percent-expanded
   again) and phase 2 runs over them a second time;
4. the target program's UCRT parse of those arguments.

Model limits (inputs outside them raise :class:`CmdModelError`, never a wrong answer):
delayed expansion is off (cmd's default); ``%name:…%`` substring/substitution forms
whose base name is defined are not modeled; the command token (the shim path) ends at
the first unquoted space, tab, ``,``, ``;``, ``=`` or U+00FF; ``%*`` drops leading
delimiters of that same set (whether it really does is unverified, so tests keep a first
argument off them); dynamic variables (``CD``, ``RANDOM``, …) expand to a placeholder.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "CMD_DYNAMIC_VARIABLES",
    "CmdModelError",
    "CmdSplitError",
    "cmd_percent_expand",
    "cmd_phase2",
    "split",
    "split_cmd_shim",
    "split_shell32",
    "split_ucrt",
    "ucrt_split_args",
]

_WS = " \t"
#: cmd.exe token delimiters (command token and leading ``%*`` delimiters).
_CMD_DELIMS = " \t,;=\xff"
_CMD_OPERATORS = "&|<>"
_SHIM_PREFIX = "cmd.exe /d /s /c "

#: Variables cmd.exe answers without an env entry (``help set``); expanded to a placeholder.
CMD_DYNAMIC_VARIABLES = frozenset(
    {
        "CD",
        "DATE",
        "TIME",
        "RANDOM",
        "ERRORLEVEL",
        "CMDEXTVERSION",
        "CMDCMDLINE",
        "HIGHESTNUMANODENUMBER",
        "__CD__",
        "__APPDIR__",
    }
)


class CmdModelError(ValueError):
    """The input is outside what :func:`split_cmd_shim` models."""


class CmdSplitError(ValueError):
    """cmd.exe would see an unquoted, unescaped ``&``, ``|``, ``<`` or ``>``."""


# --- the C runtime -----------------------------------------------------------------


def _ucrt_program_name(text: str) -> tuple[str, int]:
    out: list[str] = []
    in_quotes = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            in_quotes = not in_quotes
        else:
            out.append(ch)
        i += 1
        if i < n and not in_quotes and text[i] in _WS:
            break
    return "".join(out), i


def ucrt_split_args(text: str) -> list[str]:
    """UCRT rules for the arguments after the program name."""
    args: list[str] = []
    n = len(text)
    i = 0
    while True:
        while i < n and text[i] in _WS:
            i += 1
        if i >= n:
            return args
        in_quotes = False
        out: list[str] = []
        while True:
            backslashes = 0
            while i < n and text[i] == "\\":
                backslashes += 1
                i += 1
            copy = True
            if i < n and text[i] == '"':
                if backslashes % 2 == 0:
                    if in_quotes and i + 1 < n and text[i + 1] == '"':
                        i += 1  # "" inside quotes: a literal quote, quoted mode goes on
                    else:
                        copy = False
                        in_quotes = not in_quotes
                backslashes //= 2
            out.append("\\" * backslashes)
            if i >= n or (not in_quotes and text[i] in _WS):
                break
            if copy:
                out.append(text[i])
            i += 1
        args.append("".join(out))


def split_ucrt(command_line: str) -> list[str]:
    """``argv`` as the UCRT builds it from a whole command line (program name first)."""
    program, i = _ucrt_program_name(command_line)
    return [program, *ucrt_split_args(command_line[i:])]


# --- CommandLineToArgvW ------------------------------------------------------------


def split_shell32(command_line: str) -> list[str]:
    """``argv`` as ``CommandLineToArgvW`` builds it (Wine's documented implementation)."""
    text = command_line
    n = len(text)
    i = 0
    if i < n and text[i] == '"':
        end = text.find('"', 1)
        program = text[1:] if end == -1 else text[1:end]
        i = n if end == -1 else end + 1
    else:
        while i < n and text[i] not in _WS:
            i += 1
        program = text[:i]
    args: list[str] = []
    while i < n and text[i] in _WS:
        i += 1
    if i >= n:
        return [program]
    out: list[str] = []
    quotes = 0
    backslashes = 0
    while i < n:
        ch = text[i]
        if ch in _WS and quotes == 0:
            args.append("".join(out))
            out = []
            backslashes = 0
            while i < n and text[i] in _WS:
                i += 1
            if i >= n:
                return [program, *args]
            continue
        if ch == "\\":
            out.append("\\")
            backslashes += 1
            i += 1
        elif ch == '"':
            if backslashes % 2 == 0:
                # 2n backslashes + quote: n backslashes, and the quote is a delimiter.
                del out[len(out) - backslashes // 2 :]
                quotes += 1
            else:
                # 2n+1 backslashes + quote: n backslashes and a literal quote.
                del out[len(out) - backslashes // 2 - 1 :]
                out.append('"')
            i += 1
            backslashes = 0
            while i < n and text[i] == '"':
                quotes += 1
                if quotes == 3:
                    out.append('"')
                    quotes = 0
                i += 1
            if quotes == 2:
                quotes = 0
        else:
            out.append(ch)
            backslashes = 0
            i += 1
    args.append("".join(out))
    return [program, *args]


def split(command_line: str, parser: str = "ucrt") -> list[str]:
    """Split a direct-launch command line with ``parser`` (``"ucrt"`` or ``"shell32"``)."""
    if parser == "ucrt":
        return split_ucrt(command_line)
    if parser == "shell32":
        return split_shell32(command_line)
    raise ValueError(f"unknown parser {parser!r}; expected 'ucrt' or 'shell32'")


# --- cmd.exe + a %*-forwarding .cmd shim ---------------------------------------------


def _lookup(name: str, env: Mapping[str, str]) -> str | None:
    base, colon, _ = name.partition(":")
    folded = {k.upper(): v for k, v in env.items()}
    defined = base.upper() in folded or base.upper() in CMD_DYNAMIC_VARIABLES
    if colon:
        if defined and base:
            raise CmdModelError(f"%{name}% modifies defined variable {base!r}: not modeled")
        return None
    if not name:
        return None
    if name.upper() in folded:
        return folded[name.upper()]
    if name.upper() in CMD_DYNAMIC_VARIABLES:
        return f"<dynamic {name.upper()}>"
    return None


def cmd_percent_expand(text: str, env: Mapping[str, str]) -> str:
    """Phase 1 on the command line: expand defined ``%name%``, leave undefined ones.

    An undefined name keeps its opening ``%`` and text, and the scan resumes at the
    closing ``%`` (which may open the next reference). Names are case-insensitive.
    """
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        start = text.find("%", i)
        if start == -1:
            out.append(text[i:])
            break
        out.append(text[i:start])
        end = text.find("%", start + 1)
        if end == -1:
            out.append(text[start:])
            break
        value = _lookup(text[start + 1 : end], env)
        if value is None:
            out.append(text[start:end])
            i = end
        else:
            out.append(value)
            i = end + 1
    return "".join(out)


def cmd_phase2(text: str) -> str:
    """Phase 2: quote flag, caret escapes outside quotes, operators outside quotes raise."""
    out: list[str] = []
    quoted = False
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            quoted = not quoted
            out.append(ch)
        elif not quoted and ch == "^":
            if i + 1 >= n:
                raise CmdModelError("a trailing caret continues the line: not modeled")
            out.append(text[i + 1])
            i += 1
        elif not quoted and ch in _CMD_OPERATORS:
            raise CmdSplitError(f"unquoted {ch!r} at offset {i} splits or redirects: {text!r}")
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def split_cmd_shim(command_line: str, env: Mapping[str, str]) -> list[str]:
    """``[shim_path, *args]`` as the program behind a ``%*``-forwarding shim receives them.

    ``env`` is the environment cmd.exe expands ``%name%`` from.
    """
    if not command_line.startswith(_SHIM_PREFIX):
        raise CmdModelError(f"not a {_SHIM_PREFIX!r} command line: {command_line[:40]!r}")
    rest = command_line[len(_SHIM_PREFIX) :]
    last = rest.rfind('"')
    if not rest.startswith('"') or last == 0:
        raise CmdModelError("/s without a leading and a trailing quote: not modeled")
    rest = rest[1:last] + rest[last + 1 :]  # /s: drop the first and the last quote
    newline = rest.find("\n")
    if newline != -1:
        rest = rest[:newline]  # phase 1: the line ends at the first <LF>
    rest = cmd_percent_expand(rest, env)
    rest = rest.replace("\r", "")  # phase 1.5
    rest = cmd_phase2(rest)
    quoted = False
    i = 0
    while i < len(rest):
        if rest[i] == '"':
            quoted = not quoted
        elif not quoted and rest[i] in _CMD_DELIMS:
            break
        i += 1
    shim = rest[:i].replace('"', "")
    forwarded = rest[i:].lstrip(_CMD_DELIMS)  # %*
    forwarded = cmd_phase2(forwarded)  # the shim's own line: "%_prog%" ... %*
    return [shim, *ucrt_split_args(forwarded)]
