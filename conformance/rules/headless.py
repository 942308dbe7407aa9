"""Rules of the headless permission posture (seed 000 §10 "Authorization boundaries").

The engine runs every CLI without a terminal, so a CLI that would stop at an interactive
approval prompt must be started with its non-interactive permission flags, declared as data in
``AgentDef.headless_flags``. Which CLIs can prompt, and what each one accepts as "do not ask",
is written down once in ``fake_clis/approval.py`` (the fakes' side, which may name agents);
proved by ``tests/headless/``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "HEADLESS-DECLARED-001",
        Tier.MANDATORY,
        "Every def whose CLI can stop at an approval prompt declares headless_flags, build_args "
        "passes them, and they are what the CLI takes as its do-not-ask posture.",
        "seed 000 §10",
        (),
    ),
    Rule(
        "HEADLESS-TTY-001",
        Tier.MANDATORY,
        "On a real terminal a fake CLI started without its def's headless flags stops at an "
        "approval prompt, and started with the def's argv runs to the end.",
        "seed 000 §10",
        (),
    ),
)
