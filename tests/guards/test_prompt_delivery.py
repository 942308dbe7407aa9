"""Prompt delivery (harness/host/prompt.py): stdin bytes, the stream-json line, the prompt file.

Rules: PROMPT-STDIN-001, PROMPT-STREAMJSON-001, PROMPT-STREAMJSON-002, PROMPT-FILE-001.
The expected stream-json line is written by hand from ref §2.1.8.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Sequence

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from harness.defs.types import (
    AgentDef,
    BuildOptions,
    PromptDelivery,
    PromptInputFormat,
    RuntimeContext,
)
from harness.events import Error, Event, Status, TextDelta, ToolResult, ToolUse, TurnEnd, Usage
from harness.host.prompt import (
    PROMPT_FILE_NAME,
    PromptFile,
    is_clean_terminal_turn,
    is_terminal_turn,
    keep_stdin_open,
    prepare_prompt_file,
    should_close_stdin,
    stdin_payload,
    stream_json_user_message,
    utf8_encode,
    utf8_len,
)


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    return ["-p"]


def make_def(delivery: PromptDelivery, fmt: PromptInputFormat = PromptInputFormat.TEXT) -> AgentDef:
    return AgentDef(
        id="fake",
        name="Fake CLI",
        bin="fake",
        build_args=_build_args,
        stream_format="plain",
        prompt_delivery=delivery,
        prompt_input_format=fmt,
    )


STREAM_JSON_DEF = make_def(PromptDelivery.STDIN, PromptInputFormat.STREAM_JSON)
TEXT_DEF = make_def(PromptDelivery.STDIN)
FILE_DEF = make_def(PromptDelivery.FILE)


# --- PROMPT-STREAMJSON-001 ----------------------------------------------------------------


@pytest.mark.rule("PROMPT-STREAMJSON-001")
def test_stream_json_line_is_the_documented_shape() -> None:
    expected = (
        b'{"type":"user","message":{"role":"user","content":'
        b'[{"type":"text","text":"Build a \\"landing\\" page\\nplease"}]}}\n'
    )
    assert stream_json_user_message('Build a "landing" page\nplease') == expected


@pytest.mark.rule("PROMPT-STREAMJSON-001")
def test_stream_json_keeps_non_ascii_literal() -> None:
    line = stream_json_user_message("héllo 中文 😀 \u2028")
    assert "héllo 中文 😀 \u2028".encode() in line
    assert b"\\u" not in line


def _text_of(line: bytes) -> str:
    """The prompt inside a user line, after checking every other field of the shape."""
    obj = json.loads(line)
    content = obj["message"]["content"]
    text = content[0]["text"]
    assert isinstance(text, str)
    expected = {"role": "user", "content": [{"type": "text", "text": text}]}
    assert obj == {"type": "user", "message": expected}
    return text


@pytest.mark.rule("PROMPT-STREAMJSON-001")
@given(st.text())
@example("line one\nline two\r\n")
@example("\u2028\u2029\u0085 separators")
@example("\"quotes\" and \\backslashes\\ and 'single'")
@example("")
def test_stream_json_line_round_trips(prompt: str) -> None:
    line = stream_json_user_message(prompt)
    assert line.endswith(b"\n")
    assert line.count(b"\n") == 1  # exactly one JSONL record
    assert _text_of(line) == prompt


@pytest.mark.rule("PROMPT-STREAMJSON-001")
@pytest.mark.parametrize("prompt", ["a\ud800b", "\udfff", "pair \ud83d\ude00 joined"])
def test_stream_json_escapes_lone_surrogates_like_json_stringify(prompt: str) -> None:
    line = stream_json_user_message(prompt)
    text = _text_of(line)
    if prompt == "pair \ud83d\ude00 joined":
        assert text == "pair 😀 joined"  # a surrogate pair is one character
        assert "😀".encode() in line
    else:
        assert text == prompt
        assert b"\\ud800" in line or b"\\udfff" in line


# --- PROMPT-STDIN-001 ---------------------------------------------------------------------


@pytest.mark.rule("PROMPT-STDIN-001")
def test_text_stdin_is_the_prompt_utf8() -> None:
    assert stdin_payload(TEXT_DEF, "héllo\nworld") == "héllo\nworld".encode()
    assert stdin_payload(TEXT_DEF, "") == b""


@pytest.mark.rule("PROMPT-STDIN-001")
def test_stream_json_stdin_is_the_user_line() -> None:
    assert stdin_payload(STREAM_JSON_DEF, "hi") == (
        b'{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}\n'
    )


@pytest.mark.rule("PROMPT-STDIN-001")
@pytest.mark.parametrize(
    "delivery", [PromptDelivery.FILE, PromptDelivery.ARGV, PromptDelivery.PROTOCOL]
)
@pytest.mark.parametrize("fmt", list(PromptInputFormat))
def test_non_stdin_delivery_writes_no_prompt(
    delivery: PromptDelivery, fmt: PromptInputFormat
) -> None:
    assert stdin_payload(make_def(delivery, fmt), "hello") is None


@pytest.mark.rule("PROMPT-STDIN-001")
@given(st.text())
def test_text_stdin_never_raises_and_decodes_back(prompt: str) -> None:
    payload = stdin_payload(TEXT_DEF, prompt)
    assert payload is not None
    assert payload.decode("utf-8") == prompt
    assert utf8_len(prompt) == len(payload)


@pytest.mark.rule("PROMPT-STDIN-001")
def test_lone_surrogates_become_replacement_characters() -> None:
    assert utf8_encode("a\ud800b") == "a\ufffdb".encode()
    assert utf8_encode("\ud83d\ude00") == "😀".encode()  # a pair is joined first
    assert utf8_len("\ud800") == 3


# --- PROMPT-STREAMJSON-002 ----------------------------------------------------------------


@pytest.mark.rule("PROMPT-STREAMJSON-002")
def test_only_stream_json_stdin_is_held_open() -> None:
    assert keep_stdin_open(STREAM_JSON_DEF) is True
    assert keep_stdin_open(TEXT_DEF) is False
    assert keep_stdin_open(make_def(PromptDelivery.FILE, PromptInputFormat.STREAM_JSON)) is False
    assert keep_stdin_open(make_def(PromptDelivery.PROTOCOL)) is False


def _first_close(defn: AgentDef, events: list[Event]) -> int | None:
    for index, event in enumerate(events):
        if should_close_stdin(defn, event):
            return index
    return None


@pytest.mark.rule("PROMPT-STREAMJSON-002")
def test_stdin_stays_open_through_tool_use_stops() -> None:
    events: list[Event] = [
        Status(label="initializing"),
        TextDelta(delta="Let me look."),
        ToolUse(id="t1", name="Read", input={"path": "a"}),
        TurnEnd(stop_reason="tool_use"),
        Usage(stop_reason="tool_use", usage={"input_tokens": 3}),
        ToolResult(tool_use_id="t1", content="ok"),
        Error(message="transient"),
        TextDelta(delta="Done."),
        TurnEnd(stop_reason="end_turn"),
        Usage(stop_reason="end_turn"),
    ]
    assert _first_close(STREAM_JSON_DEF, events) == 8
    assert _first_close(TEXT_DEF, events) is None


@pytest.mark.rule("PROMPT-STREAMJSON-002")
@pytest.mark.parametrize(
    ("event", "terminal", "clean"),
    [
        (TurnEnd(stop_reason="end_turn"), True, True),
        (TurnEnd(stop_reason="max_tokens"), True, True),
        (TurnEnd(stop_reason="tool_use"), False, False),
        (Usage(stop_reason="end_turn"), True, True),
        (Usage(), True, True),  # no stop reason: terminal (stopReason !== 'tool_use')
        (Usage(stop_reason="tool_use"), False, False),
        (Usage(stop_reason="end_turn", is_error=True), True, False),
        (Usage(stop_reason="end_turn", is_error=False), True, True),
        (Usage(stop_reason="tool_use", is_error=True), False, False),
        (TextDelta(delta="end_turn"), False, False),
        (Status(label="done"), False, False),
        (Error(message="boom", terminal=True), False, False),
    ],
)
def test_terminal_and_clean_turns(event: Event, terminal: bool, clean: bool) -> None:
    assert is_terminal_turn(event) is terminal
    assert is_clean_terminal_turn(event) is clean
    # ref §2.1.8: an errored terminal turn still closes stdin (only "clean" differs).
    assert should_close_stdin(STREAM_JSON_DEF, event) is terminal


# --- PROMPT-FILE-001 ----------------------------------------------------------------------


def _mode(path: str) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.rule("PROMPT-FILE-001")
@pytest.mark.posix
@pytest.mark.parametrize("umask", [0o000, 0o022, 0o027, 0o077])
def test_prompt_file_is_private_and_removed(tmp_path: os.PathLike[str], umask: int) -> None:
    prompt = "héllo\n## user\n😀"
    old = os.umask(umask)
    try:
        with PromptFile(prompt, parent=os.fspath(tmp_path)) as path:
            assert os.path.basename(path) == PROMPT_FILE_NAME
            directory = os.path.dirname(path)
            assert os.path.dirname(directory) == os.fspath(tmp_path)
            assert _mode(path) == 0o600
            assert _mode(directory) & 0o077 == 0  # private to the owner
            with open(path, "rb") as handle:
                assert handle.read() == prompt.encode()
    finally:
        os.umask(old)
    assert not os.path.exists(path)
    assert not os.path.exists(directory)
    assert os.listdir(tmp_path) == []


@pytest.mark.rule("PROMPT-FILE-001")
def test_prompt_file_is_removed_when_the_body_raises(tmp_path: os.PathLike[str]) -> None:
    holder = PromptFile("boom", parent=os.fspath(tmp_path))
    seen: list[str] = []
    with pytest.raises(RuntimeError, match="spawn failed"), holder as path:
        seen.append(path)
        assert os.path.exists(path)
        raise RuntimeError("spawn failed")
    assert seen and not os.path.exists(seen[0])
    assert os.listdir(tmp_path) == []
    assert holder.path is None


@pytest.mark.rule("PROMPT-FILE-001")
def test_prompt_file_removed_even_if_the_body_deleted_it(tmp_path: os.PathLike[str]) -> None:
    with PromptFile("x", parent=os.fspath(tmp_path)) as path:
        os.remove(path)
    assert os.listdir(tmp_path) == []


@pytest.mark.rule("PROMPT-FILE-001")
def test_prompt_file_is_single_use(tmp_path: os.PathLike[str]) -> None:
    holder = PromptFile("x", parent=os.fspath(tmp_path))
    assert holder.path is None
    with holder as path:
        assert holder.path == path
    with pytest.raises(RuntimeError, match="single-use"), holder:
        pass


@pytest.mark.rule("PROMPT-FILE-001")
def test_prepare_prompt_file_only_for_file_delivery(tmp_path: os.PathLike[str]) -> None:
    for delivery in (PromptDelivery.STDIN, PromptDelivery.ARGV, PromptDelivery.PROTOCOL):
        assert prepare_prompt_file(make_def(delivery), "x", parent=os.fspath(tmp_path)) is None
    prepared = prepare_prompt_file(FILE_DEF, "the prompt", parent=os.fspath(tmp_path))
    assert isinstance(prepared, PromptFile)
    assert os.listdir(tmp_path) == []  # nothing is written before the ``with``
    with prepared as path, open(path, encoding="utf-8") as handle:
        assert handle.read() == "the prompt"
    assert os.listdir(tmp_path) == []


@pytest.mark.rule("PROMPT-FILE-001")
def test_two_prompt_files_do_not_collide(tmp_path: os.PathLike[str]) -> None:
    with (
        PromptFile("a", parent=os.fspath(tmp_path)) as first,
        PromptFile("b", parent=os.fspath(tmp_path)) as second,
    ):
        assert first != second
        with open(first, encoding="utf-8") as a, open(second, encoding="utf-8") as b:
            assert (a.read(), b.read()) == ("a", "b")
    assert os.listdir(tmp_path) == []
