"""Go's ``flag`` package rules for the fakes of Go CLIs (reasonix), and :class:`AnyFlag`
for a subcommand whose flags the emulator parses itself.
"""

from __future__ import annotations

# ``_collections_abc`` is what ``collections.abc`` re-exports; the interpreter has already
# loaded it, while ``collections.abc`` would import ``collections`` on a fake's start.
from _collections_abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

__all__ = ["AnyFlag", "GoFlagResult", "go_flag_parse"]


class GoFlagResult:
    """The flags Go's parse set, and the arguments after them."""

    __slots__ = ("rest", "values")

    def __init__(self, values: dict[str, str], rest: list[str]) -> None:
        self.values = values
        self.rest = rest

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GoFlagResult):
            return NotImplemented
        return (self.values, self.rest) == (other.values, other.rest)

    __hash__ = None  # type: ignore[assignment]  # mutable fields, as the dataclass had

    def __repr__(self) -> str:
        return f"GoFlagResult(values={self.values!r}, rest={self.rest!r})"


def go_flag_parse(
    flags: Mapping[str, str], args: Sequence[str], prog: str
) -> GoFlagResult | tuple[str, int]:
    """Go's ``flag.FlagSet.Parse`` (``ContinueOnError``): ``flags`` maps a name to
    ``bool`` or ``string``. Returns the values, or ``(message, 2)`` like Go does.

    Go accepts ``-name``, ``--name``, ``-name=value``; a string flag takes the next argument;
    a bool flag only ``-name`` or ``-name=true|false``; parsing stops at the first non-flag
    argument or ``--``.
    """
    values: dict[str, str] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        if len(arg) < 2 or not arg.startswith("-"):
            break
        index += 1
        if arg == "--":
            break
        name = arg[2:] if arg.startswith("--") else arg[1:]
        if not name or name.startswith("-") or name.startswith("="):
            return f"bad flag syntax: {arg}", 2
        name, eq, inline = name.partition("=")
        kind = flags.get(name)
        if kind is None:
            return f"flag provided but not defined: -{name}\nUsage of {prog}:", 2
        if kind == "bool":
            if eq and inline not in ("true", "false", "1", "0", "t", "f", "TRUE", "FALSE"):
                return f'invalid boolean value "{inline}" for -{name}: parse error', 2
            values[name] = inline if eq else "true"
            continue
        if eq:
            values[name] = inline
        elif index < len(args):
            values[name] = args[index]
            index += 1
        else:
            return f"flag needs an argument: -{name}\nUsage of {prog}:", 2
    return GoFlagResult(values, list(args[index:]))


class AnyFlag(Mapping[str, int]):
    """Accepts every flag (arity 0): the real parse happens in the emulator."""

    def __getitem__(self, key: str) -> int:
        return 0

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str)

    def __iter__(self) -> Iterator[str]:
        return iter(())

    def __len__(self) -> int:
        return 0
