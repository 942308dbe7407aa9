"""Rules of secret detection, shared by every place that redacts, and of recorded paths
reached through symlinks.

Enforced by ``harness/secrets/detect.py`` (the one detector) and its callers
``harness/secrets/scrub.py``, ``harness/secrets/redact.py``, ``conformance/fakes.py``,
``harness/mcp/servers.py``, ``harness/modelserver/log.py``, and by ``harness/recording/record.py``
(path spellings); proved by ``tests/secrets/`` and ``tests/recording/test_record_paths.py``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, ("*",))


RULES = (
    _rule(
        "SECRET-ONE-001",
        "Recordings, the runner's stderr and argv, the fakes' environment, MCP and the model "
        "server's log judge secret names and secret-shaped text by one detector, and agree.",
        "seed 001 §11",
    ),
    _rule(
        "SECRET-ENCODED-001",
        "A known secret value is redacted in every spelling a CLI is likely to print: raw, "
        "JSON-escaped, \\u-escaped, percent-encoded with %20 or +, and inside base64.",
        "seed 001 §11",
    ),
    _rule(
        "SECRET-URL-001",
        "The password of a scheme://user:password@host URL is redacted wherever it appears; "
        "the scheme, user and host are kept.",
        "seed 001 §14",
    ),
    _rule(
        "RECORD-PATHS-REAL-001",
        "The run's cwd, home and temp directories are written as placeholders both as given "
        "and as resolved through symlinks, the longest spelling first.",
        "design §Recordings",
    ),
)
