"""Example counts of the heaviest property tests: full in CI's fuzz step, a share otherwise.

The README's test command is what a newcomer waits for; CI's fuzz step sets
``HARNESS_FUZZ_EXAMPLES`` and runs every test marked ``fuzz_profile`` (and ``tests/fuzz``),
so each of these properties is still explored at its full count on every CI run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import pytest
from hypothesis import settings

__all__ = ["FULL_ENV", "fuzz_sized", "sized"]

#: Set (to any count) in CI's fuzz step: every ``fuzz_sized`` test runs its full count.
FULL_ENV = "HARNESS_FUZZ_EXAMPLES"
#: The README run's share of the full count (and never fewer than ``_FLOOR`` examples).
_SHARE = 4
_FLOOR = 10

T = TypeVar("T", bound=Callable[..., object])


def sized(full: int) -> int:
    """``full`` with :data:`FULL_ENV` set, else a quarter of it (at least ten)."""
    if os.environ.get(FULL_ENV, "").strip():
        return full
    return max(_FLOOR, full // _SHARE)


def fuzz_sized(full: int) -> Callable[[T], T]:
    """``@settings(max_examples=sized(full))`` and the ``fuzz_profile`` mark (above ``@given``)."""

    def apply(test: T) -> T:
        marked: T = pytest.mark.fuzz_profile(settings(max_examples=sized(full))(test))
        return marked

    return apply
