"""The fakes' shell quoting (:mod:`fake_clis.shquote`) is ``shlex.quote``."""

from __future__ import annotations

import shlex

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fake_clis.shquote import quote


@pytest.mark.rule("RUN-FAKES-001")
@given(st.text())
@example("")
@example("it's")
@example("a_b@c%d+e=f:g,h./i-j")
@example("é")
@example("x y")
def test_quote_is_shlex_quote(text: str) -> None:
    assert quote(text) == shlex.quote(text)
