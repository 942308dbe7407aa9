"""The tier's own plumbing, on every OS: hex transport and the launcher's output format."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.windows_tier.tier import (
    TierOutputError,
    decode_units,
    encode_units,
    parse_launcher_output,
)


@given(st.text(alphabet=st.characters(codec="utf-16")))
def test_hex_transport_round_trips_every_utf16_string(text: str) -> None:
    digits = encode_units(text)
    assert len(digits) == 4 * len(text.encode("utf-16-be", "surrogatepass")) // 2
    assert decode_units(digits) == text


def test_hex_is_most_significant_digit_first() -> None:
    assert encode_units("A\u00e9😀") == "004100e9d83dde00"


@pytest.mark.parametrize("bad", ["004", "zz41", "00410"])
def test_malformed_hex_is_a_typed_error(bad: str) -> None:
    with pytest.raises(TierOutputError):
        decode_units(bad)


def test_launches_get_their_dumps_and_other_output_in_order() -> None:
    text = (
        'argvdump {"cmdline":"0061","crt":["0061"],"ucrt":["0061"],"shell32":["0061"]}\n'
        "@@launch 0 exit=0\n"
        "The system cannot find the path specified.\n"
        "@@launch 1 exit=1\n"
        "@@launch 2 error=2\n"
    )
    first, second, third = parse_launcher_output(text, ["a", "b", "c"])
    assert (first.exit_code, first.dumps[0].crt, first.dumps[0].ucrt) == (0, ("a",), ("a",))
    assert (second.exit_code, second.dumps, second.output) == (
        1,
        (),
        ("The system cannot find the path specified.",),
    )
    assert (third.exit_code, third.error, third.command_line) == (None, 2, "c")


def test_a_missing_ucrt_report_is_none_not_empty() -> None:
    (launch,) = parse_launcher_output('argvdump {"cmdline":"","crt":[]}\n@@launch 0 exit=0\n', [""])
    assert launch.dumps[0].ucrt is None and launch.dumps[0].shell32 is None


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("@@launch 0 exit=0\n", "1 of 2 launches"),
        ("@@launch 1 exit=0\n@@launch 0 exit=0\n", "marker of launch 0"),
        ("@@launch 0 done\n@@launch 1 exit=0\n", "bad launch outcome"),
        ("argvdump {nope\n@@launch 0 exit=0\n@@launch 1 exit=0\n", "does not parse"),
        ('argvdump {"crt":[]}\n@@launch 0 exit=0\n@@launch 1 exit=0\n', "no cmdline"),
        ('argvdump {"cmdline":"","crt":[1]}\n', "list of hex strings"),
    ],
)
def test_malformed_launcher_output_names_the_line(text: str, fragment: str) -> None:
    with pytest.raises(TierOutputError, match=fragment):
        parse_launcher_output(text, ["a", "b"])
