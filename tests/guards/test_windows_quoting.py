"""Windows quoting and command-line builders (harness/guards/windows_cmdline.py).

Rules: BUDGET-CMDSHIM-002 (shim quoting: ``"`` doubled, ``%`` escaped, specials quoted),
BUDGET-DIRECTEXE-002 (libuv quoting round-trips through the C runtime and
CommandLineToArgvW). Expected strings are written by hand from ref §4.2 / §4.3; the
splitters in ``tests/guards/winsplit.py`` are written from the documented parse rules and
have their own tests here (Microsoft Learn's example table, jeb/dbenham's examples).

What the shim round-trip proves, and what it does not: see ``_shim_lossless`` and the
``test_upstream_shim_quoting_*`` characterization tests at the end.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.guards.windows_cmdline import (
    CMD_SHIM_PREFIX,
    SAFE_COMMAND_LINE_LIMIT,
    SAFE_MARGIN,
    WINDOWS_COMMAND_LINE_LIMIT,
    cmd_shim_command_line,
    cmd_shim_inner,
    direct_exe_command_line,
    is_cmd_shim,
    looks_like_windows_path,
    quote_for_windows_cmd_shim,
    quote_for_windows_direct_exe,
    utf16_len,
)
from tests.guards import winsplit
from tests.guards.winsplit import CmdModelError, CmdSplitError

# --- strategies ------------------------------------------------------------------------

#: Characters that matter to one of the parsers, plus ordinary and non-BMP text.
_SPECIAL = ' \t"\\%^&|<>!,;=()\u00a0\u2028\u00ff\x0b\x0cé😀'
_interesting_text = st.text(
    alphabet=st.one_of(st.sampled_from(_SPECIAL), st.characters(codec="utf-8")),
    max_size=24,
).filter(lambda s: "\x00" not in s)

_segment = st.text(alphabet=st.sampled_from("abcXYZ019_-. "), min_size=1, max_size=10).filter(
    lambda s: s.strip(" ") != "" and not s.endswith(" ") and not s.startswith(" ")
)


@st.composite
def _windows_program(draw: st.DrawFn, suffix: str) -> str:
    """A plausible resolved binary: ``C:\\seg\\…\\name<suffix>`` (no quotes, no trailing ``\\``)."""
    drive = draw(st.sampled_from("CDz"))
    parts = draw(st.lists(_segment, min_size=1, max_size=3))
    return f"{drive}:\\" + "\\".join(parts) + suffix


def _reference_libuv_quote(value: str) -> str:
    """ref §4.3 pseudo-code, transcribed literally (a character loop)."""
    if value == "":
        return '""'
    if (
        not re.search(r'[\s"]', value, flags=re.ASCII)
        and not any(
            ch in value for ch in "\x0b\x0c\u00a0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff"
        )
        and not any("\u2000" <= ch <= "\u200a" for ch in value)
    ):
        return value
    if "\\" not in value and '"' not in value:
        return '"' + value + '"'
    out = '"'
    backslashes = 0
    for ch in value:
        if ch == "\\":
            backslashes += 1
        elif ch == '"':
            out += "\\" * (2 * backslashes + 1) + '"'
            backslashes = 0
        else:
            out += "\\" * backslashes + ch
            backslashes = 0
    return out + "\\" * (2 * backslashes) + '"'


# --- constants and predicates ------------------------------------------------------------


@pytest.mark.rule("BUDGET-CMDSHIM-001", "BUDGET-DIRECTEXE-001")
def test_limits_are_the_createprocess_cap_minus_the_margin() -> None:
    assert WINDOWS_COMMAND_LINE_LIMIT == 32_767
    assert SAFE_MARGIN == 256
    assert SAFE_COMMAND_LINE_LIMIT == 32_511
    assert CMD_SHIM_PREFIX == "cmd.exe /d /s /c "
    assert len(CMD_SHIM_PREFIX) == 17


@pytest.mark.rule("BUDGET-CMDSHIM-001", "BUDGET-DIRECTEXE-001")
@pytest.mark.parametrize(
    ("text", "units"),
    [("", 0), ("abc", 3), ("é", 1), ("😀", 2), ("a😀b", 4), ("\ud800", 1), ("\u2028", 1)],
)
def test_utf16_len_counts_code_units(text: str, units: int) -> None:
    assert utf16_len(text) == units


@pytest.mark.rule("BUDGET-EXCLUSIVE-001")
@pytest.mark.parametrize(
    ("path", "shim"),
    [
        ("C:\\npm\\deepseek.cmd", True),
        ("C:\\npm\\deepseek.CMD", True),
        ("C:\\npm\\deepseek.Bat", True),
        ("deepseek.bat", True),
        ("C:\\npm\\deepseek.exe", False),
        ("C:\\npm\\deepseek.cmdx", False),
        ("C:\\npm\\deepseek.cmd\n", False),  # JavaScript ``$`` is end of input
        ("C:\\npm\\deepseekcmd", False),
        ("", False),
        (None, False),
    ],
)
def test_is_cmd_shim(path: str | None, shim: bool) -> None:
    assert is_cmd_shim(path) is shim


@pytest.mark.rule("BUDGET-EXCLUSIVE-001")
@pytest.mark.parametrize(
    ("path", "windows"),
    [
        ("C:\\tools\\deepseek.exe", True),
        ("c:/tools/deepseek.exe", True),
        ("Z:\\x", True),
        ("\\\\server\\share\\deepseek.exe", True),
        ("C:deepseek.exe", False),
        ("tools\\deepseek.exe", False),
        ("/usr/local/bin/deepseek", False),
        ("\\single\\deepseek.exe", False),
        ("1:\\x", False),
        ("", False),
        (None, False),
    ],
)
def test_looks_like_windows_path(path: str | None, windows: bool) -> None:
    assert looks_like_windows_path(path) is windows


# --- the shim quoting (ref §4.2) ---------------------------------------------------------


@pytest.mark.rule("BUDGET-CMDSHIM-002")
@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("plain", "plain"),
        ("C:\\npm\\deepseek.cmd", "C:\\npm\\deepseek.cmd"),
        ("", ""),
        ("a b", '"a b"'),
        ("a\tb", '"a\tb"'),
        ("line\nbreak", '"line\nbreak"'),
        ("nb\u00a0sp", '"nb\u00a0sp"'),
        ("a&b", '"a&b"'),
        ("a|b", '"a|b"'),
        ("a<b>c", '"a<b>c"'),
        ("a^b", '"a^b"'),
        ('say "hi"', '"say ""hi"""'),
        ("%PATH%", '""^%"PATH"^%""'),  # ref §4.2, verbatim
        ("100%", '"100"^%""'),
        ('"%"', '""""^%""""'),  # quotes doubled first, then % escaped
        ("a,b;c=d", "a,b;c=d"),
        ("\x1c", "\x1c"),  # not whitespace to JavaScript's \s
    ],
)
def test_quote_for_windows_cmd_shim(value: str, quoted: str) -> None:
    assert quote_for_windows_cmd_shim(value) == quoted


