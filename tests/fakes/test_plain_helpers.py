"""The plain fakes' string helpers match the regexes and ``PurePath`` they stand in for.

aider's fake rewrites its reasoning tags and wraps lines as rich does; a fake start
must not import ``re`` or ``pathlib``, so these helpers do it with ``str`` methods,
checked here against the originals.
"""

from __future__ import annotations

import re
from pathlib import PurePath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fake_clis.plain import _drop_pairs, _path_name, _replace_spaced, _word_end

#: Few characters, so marks, whitespace of every kind and words meet often.
PIECES = st.lists(
    st.sampled_from(["<t>", "</t>", " ", "\n", "\t", "\u3000", "\x85", "a", "bc", "/", "."]),
    max_size=14,
).map("".join)


@pytest.mark.rule("RUN-FAKES-001")
@given(PIECES, st.sampled_from(["<t>", "</t>"]))
@example(" <t> <t>  x ", "<t>")
@example("<t>   <t>", "<t>")
def test_replace_spaced_is_the_regex_with_whitespace_around_the_mark(text: str, mark: str) -> None:
    expected = re.sub(rf"\s*{re.escape(mark)}\s*", lambda _m: "R", text)
    assert _replace_spaced(text, mark, "R") == expected


@pytest.mark.rule("RUN-FAKES-001")
@given(PIECES)
@example("a<t>b</t>c<t>d</t>e")
@example("<t><t></t></t>")
@example("<t>never closed")
def test_drop_pairs_is_the_lazy_dotall_regex(text: str) -> None:
    assert _drop_pairs(text, "<t>", "</t>") == re.sub("<t>.*?</t>", "", text, flags=re.DOTALL)


@pytest.mark.rule("RUN-FAKES-001")
@given(PIECES, st.integers(min_value=0, max_value=20))
def test_word_end_is_where_rich_word_pattern_ends(text: str, pos: int) -> None:
    pos = min(pos, len(text))
    match = re.compile(r"\s*\S+\s*").match(text, pos)
    assert _word_end(text, pos) == (None if match is None else match.end())


@pytest.mark.rule("RUN-FAKES-001")
@given(PIECES.map(lambda text: text.replace("<", "").replace(">", "")))
@example("a/b/..")
@example("/")
@example("a/./")
@example("")
def test_path_name_is_purepaths_name(path: str) -> None:
    assert _path_name(path) == PurePath(path).name
