"""The runner's stop ladder as a transition table (MACHINE-MOVE-001)."""

from __future__ import annotations

import pytest

from harness.protocols.base import LocalProtocolError
from harness.runner.stop import LADDER, Climb, Rung, StopLadder


@pytest.mark.rule("MACHINE-MOVE-001")
def test_a_stop_climbs_terminate_kill_gone() -> None:
    ladder = StopLadder()
    assert (ladder.rung, ladder.stopping) == (Rung.IDLE, False)
    assert ladder.climb(Climb.TERMINATE) is Rung.TERMINATING
    assert ladder.stopping
    assert ladder.climb(Climb.KILL) is Rung.KILLING
    assert ladder.stopping
    assert ladder.climb(Climb.GONE) is Rung.GONE
    assert not ladder.stopping
    # a leader that survived SIGKILL may still report its exit
    assert ladder.climb(Climb.GONE) is Rung.GONE


@pytest.mark.rule("MACHINE-MOVE-001")
@pytest.mark.parametrize(
    ("path", "illegal"),
    [
        pytest.param([], Climb.KILL, id="kill-before-terminate"),
        pytest.param([Climb.TERMINATE], Climb.TERMINATE, id="terminate-twice"),
        pytest.param([Climb.GONE], Climb.TERMINATE, id="terminate-after-gone"),
        pytest.param([Climb.TERMINATE, Climb.KILL], Climb.KILL, id="kill-twice"),
    ],
)
def test_any_other_climb_is_refused_and_leaves_the_rung(path: list[Climb], illegal: Climb) -> None:
    ladder = StopLadder()
    for move in path:
        ladder.climb(move)
    before = ladder.rung
    with pytest.raises(LocalProtocolError, match=f"runner-stop-ladder: {illegal.name} is not"):
        ladder.climb(illegal)
    assert ladder.rung is before


def test_every_rung_is_reachable_and_gone_is_the_only_way_out() -> None:
    assert {target for target in LADDER.moves.values()} | {LADDER.initial} == set(Rung)
    assert {m for (_, m), t in LADDER.moves.items() if t is Rung.GONE} == {Climb.GONE}
