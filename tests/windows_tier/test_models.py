"""The project's parser models against the real parsers (WIN-TIER-MODEL-001).

``tests/guards/winsplit.py`` is written from Microsoft's documented rules; the guards'
proofs rest on it. Here arbitrary command lines (not only ones the project's quoting
builds) are started for real and the models must split each exactly as ucrtbase
(``split_ucrt``) and ``CommandLineToArgvW`` (``split_shell32``) did.
"""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.guards import winsplit
from tests.windows_tier.tier import Launch, WindowsTier

#: Tails that exercise every branch of the documented rules (Microsoft Learn's table,
#: runs of backslashes before quotes, ``""`` inside and outside quotes, tabs).
CURATED_TAILS = [
    '"a b c" d e',
    '"ab\\"c" "\\\\" d',
    'a\\\\\\b d"e f"g h',
    'a\\\\\\"b c d',
    'a\\\\\\\\"b c" d e',
    'a"b"" c d',
    '"a""b" c',
    '"a"""b" c',
    '""""""',
    '"""" x',
    'x"" y',
    "\t\tlead\ttab ",
    '\\"\\\\"\\\\\\"',
    '"unterminated \\',
    "trail\\\\",
    "",
]


def _compare(launch: Launch) -> None:
    assert launch.exit_code == 0, f"{launch.command_line!r}: {launch!r}"
    (dump,) = launch.dumps
    line = launch.command_line
    assert dump.ucrt is not None and dump.shell32 is not None
    assert winsplit.split_ucrt(line) == list(dump.ucrt), (
        f"split_ucrt({line!r}) = {winsplit.split_ucrt(line)!r}; ucrtbase read {dump.ucrt!r}"
    )
    assert winsplit.split_shell32(line) == list(dump.shell32), (
        f"split_shell32({line!r}) = {winsplit.split_shell32(line)!r}; "
        f"CommandLineToArgvW read {dump.shell32!r}"
    )


@pytest.mark.rule("WIN-TIER-MODEL-001")
def test_models_split_curated_lines_as_the_real_parsers(tier: WindowsTier) -> None:
    lines = [f'"{tier.argvdump}" {tail}'.rstrip(" ") for tail in CURATED_TAILS]
    lines.append(f'"{tier.argvdump}"')
    for launch in tier.run(lines):
        _compare(launch)


_tail = st.text(alphabet=st.sampled_from(' \t"\\ab'), max_size=24)


@pytest.mark.rule("WIN-TIER-MODEL-001")
@settings(max_examples=6)
@given(tails=st.lists(_tail, min_size=40, max_size=40))
@example(tails=['a"b"" c d', '"a""b" c', 'x "" y', '\\\\"'] * 10)
def test_models_split_random_lines_as_the_real_parsers(tier: WindowsTier, tails: list[str]) -> None:
    for launch in tier.run([f'"{tier.argvdump}" {tail}' for tail in tails]):
        _compare(launch)
