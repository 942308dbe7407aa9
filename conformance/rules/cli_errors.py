"""Bad input to the ``harness`` command: one clear line on stderr, never a traceback."""

from __future__ import annotations

from conformance.rules import Rule, Tier

RULES = (
    Rule(
        "CLIERR-ONE-LINE-001",
        Tier.MANDATORY,
        "Bad input to any harness command is one 'harness: error:' line on stderr naming what "
        "was wrong and where, with exit 2; never a traceback.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-UTF8-001",
        Tier.MANDATORY,
        "A prompt file or a command-line argument that is not UTF-8 is refused, naming the file "
        "with line and column, or the argument's position and option.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-JSON-DEPTH-001",
        Tier.MANDATORY,
        "A profiles, MCP config or tool bundle file nested deeper than the harness's limit is "
        "refused, naming the file, line and column, before it is parsed.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-PROFILES-001",
        Tier.MANDATORY,
        "A broken profiles file (missing, not JSON, a bad entry) fails only the commands that "
        "load the defs, naming the file, entry and field; other commands run.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-OUTDIR-001",
        Tier.MANDATORY,
        "harness conform --out naming something other than a directory is refused before "
        "anything runs.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-TIMING-001",
        Tier.MANDATORY,
        "replay --timing refuses a chunk time that is not finite or lies after the recorded "
        "exit, naming the recording and its line.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-SCENARIO-001",
        Tier.MANDATORY,
        "An unknown scenario in run --fake, live run or live diff is refused before anything "
        "starts, listing the known names.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-PARSE-001",
        Tier.MANDATORY,
        "harness parse of one-way input holding no frame of the format prints the events, says "
        "so on stderr and exits 1.",
        "design §Reliability",
        (),
    ),
    Rule(
        "CLIERR-LIVE-INSTALL-001",
        Tier.MANDATORY,
        "harness live run of a CLI that is not installed exits non-zero with the command that "
        "installs it.",
        "design §Reliability",
        (),
    ),
)
