"""Fake ACP agents: the ``acp-json-rpc`` emulators (amr, devin, hermes, kimi, kiro, kilo,
reasonix, trae-cli, vibe).

Design: docs/design/fakes.md#fake_clis.acp
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
