"""Installing the fake CLIs under the real binaries' names (``harness fakes install``).

Design §"Fake CLIs": each fake is a real executable a run resolves exactly as it would
resolve the real CLI. For every def, a shim is written for its ``bin`` and each of its
``fallback_bins`` (rule RUN-FAKES-001):

* POSIX: ``#!/bin/sh`` + ``exec "<python>" -S "<fake_clis>/_shim.py" <module> <agent-id> "$@"``,
  mode 0755;
* Windows: ``<name>.cmd`` holding ``@"<python>" -S "<fake_clis>\\_shim.py" <module> <agent-id> %*``
  (``<module>``: the emulator module that holds the agent's spec).

``-S`` and the launcher script make a fake start in about half the time ``python -m
fake_clis`` takes (``fake_clis/_shim.py`` says why); ``python -m fake_clis`` works too.

An ``.exe`` launcher is not written: building one needs a compiler (or a prebuilt
launcher stub) that this project does not ship; the ``.cmd`` shim is what npm installs
for most of these CLIs anyway. ``<python>`` is this interpreter, which imports
``fake_clis`` from where this process imported it.

Two defs may name the same binary (``byok-opencode`` falls back to ``opencode``). A name
goes to the first def that claims it as its primary ``bin``, else to the first def that
lists it as a fallback, so every def's own ``bin`` runs its own fake; the losing claims
are reported as skipped, as are defs without an emulator.
"""

from __future__ import annotations

import compileall
import functools
import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import fake_clis
from harness.defs.types import AgentDef

__all__ = [
    "FakeEntry",
    "InstallReport",
    "install_fakes",
    "list_fakes",
    "shim_name",
    "shim_text",
]


@dataclass(frozen=True)
class FakeEntry:
    """One emulated CLI: the agent id, the emulator module, the program name."""

    agent_id: str
    module: str
    prog: str


@dataclass
class InstallReport:
    #: shim path -> agent id
    written: dict[str, str] = field(default_factory=dict)
    #: human-readable reasons, one per skipped def or name
    skipped: list[str] = field(default_factory=list)


def list_fakes() -> list[FakeEntry]:
    """Every emulator that is present, by agent id (sorted)."""
    from fake_clis.catalog import present_emulators

    entries: list[FakeEntry] = []
    for name, module in present_emulators():
        for agent_id, spec in getattr(module, "SPECS", {}).items():
            entries.append(FakeEntry(agent_id=agent_id, module=name, prog=spec.prog))
    return sorted(entries, key=lambda e: e.agent_id)


def _sh_quote(text: str) -> str:
    """Inside double quotes, sh expands ``$``, backquote and backslash: escape them."""
    out = text
    for char in ("\\", '"', "$", "`"):
        out = out.replace(char, "\\" + char)
    return out


def shim_name(bin_name: str, platform: str) -> str:
    return f"{bin_name}.cmd" if platform == "win32" else bin_name


def shim_text(agent_id: str, python: str, platform: str) -> str:
    """The shim's content for ``platform`` (``win32``: a ``.cmd``; else ``#!/bin/sh``).

    Every writer of a shim comes through here, so this is where the fakes' bytecode is
    made sure of (:func:`precompile_fakes`, once per process).
    """
    precompile_fakes()
    shim = os.path.join(os.path.dirname(os.path.abspath(fake_clis.__file__)), "_shim.py")
    # The emulator module's name lets the fake import only that emulator; "-" when no
    # emulator claims the id (the fake then prints the list of the ones that exist).
    module = _emulator_module(agent_id) or "-"
    if platform == "win32":
        # cmd.exe expands %VAR% even inside quotes: double every percent sign.
        exe, script = python.replace("%", "%%"), shim.replace("%", "%%")
        return f'@"{exe}" -S "{script}" {module} {agent_id} %*\r\n'
    return (
        f'#!/bin/sh\nexec "{_sh_quote(python)}" -S "{_sh_quote(shim)}" {module} {agent_id} "$@"\n'
    )


@functools.cache
def _emulator_module(agent_id: str) -> str | None:
    from fake_clis.catalog import emulator_module_of

    return emulator_module_of(agent_id)


@functools.lru_cache(maxsize=1)
def precompile_fakes() -> bool:
    """Write the fakes' bytecode next to their sources, once per process.

    A fake starts hundreds of times in ``harness conform``; without a ``__pycache__``
    (a fresh clone, and ``PYTHONDONTWRITEBYTECODE`` set, as CI images often do) every
    start compiles the package again, which doubles its start-up CPU. ``compileall``
    writes regardless of that variable and skips files whose bytecode is current. An
    unwritable install dir is fine: the fakes then compile in memory as before.
    """
    try:
        return bool(compileall.compile_dir(os.path.dirname(fake_clis.__file__), quiet=2))
    except OSError:
        return False


def install_fakes(
    dest: str | os.PathLike[str],
    defs: Sequence[AgentDef],
    *,
    agents: Iterable[str] | None = None,
    python: str | None = None,
    platform: str = sys.platform,
) -> InstallReport:
    """Write a shim per binary name of each def that has an emulator (see module docs)."""
    wanted = set(agents) if agents is not None else None
    available = {e.agent_id for e in list_fakes()}
    chosen = [d for d in defs if wanted is None or d.id in wanted]
    report = InstallReport()
    owners: dict[str, str] = {}
    # Primary bins first, then fallbacks, so no fallback steals another def's own bin.
    for pass_fallbacks in (False, True):
        for defn in chosen:
            if defn.id not in available:
                continue
            names = defn.fallback_bins if pass_fallbacks else (defn.bin,)
            for name in names:
                owner = owners.get(name)
                if owner is None:
                    owners[name] = defn.id
                elif owner != defn.id:
                    report.skipped.append(
                        f"{defn.id}: binary {name!r} already installed for {owner!r}"
                    )
    for defn in chosen:
        if defn.id not in available:
            report.skipped.append(f"{defn.id}: no fake emulator for this agent")
    root = Path(dest)
    root.mkdir(parents=True, exist_ok=True)
    exe = python or sys.executable
    for name, agent_id in owners.items():
        path = root / shim_name(name, platform)
        path.write_text(shim_text(agent_id, exe, platform), encoding="utf-8", newline="")
        if platform != "win32":
            path.chmod(0o755)
        report.written[str(path)] = agent_id
    if platform == "win32":
        report.skipped.append(
            ".exe launchers: not built (needs a compiler or a launcher stub); .cmd shims only"
        )
    return report
