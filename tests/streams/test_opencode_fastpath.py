"""The opencode fast paths give exactly the events of the plain, spec-shaped paths.

Parser throughput: the opencode handler builds its events through the
slot-filling builders of ``harness.events`` (held to their constructors in
``tests/core/test_event_builders.py``) instead of the frozen dataclass
constructors, and decides ``tool_result`` (OPENCODE-ISERROR-001) with the
cheapest check first. These tests hold it to the plain definitions:

* the whole parser against a model written from ref §2.2 "opencode" (dedupe key
  ``${sessionID||'session'}:${callID}``, ``safeParseJson(input) ?? input``, the
  is_error rules, content = explicit error else output), on hypothesis streams of
  hand-built wire lines (wire §A.5 shapes) with repeated call ids;
* JavaScript number semantics: an integer literal beyond the double range is
  ``Infinity`` in ``JSON.parse``, so it is not a finite exit code, and it must not
  make the parser raise (JSONEV-ROBUST-001).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.events import Event, Raw, TextDelta, ToolResult, ToolUse
from harness.streams._jsonev import is_finite_number
from harness.streams.base import js_trim
from harness.streams.json_events import JsonEventStreamParser, create
from tests.helpers import as_json, assert_chunking_invariant, jsonl, run_chunked, run_whole
from tests.helpers import small_json_values as json_values
from tests.support.examples import fuzz_sized

# The smallest integer JSON.parse rounds to Infinity (halfway from the largest double
# to 2**1024; ties go to the even mantissa, which is 2**1024).
_JS_INFINITE_INT = 2**1024 - 2**970


def factory() -> JsonEventStreamParser:
    return create("opencode")


# -- JavaScript number semantics -------------------------------------------------------


@pytest.mark.rule("JSONEV-ROBUST-001", "OPENCODE-ISERROR-001")
@pytest.mark.parametrize(
    ("value", "finite"),
    [
        (0, True),
        (-7, True),
        (2.5, True),
        (10**300, True),
        (_JS_INFINITE_INT - 1, True),
        (-(_JS_INFINITE_INT - 1), True),
        (_JS_INFINITE_INT, False),
        (-_JS_INFINITE_INT, False),
        (10**400, False),
        (math.inf, False),
        (-math.inf, False),
        (math.nan, False),
        (True, False),
        (False, False),
        ("1", False),
        (None, False),
    ],
)
def test_is_finite_number_reads_integers_as_javascript_does(value: object, finite: bool) -> None:
    assert is_finite_number(value) is finite


@pytest.mark.rule("JSONEV-ROBUST-001", "OPENCODE-ISERROR-001")
@pytest.mark.parametrize("key", ["exit", "exitCode", "metadata"])
def test_opencode_huge_integer_exit_code_is_infinity_not_a_crash(key: str) -> None:
    # wire §A.5 tool part; 10**400 is written as a 401-digit integer literal.
    state: dict[str, Any] = {"status": "completed", "output": "ok"}
    if key == "metadata":
        state["metadata"] = {"exit": 10**400}
    else:
        state[key] = 10**400
    line = {
        "type": "tool_use",
        "sessionID": "ses_1",
        "part": {"tool": "bash", "callID": "call_1", "state": state},
    }
    events = as_json(assert_chunking_invariant(factory, jsonl(line)))
    # Number.isFinite(Infinity) is false: not a non-zero exit code (ref §2.2).
    assert events[1] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": "ok",
        "is_error": False,
    }
    state["exitCode"] = -3
    events = as_json(run_whole(factory, jsonl(line)))
    assert events[1]["is_error"] is True


# -- the parser against a model of ref §2.2 ---------------------------------------------

# ref §2.2 opencode: the PowerShell ErrorRecord patterns, as upstream writes them.
_PS_CATEGORY = re.compile(r"(?:^|\r?\n)\s*\+\s*CategoryInfo\s*:")
_PS_ERROR_ID = re.compile(r"(?:^|\r?\n)\s*\+\s*FullyQualifiedErrorId\s*:")
_PS_RECORD = (
    "Remove-Item : Cannot find path 'C:\\x' because it does not exist.\r\n"
    "    + CategoryInfo          : ObjectNotFound: (C:\\x:String) [Remove-Item]\r\n"
    "    + FullyQualifiedErrorId : PathNotFound,Microsoft.PowerShell.Commands.RemoveItemCommand"
)


def _js_finite_nonzero(value: object) -> bool:
    """``typeof v === 'number' && Number.isFinite(v) && v !== 0`` after ``JSON.parse``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        as_double = float(value)  # JSON.parse reads every number as a double
    except OverflowError:
        return False  # ... and an integer literal beyond its range as Infinity
    return math.isfinite(as_double) and as_double != 0


def _js_parse(text: str) -> Any:
    """``safeParseJson`` of a string: the parsed value, or None when JSON.parse throws."""

    def reject(name: str) -> Any:
        raise ValueError(name)

    try:
        return json.loads(text, parse_constant=reject)
    except ValueError:
        return None


