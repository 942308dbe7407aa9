"""Antigravity (``agy``) in print mode over ``plain`` (seed 002 §4.4).

Invocation: ``agy [--log-file <ctx.agent_log_file_path>] -p -`` with the prompt on stdin
(seed 002 §1 table: ``agy --log-file /tmp/x -p -``, stdin bare text).

* ``--log-file`` must come BEFORE ``-p``: ``agy -p --log-file /tmp/x -`` runs but writes an empty
  log (seed 002 §4.4, pit one). The log is the only place print mode reports a missing login or an
  exhausted quota, both silent on stdout and stderr, so the flag is passed whenever the engine
  supplies a path.
* agy has no ``--model`` flag; upstream selects the model by writing agy's settings file and
  serialising concurrent runs with a lock (seed 002 §4.4, pits two and three). That is file IO and
  process coordination, which a pure ``build_args`` may not do, so this def does not select
  models: it offers only ``default`` and refuses custom ids.
* agy's ``-c`` continuation is deliberately not used (seed 002 §4.4: it activates an agentic loop
  the system prompt cannot override).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext

__all__ = ["AGENT_DEF"]


def _build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    context: RuntimeContext,
) -> list[str]:
    args: list[str] = []
    if context.agent_log_file_path:
        # seed 002 §4.4: order is load-bearing, --log-file before -p.
        args += ["--log-file", context.agent_log_file_path]
    args += ["-p", "-"]
    return args


AGENT_DEF = AgentDef(
    id="antigravity",
    name="Antigravity",
    bin="agy",
    build_args=_build_args,
    stream_format="plain",
    prompt_delivery=PromptDelivery.STDIN,
    supports_custom_model=False,
    # seed 002 §4.4 (FIDELITY-LOGFILE-001): print mode is silent on failure; the log says why.
    agent_log_file=True,
    auth_guidance="Open agy once in a terminal and sign in to your Google account, then retry.",
)
