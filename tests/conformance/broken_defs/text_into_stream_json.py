"""A deliberately broken def: its stdin stream does not match the format its argv asks for.

Claude Code's argv says ``--input-format stream-json``, but this def declares
``prompt_input_format=TEXT``, so the host writes the bare prompt where Claude Code reads
one JSON ``user`` line. No def-level check can see it; the fake ``claude`` refuses the
line, the run fails, and ``harness conform`` reports the mandatory RUN-HAPPY-TEXT-001 with
the stdin frame and the CLI's stderr as evidence.
"""

from __future__ import annotations

import dataclasses

from harness.defs.claude import AGENT_DEF as CLAUDE
from harness.defs.types import PromptInputFormat

AGENT_DEF = dataclasses.replace(
    CLAUDE,
    id="broken-stream",
    name="Broken stream (text into stream-json)",
    prompt_input_format=PromptInputFormat.TEXT,
)
