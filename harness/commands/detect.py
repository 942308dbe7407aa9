"""``harness detect``: probe every installed CLI, printing each result as its probe settles."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from harness.commands.common import load_defs
from harness.errors import UnknownAgentError
from harness.runtime.detect import DetectionResult, detect_stream

__all__ = ["cmd_detect", "format_result"]


def _short(message: str, limit: int = 90) -> str:
    """One diagnostic for a terminal line: up to a ``: <details>`` tail, then cut."""
    head = message.split(": ", 1)[0] if len(message) > limit else message
    return head if len(head) <= limit else head[: limit - 1] + "…"


def format_result(result: object) -> str:
    assert isinstance(result, DetectionResult)
    if not result.available:
        why = "; ".join(_short(d.message) for d in result.diagnostics) or "not found"
        return f"{result.id:<18} unavailable  {why}"
    caps = ",".join(k for k, v in sorted(result.capabilities.items()) if v) or "-"
    models = f"{result.models_source}({len(result.models)})"
    parts = [
        f"{result.id:<18} available",
        f"path={result.path}",
        f"version={result.version or '?'}",
        f"caps={caps}",
        f"models={models}",
    ]
    if result.auth_status is not None:
        parts.append(f"auth={result.auth_status.value}")
    warnings = [d.message for d in result.diagnostics if d.code != "models-fallback"]
    if warnings:
        parts.append("note=" + "; ".join(_short(w) for w in warnings))
    return "  ".join(parts)


def cmd_detect(args: argparse.Namespace, out: TextIO) -> int:
    defs = load_defs(args)
    if args.agent:
        known = {d.id for d in defs}
        missing = [a for a in args.agent if a not in known]
        if missing:
            raise UnknownAgentError(missing[0], sorted(known))
        defs = tuple(d for d in defs if d.id in set(args.agent))

    async def stream() -> int:
        available = 0
        async for result in detect_stream(
            defs,
            env=dict(os.environ),
            platform=sys.platform,
            home=str(Path.home()),
            interpreter_dir=str(Path(sys.executable).parent),
        ):
            available += result.available
            if args.json:
                out.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
            else:
                out.write(format_result(result) + "\n")
            out.flush()
        if not args.json:
            out.write(f"{available} of {len(defs)} agents available\n")
        return 0

    return asyncio.run(stream())
