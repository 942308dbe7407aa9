"""Direct launches through a real CreateProcess (WIN-TIER-EXE-001).

For ``[exe, *args]`` the runner builds ``direct_exe_command_line`` and the guard
``direct_exe_argument_loss`` decides whether to refuse it. Here every line the guard lets
through is started for real, and the program must receive each argument byte for byte
through all three parsers a Windows program may use: its C runtime (msvcrt), ucrtbase, and
``CommandLineToArgvW``. The same lines are read by the project's Python models
(``tests/guards/winsplit.py``), which must agree with what arrived.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.guards.windows_cmdline import direct_exe_argument_loss, direct_exe_command_line
from tests.guards import winsplit
from tests.windows_tier.tier import Launch, WindowsTier

#: Arguments that matter to one of the parsers (the cases the quoting must carry).
CURATED: list[list[str]] = [
    ["plain"],
    ["two words", "tab\there"],
    [""],
    ["", "", "x"],
    ['say "hi"'],
    ['"'],
    ['""'],
    ['\\"'],
    ["trailing\\"],
    ["trailing space\\"],
    ["many\\\\\\"],
    ['back\\\\"slash'],
    ["C:\\tmp\\", "--yolo"],
    ["C:\\Program Files\\x\\"],
    ["%HARNESS_TIER_SECRET%", "%PATH%", "100%"],
    ["^", "a^b", "^^"],
    ["a&b", "a|b", "a<b", "a>b", "&", "|"],
    ["line1\nline2", "\r\n", "cr\rhere"],
    ["é ü ß", "日本語", "😀", "\u00a0nbsp", "\u2028"],
    ["!x!", "(a)", "a,b;c=d", "--flag=value", "it's"],
    ['say "hi" & echo %PATH% ^| more > out.txt'],
    [" leading", "trailing ", "  "],
]


def _check(launch: Launch, argv: list[str]) -> None:
    assert launch.exit_code == 0, (
        f"{launch.command_line!r} did not start cleanly: exit {launch.exit_code!r}, "
        f"error {launch.error!r}, output {launch.output!r}"
    )
    assert len(launch.dumps) == 1, f"expected one argvdump line, got {launch.dumps!r}"
    dump = launch.dumps[0]
    assert dump.cmdline == launch.command_line, (
        f"CreateProcess changed the command line: {dump.cmdline!r}"
    )
    for name, got in (("msvcrt", dump.crt), ("ucrtbase", dump.ucrt), ("shell32", dump.shell32)):
        assert got is not None, f"{name} did not report"
        assert list(got) == argv, f"{name} read {list(got)!r} from {launch.command_line!r}"
    # The project's models read the same line the same way.
    assert winsplit.split_ucrt(launch.command_line) == argv
    assert winsplit.split_shell32(launch.command_line) == argv


@pytest.mark.rule("WIN-TIER-EXE-001")
def test_curated_arguments_arrive_byte_for_byte(tier: WindowsTier) -> None:
    argvs = [[tier.argvdump, *args] for args in CURATED]
    for argv in argvs:
        assert direct_exe_argument_loss(argv) is None, f"the guard refused {argv!r}"
    launches = tier.run([direct_exe_command_line(argv) for argv in argvs])
    for launch, argv in zip(launches, argvs, strict=True):
        _check(launch, argv)


_argument = st.text(
    alphabet=st.one_of(
        st.sampled_from(' \t\n\r"\\%^&|<>!,;=()é😀\u00a0'),
        st.characters(codec="utf-16", exclude_characters="\x00"),
    ),
    max_size=16,
)


@pytest.mark.rule("WIN-TIER-EXE-001")
@settings(max_examples=6)
@given(batch=st.lists(st.lists(_argument, max_size=5), min_size=25, max_size=25))
def test_random_arguments_arrive_byte_for_byte(tier: WindowsTier, batch: list[list[str]]) -> None:
    argvs = [[tier.argvdump, *args] for args in batch]
    launches = tier.run([direct_exe_command_line(argv) for argv in argvs])
    for launch, argv in zip(launches, argvs, strict=True):
        assert direct_exe_argument_loss(argv) is None
        _check(launch, argv)


@pytest.mark.rule("WIN-TIER-EXE-001")
def test_the_program_path_with_a_space_is_found_and_read_back(tier: WindowsTier) -> None:
    assert " " in tier.argvdump, f"the tier's directory should hold a space: {tier.argvdump!r}"
    (launch,) = tier.run([direct_exe_command_line([tier.argvdump])])
    _check(launch, [tier.argvdump])
