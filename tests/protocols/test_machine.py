"""The transition-table machine and the session core (MACHINE-MOVE-001, MACHINE-END-001)."""

from __future__ import annotations

import enum

import pytest

from harness.protocols.base import (
    Actions,
    CloseStdin,
    Finished,
    LocalProtocolError,
    RunStatus,
    SessionError,
    SessionState,
    Terminate,
)
from harness.protocols.core import EndHook, SessionCore
from harness.protocols.machine import Machine, mermaid


class _P(enum.Enum):
    NEW = "new"
    LIVE = "live"
    DONE = "done"


class _T(enum.Enum):
    GO = "go"
    END = "end"
    FAIL = "fail"


_MOVES = {
    (_P.NEW, _T.GO): _P.LIVE,
    (_P.LIVE, _T.END): _P.DONE,
    (_P.LIVE, _T.FAIL): _P.DONE,
}
_MACHINE = Machine(name="toy", initial=_P.NEW, moves=_MOVES, terminal=frozenset({_P.DONE}))
_STATES = {_P.NEW: SessionState.NEW, _P.LIVE: SessionState.RUNNING, _P.DONE: SessionState.FINISHED}


def _core(on_end: EndHook | None = None) -> SessionCore[_P, _T]:
    return SessionCore(_MACHINE, _STATES, ("seen",), terminate_after_ms=50, on_end=on_end)


@pytest.mark.rule("MACHINE-MOVE-001")
def test_an_illegal_move_names_the_machine_the_phase_and_the_trigger() -> None:
    with pytest.raises(LocalProtocolError, match=r"toy: END is not a legal move in phase NEW"):
        _MACHINE.next(_P.NEW, _T.END)
    assert _MACHINE.next(_P.NEW, _T.GO) is _P.LIVE


@pytest.mark.rule("MACHINE-MOVE-001")
def test_a_table_with_a_move_out_of_a_terminal_phase_is_refused() -> None:
    with pytest.raises(ValueError, match="terminal phase DONE has a move"):
        Machine(
            name="bad",
            initial=_P.NEW,
            moves={**_MOVES, (_P.DONE, _T.GO): _P.LIVE},
            terminal=frozenset({_P.DONE}),
        )


@pytest.mark.rule("MACHINE-MOVE-001")
def test_a_table_with_an_unreachable_phase_is_refused() -> None:
    with pytest.raises(ValueError, match=r"unreachable phases \['DONE'\]"):
        Machine(name="bad", initial=_P.NEW, moves={(_P.NEW, _T.GO): _P.LIVE})


@pytest.mark.rule("MACHINE-MOVE-001")
def test_the_core_moves_only_along_the_table() -> None:
    core = _core()
    with pytest.raises(LocalProtocolError, match="receive\\(\\) called before start\\(\\)"):
        core.check_receive()
    assert core.move(_T.GO) is _P.LIVE
    assert core.state is SessionState.RUNNING
    with pytest.raises(LocalProtocolError, match="GO is not a legal move in phase LIVE"):
        core.move(_T.GO)
    with pytest.raises(LocalProtocolError, match="END ends the run; use finish"):
        core.move(_T.END)
    assert core.phase is _P.LIVE


@pytest.mark.rule("MACHINE-END-001")
def test_an_ending_sets_the_status_once_and_emits_the_controls_in_order() -> None:
    core = _core()
    core.move(_T.GO)
    actions = Actions()
    core.fail(actions, _T.FAIL, code="X", message="broke", rule="R-1")
    error = SessionError(code="X", message="broke", rule="R-1")
    assert actions.controls == [
        CloseStdin(),
        Terminate(after_ms=50),
        Finished(RunStatus.FAILED, error),
    ]
    assert (core.status, core.error, core.ended) == (RunStatus.FAILED, error, True)
    with pytest.raises(LocalProtocolError):
        core.finish(Actions(), _T.END, RunStatus.COMPLETED)
    assert core.status is RunStatus.FAILED


@pytest.mark.rule("MACHINE-END-001")
def test_a_failed_status_only_through_fail_and_the_end_hook_runs_first() -> None:
    seen: list[RunStatus] = []
    core = _core(on_end=lambda actions, status: seen.append(status))
    core.move(_T.GO)
    with pytest.raises(LocalProtocolError, match="through fail"):
        core.finish(Actions(), _T.END, RunStatus.FAILED)
    actions = Actions()
    core.finish(actions, _T.END, RunStatus.CANCELLED, close_stdin=False, terminate=False)
    assert actions.controls == [Finished(RunStatus.CANCELLED)]
    assert seen == [RunStatus.CANCELLED]


def test_counters_are_declared_up_front() -> None:
    core = _core()
    assert core.count("seen") == 1
    with pytest.raises(KeyError, match="undeclared counter 'typo'"):
        core.count("typo")
    assert core.counters == {"seen": 1}


def test_states_must_cover_every_phase_and_mark_exactly_the_terminal_ones() -> None:
    with pytest.raises(ValueError, match="no SessionState"):
        SessionCore(_MACHINE, {_P.NEW: SessionState.NEW}, (), terminate_after_ms=0)
    wrong = {**_STATES, _P.LIVE: SessionState.FINISHED}
    with pytest.raises(ValueError, match="exactly the FINISHED ones"):
        SessionCore(_MACHINE, wrong, (), terminate_after_ms=0)


@pytest.mark.rule("MACHINE-DIAGRAM-001")
def test_mermaid_draws_every_table_entry() -> None:
    assert mermaid(_MACHINE).splitlines() == [
        "```mermaid",
        "stateDiagram-v2",
        "    [*] --> NEW",
        "    NEW --> LIVE: go",
        "    LIVE --> DONE: end / fail",
        "    DONE --> [*]",
        "```",
    ]