@pytest.mark.rule("BUDGET-CMDSHIM-001")
def test_cmd_shim_command_line_shape() -> None:
    argv = ["C:\\Program Files\\nodejs\\deepseek.cmd", "exec", "--auto", 'say "hi" 100%']
    inner = '"C:\\Program Files\\nodejs\\deepseek.cmd" exec --auto "say ""hi"" 100"^%""'
    assert cmd_shim_inner(argv) == inner
    assert cmd_shim_command_line(argv) == 'cmd.exe /d /s /c "' + inner + '"'
    assert utf16_len(cmd_shim_command_line(argv)) == 17 + len(inner) + 2


# --- the direct-exe quoting (ref §4.3) ----------------------------------------------------


@pytest.mark.rule("BUDGET-DIRECTEXE-001", "BUDGET-DIRECTEXE-002")
@pytest.mark.parametrize(
    ("value", "quoted"),
    [
        ("", '""'),
        ("plain", "plain"),
        ("a\\b", "a\\b"),
        ("a%b&c^d", "a%b&c^d"),
        ("a b", '"a b"'),
        ("a\nb", '"a\nb"'),
        ('a"b', '"a\\"b"'),
        ('"', '"\\""'),
        ('a\\"b', '"a\\\\\\"b"'),
        ("C:\\dir with space\\", '"C:\\dir with space\\\\"'),
        ("C:\\Program Files\\x.exe", '"C:\\Program Files\\x.exe"'),
        ('x \\\\"', '"x \\\\\\\\\\""'),
    ],
)
def test_quote_for_windows_direct_exe(value: str, quoted: str) -> None:
    assert quote_for_windows_direct_exe(value) == quoted


@pytest.mark.rule("BUDGET-DIRECTEXE-001")
@given(_interesting_text)
@example("\\" * 5 + '"' + "\\" * 3)
@example("\u2000\u200a\u3000\ufeff")
def test_direct_exe_quoting_equals_the_reference_pseudo_code(value: str) -> None:
    assert quote_for_windows_direct_exe(value) == _reference_libuv_quote(value)


@pytest.mark.rule("BUDGET-DIRECTEXE-001")
def test_direct_exe_command_line_shape() -> None:
    argv = ["C:\\tools\\deepseek.exe", "exec", "--auto", 'say "hi"']
    assert direct_exe_command_line(argv) == 'C:\\tools\\deepseek.exe exec --auto "say \\"hi\\""'


