"""``harness agents``: a table (or JSON) of every definition.

``stream_format`` and ``event_parser`` are printed as the def fields they are, so a value
copied from here into a def file loads back (CLI-AGENTS-001).
"""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from harness.commands.common import load_defs
from harness.defs.types import AgentDef

__all__ = ["agent_summary", "cmd_agents"]

COLUMNS = (
    "id",
    "bin",
    "stream_format",
    "event_parser",
    "prompt_delivery",
    "resume_style",
    "mcp_injection",
)
#: How the table shows a field the def leaves unset (``None``).
UNSET = "-"


def agent_summary(defn: AgentDef) -> dict[str, Any]:
    """The def's contract, each value as the def field holds it (enums by value)."""
    return {
        "id": defn.id,
        "name": defn.name,
        "bin": defn.bin,
        "fallback_bins": list(defn.fallback_bins),
        "stream_format": defn.stream_format,
        "event_parser": defn.event_parser,
        "prompt_delivery": defn.prompt_delivery.value,
        "prompt_input_format": defn.prompt_input_format.value,
        "max_prompt_arg_bytes": defn.max_prompt_arg_bytes,
        "resume_style": defn.resume_style.value,
        "mcp_injection": defn.external_mcp_injection.value,
        "retired": defn.retired,
    }


def _cell(row: dict[str, Any], column: str) -> str:
    value = row[column]
    if column == "prompt_delivery" and value == "stdin" and row["prompt_input_format"] != "text":
        return f"{value} ({row['prompt_input_format']})"
    return UNSET if value is None else str(value)


def cmd_agents(args: argparse.Namespace, out: TextIO) -> int:
    summaries = [agent_summary(d) for d in load_defs(args)]
    if args.json:
        out.write(json.dumps(summaries, indent=2, ensure_ascii=False) + "\n")
        return 0
    rows = [{c: _cell(s, c) for c in COLUMNS} for s in summaries]
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS}
    out.write("  ".join(c.upper().ljust(widths[c]) for c in COLUMNS).rstrip() + "\n")
    for row in rows:
        out.write("  ".join(str(row[c]).ljust(widths[c]) for c in COLUMNS).rstrip() + "\n")
    # FIDELITY-RETIRED-001 (seed 000 §3): the ids kept that are not adapters any more.
    retired = [f"{s['id']} ({s['retired']})" for s in summaries if s["retired"]]
    tail = ""
    if retired:
        tail = (
            f" ({len(rows) - len(retired)} current; retired, used only when asked for by id: "
            + "; ".join(retired)
            + ")"
        )
    out.write(f"{len(rows)} agents{tail}\n")
    return 0
