"""``harness agents``: a table (or JSON) of every definition."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from harness.commands import load_defs
from harness.defs.types import AgentDef

__all__ = ["agent_summary", "cmd_agents"]

COLUMNS = ("id", "bin", "stream_format", "prompt_delivery", "resume_style", "mcp_injection")


def agent_summary(defn: AgentDef) -> dict[str, Any]:
    fmt = defn.stream_format + (f"/{defn.event_parser}" if defn.event_parser else "")
    delivery = defn.prompt_delivery.value
    if delivery == "stdin" and defn.prompt_input_format.value != "text":
        delivery += f" ({defn.prompt_input_format.value})"
    return {
        "id": defn.id,
        "name": defn.name,
        "bin": defn.bin,
        "fallback_bins": list(defn.fallback_bins),
        "stream_format": fmt,
        "prompt_delivery": delivery,
        "max_prompt_arg_bytes": defn.max_prompt_arg_bytes,
        "resume_style": defn.resume_style.value,
        "mcp_injection": defn.external_mcp_injection.value,
    }


def cmd_agents(args: argparse.Namespace, out: TextIO) -> int:
    rows = [agent_summary(d) for d in load_defs(args)]
    if args.json:
        out.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
        return 0
    widths = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in COLUMNS}
    out.write("  ".join(c.upper().ljust(widths[c]) for c in COLUMNS).rstrip() + "\n")
    for row in rows:
        out.write("  ".join(str(row[c]).ljust(widths[c]) for c in COLUMNS).rstrip() + "\n")
    out.write(f"{len(rows)} agents\n")
    return 0
