"""Shared test configuration.

* Every ``@pytest.mark.rule(...)`` id must exist in the rule catalog; an
  unknown id stops collection (CATALOG-BINDING-001).
* ``posix`` / ``windows`` markers skip tests on the other family of OS.
* ``no_leaked_processes`` (autouse, :mod:`tests.support.processes`): a test that leaves a
  process running fails, naming it. ``keeps_processes(reason)`` opts a test out; a marker
  without a reason stops collection.
* The fakes' bytecode is written once per session, as every shim writer does.
"""

from __future__ import annotations

import sys

import pytest
from hypothesis import HealthCheck, settings

from conformance.rules import all_rules
from tests.support.processes import KEEPS_PROCESSES, no_leaked_processes

__all__ = ["no_leaked_processes"]

# Property tests judge behaviour, not speed: on a loaded 2-core CI machine a
# per-example deadline only produces flaky failures (speed lives in benchmarks/).
settings.register_profile(
    "harness",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile("harness")


def pytest_sessionstart(session: pytest.Session) -> None:
    """Many tests start fakes as ``python -m fake_clis``, not through a shim, so nothing
    else writes their bytecode; under ``PYTHONDONTWRITEBYTECODE`` every start would compile
    each edited module again. An unwritable checkout is fine (they compile in memory)."""
    from harness.runtime.fakes_install import precompile_fakes

    precompile_fakes()


def rule_ids_of(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers("rule"):
        ids.extend(str(a) for a in mark.args)
    return ids


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = all_rules()
    unknown = sorted(
        {(rid, item.nodeid) for item in items for rid in rule_ids_of(item) if rid not in known}
    )
    if unknown:
        lines = "\n".join(f"  {rid} in {nodeid}" for rid, nodeid in unknown)
        raise pytest.UsageError(f"tests name rule ids missing from conformance/rules:\n{lines}")
    unexplained = sorted(
        item.nodeid
        for item in items
        for mark in item.iter_markers(KEEPS_PROCESSES)
        if not (mark.args and str(mark.args[0]).strip())
    )
    if unexplained:
        lines = "\n".join(f"  {nodeid}" for nodeid in unexplained)
        raise pytest.UsageError(f"keeps_processes needs a reason (why the process stays):\n{lines}")
    for item in items:
        if item.get_closest_marker("posix") and sys.platform == "win32":
            item.add_marker(pytest.mark.skip(reason="POSIX only"))
        if item.get_closest_marker("windows") and sys.platform != "win32":
            item.add_marker(pytest.mark.skip(reason="Windows only"))
