"""harness.inputs: UTF-8 text and bounded JSON depth, with the place of the problem."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.errors import BadInputError, HarnessError
from harness.inputs import (
    MAX_JSON_DEPTH,
    check_argv,
    check_json_depth,
    decode_utf8,
    read_text_file,
)


def _nested(depth: int) -> object:
    value: object = 1
    for level in range(depth):
        value = [value] if level % 2 else {"k": value}
    return value


@pytest.mark.rule("CLIERR-JSON-DEPTH-001")
def test_depth_up_to_the_limit_passes_and_one_more_names_the_bracket() -> None:
    check_json_depth(json.dumps(_nested(MAX_JSON_DEPTH)), "ok.json")
    text = "\n" + json.dumps(_nested(MAX_JSON_DEPTH + 1), indent=0)
    with pytest.raises(BadInputError) as caught:
        check_json_depth(text, "deep.json")
    error = caught.value
    assert isinstance(error, HarnessError) and error.rule == "CLIERR-JSON-DEPTH-001"
    assert error.source == "deep.json" and error.line is not None and error.column is not None
    line = text.splitlines()[error.line - 1]
    assert line[error.column - 1] in "[{"
    assert str(error).startswith(f"[CLIERR-JSON-DEPTH-001] deep.json:{error.line}:")


@pytest.mark.rule("CLIERR-JSON-DEPTH-001")
def test_brackets_inside_strings_do_not_count() -> None:
    check_json_depth(json.dumps(["[" * 1000, "{\\"]), "strings.json")
    with pytest.raises(BadInputError):
        check_json_depth("[" * 100_000, "brackets.json")


@pytest.mark.rule("CLIERR-JSON-DEPTH-001")
@given(st.text(alphabet='[]{}"\\ ,:1a\n', max_size=400))
def test_any_text_passes_or_is_refused_at_a_bracket(text: str) -> None:
    try:
        check_json_depth(text, "any.json", limit=4)
    except BadInputError as exc:
        assert exc.line is not None and exc.column is not None
        assert text.splitlines()[exc.line - 1][exc.column - 1] in "[{"


@pytest.mark.rule("CLIERR-UTF8-001")
@given(st.binary(max_size=200))
def test_decode_is_utf8_or_names_the_first_bad_byte(data: bytes) -> None:
    try:
        expected = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        with pytest.raises(BadInputError) as caught:
            decode_utf8(data, "f.txt")
        good = data[: exc.start].decode("utf-8")
        assert caught.value.line == good.count("\n") + 1
        assert caught.value.column == len(good.rsplit("\n", 1)[-1]) + 1
        assert f"byte 0x{data[exc.start]:02x}" in caught.value.problem
    else:
        assert decode_utf8(data, "f.txt") == expected


@pytest.mark.rule("CLIERR-UTF8-001")
def test_read_text_file_names_the_label_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "p.txt"
    path.write_bytes(b"first\nab\xe9c\n")
    with pytest.raises(BadInputError, match=r"^\[CLIERR-UTF8-001\] --prompt-file p:2:3: "):
        read_text_file(path, label="--prompt-file p")
    with pytest.raises(BadInputError, match="cannot read"):
        read_text_file(tmp_path / "missing.txt")


@pytest.mark.rule("CLIERR-UTF8-001")
def test_argv_names_the_argument_and_its_option() -> None:
    check_argv(["argv", "claude", "--prompt", "snowman \u2603"])
    bad = b"hi\xff".decode("utf-8", "surrogateescape")
    with pytest.raises(BadInputError) as caught:
        check_argv(["argv", "claude", "--prompt", bad])
    assert str(caught.value).startswith(
        "[CLIERR-UTF8-001] argument 4 (the value of --prompt): 'hi\\xff' is not UTF-8"
    )
    with pytest.raises(BadInputError, match=r"argument 1: '\\ud800'"):
        check_argv(["\ud800"])