# --- the splitters themselves (documented examples) ----------------------------------------

# Microsoft Learn, "Parsing C++ command-line arguments", results table.
_MS_TABLE = [
    ('"a b c" d e', ["a b c", "d", "e"], ["a b c", "d", "e"]),
    ('"ab\\"c" "\\\\" d', ['ab"c', "\\", "d"], ['ab"c', "\\", "d"]),
    ('a\\\\\\b d"e f"g h', ["a\\\\\\b", "de fg", "h"], ["a\\\\\\b", "de fg", "h"]),
    ('a\\\\\\"b c d', ['a\\"b', "c", "d"], ['a\\"b', "c", "d"]),
    ('a\\\\\\\\"b c" d e', ["a\\\\b c", "d", "e"], ["a\\\\b c", "d", "e"]),
    # The row where the two generations differ: "" inside quotes.
    ('a"b"" c d', ['ab" c d'], ['ab"', "c", "d"]),
]


@pytest.mark.parametrize(("tail", "ucrt", "shell32"), _MS_TABLE)
def test_splitters_follow_the_documented_table(
    tail: str, ucrt: list[str], shell32: list[str]
) -> None:
    assert winsplit.split("prog " + tail) == ["prog", *ucrt]
    assert winsplit.split("prog " + tail, "shell32") == ["prog", *shell32]


def test_splitters_program_name_rule() -> None:
    line = '"C:\\Program Files\\x\\" a'
    # Program name: no backslash escapes; the quote after the backslash closes it.
    assert winsplit.split(line) == ["C:\\Program Files\\x\\", "a"]
    assert winsplit.split(line, "shell32") == ["C:\\Program Files\\x\\", "a"]
    assert winsplit.split("prog") == ["prog"]
    assert winsplit.split("prog   ") == ["prog"]
    assert winsplit.split('prog ""') == ["prog", ""]
    assert winsplit.split('prog ""', "shell32") == ["prog", ""]
    with pytest.raises(ValueError, match="unknown parser"):
        winsplit.split("prog", "bash")


def test_cmd_percent_expansion_follows_the_documented_examples() -> None:
    # jeb/dbenham: on the command line, ``set b=a`` then ``echo %a %b% c%`` -> ``%a a c%``,
    # and with a variable named "a " set to b -> ``bb% c%``.
    assert winsplit.cmd_percent_expand("%a %b% c%", {"b": "a"}) == "%a a c%"
    assert winsplit.cmd_percent_expand("%a %b% c%", {"a ": "b"}) == "bb% c%"
    assert winsplit.cmd_percent_expand("%path%", {"PATH": "p"}) == "p"  # case-insensitive
    assert winsplit.cmd_percent_expand("%%x%%", {}) == "%%x%%"  # no %% escape on a command line
    assert winsplit.cmd_percent_expand("50% off", {}) == "50% off"
    assert winsplit.cmd_percent_expand("%cd%", {}) == "<dynamic CD>"
    with pytest.raises(CmdModelError):
        winsplit.cmd_percent_expand("%PATH:~0,3%", {"PATH": "p"})


def test_cmd_phase2_quotes_carets_and_operators() -> None:
    assert winsplit.cmd_phase2('a^&b "c^d" ^"e') == 'a&b "c^d" "e'
    assert winsplit.cmd_phase2('"a&b|c<d>e"') == '"a&b|c<d>e"'
    for op in "&|<>":
        with pytest.raises(CmdSplitError):
            winsplit.cmd_phase2(f'"x" y{op}z')
    with pytest.raises(CmdModelError):
        winsplit.cmd_phase2("x^")


def test_split_cmd_shim_strips_the_s_quotes_and_forwards_args() -> None:
    line = 'cmd.exe /d /s /c ""C:\\a b\\x.cmd" one "t w o""'
    assert winsplit.split_cmd_shim(line, {}) == ["C:\\a b\\x.cmd", "one", "t w o"]
    with pytest.raises(CmdModelError):
        winsplit.split_cmd_shim("cmd.exe /c x", {})
    with pytest.raises(CmdModelError):
        winsplit.split_cmd_shim("cmd.exe /d /s /c x", {})


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.rule("BUDGET-DIRECTEXE-002")
@pytest.mark.parametrize("parser", ["ucrt", "shell32"])
@given(
    program=_windows_program(".exe"),
    args=st.lists(st.text().filter(lambda s: "\x00" not in s), max_size=6),
)
@example(program="C:\\a b\\x.exe", args=["", '"', "\\", 'a\\"b', "c d\\", '""', " ", '\\\\"'])
def test_direct_exe_command_line_round_trips(parser: str, program: str, args: list[str]) -> None:
    argv = [program, *args]
    assert winsplit.split(direct_exe_command_line(argv), parser) == argv


