"""Which emulator module stands in for which agent id.

Each emulator module (one per wire format) exports ``SPECS: dict[str, CliSpec]``
for the CLIs it emulates. Fakes are stand-ins for particular CLIs, so naming
agent ids here is their job (the engine in ``harness/`` never does).
"""

from __future__ import annotations

import sys

from fake_clis.scenario import load_scenario

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import ModuleType

    from fake_clis.base import CliSpec
    from fake_clis.scenario import Scenario

__all__ = [
    "EMULATOR_MODULES",
    "all_specs",
    "emulator_module_of",
    "present_emulators",
    "spec_for",
    "unemulated_steps",
]

#: One module per wire format.
EMULATOR_MODULES = (
    "fake_clis.claude_stream",
    "fake_clis.json_events",
    "fake_clis.copilot",
    "fake_clis.qoder",
    "fake_clis.plain",
    "fake_clis.acp",
    "fake_clis.pi_rpc",
    "fake_clis.dsh",
    "fake_clis.codex_app_server",
)


def present_emulators() -> Iterator[tuple[str, ModuleType]]:
    """``(module name, module)`` of every emulator module that is present, in order."""
    for name in EMULATOR_MODULES:
        try:
            module = _imported(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        yield name, module


def _imported(name: str) -> ModuleType:
    """``importlib.import_module(name)`` for an absolute name, without importing importlib."""
    __import__(name)
    return sys.modules[name]


def all_specs() -> dict[str, CliSpec]:
    """agent id -> spec, from every emulator module that is present."""
    specs: dict[str, CliSpec] = {}
    for _name, module in present_emulators():
        for agent_id, spec in getattr(module, "SPECS", {}).items():
            if agent_id in specs:
                raise ValueError(f"two emulators claim agent {agent_id!r}")
            specs[agent_id] = spec
    return specs


def emulator_module_of(agent_id: str) -> str | None:
    """The emulator module whose ``SPECS`` claims ``agent_id`` (``None``: no fake)."""
    for name, module in present_emulators():
        if agent_id in getattr(module, "SPECS", {}):
            return name
    return None


def spec_for(agent_id: str, module: str | None = None) -> CliSpec:
    """The spec for ``agent_id``; ``module`` names the emulator module that holds it.

    With ``module`` only that one module is imported: a fake started through its
    shim (which carries the hint) then skips the other eight emulators' imports,
    most of its start-up CPU. A stale hint falls back to the full search.
    """
    if module in EMULATOR_MODULES:
        found = getattr(_imported(module), "SPECS", {}).get(agent_id)
        if found is not None:
            return found  # type: ignore[no-any-return]
    specs = all_specs()
    try:
        return specs[agent_id]
    except KeyError:
        raise KeyError(
            f"no fake CLI for agent {agent_id!r}; fakes exist for: {', '.join(sorted(specs))}"
        ) from None


def unemulated_steps(agent_id: str, scenario: Scenario | str) -> list[str]:
    """The optional step kinds of ``scenario`` (a :class:`Scenario`, or a name or path for
    :func:`fake_clis.scenario.load_scenario`) that ``agent_id``'s fake does not emulate.

    Not empty: that fake refuses the scenario (exit 2, ``<prog>: the fake does not emulate
    scenario step '<kind>'``), so a conformance plan leaves the scenario out for the def.
    """
    loaded = load_scenario(scenario) if isinstance(scenario, str) else scenario
    return loaded.unrendered_kinds(spec_for(agent_id).optional_steps)
