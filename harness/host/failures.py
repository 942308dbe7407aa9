"""Why a run failed, as the host tells its user (seed 000 §5.10, §5.11; seed 002 §4.4).

Pure functions over what a finished run left behind (its events, its stderr tail, the
tail of the log a silent CLI wrote); the runner calls them once the tree is gone.

Rules: FIDELITY-AUTH-001.
Design: docs/design/runner.md#harness.host.failures
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable

from harness.events import (
    Artifact,
    Event,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolResult,
    ToolUse,
)

__all__ = [
    "GENERIC_AUTH_GUIDANCE",
    "ServiceFailure",
    "classify_log_failure",
    "classify_service_failure",
    "excerpt_for",
    "has_output",
]

#: What the host tells a user whose CLI refused its credentials (no def-specific guidance).
GENERIC_AUTH_GUIDANCE = "Sign in to the CLI or set its API key, then send the request again."

_HTTP = r"(?:http|status(?:\s*code)?|statuscode|(?<!exit )code|error|failed)\s*[:=(]?\s*"


class ServiceFailure(str, enum.Enum):
    """ref §5.4: the classes ``classifyAgentServiceFailure`` tells apart (values are codes)."""

    AUTH_REQUIRED = "AGENT_AUTH_REQUIRED"
    RATE_LIMITED = "RATE_LIMITED"
    UPSTREAM_UNAVAILABLE = "UPSTREAM_UNAVAILABLE"


#: In ref §5.4's order: the first class whose pattern matches wins.
_PATTERNS: tuple[tuple[ServiceFailure, re.Pattern[str]], ...] = (
    (
        ServiceFailure.AUTH_REQUIRED,
        re.compile(
            rf"{_HTTP}401\b|\bunauthori[sz]ed\b|\bunauthenticated\b|invalid[ _-]?api[ _-]?key"
            r"|authentication\s+(?:required|fail\w*|error)|not\s+(?:authenticated|logged[ _-]?in"
            r"|signed[ _-]?in)|please\s+(?:sign|log)[ _-]?in|(?:^|\s)/login\b"
            r"|api[ _-]?key\s+(?:is\s+)?(?:missing|not\s+set|invalid)",
            re.IGNORECASE,
        ),
    ),
    (
        ServiceFailure.RATE_LIMITED,
        re.compile(
            rf"{_HTTP}429\b|rate[ _-]?limit|\bquota\b|resource[ _-]?exhausted"
            r"|insufficient\s+(?:funds|credit|balance)|usage\s+limit|too\s+many\s+requests",
            re.IGNORECASE,
        ),
    ),
    (
        ServiceFailure.UPSTREAM_UNAVAILABLE,
        re.compile(
            rf"{_HTTP}5\d\d\b|\boverloaded\b|bad\s+gateway|service\s+unavailable"
            r"|gateway\s+time-?out|upstream\s+(?:error|unavailable)",
            re.IGNORECASE,
        ),
    ),
)


def classify_service_failure(text: str) -> tuple[ServiceFailure, str] | None:
    """The class of ``text`` and the line that shows it, or ``None`` (ref §5.4 order)."""
    for kind, pattern in _PATTERNS:
        match = pattern.search(text)
        if match is not None:
            return kind, excerpt_for(text, match.start())
    return None


#: An HTTP status a CLI's own log names (``statusCode=429``, ``"statusCode": 401``).
_STATUS_CODE = re.compile(r"status_?code[\"']?\s*[:=]\s*[\"']?(\d{3})\b", re.IGNORECASE)


def classify_log_failure(text: str) -> tuple[ServiceFailure, str] | None:
    """seed 002 §7.4 ``readOpenCodeServiceFailure`` (FIDELITY-OPENCODE-LOG-001): the tail of a
    CLI's own log is classified by the last HTTP ``statusCode`` it names (401/403: auth,
    429: rate limit, 5xx: upstream), then by keywords as :func:`classify_service_failure`."""
    for match in reversed(list(_STATUS_CODE.finditer(text))):
        code = int(match.group(1))
        kind = (
            ServiceFailure.AUTH_REQUIRED
            if code in (401, 403)
            else ServiceFailure.RATE_LIMITED
            if code == 429
            else ServiceFailure.UPSTREAM_UNAVAILABLE
            if 500 <= code <= 599
            else None
        )
        if kind is not None:
            return kind, excerpt_for(text, match.start())
    return classify_service_failure(text)


def excerpt_for(text: str, at: int, limit: int = 200) -> str:
    """The line of ``text`` holding offset ``at``, stripped and cut to ``limit`` characters."""
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    line = text[start : end if end != -1 else len(text)].strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def has_output(events: Iterable[Event]) -> bool:
    """Some event a person can use: non-blank text or thinking, a tool call or its result,
    an artifact (FIDELITY-EMPTY-001). Status, usage, turn ends and raw lines are not."""
    for event in events:
        if isinstance(event, (TextDelta, ThinkingDelta)):
            if event.delta.strip():
                return True
        elif isinstance(event, (ToolUse, ToolInputDelta, ToolResult, Artifact)):
            return True
    return False