@pytest.mark.rule("BUDGET-DIRECTEXE-002")
@pytest.mark.parametrize("parser", ["ucrt", "shell32"])
@given(program=_windows_program(".exe"), args=st.lists(_interesting_text, max_size=6))
def test_direct_exe_round_trips_special_heavy_args(
    parser: str, program: str, args: list[str]
) -> None:
    argv = [program, *args]
    assert winsplit.split(direct_exe_command_line(argv), parser) == argv


_ENV = {"PATH": "C:\\Windows", "SECRET": "sk-test-0000", "A": "expanded-a", "X Y": "xy"}


def _shim_lossless(arg: str, *, first: bool) -> bool:
    """The domain on which the upstream shim quoting round-trips (see the tests below).

    Excluded: CR/LF (cmd.exe removes CR and ends the line at LF); the empty string
    (unquoted, it vanishes); backslashes right before ``"`` or ``%`` (both become a quote
    after quoting, and the C runtime reads ``\\"`` as an escaped quote) or at the end of a
    quoted value (same reason, before the closing quote); and, for the first argument only,
    an unquoted leading ``,``/``;``/``=``/U+00FF (whether ``%*`` keeps such a leading
    delimiter is not documented; unproven).
    """
    if arg == "" or "\r" in arg or "\n" in arg or "\x00" in arg:
        return False
    if re.search(r'\\["%]', arg):
        return False
    quoted = quote_for_windows_cmd_shim(arg) != arg
    if quoted and arg.endswith("\\"):
        return False
    return not (first and not quoted and arg[0] in ",;=\u00ff")


@pytest.mark.rule("BUDGET-CMDSHIM-002")
@given(program=_windows_program(".cmd"), args=st.lists(_interesting_text, max_size=6))
@example(
    program="C:\\npm 1\\x.cmd",
    args=["%PATH%", "%SECRET%", '"%A%"', "%X Y%", "a&b", "^%", "%%", "100%", "|<>", "^", '"'],
)
@example(program="C:\\0.cmd", args=["", ";"])  # a dropped empty arg makes ";" the first
def test_cmd_shim_command_line_round_trips(program: str, args: list[str]) -> None:
    """cmd.exe /s /c, %-expansion, both caret/quote passes and the CRT give back argv."""
    kept: list[str] = []
    for arg in args:  # "first" is the first argument that is kept, not the first drawn
        if _shim_lossless(arg, first=not kept):
            kept.append(arg)
    argv = [program, *kept]
    assert winsplit.split_cmd_shim(cmd_shim_command_line(argv), _ENV) == argv


@pytest.mark.rule("BUDGET-CMDSHIM-002")
@pytest.mark.parametrize("name", ["SECRET", "secret", "PATH", "A", "X Y"])
def test_cmd_shim_never_expands_env_references(name: str) -> None:
    """seed 002 §6.3: a prompt naming %DEEPSEEK_API_KEY% must not print the key."""
    prompt = f"print %{name}% please and 50% of %{name}%"
    argv = ["C:\\npm\\deepseek.cmd", "exec", prompt]
    got = winsplit.split_cmd_shim(cmd_shim_command_line(argv), _ENV)
    assert got == argv
    assert not any(value in " ".join(got) for value in _ENV.values())


def test_the_model_does_expand_unescaped_references() -> None:
    """Control: without the % escape the model leaks the value (so the test above can fail)."""
    naive = 'cmd.exe /d /s /c "C:\\npm\\deepseek.cmd exec "print %SECRET%""'
    assert winsplit.split_cmd_shim(naive, _ENV)[-1] == "print sk-test-0000"
    with pytest.raises(CmdSplitError):
        winsplit.split_cmd_shim('cmd.exe /d /s /c "C:\\npm\\x.cmd a&b"', _ENV)


# --- characterization of what the upstream shim quoting cannot carry -----------------------


def _through_shim(arg: str) -> list[str]:
    argv = ["C:\\npm\\deepseek.cmd", arg]
    return winsplit.split_cmd_shim(cmd_shim_command_line(argv), _ENV)[1:]


def test_upstream_shim_quoting_loses_backslashes_before_quotes() -> None:
    # ref §4.2 doubles quotes but leaves backslashes alone; the C runtime then reads \" as
    # an escaped quote. The budget measures this quoting on purpose (it mirrors upstream).
    assert _through_shim('a\\"b') == ['a"b']
    assert _through_shim("dir with space\\") == ['dir with space"']
    assert _through_shim("50\\%") != ["50\\%"]


def test_upstream_shim_quoting_cannot_carry_empty_or_multiline_args() -> None:
    assert _through_shim("") == []
    assert _through_shim("one\ntwo") == ["one"]
    assert _through_shim("one\r\ntwo") == ["one"]
    assert _through_shim("a\rb") == ["ab"]
