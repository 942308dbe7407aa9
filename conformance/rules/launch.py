"""Rules for executable resolution, launch env and detection.

Enforced by ``harness/host/launch.py``, ``harness/runtime/detect.py`` and
``harness/runtime/probe.py`` (``run_probe``); tested in ``tests/launch/``. All are
def-level (``formats=()``).
"""

from __future__ import annotations

from conformance.rules import Rule, Tier

__all__ = ["RULES"]

RULES: tuple[Rule, ...] = (
    # ------------------------------------------------------------------ resolution
    Rule(
        id="LAUNCH-ORDER-001",
        tier=Tier.MANDATORY,
        statement=(
            "The selected executable is the first of: valid <ID>_BIN override, bundled "
            "executable, PATH ∪ user toolchain dirs, darwin app bundle."
        ),
        citation="seed 002 §5.1",
        formats=(),
    ),
    Rule(
        id="LAUNCH-OVERRIDE-001",
        tier=Tier.MANDATORY,
        statement=(
            "An <ID>_BIN override is trimmed and ~-expanded and is used only when absolute, "
            "a file and executable (POSIX X_OK; win32 extension in PATHEXT ∪ .EXE/.CMD/.BAT)."
        ),
        citation="ref §5.2",
        formats=(),
    ),
    Rule(
        id="LAUNCH-PATH-001",
        tier=Tier.MANDATORY,
        statement=(
            "The PATH walk searches PATH then user toolchain dirs with the candidate as the "
            "outer loop, so the primary bin anywhere beats a fallback bin earlier on PATH."
        ),
        citation="seed 002 §5.1",
        formats=(),
    ),
    Rule(
        id="LAUNCH-PATHEXT-001",
        tier=Tier.MANDATORY,
        statement=(
            "On win32 each name is tried with '', then PATHEXT entries, then .EXE .CMD .BAT "
            "(de-duplicated case-insensitively); PATH is read from any key case ('Path'), "
            "split on ';'."
        ),
        citation="ref §5.2",
        formats=(),
    ),
    Rule(
        id="LAUNCH-APPBUNDLE-001",
        tier=Tier.CAPABILITY,
        statement="App-bundle paths are tried on darwin only, and only after the PATH walk.",
        citation="seed 002 §5.1",
        formats=(),
        capability="app_bundle_paths",
    ),
    Rule(
        id="LAUNCH-CODEX-NATIVE-001",
        tier=Tier.CAPABILITY,
        statement=(
            "A node-wrapper selected path is launched as node_modules/<prefix><platform>-<arch>/"
            "vendor/<target-triple>/<bin_dir>/<bin>[.exe] found upward from the wrapper, "
            "when present."
        ),
        citation="seed 002 §5.2",
        formats=(),
        capability="node_wrapper_native",
    ),
    Rule(
        id="LAUNCH-CODEX-NATIVE-002",
        tier=Tier.CAPABILITY,
        statement="Deciding whether a file is a node wrapper reads at most its first 64 KiB.",
        citation="seed 002 §5.2",
        formats=(),
        capability="node_wrapper_native",
    ),
    # ------------------------------------------------------------------ launch env
    Rule(
        id="LAUNCH-ENV-001",
        tier=Tier.MANDATORY,
        statement=(
            "Child PATH = dedupe([interpreter dir, dirname(selected), native dirs, *existing PATH, "
            "*user toolchain dirs]), dedupe ignoring trailing slashes (and case on win32)."
        ),
        citation="seed 002 §5.3",
        formats=(),
    ),
    Rule(
        id="LAUNCH-ENV-002",
        tier=Tier.MANDATORY,
        statement=(
            "On win32 the child PATH keeps the existing key name ('Path') and every existing entry."
        ),
        citation="seed 002 §5.3",
        formats=(),
    ),
    Rule(
        id="LAUNCH-ENV-003",
        tier=Tier.MANDATORY,
        statement=(
            "The child env is base env + def.env, minus each strip rule's keys (matched "
            "case-insensitively) unless one of its unless_set keys is non-empty."
        ),
        citation="ref §5.3",
        formats=(),
    ),
    # ------------------------------------------------------------------ detection
    Rule(
        id="DETECT-LAUNCHPATH-001",
        tier=Tier.MANDATORY,
        statement="Every detection probe runs the resolved launch path with the launch env.",
        citation="seed 000 §2",
        formats=(),
    ),
    Rule(
        id="DETECT-VERSION-001",
        tier=Tier.MANDATORY,
        statement="A version probe failing with EACCES or exit 126 makes the def unavailable.",
        citation="seed 002 §5.4",
        formats=(),
    ),
    Rule(
        id="DETECT-VERSION-002",
        tier=Tier.MANDATORY,
        statement=(
            "A version probe failing with ENOENT, ENOTDIR or exit 127 makes the def unavailable."
        ),
        citation="seed 002 §5.4",
        formats=(),
    ),
    Rule(
        id="DETECT-VERSION-003",
        tier=Tier.MANDATORY,
        statement=(
            "Any other version probe failure (timeout, other non-zero exit, signal) leaves the "
            "def available with version None."
        ),
        citation="seed 002 §5.4",
        formats=(),
    ),
    Rule(
        id="DETECT-VERSION-004",
        tier=Tier.MANDATORY,
        statement=(
            "A successful version probe's version is its first non-blank stdout line, trimmed, "
            "passed through version_policy.parse when given."
        ),
        citation="ref §5.1",
        formats=(),
    ),
    Rule(
        id="DETECT-TIMEOUT-001",
        tier=Tier.MANDATORY,
        statement=(
            "A probe past its timeout has its whole process tree killed and reaped; no probe "
            "leaves a process behind."
        ),
        citation="ref §5.1",
        formats=(),
    ),
    Rule(
        id="DETECT-TIMEOUT-002",
        tier=Tier.MANDATORY,
        statement=(
            "Probe timeouts come from the def, defaulting to version 3 s, help 5 s, models 5 s, "
            "auth 5 s, compatibility 5 s."
        ),
        citation="ref §5.1",
        formats=(),
    ),
    Rule(
        id="DETECT-POLICY-001",
        tier=Tier.CAPABILITY,
        statement=(
            "With a version policy, require_version and no version makes the def unavailable; a "
            "version outside the tested set only adds a warning diagnostic."
        ),
        citation="ref §5.1",
        formats=(),
        capability="version_policy",
    ),
    Rule(
        id="DETECT-COMPAT-001",
        tier=Tier.CAPABILITY,
        statement=(
            "The compatibility probe runs after the version probe; its failure or a raising "
            "parse makes the def unavailable with a diagnostic."
        ),
        citation="ref §5.1",
        formats=(),
        capability="compatibility_probe",
    ),
    Rule(
        id="DETECT-CAPS-001",
        tier=Tier.MANDATORY,
        statement=(
            "Capabilities are help-output substring matches of capability_flags; a failed help "
            "probe gives {} (no optional flags)."
        ),
        citation="seed 002 §5.5",
        formats=(),
    ),
    Rule(
        id="DETECT-MODELS-001",
        tier=Tier.MANDATORY,
        statement=(
            "A parsed non-empty model listing is 'live' with default first; no listing, a failure, "
            "None or empty gives fallback_models as 'fallback'."
        ),
        citation="ref §5.1",
        formats=(),
    ),
    Rule(
        id="DETECT-AUTH-001",
        tier=Tier.MANDATORY,
        statement=(
            "Auth is probed only when declared and reported as ok, missing or unknown with a "
            "message; without a probe there is no auth field."
        ),
        citation="seed 000 §2",
        formats=(),
    ),
    Rule(
        id="DETECT-CONCURRENT-001",
        tier=Tier.MANDATORY,
        statement="After the version probe, help, model and auth probes run concurrently.",
        citation="seed 002 §5.4",
        formats=(),
    ),
    Rule(
        id="DETECT-PARALLEL-001",
        tier=Tier.MANDATORY,
        statement="All defs are probed concurrently (optionally bounded by a concurrency limit).",
        citation="seed 000 §2",
        formats=(),
    ),
    Rule(
        id="DETECT-ISOLATION-001",
        tier=Tier.MANDATORY,
        statement=(
            "An exception while detecting one def makes only that def unavailable, with a "
            "diagnostic; the others are unaffected."
        ),
        citation="seed 002 §5.4",
        formats=(),
    ),
    Rule(
        id="DETECT-ORDER-001",
        tier=Tier.MANDATORY,
        statement="The detection stream yields every def exactly once, in completion order.",
        citation="seed 002 §5.4",
        formats=(),
    ),
    Rule(
        id="DETECT-ORDER-002",
        tier=Tier.MANDATORY,
        statement="Batch detection returns results in registry (input) order.",
        citation="ref §5.1",
        formats=(),
    ),
    Rule(
        "LAUNCH-ENV-004",
        Tier.MANDATORY,
        "An env var the def restricts to allowed values is dropped from the spawn env otherwise.",
        "ref §5.3",
        (),
    ),
)
