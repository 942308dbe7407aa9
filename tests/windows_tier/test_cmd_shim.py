"""``.cmd`` shim launches through a real cmd.exe (WIN-TIER-SHIM-001).

For ``[shim, *args]`` the runner builds ``cmd_shim_command_line`` and the guard
``cmd_shim_argument_loss`` decides whether to refuse it. Each line is started for real;
the shim (npm's shape: ``"%_prog%" "%~dp0cli.js" %*``) runs ``argvdump.exe``, which
reports what its C runtime (ucrtbase) read. An argument the guard accepts must arrive
byte for byte; one it refuses must not (the refusal is never needless); a ``%NAME%``
never expands to the variable's value.

Wine's cmd.exe is a reimplementation and differs from Windows' in ways the project's model
(``tests/guards/winsplit.py``, written from Microsoft's and jeb/dbenham's documented
rules) does not: :data:`WINE_CMD_DEVIATIONS` lists each one seen. Under Wine an argv
touched by one is held only to the no-expansion rule; on Windows every argv is held to
all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.guards.windows_cmdline import (
    ArgumentLoss,
    cmd_shim_argument_loss,
    cmd_shim_command_line,
)
from tests.guards import winsplit
from tests.windows_tier.tier import SECRET_NAME, SECRET_VALUE, Launch, WindowsTier

#: Where Wine's cmd.exe (8.0) parts from Windows', each with the argvs it touches.
WINE_CMD_DEVIATIONS: dict[str, tuple[str, Callable[[Sequence[str]], bool]]] = {
    "percent": (
        "Wine keeps the caret of an unquoted ^% on the /c line, and percent-expands the "
        "text %* inserts a second time (in a batch file an undefined name becomes empty): "
        '"100%" arrives as "100^". Windows expands the batch line once, before %* text is '
        "in it, and phase 2 removes the caret.",
        lambda args: any("%" in arg for arg in args),
    ),
    "line-end": (
        "Wine's cmd.exe neither ends the command line at a line feed nor removes carriage "
        "returns; Windows' does both (phases 1 and 1.5), so the guard's refusal stands.",
        lambda args: any("\n" in arg or "\r" in arg for arg in args),
    ),
}


def leading_delimiter_refusal(loss: ArgumentLoss | None) -> bool:
    """The guard's one deliberately cautious refusal: a leading ``,;=`` or U+00FF.

    The model says ``%*`` drops such a character at the start of the first forwarded
    argument and marks that unverified; Wine's ``%*`` keeps it. Refusing costs the user a
    rephrase where accepting could lose a character silently, so the guard refuses, and
    either outcome is accepted here: this check then holds the other arguments only.
    """
    return (
        loss is not None
        and loss.index == 1
        and loss.offset == 0
        and loss.sequence in (",", ";", "=", "\u00ff")
    )


def wine_deviation(args: Sequence[str]) -> str | None:
    """The first deviation of Wine's cmd.exe that touches ``args``, by name."""
    for name, (_, touches) in WINE_CMD_DEVIATIONS.items():
        if touches(args):
            return name
    return None


#: Arguments the guard accepts: every cmd.exe special character, quoted and not.
ACCEPTED: list[list[str]] = [
    ["plain", "two words", "tab\there"],
    ['say "hi"', '"', '""', 'a""b'],
    ["^", "a^b", "^^", "x^"],
    ["a&b", "a|b", "a<b", "a>b", "&", "|", "<", ">"],
    ["a & b", "x > nul", "y | more", "&&", "||"],
    ['say "hi" & bye', '"&"', 'a"&"b'],
    ["unquoted\\", "C:\\tmp\\x", "back\\slash"],
    ["é ü ß", "日本語", "😀", "\u00a0nbsp", "\u2028"],
    ["!x!", "(a)", "a,b", "a;b", "a=b", "--flag=value", "it's", "x,"],
    ["%HARNESS_TIER_SECRET%", "%PATH%", "%UNDEFINED_NAME%"],
    ["100%", "a%b%c", "%%", "%", "^%HARNESS_TIER_SECRET^%"],
    ['"%HARNESS_TIER_SECRET%"', "%HARNESS_TIER_SECRET:~0,3%"],
]

#: Arguments the guard refuses, each for its own reason.
REFUSED: list[list[str]] = [
    [""],
    ["ok", ""],
    ["trailing space\\"],
    ['back\\"quote'],
    ['a b\\"c'],
    ["percent\\%x"],
    ["cr\rhere"],
    ["line1\nline2", "--yolo"],
    [",lead"],
    [";lead"],
    ["=lead"],
]


