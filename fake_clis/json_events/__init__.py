"""The ``json-event-stream`` emulators (seed 000 §3: one stream format, five dialects).

One module per CLI family, each with what the real CLI does and where it is written down:
:mod:`.codex` (``codex exec --json``), :mod:`.cursor` (Cursor Agent), :mod:`.opencode`
(OpenCode, BYOK OpenCode, MiMo) and :mod:`.gemini`; :mod:`.common` holds what they share.
"""

from __future__ import annotations

from fake_clis.base import CliSpec
from fake_clis.json_events.codex import CODEX_SPEC, CODEX_VERSION
from fake_clis.json_events.common import padded_line, truncated_line
from fake_clis.json_events.cursor import CURSOR_SPEC, CURSOR_VERSION
from fake_clis.json_events.gemini import GEMINI_SPEC, GEMINI_VERSION
from fake_clis.json_events.opencode import (
    BYOK_SPEC,
    MIMO_SPEC,
    MIMO_VERSION,
    OPENCODE_SPEC,
    OPENCODE_VERSION,
)

__all__ = [
    "CODEX_VERSION",
    "CURSOR_VERSION",
    "GEMINI_VERSION",
    "MIMO_VERSION",
    "OPENCODE_VERSION",
    "SPECS",
    "padded_line",
    "truncated_line",
]


SPECS: dict[str, CliSpec] = {
    "codex": CODEX_SPEC,
    "cursor-agent": CURSOR_SPEC,
    "opencode": OPENCODE_SPEC,
    "byok-opencode": BYOK_SPEC,
    "mimo": MIMO_SPEC,
    "gemini": GEMINI_SPEC,
}
