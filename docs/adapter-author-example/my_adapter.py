"""An example adapter def: ``my-claude``, a CLI that speaks Claude Code's stream-json.

Say your team ships ``my-claude``, a wrapper around Claude Code with its own binary
name. It reads the prompt as one stream-json ``user`` line on stdin and writes
Claude's ``--output-format stream-json`` on stdout, so the def reuses the engine's
``claude-stream-json`` parser. The pytest plugin plays its CLI with the fake ``claude``
(the first built-in def that reads the same stream format; ``--adapter-fake-as claude``
says so explicitly), which parses argv as strictly as Claude Code: a wrong flag here
makes the example tests fail, naming the rule that broke.

Test it: ``pytest test_my_adapter.py --adapter-def my_adapter.py`` (see
``docs/pytest-plugin.md``); judge it rule by rule: ``harness conform --def my_adapter.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    AgentDef,
    BuildOptions,
    ModelOption,
    PromptDelivery,
    PromptInputFormat,
    ResumeStyle,
    RuntimeContext,
)

#: Always passed: this CLI runs headless, so it must never stop to ask for permission.
HEADLESS = ("--permission-mode", "bypassPermissions")


def build_args(
    prompt: str,
    image_paths: Sequence[str],
    extra_allowed_dirs: Sequence[str],
    options: BuildOptions,
    ctx: RuntimeContext,
) -> list[str]:
    """argv for one turn. Pure: everything comes from the arguments, nothing from globals."""
    # The prompt travels on stdin as stream-json; --verbose is required with stream-json
    # output in print mode.
    args = ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
    if options.model and options.model != DEFAULT_MODEL_OPTION.id:
        args += ["--model", options.model]
    dirs = [d for d in extra_allowed_dirs if d]
    if dirs and options.capabilities.get("addDir") is not False:
        args += ["--add-dir", *dirs]
    # The host mints the session id for a new session and resumes a stored one.
    if ctx.resume_session_id:
        args += ["--resume", ctx.resume_session_id]
    elif ctx.new_session_id:
        args += ["--session-id", ctx.new_session_id]
    return [*args, *HEADLESS]


AGENT_DEF = AgentDef(
    id="my-claude",
    name="My Claude",
    bin="my-claude",
    build_args=build_args,
    stream_format="claude-stream-json",
    prompt_delivery=PromptDelivery.STDIN,
    prompt_input_format=PromptInputFormat.STREAM_JSON,
    headless_flags=HEADLESS,
    help_args=("-p", "--help"),
    capability_flags={"--add-dir": "addDir"},
    fallback_models=(DEFAULT_MODEL_OPTION, ModelOption("sonnet", "Sonnet")),
    resume_style=ResumeStyle.SPECIFY,
)
