"""Strict argv parsing for fake CLIs, in each real CLI's error style.

A fake must refuse what the real CLI refuses (design principle 7): an unknown
flag, a flag in the wrong mode (``-C`` on ``codex exec resume``), a missing
value. :func:`parse_argv` walks a :class:`Grammar` and raises
:class:`UsageError` carrying the message and exit code the real CLI's
argument library produces:

* ``commander`` (Node: claude, codebuddy, copilot, cursor-agent, qoder, ...):
  ``error: unknown option '--x'``, exit 1;
* ``yargs`` (gemini, opencode): ``Unknown argument: x``, exit 1;
* ``clap`` (Rust: codex, deepseek): ``error: unexpected argument '--x' found``, exit 2;
* ``argparse`` (Python: aider, vibe, kimi): ``error: unrecognized arguments: --x``, exit 2.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["VARIADIC", "Grammar", "Parsed", "UsageError", "parse_argv"]

#: Arity of a flag that takes values until the next flag.
VARIADIC = -1


class UsageError(Exception):
    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class Grammar:
    """The flags, subcommands and positionals one CLI (or subcommand) accepts."""

    __slots__ = ("aliases", "flags", "positionals", "repeatable", "subcommands")

    def __init__(
        self,
        flags: Mapping[str, int] | None = None,
        aliases: Mapping[str, str] | None = None,
        positionals: tuple[int, int] = (0, 0),
        subcommands: Mapping[str, Grammar] | None = None,
        repeatable: frozenset[str] = frozenset(),
    ) -> None:
        #: flag -> arity (0 = switch, 1 = one value, VARIADIC = values until the next flag).
        self.flags: Mapping[str, int] = {} if flags is None else flags
        #: short or alternate spelling -> canonical flag.
        self.aliases: Mapping[str, str] = {} if aliases is None else aliases
        #: (min, max) positional arguments; max -1 = unbounded.
        self.positionals = positionals
        self.subcommands: Mapping[str, Grammar] = {} if subcommands is None else subcommands
        #: Flags that may be repeated (others: the last one wins).
        self.repeatable = repeatable


class Parsed:
    """What :func:`parse_argv` found."""

    __slots__ = ("command", "flags", "positionals")

    def __init__(
        self,
        command: tuple[str, ...] = (),
        flags: dict[str, list[str]] | None = None,
        positionals: list[str] | None = None,
    ) -> None:
        #: Subcommand path, e.g. ("exec", "resume").
        self.command = command
        self.flags: dict[str, list[str]] = {} if flags is None else flags
        self.positionals: list[str] = [] if positionals is None else positionals

    def __repr__(self) -> str:
        return (
            f"Parsed(command={self.command!r}, flags={self.flags!r}, "
            f"positionals={self.positionals!r})"
        )

    def has(self, flag: str) -> bool:
        return flag in self.flags

    def value(self, flag: str, default: str | None = None) -> str | None:
        values = self.flags.get(flag)
        return values[-1] if values else default

    def values(self, flag: str) -> list[str]:
        return list(self.flags.get(flag, []))


def _error(style: str, kind: str, token: str, prog: str) -> UsageError:
    if style == "clap":
        if kind == "unknown":
            return UsageError(
                f"error: unexpected argument '{token}' found\n\nUsage: {prog} [OPTIONS]\n\n"
                "For more information, try '--help'.",
                2,
            )
        if kind == "missing":
            return UsageError(f"error: a value is required for '{token}' but none was supplied", 2)
        return UsageError(f"error: unexpected argument '{token}' found", 2)
    if style == "argparse":
        if kind == "unknown":
            return UsageError(
                f"usage: {prog} [-h] ...\n{prog}: error: unrecognized arguments: {token}", 2
            )
        if kind == "missing":
            return UsageError(
                f"usage: {prog} [-h] ...\n{prog}: error: argument {token}: expected one argument", 2
            )
        return UsageError(
            f"usage: {prog} [-h] ...\n{prog}: error: unrecognized arguments: {token}", 2
        )
    if style == "yargs":
        if kind == "missing":
            return UsageError(f"Not enough arguments following: {token.lstrip('-')}", 1)
        return UsageError(f"Unknown argument: {token.lstrip('-')}", 1)
    # commander
    if kind == "unknown":
        return UsageError(f"error: unknown option '{token}'", 1)
    if kind == "missing":
        return UsageError(f"error: option '{token}' argument missing", 1)
    return UsageError(f"error: too many arguments. Expected 0 arguments but got '{token}'.", 1)


def parse_argv(grammar: Grammar, argv: Sequence[str], *, style: str, prog: str) -> Parsed:
    """Parse ``argv`` strictly; raise :class:`UsageError` in ``style`` on any mistake."""
    parsed = Parsed()
    current = grammar
    index = 0
    seen_positional = False
    while index < len(argv):
        token = argv[index]
        index += 1
        if token == "--":
            parsed.positionals.extend(argv[index:])
            break
        if token.startswith("-") and token != "-":
            name, eq, inline = token.partition("=")
            if not name.startswith("--"):
                eq, inline = "", ""
                name = token
            name = current.aliases.get(name, name)
            if name not in current.flags:
                raise _error(style, "unknown", token, prog)
            arity = current.flags[name]
            values = parsed.flags.setdefault(name, [])
            if name not in current.repeatable and arity != VARIADIC:
                values.clear()
            if arity == 0:
                if eq:
                    raise _error(style, "unknown", token, prog)
                continue
            if eq:
                values.append(inline)
                continue
            if arity == 1:
                if index >= len(argv):
                    raise _error(style, "missing", name, prog)
                values.append(argv[index])
                index += 1
                continue
            taken = 0
            while index < len(argv) and not argv[index].startswith("-"):
                values.append(argv[index])
                index += 1
                taken += 1
            if taken == 0:
                raise _error(style, "missing", name, prog)
            continue
        if not seen_positional and token in current.subcommands and not parsed.positionals:
            current = current.subcommands[token]
            parsed.command = (*parsed.command, token)
            continue
        seen_positional = True
        parsed.positionals.append(token)
    low, high = current.positionals
    if len(parsed.positionals) < low:
        raise UsageError(
            f"error: missing required argument{'s' if low > 1 else ''}",
            2 if style in ("clap", "argparse") else 1,
        )
    if high >= 0 and len(parsed.positionals) > high:
        raise _error(style, "extra", parsed.positionals[high], prog)
    return parsed
