"""Fake ACP agents: the ``acp-json-rpc`` emulators (amr, devin, hermes, kimi, kiro, kilo,
reasonix, trae-cli, vibe).

Each fake is the *agent* side of the Agent Client Protocol: newline-delimited JSON-RPC 2.0 on
stdin/stdout (wire §A.0, §A.1). Every frame it writes is shaped after the vendored ACP v1
schema (``harness/schemas/acp/v1/schema.json``); the tests validate each one.

Modules: :mod:`.server` (the JSON-RPC loop and what each method answers),
:mod:`.render` (a turn's updates), :mod:`.channel` (stdin), :mod:`.wire` (shared state),
:mod:`.agent` and :mod:`.agents` (the agents and their differences), :mod:`.grammars`
(argv per CLI) and :mod:`fake_clis.goflag` (Go's flag rules).
"""

from __future__ import annotations

from fake_clis.acp.agents import AGENTS, entry_point
from fake_clis.acp.wire import PROTOCOL_VERSION
from fake_clis.base import CliSpec
from fake_clis.goflag import AnyFlag, GoFlagResult, go_flag_parse

__all__ = ["PROTOCOL_VERSION", "SPECS", "AnyFlag", "GoFlagResult", "go_flag_parse"]


SPECS: dict[str, CliSpec] = {
    agent.agent_id: CliSpec(
        agent_id=agent.agent_id,
        prog=agent.prog,
        version_output=agent.version_output,
        grammar=agent.grammar,
        style=agent.style,
        run=entry_point(agent),
        help_args=(("--help",), ("-h",)),
        help_text=agent.help_text,
        models_args=agent.models_args,
        models_output=agent.models_output,
        # seed 000 "AMR compaction continuation": only amr plays the compaction step.
        optional_steps=frozenset({"compaction"}) if agent.native_continue else frozenset(),
    )
    for agent in AGENTS
}
