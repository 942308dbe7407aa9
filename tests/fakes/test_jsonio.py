"""The fakes' JSON (:mod:`fake_clis.jsonio`) says and reads exactly what ``json`` does.

It goes through the C accelerator without importing ``json`` (a fake start skips
``re``), so every document and every keyword is checked against ``json`` itself,
errors included.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import fake_clis
from fake_clis import jsonio

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.sampled_from([math.inf, -math.inf])
    | st.text()
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)
KEYWORDS = st.fixed_dictionaries(
    {},
    optional={
        "ensure_ascii": st.booleans(),
        "separators": st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]),
        "sort_keys": st.booleans(),
        "indent": st.sampled_from([None, 2]),
    },
)


@given(VALUES, KEYWORDS)
@example("\ud800 lone", {"ensure_ascii": False})
@example({"b": 1, "a": [1.5, None]}, {"sort_keys": True})
def test_dumps_writes_what_json_writes(value: Any, keywords: dict[str, Any]) -> None:
    assert jsonio.dumps(value, **keywords) == json.dumps(value, **keywords)


@given(VALUES, st.sampled_from(["", " ", "\n", "\t\r\n "]))
def test_loads_reads_what_json_reads(value: Any, pad: str) -> None:
    text = pad + json.dumps(value) + pad
    assert _same(jsonio.loads(text), json.loads(text))
    assert _same(jsonio.loads(text.encode("utf-8", "surrogatepass")), json.loads(text.encode()))


@pytest.mark.parametrize(
    "document",
    [
        "",
        " ",
        "{",
        '{"a": 1} x',
        "[1,]",
        "\ufeff{}",
        b"\xef\xbb\xbf{}",
        b"\xff\xfe{\x00}\x00",
        b'"\xff"',
        "NaN",
        '"\\ud800"',
        b"[1, 2]\n",
        '{"a": {"b": [true, false, null, -0.0, 1e400]}}',
    ],
)
def test_loads_fails_and_succeeds_as_json_does(document: str | bytes) -> None:
    try:
        expected: Any = json.loads(document)
    except (ValueError, TypeError) as exc:
        with pytest.raises(type(exc)) as caught:
            jsonio.loads(document)
        assert str(caught.value) == str(exc)
    else:
        assert _same(jsonio.loads(document), expected)


def test_dumps_fails_as_json_does_and_stays_usable() -> None:
    loop: list[Any] = []
    loop.append(loop)
    for bad in (object(), {1j: 1}, {"a": [object()]}, loop):
        with pytest.raises((TypeError, ValueError)) as caught:
            jsonio.dumps(bad)
        with pytest.raises(type(caught.value), match=None) as expected:
            json.dumps(bad)
        assert str(caught.value) == str(expected.value)
    assert jsonio.dumps({"x": [1, 2]}) == '{"x": [1, 2]}'


def test_decode_error_is_jsons_own() -> None:
    assert jsonio.JSONDecodeError is json.JSONDecodeError
    with pytest.raises(jsonio.JSONDecodeError) as caught:
        jsonio.loads('{"a":\n nope}')
    assert (caught.value.lineno, caught.value.colno) == (2, 2)


def test_importing_it_imports_neither_json_nor_re() -> None:
    code = (
        f"import sys; sys.path.insert(0, {str(fake_clis.__path__[0] + '/..')!r})\n"
        "from fake_clis import jsonio\n"
        "assert jsonio.loads(jsonio.dumps({'a': [1]})) == {'a': [1]}\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout.split()
    assert not {"json", "re", "typing"} & set(out)


def _same(a: Any, b: Any) -> bool:
    """Equal, with NaN equal to NaN (repr compares floats exactly)."""
    return repr(a) == repr(b)


@pytest.mark.rule("RUN-FAKES-001")
@given(st.text(alphabet=st.characters(max_codepoint=0xFFFF, exclude_categories=())))
@example("a\ud800b\udfffc")
@example("\ud83d\ude00")
def test_lone_surrogates_are_escaped_and_nothing_else_changes(text: str) -> None:
    """Each lone surrogate becomes its ``\\uXXXX`` escape; any other text comes back as it is."""
    from fake_clis.base import escape_lone_surrogates

    expected = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
    assert escape_lone_surrogates(text) == expected
