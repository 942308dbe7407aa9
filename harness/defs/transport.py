"""Choosing a def's transport for a run (seed 000 §5.3).

A def may describe more than one way to drive its CLI. :func:`select_transport`
returns a def whose stream fields describe the chosen transport, so every
other engine module keeps reading ``stream_format`` / ``build_args`` without
knowing transports exist.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from harness.defs.types import AgentDef
from harness.errors import AgentDefError

__all__ = ["select_transport", "transport_names"]


def transport_names(defn: AgentDef) -> tuple[str, ...]:
    return (defn.transport_name, *(t.name for t in defn.alt_transports))


def select_transport(
    defn: AgentDef, env: Mapping[str, str] | None = None, name: str | None = None
) -> AgentDef:
    """The def as seen by one run: ``name`` › ``env[transport_env_var]`` › default.

    Raises :class:`AgentDefError` (field ``transport``) naming the known
    transports when the requested one does not exist.
    """
    wanted = name
    if wanted is None and defn.transport_env_var and env is not None:
        value = env.get(defn.transport_env_var, "").strip()
        wanted = value or None
    if wanted is None:
        wanted = defn.default_transport or defn.transport_name
    if wanted == defn.transport_name:
        return defn
    for alt in defn.alt_transports:
        if alt.name == wanted:
            return dataclasses.replace(
                defn,
                transport_name=alt.name,
                stream_format=alt.stream_format,
                event_parser=alt.event_parser,
                build_args=alt.build_args,
                prompt_delivery=alt.prompt_delivery,
                alt_transports=(),
                default_transport=None,
            )
    raise AgentDefError(
        defn.id, "transport", f"unknown transport {wanted!r}; known: {list(transport_names(defn))}"
    )