def _content(value: Any) -> str:
    """``stringifyContent``: a string as is, null -> '', else compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def model(objects: list[dict[str, Any]]) -> list[Event]:
    """The events ref §2.2 "opencode" gives for text and tool_use lines (others -> raw)."""
    uses: set[str] = set()
    results: set[str] = set()
    out: list[Event] = []
    for obj in objects:
        kind = obj.get("type")
        part = obj.get("part")
        part = part if isinstance(part, dict) else {}
        if kind == "text":
            text = part.get("text")
            if isinstance(text, str) and text:
                out.append(TextDelta(delta=text))
            else:
                out.append(Raw(line=json.dumps(obj, ensure_ascii=False)))
            continue
        tool, call_id = part.get("tool"), part.get("callID")
        if kind != "tool_use" or not isinstance(tool, str) or not isinstance(call_id, str):
            out.append(Raw(line=json.dumps(obj, ensure_ascii=False)))
            continue
        session = obj.get("sessionID")
        key = f"{session if isinstance(session, str) and session else 'session'}:{call_id}"
        state = part.get("state")
        state = state if isinstance(state, dict) else None
        if key not in uses:
            uses.add(key)
            raw_input = None if state is None else state.get("input")
            parsed = _js_parse(raw_input) if isinstance(raw_input, str) else None
            if isinstance(raw_input, (dict, list)):
                parsed = raw_input
            out.append(
                ToolUse(id=call_id, name=tool, input=raw_input if parsed is None else parsed)
            )
        if state is None or key in results:
            continue
        status = state.get("status")
        status = status.lower() if isinstance(status, str) else ""
        if status not in ("completed", "error", "failed"):
            continue
        results.add(key)
        error = state.get("error")
        explicit = (
            error
            if (isinstance(error, str) and js_trim(error)) or (isinstance(error, dict) and error)
            else None
        )
        metadata = state.get("metadata")
        codes = [
            state.get("exit"),
            state.get("exitCode"),
            metadata.get("exit") if isinstance(metadata, dict) else None,
        ]
        output = state.get("output")
        powershell = (
            tool.lower() in ("bash", "shell")
            and isinstance(output, str)
            and bool(_PS_CATEGORY.search(output))
            and bool(_PS_ERROR_ID.search(output))
        )
        is_error = (
            status in ("error", "failed")
            or explicit is not None
            or any(_js_finite_nonzero(code) for code in codes)
            or powershell
        )
        content = _content(explicit if explicit is not None else output)
        out.append(ToolResult(tool_use_id=call_id, content=content, is_error=is_error))
    return out


_ABSENT = object()
_EXIT_CODES: tuple[Any, ...] = (
    None,
    0,
    0.0,
    -0.0,
    1,
    -1,
    2.5,
    True,
    False,
    "1",
    10**400,
    -(10**400),
    2**1023,
    {},
)


def _maybe(draw: st.DrawFn, strategy: st.SearchStrategy[Any]) -> Any:
    """A drawn value, or ``_ABSENT`` (the key is left out) one time in five."""
    return _ABSENT if draw(st.integers(0, 4)) == 0 else draw(strategy)


@st.composite
def tool_states(draw: st.DrawFn) -> Any:
    """A tool part's ``state`` (wire §A.5), every field optional, mostly a terminal status."""
    statuses = ["completed", "Completed", "COMPLETED", "error", "Failed", "failed"]
    fields: dict[str, st.SearchStrategy[Any]] = {
        "status": st.sampled_from([*statuses, "running", "pending", "", None, 0, 1]),
        "input": st.sampled_from(
            [None, '{"command":"ls"}', "not json", "null", "[1]", "NaN", "  7 ", 5, {"a": "b"}]
        ),
        "output": st.sampled_from([None, "ok", _PS_RECORD, "+ CategoryInfo : one", 3, [1], {}])
        | json_values,
        "error": st.sampled_from(
            [None, False, 0, "", "  \u3000", "boom", {}, {"message": "x"}, [], 1]
        ),
        "exit": st.sampled_from(_EXIT_CODES),
        "exitCode": st.sampled_from(_EXIT_CODES),
        "metadata": st.sampled_from([None, "x", [1]])
        | st.builds(lambda code: {"exit": code}, st.sampled_from(_EXIT_CODES)),
    }
    state = {}
    for name, strategy in fields.items():
        # Errors and exit codes are absent from most real parts.
        value = (
            _maybe(draw, strategy)
            if name in ("status", "input", "output")
            else (_ABSENT if draw(st.booleans()) else draw(strategy))
        )
        if value is not _ABSENT:
            state[name] = value
    return state if draw(st.integers(0, 9)) else draw(st.sampled_from([None, "done", [state]]))


@st.composite
def opencode_lines(draw: st.DrawFn) -> dict[str, Any]:
    """One wire line (wire §A.5): mostly tool parts, some text, some other types."""
    kind = draw(st.sampled_from(["tool_use"] * 6 + ["text", "other"]))
    obj: dict[str, Any] = {"type": kind, "timestamp": 1_760_000_000_000}
    session = _maybe(draw, st.sampled_from(["", "ses_a", "ses_b", None]))
    if session is not _ABSENT:
        obj["sessionID"] = session
    if kind == "text":
        text = _maybe(draw, st.sampled_from(["", "Hello", "é\u2028✓", None, 5]))
        obj["part"] = {"type": "text"} if text is _ABSENT else {"type": "text", "text": text}
        return obj
    part: dict[str, Any] = {
        "type": "tool",
        "tool": draw(st.sampled_from(["bash", "BASH", "shell", "read", "write", None])),
        "callID": draw(st.sampled_from(["call_1", "call_2", "call_3", 7])),
    }
    state = _maybe(draw, tool_states())
    if state is not _ABSENT:
        part["state"] = state
    obj["part"] = part if draw(st.integers(0, 19)) else "not a part"
    return obj


@pytest.mark.rule("OPENCODE-TEXT-001", "OPENCODE-DEDUPE-001", "OPENCODE-ISERROR-001")
@fuzz_sized(200)
@given(objects=st.lists(opencode_lines(), max_size=12), cuts=st.lists(st.integers(0, 10**6)))
def test_opencode_parser_equals_the_ref_model(
    objects: list[dict[str, Any]], cuts: list[int]
) -> None:
    data = jsonl(*objects)
    expected = model(objects)
    assert run_whole(factory, data) == expected
    assert as_json(run_chunked(factory, data, cuts)) == as_json(expected)
