"""The fakes' path text (:func:`fake_clis.base.path_str`) is pathlib's, without pathlib."""

from __future__ import annotations

from pathlib import PurePath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fake_clis.base import path_str

PARTS = st.lists(st.sampled_from(["a", "b.txt", "/", ".", "..", "//", "a/", "/a", ""]), max_size=4)


@pytest.mark.rule("RUN-FAKES-001")
@given(st.lists(PARTS.map("".join), min_size=1, max_size=3))
@example(["/tmp/project", "hello.html"])
@example(["/tmp/project/", "./hello.html"])
@example(["//host/share", "x"])
@example([""])
def test_path_str_is_purepaths_text(parts: list[str]) -> None:
    assert path_str(*parts) == str(PurePath(*parts))
