"""Rules of ``harness dsh setup``: the pinned, verified, explicit profile install.

Seed 001 §4 (delivery and installation), §5 (discovery and compatibility), §11 and §14
(credentials, security). Enforced by ``harness/runtime/dsh_setup.py`` (the pure
:func:`plan_step` and its IO loop), ``harness/commands/dsh.py`` and
``harness/profile_bundle/``; proved by ``tests/dsh_setup/``.
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

_DSH = ("dsh-profile-jsonl",)


def _rule(rule_id: str, statement: str, citation: str) -> Rule:
    return Rule(rule_id, Tier.MANDATORY, statement, citation, _DSH)


RULES = (
    _rule(
        "DSHSETUP-BUNDLE-001",
        "The embedded profile bundle is a real npm-pack tarball of @open-design/dsh-runtime "
        "whose manifest pins its SHA-256, and build_bundle.py rebuilds it deterministically.",
        "seed 001 §4",
    ),
    _rule(
        "DSHSETUP-VERIFY-001",
        "The bundle's SHA-256 is checked against the manifest before dsh is called at all; a "
        "mismatch or a manifest naming another package or profile is a typed error.",
        "seed 001 §4",
    ),
    _rule(
        "DSHSETUP-MISSING-001",
        "When dsh cannot be found or run, setup fails with a typed error that points to the "
        "official installer and runs nothing else.",
        "seed 001 §4",
    ),
    _rule(
        "DSHSETUP-VERSION-001",
        "A failed, empty or unparseable dsh --version is a typed error and nothing is installed.",
        "seed 001 §5",
    ),
    _rule(
        "DSHSETUP-VERSION-002",
        "A parseable dsh version outside the tested set gives a warning and the setup continues.",
        "seed 001 §5",
    ),
    _rule(
        "DSHSETUP-EXISTING-001",
        "When the open-design profile already answers a compatible probe frame, setup "
        "neither asks nor reinstalls.",
        "seed 001 §4",
    ),
    _rule(
        "DSHSETUP-CONFIRM-001",
        "Without --yes the install needs a yes on a terminal; with no terminal setup refuses, "
        "and a cancel leaves the profile unchanged.",
        "seed 001 §4",
    ),
    _rule(
        "DSHSETUP-PINNED-001",
        "The install is exactly `dsh plugin --profile open-design add <embedded tarball>`; no "
        "command-line option or environment variable chooses package, profile or destination.",
        "seed 001 §14",
    ),
    _rule(
        "DSHSETUP-PROBE-001",
        "After the install, dsh --profile open-design --probe must print a compatible probe "
        "frame reporting the pinned plugin version, else setup fails with a typed error.",
        "seed 001 §5",
    ),
    _rule(
        "DSHSETUP-STARTUP-001",
        "Setup never runs implicitly: importing harness, `harness agents` and `harness detect` "
        "never call dsh plugin add.",
        "seed 001 §14",
    ),
    _rule(
        "DSHSETUP-SECRET-001",
        "No credential from the environment appears in setup output, reports or error "
        "messages, even when dsh prints it.",
        "seed 001 §11",
    ),
)
