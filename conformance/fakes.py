"""Which fake plays a def's CLI, and the environment a fake runs in (pytest-free).

Shared by ``harness conform`` (:mod:`conformance.conform`) and the pytest plugin
(:mod:`conformance.pytest_plugin`), so both choose the same fake (PLUGIN-FAKE-001) and
give it the same clean environment.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from harness.defs.types import AgentDef
from harness.secrets.detect import SecretMatcher, is_secret_name

__all__ = ["clean_fake_env", "emulator_for", "fake_for", "holds_secret", "speaks"]

_SHAPES = SecretMatcher()


@functools.lru_cache(maxsize=4096)
def holds_secret(name: str, value: str) -> bool:
    """Whether an env var may carry a real credential (:mod:`harness.secrets.detect`): its name is
    secret-like, or its value holds key-shaped text or a URL's password. Remembered per
    variable: each of conform's fake runs cleans the same inherited environment."""
    return is_secret_name(name) or bool(_SHAPES.find(value.encode("utf-8", "surrogateescape"))[0])


def speaks(builtin: AgentDef, defn: AgentDef) -> bool:
    """Whether ``builtin`` (own transport or an ``alt_transports`` entry) reads the same
    (stream_format, event_parser) as ``defn``."""
    wanted = (defn.stream_format, defn.event_parser)
    pairs = {(builtin.stream_format, builtin.event_parser)}
    pairs |= {(t.stream_format, t.event_parser) for t in builtin.alt_transports}
    return wanted in pairs


def emulator_for(
    defn: AgentDef, builtins: Sequence[AgentDef], emulators: Iterable[str]
) -> tuple[str | None, str]:
    """The built-in id whose fake plays ``defn``'s CLI, or ``(None, why)``.

    The def's own id when a fake exists for it and speaks its format; else the first
    built-in, in registry order, with a fake that speaks the def's format.
    """
    have = set(emulators)
    same = next((b for b in builtins if b.id == defn.id), None)
    if same is not None and same.id in have and speaks(same, defn):
        return same.id, ""
    for builtin in builtins:
        if builtin.id in have and speaks(builtin, defn):
            return builtin.id, ""
    return None, (
        f"no fake emulator reads stream_format {defn.stream_format!r} with event_parser "
        f"{defn.event_parser!r}"
    )


def fake_for(defn: AgentDef) -> tuple[str | None, str]:
    """:func:`emulator_for` over the built-in defs and every present emulator: the fake
    ``harness conform``, ``harness run --fake`` and the adapter-layer checks run for
    ``defn`` (an author's def derived from a built-in gets the built-in's fake)."""
    # start-up: the pytest plugin imports this module in every pytest run; the def
    # registry and the emulator catalog load only when a fake is looked up
    from fake_clis.catalog import all_specs
    from harness.defs.registry import BUILTIN_DEFS

    return emulator_for(defn, BUILTIN_DEFS, all_specs())


def clean_fake_env(
    base: Mapping[str, str], defn: AgentDef, bin_dir: Path, home: Path
) -> dict[str, str]:
    """``base`` without ``FAKE_CLI_*``, without any variable that may hold a credential
    (:func:`holds_secret`: no real credential reaches a fake), without every built-in's and
    the def's executable and transport override (an inherited one would bypass the fake or
    switch its transport); ``bin_dir`` first on PATH (``Path`` where the platform spells it
    so), HOME and USERPROFILE ``home``."""
    # start-up, as in fake_for: only a fake run pays for the def registry
    from harness.defs.registry import BUILTIN_DEFS
    from harness.host.launch import path_env_key

    dropped = {
        key.upper()
        for d in (*BUILTIN_DEFS, defn)
        for key in (d.bin_env_key, d.transport_env_var)
        if key
    }
    env = {
        k: v
        for k, v in base.items()
        if not k.upper().startswith("FAKE_CLI_")
        and not holds_secret(k, v)
        and k.upper() not in dropped
    }
    key = path_env_key(env, sys.platform)
    rest = env.get(key, "")
    env[key] = str(bin_dir) + (os.pathsep + rest if rest else "")
    env.update(HOME=str(home), USERPROFILE=str(home))
    return env