def _observed(tier: WindowsTier, launch: Launch) -> list[str]:
    assert launch.error is None, f"cmd.exe did not start for {launch.command_line!r}: {launch!r}"
    assert len(launch.dumps) == 1, (
        f"expected the shim to run argvdump once for {launch.command_line!r}, "
        f"got {launch.dumps!r} and output {launch.output!r}"
    )
    ucrt = launch.dumps[0].ucrt
    assert ucrt is not None, "ucrtbase did not report"
    assert list(ucrt[:2]) == [tier.argvdump, tier.script], f"the shim's own line: {ucrt!r}"
    return list(ucrt[2:])


def _check(tier: WindowsTier, launch: Launch, args: list[str], *, curated: bool) -> None:
    argv = [tier.shim, *args]
    observed = _observed(tier, launch)
    assert not any(SECRET_VALUE in arg for arg in observed), (
        f"%{SECRET_NAME}% was expanded from the environment: {observed!r}"
    )
    loss = cmd_shim_argument_loss(argv)
    deviation = wine_deviation(args) if tier.wine is not None else None
    try:
        model: list[str] | None = winsplit.split_cmd_shim(launch.command_line, tier.env)[1:]
    except (winsplit.CmdModelError, winsplit.CmdSplitError):
        model = None
    if deviation is not None:
        if curated and model is not None:
            assert observed != model, (
                f"Wine no longer deviates ({deviation!r}) for {args!r}: "
                f"it read {observed!r} as the model does; drop the deviation"
            )
        return
    if loss is None:
        assert observed == args, f"accepted {args!r} arrived as {observed!r}"
    elif leading_delimiter_refusal(loss):
        stripped = args[0].lstrip(",;=\u00ff")
        dropped = [stripped, *args[1:]] if stripped else args[1:]
        assert observed in (args, dropped), (
            f"{args!r} arrived as {observed!r}: more than a leading delimiter changed"
        )
        return
    else:
        assert observed != args, (
            f"the guard refused {args!r} ({loss.problem}) but it arrives intact"
        )
    if model is not None:
        assert model == observed, (
            f"winsplit.split_cmd_shim reads {model!r} where cmd.exe delivered {observed!r}"
        )


@pytest.mark.rule("WIN-TIER-SHIM-001")
def test_accepted_arguments_arrive_byte_for_byte(tier: WindowsTier) -> None:
    for args in ACCEPTED:
        assert cmd_shim_argument_loss([tier.shim, *args]) is None, f"refused: {args!r}"
    launches = tier.run([cmd_shim_command_line([tier.shim, *args]) for args in ACCEPTED])
    for launch, args in zip(launches, ACCEPTED, strict=True):
        _check(tier, launch, args, curated=True)


@pytest.mark.rule("WIN-TIER-SHIM-001")
def test_refused_arguments_would_really_change(tier: WindowsTier) -> None:
    for args in REFUSED:
        assert cmd_shim_argument_loss([tier.shim, *args]) is not None, f"accepted: {args!r}"
    launches = tier.run([cmd_shim_command_line([tier.shim, *args]) for args in REFUSED])
    for launch, args in zip(launches, REFUSED, strict=True):
        _check(tier, launch, args, curated=True)


@pytest.mark.rule("WIN-TIER-SHIM-001")
def test_a_secret_name_is_never_expanded_in_any_spelling(tier: WindowsTier) -> None:
    spellings = [
        f"%{SECRET_NAME}%",
        f"%{SECRET_NAME.lower()}%",
        f"x%{SECRET_NAME}%y",
        f'"%{SECRET_NAME}%"',
        f"%%{SECRET_NAME}%%",
        f"%{SECRET_NAME}:~0%",
        f"!{SECRET_NAME}!",
        f"%a %{SECRET_NAME}% c%",
    ]
    launches = tier.run([cmd_shim_command_line([tier.shim, text]) for text in spellings])
    for launch, text in zip(launches, spellings, strict=True):
        observed = _observed(tier, launch)
        assert not any(SECRET_VALUE in arg for arg in observed), (
            f"{text!r} expanded the secret: {observed!r}"
        )


_argument = st.text(
    alphabet=st.one_of(
        st.sampled_from(' \t"\\%^&|<>!,;=()é😀'),
        st.sampled_from("abcXYZ019_-."),
        st.characters(codec="utf-16", exclude_characters="\x00\n\r"),
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.rule("WIN-TIER-SHIM-001")
@settings(max_examples=5)
@given(batch=st.lists(st.lists(_argument, min_size=1, max_size=4), min_size=25, max_size=25))
def test_random_arguments_arrive_or_are_refused(tier: WindowsTier, batch: list[list[str]]) -> None:
    launches = tier.run([cmd_shim_command_line([tier.shim, *args]) for args in batch])
    for launch, args in zip(launches, batch, strict=True):
        _check(tier, launch, args, curated=False)
