"""Every parser and session survives the mutated corpus (ROBUST-FUZZ-001).

The default run is small (:data:`tests.fuzz.hostile.DEFAULT_EXAMPLES` examples per
target and driver); CI runs the big profile with ``HARNESS_FUZZ_EXAMPLES=10000``
(and may vary ``HARNESS_FUZZ_SEED``). What counts as a documented outcome is in
:mod:`tests.fuzz.hostile`.
"""

from __future__ import annotations

import pytest

from tests.fuzz.hostile import (
    Target,
    Violation,
    cases,
    examples_per_target,
    one_way_targets,
    run_case,
    two_way_targets,
)

ONE_WAY = one_way_targets()
TWO_WAY = two_way_targets()
#: The suite's 120 s per test is for the default size; the CI profile (10,000 examples per
#: target) runs longer, so the bound grows with the examples (0.1 s each, loaded machine).
pytestmark = pytest.mark.timeout(max(120, examples_per_target() // 10))


def _run(target: Target, driver: str) -> None:
    assert target.recordings, f"{target.name}: no recording in recordings/ to seed the fuzzer"
    failures: list[Violation] = []
    for case in cases([target], driver):
        try:
            run_case(case)
        except Violation as exc:
            failures.append(exc)
            if len(failures) >= 3:
                break
    if failures:
        shown = "\n\n".join(str(f) for f in failures)
        pytest.fail(
            f"{len(failures)} undocumented outcome(s) in {examples_per_target()} examples "
            f"(stopped at 3):\n\n{shown}",
            pytrace=False,
        )


@pytest.mark.rule("ROBUST-FUZZ-001")
@pytest.mark.parametrize("target", ONE_WAY, ids=lambda t: t.name)
def test_one_way_parser_survives_hostile_frames(target: Target) -> None:
    _run(target, "one-way")


@pytest.mark.rule("ROBUST-FUZZ-001")
@pytest.mark.parametrize("target", TWO_WAY, ids=lambda t: t.name)
def test_session_survives_hostile_frames(target: Target) -> None:
    _run(target, "session")


@pytest.mark.rule("ROBUST-FUZZ-001")
@pytest.mark.parametrize("target", TWO_WAY, ids=lambda t: t.name)
def test_capture_replay_survives_hostile_frames(target: Target) -> None:
    _run(target, "capture")


@pytest.mark.rule("ROBUST-FUZZ-001")
@pytest.mark.parametrize("target", ONE_WAY + TWO_WAY, ids=lambda t: t.name)
def test_recording_replay_survives_hostile_frames(target: Target) -> None:
    _run(target, "recording")


@pytest.mark.rule("ROBUST-FUZZ-001")
def test_every_registered_format_is_a_target() -> None:
    from harness.formats import format_names

    covered = {t.stream_format for t in ONE_WAY + TWO_WAY}
    assert covered == set(format_names())
