"""The environment a test gives a fake or real CLI: the runner's own, minus what steers one."""

from __future__ import annotations

import os
from collections.abc import Collection, Sequence
from pathlib import Path

__all__ = ["inherited_env"]


def inherited_env(
    scrub_prefixes: Sequence[str], home: Path, *, drop: Collection[str] = ()
) -> dict[str, str]:
    """``os.environ`` without names starting with ``scrub_prefixes``, named in ``drop`` (any
    case) or ``PYTHONPATH``; ``HOME`` and ``USERPROFILE`` point at ``home``.

    A developer's shell must not steer a test run (a ``FAKE_CLI_SCENARIO``, an API key,
    another checkout on ``PYTHONPATH``), nor the real home directory.
    """
    prefixes = tuple(p.upper() for p in scrub_prefixes)
    dropped = {name.upper() for name in drop} | {"PYTHONPATH"}
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.upper().startswith(prefixes) and k.upper() not in dropped
    }
    env.update(HOME=str(home), USERPROFILE=str(home))
    return env
