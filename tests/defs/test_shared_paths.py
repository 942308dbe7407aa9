"""Whether a def treats a directory as absolute follows Node's rules on every Python (Python
3.13's ``ntpath.isabs`` stopped counting a rooted Windows path without a drive)."""

from __future__ import annotations

import pytest

from harness.defs.shared import is_absolute_path


@pytest.mark.rule("DEF-PI-ARGV-001")
@pytest.mark.parametrize(
    ("path", "absolute"),
    [
        ("C:\\skills", True),
        ("c:/skills", True),
        ("\\\\host\\share\\x", True),
        ("/opt/ds", True),
        ("\\opt\\ds", True),
        ("C:skills", False),
        ("skills\\ds", False),
        ("", False),
        ("é:\\x", False),
    ],
)
def test_windows_absolute_paths_as_node_judges_them(path: str, absolute: bool) -> None:
    assert is_absolute_path(path, "win32") is absolute


def test_posix_absolute_paths() -> None:
    assert is_absolute_path("/opt/ds", "linux") and not is_absolute_path("C:\\x", "darwin")
