"""The tier's own plumbing, on every OS: hex transport and the launcher's output format."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.windows_tier.tier import (
    Launch,
    TierOutputError,
    WindowsTier,
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


class _ScriptedTier(WindowsTier):
    """A tier whose launcher answers each batch from a script instead of running."""

    def __init__(self, tmp_path: Path, wine: str | None, outcomes: list[list[str]]) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        for name in ("argvdump.exe", "launch.exe"):
            (bin_dir / name).write_bytes(b"")
        super().__init__(tmp_path / "work", bin_dir, wine)
        self.outcomes = outcomes
        self.batches: list[list[str]] = []

    def _launch_all(self, command_lines: Sequence[str], timeout: float) -> list[Launch]:
        self.batches.append(list(command_lines))
        answers = self.outcomes[len(self.batches) - 1]
        text = "".join(f"@@launch {i} {answer}\n" for i, answer in enumerate(answers))
        return parse_launcher_output(text, command_lines)


def test_wine_internal_errors_are_launched_again_alone(tmp_path: Path) -> None:
    tier = _ScriptedTier(
        tmp_path, "wine", [["exit=0", "error=1359", "error=2"], ["error=1359"], ["exit=0"]]
    )
    launches = tier.run(["a", "b", "c"])
    assert [(x.command_line, x.exit_code, x.error) for x in launches] == [
        ("a", 0, None),
        ("b", 0, None),
        ("c", None, 2),
    ]
    assert tier.batches == [["a", "b", "c"], ["b"], ["b"]]


def test_a_persistent_internal_error_is_reported_after_the_last_try(tmp_path: Path) -> None:
    tier = _ScriptedTier(tmp_path, "wine", [["error=1359"]] * 3)
    (launch,) = tier.run(["a"])
    assert launch.error == 1359
    assert len(tier.batches) == 3


def test_on_windows_an_internal_error_is_an_answer(tmp_path: Path) -> None:
    tier = _ScriptedTier(tmp_path, None, [["error=1359"]])
    (launch,) = tier.run(["a"])
    assert launch.error == 1359
    assert len(tier.batches) == 1
