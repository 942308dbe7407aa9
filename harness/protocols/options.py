"""Option values a def hands to a CLI, shared by argv building and the two-way sessions.

A model, reasoning level or service tier of ``"default"`` means "send nothing, the CLI's
own default applies" (ref §8.3); codex clamps a reasoning level to what the model family
accepts; an ACP agent takes an MCP server's ``env`` as an array or a map. Both
:mod:`harness.defs` and the sessions in :mod:`harness.protocols` need these, so they
live below both (and import nothing heavy: every def loads them).
"""

from __future__ import annotations

import enum

__all__ = ["DEFAULT_CHOICE", "AcpEnvFormat", "choice_flag", "clamp_codex_reasoning"]

#: The synthetic choice that means "omit the flag" (ref §8.3).
DEFAULT_CHOICE = "default"


def choice_flag(value: str | None) -> str | None:
    """``value`` unless it is ``None``, empty, or the synthetic ``"default"`` (ref §8.3)."""
    if value is None or value in ("", DEFAULT_CHOICE):
        return None
    return value


# --- codex reasoning ----------------------------------------------------------

_LATE_GPT5_PREFIXES = ("gpt-5.2", "gpt-5.3", "gpt-5.4", "gpt-5.5")


def clamp_codex_reasoning(model: str | None, effort: str) -> str:
    """Clamp a reasoning level to what the model family accepts (seed 002 §4.5).

    seed 002 §4.5: "``gpt-5.1-codex-mini`` only accepts high / medium; any other
    choice is clamped". The late gpt-5 family (and the CLI default model) has no
    ``minimal`` (-> ``low``); ``gpt-5.1`` has no ``xhigh`` (-> ``high``).
    A ``provider/model`` id is judged by its last segment.
    """
    raw = (model or "").strip()
    ident = raw.rsplit("/", 1)[-1]
    late_family = ident in ("", DEFAULT_CHOICE) or ident.startswith(_LATE_GPT5_PREFIXES)
    if late_family and effort == "minimal":
        return "low"
    if ident == "gpt-5.1" and effort == "xhigh":
        return "high"
    if ident == "gpt-5.1-codex-mini":
        return "high" if effort in ("high", "xhigh") else "medium"
    return effort


class AcpEnvFormat(str, enum.Enum):
    """Shape of an MCP server's ``env`` in ACP ``session/new`` (ref §2.6)."""

    ARRAY = "array"
    MAP = "map"
