"""The fakes' stamps (:mod:`fake_clis.clock`) say what ``datetime`` says, without it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from fake_clis.clock import iso_utc_ms

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
#: Nanoseconds up to the last instant ``datetime`` can hold (9999-12-31T23:59:59.999999).
LAST_NS = 253_402_300_799_999_999_000


@pytest.mark.rule("RUN-FAKES-001")
@given(st.integers(min_value=0, max_value=LAST_NS))
@example(0)
@example(999_999)
@example(1_000_000)
@example(1_764_201_599_999_999_999)
def test_the_stamp_is_datetimes_isoformat_in_milliseconds(ns: int) -> None:
    moment = EPOCH + timedelta(microseconds=ns // 1000)
    expected = moment.isoformat(timespec="milliseconds")
    assert iso_utc_ms(ns, zone="+00:00") == expected
    assert iso_utc_ms(ns) == expected.replace("+00:00", "Z")


@pytest.mark.rule("RUN-FAKES-001")
def test_the_stamp_defaults_to_now() -> None:
    before = datetime.now(timezone.utc).replace(microsecond=0)
    stamp = datetime.fromisoformat(iso_utc_ms(zone="+00:00"))
    after = datetime.now(timezone.utc)
    assert before <= stamp <= after
