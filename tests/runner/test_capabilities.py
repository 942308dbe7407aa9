"""Probed capabilities reach real runs (FIDELITY-CAPS-001, seed 002 §5.5).

The runner asks the help probe of the executable it spawns, keeps the answer per
executable stamp, and hands it to ``build_args``: a current claude build gets
``--include-partial-messages`` and streams ``stream_event`` frames, an old one gets no
flag it does not list, and a binary replaced in place is probed again.

A fake's generation is part of the executable here (a shim that sets
``FAKE_CLI_VERSION=old``), as it is on a user's disk: the findings are kept per
executable, so two generations never share one path within a test.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from conformance.checks import all_checks
from conformance.checks.fidelity import capabilities_reach_the_run
from conformance.checks.runs import RunObservation
from conformance.conform.plan import builtin_targets, plan_conform
from conformance.conform.run import run_conform
from conformance.rules import all_rules
from conformance.verdicts import Disposition, Status
from fake_clis.scenario import list_scenarios, load_scenario
from harness.defs.registry import BUILTIN_DEFS, get_agent_def
from harness.defs.types import AgentDef
from harness.events import Raw
from harness.runner import RunResult, run_agent_async
from harness.runtime.detect import CapabilityCache, ProbeRunner, capabilities_for_run
from harness.runtime.probe import ProbeResult, run_probe
from tests.runner.conftest import FakeWorld, text_of

pytestmark = pytest.mark.rule("FIDELITY-CAPS-001")

CLAUDE = get_agent_def("claude", BUILTIN_DEFS)
PARTIAL = "--include-partial-messages"


class _Stdout:
    """A wire tap keeping what the CLI wrote on stdout."""

    def __init__(self) -> None:
        self.stdout = bytearray()

    def spawned(
        self,
        defn: AgentDef,
        argv: Sequence[str],
        env: Mapping[str, str],
        *,
        secrets: Sequence[str] = (),
    ) -> None:
        return None

    def data(self, direction: str, data: bytes, t_ms: float) -> None:
        if direction == "stdout":
            self.stdout += data

    def lines(self) -> list[str]:
        return [line for line in self.stdout.decode("utf-8").splitlines() if line.strip()]

    def exited(self, code: int | None, signal: int | None, duration_ms: float) -> None:
        return None


def _run(world: FakeWorld, scenario: str = "text") -> tuple[RunResult, list[str]]:
    tap = _Stdout()
    result = asyncio.run(run_agent_async(world.request("claude", scenario), tap=tap))
    return result, tap.lines()


def _make_old(shim: Path) -> None:
    """Replace ``shim`` in place by an old build of the same fake (another file: its size
    and mtime change, as an upgrade or a downgrade changes them)."""
    body = shim.read_text(encoding="utf-8")
    exec_line = next(line for line in body.splitlines() if line.startswith("exec "))
    shim.write_text(
        f"#!/bin/sh\n# an old build\nFAKE_CLI_VERSION=old\nexport FAKE_CLI_VERSION\n{exec_line}\n",
        encoding="utf-8",
    )


posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell shims")


def test_a_current_claude_build_streams_partial_messages_that_parse(world: FakeWorld) -> None:
    result, lines = _run(world)
    assert result.succeeded, result.error
    assert PARTIAL in result.argv
    assert result.capabilities is not None and result.capabilities["partialMessages"] is True
    frames = [json.loads(line) for line in lines]
    partial = [f for f in frames if f.get("type") == "stream_event"]
    kinds = {f["event"]["type"] for f in partial}
    assert {"message_start", "content_block_delta", "message_stop"} <= kinds
    # Every frame parses: none becomes a raw event, and the text, streamed as deltas and
    # repeated by the assistant wrapper, is given once.
    assert not [e for e in result.events if isinstance(e, Raw)]
    assert text_of(result.events) == "Hello from the fake model. PONG."


def test_an_old_build_is_not_given_a_flag_its_help_does_not_list(world: FakeWorld) -> None:
    result, lines = _run(world.__class__(world.root / "old-world"), "old_version")
    assert result.succeeded, result.error
    assert PARTIAL not in result.argv
    assert result.capabilities is not None and result.capabilities["partialMessages"] is False
    assert not any(json.loads(line).get("type") == "stream_event" for line in lines)
    assert text_of(result.events) == "Old but fine."


@posix_only
def test_a_binary_replaced_in_place_is_probed_again(world: FakeWorld) -> None:
    first, _ = _run(world)
    assert first.succeeded and PARTIAL in first.argv
    _make_old(world.bin / "claude")
    # Had the findings of the replaced file been reused, the old build would exit 1 on
    # an unknown option.
    second, lines = _run(world)
    assert second.succeeded, (second.error, second.stderr_tail)
    assert PARTIAL not in second.argv
    assert not any(json.loads(line).get("type") == "stream_event" for line in lines)


def _counting(calls: list[Sequence[str]]) -> ProbeRunner:
    async def runner(
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        timeout_s: float,
        max_output_bytes: int,
        cwd: str | None = None,
    ) -> ProbeResult:
        calls.append(tuple(argv))
        return await run_probe(
            argv, env=env, timeout_s=timeout_s, max_output_bytes=max_output_bytes, cwd=cwd
        )

    return runner


@posix_only
def test_findings_are_kept_per_executable_stamp(world: FakeWorld) -> None:
    shim = world.bin / "claude"
    env = world.env("text")
    cache = CapabilityCache()
    calls: list[Sequence[str]] = []

    def ask() -> dict[str, bool]:
        caps, diagnostics = asyncio.run(
            capabilities_for_run(CLAUDE, str(shim), env, runner=_counting(calls), cache=cache)
        )
        assert diagnostics == []
        return caps

    assert ask()["partialMessages"] is True
    assert ask()["partialMessages"] is True
    assert len(calls) == 1, "one executable is probed once"
    assert calls[0] == (str(shim), *(CLAUDE.help_args or ()))
    _make_old(shim)
    assert ask()["partialMessages"] is False
    assert len(calls) == 2, "a replaced binary is probed again"
    assert len(cache) == 2


@posix_only
def test_runs_starting_together_share_one_probe(world: FakeWorld) -> None:
    # Runs of one executable started at once (conform, a batch): one help probe, the
    # others wait for it and read what it kept.
    shim = world.bin / "claude"
    env = world.env("text")
    cache = CapabilityCache()
    calls: list[Sequence[str]] = []

    async def five() -> list[tuple[dict[str, bool], list[object]]]:
        ask = capabilities_for_run
        runner = _counting(calls)
        return list(
            await asyncio.gather(
                *(ask(CLAUDE, str(shim), env, runner=runner, cache=cache) for _ in range(5))
            )
        )

    answers = asyncio.run(five())
    assert len(calls) == 1
    assert all(caps["partialMessages"] is True and not diags for caps, diags in answers)


def test_a_request_bringing_its_own_capabilities_is_not_probed(world: FakeWorld) -> None:
    request = world.request("claude", "text", capabilities={})
    result = asyncio.run(run_agent_async(request))
    assert result.succeeded, result.error
    assert PARTIAL not in result.argv and result.capabilities == {}


# -- conform judges both generations ---------------------------------------------------------


def test_conform_judges_the_current_and_the_old_build(tmp_path: Path) -> None:
    plan = plan_conform(
        builtin_targets(BUILTIN_DEFS, ["claude"]),
        def_checks=all_checks("def"),
        run_checks=all_checks("run"),
        catalog=all_rules(),
        scenarios=list_scenarios(),
        siblings=BUILTIN_DEFS,
        scenario_filter=["text", "old_version"],
        rule_filter=["FIDELITY-CAPS-001"],
    )
    result = run_conform(plan, work_dir=str(tmp_path))
    assert result.runs == 2
    judged = {o.scenario: o for o in result.outcomes if o.rule_id == "FIDELITY-CAPS-001"}
    assert set(judged) == {"text", "old_version"}
    assert all(o.status is Status.PASS for o in judged.values()), judged
    assert "current build" in judged["text"].reason
    assert "old build" in judged["old_version"].reason
    cell = result.verdict.cell("claude", "FIDELITY-CAPS-001")
    assert cell is not None and cell.disposition is Disposition.PASS


def _observation(
    scenario: str, argv: Sequence[str], caps: Mapping[str, bool] | None
) -> RunObservation:
    return RunObservation(
        def_id="claude",
        stream_format=CLAUDE.stream_format,
        scenario=load_scenario(scenario),
        argv=tuple(argv),
        capability_flags=dict(CLAUDE.capability_flags),
        capabilities=caps,
    )


_EVERY = {key: True for key in CLAUDE.capability_flags.values()}
_OLD = {**{key: False for key in _EVERY}, "addDir": True}


@pytest.mark.parametrize(
    ("scenario", "argv", "caps", "problem"),
    [
        pytest.param(
            "old_version", ["claude", "-p", PARTIAL], _OLD, "did not find", id="flag-not-found"
        ),
        pytest.param("old_version", ["claude", "-p"], _EVERY, "old build", id="old-gets-new"),
        pytest.param("text", ["claude", "-p"], {}, "read none", id="probe-never-reached"),
    ],
)
def test_the_check_fails_a_run_the_findings_did_not_reach(
    scenario: str, argv: list[str], caps: dict[str, bool], problem: str
) -> None:
    finding = capabilities_reach_the_run(_observation(scenario, argv, caps))
    assert finding.status is Status.FAIL and finding.evidence is not None
    assert problem in finding.evidence.summary


def test_the_check_skips_a_replay_and_a_def_without_probed_flags() -> None:
    replay = _observation("text", ["claude"], None)
    assert capabilities_reach_the_run(replay).status is Status.SKIPPED
    bare = RunObservation(def_id="x", stream_format="plain", capabilities={})
    assert capabilities_reach_the_run(bare).status is Status.SKIPPED
    ok = _observation("text", ["claude", "-p", PARTIAL], _EVERY)
    assert capabilities_reach_the_run(ok).status is Status.PASS
