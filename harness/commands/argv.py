"""``harness argv``: the exact argv a def builds, how the prompt travels, the budget verdict."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

from harness.commands import load_defs
from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext
from harness.errors import HarnessError, PromptTooLargeError

__all__ = ["cmd_argv", "render_command_line"]

#: Shown in argv where the runner would put the temp prompt file's path.
PROMPT_FILE_PLACEHOLDER = "{prompt_file}"


def _capabilities(specs: list[str]) -> dict[str, bool]:
    caps: dict[str, bool] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        if not key:
            raise HarnessError(f"--cap {spec!r}: expected KEY or KEY=true|false")
        if sep and value.lower() not in ("true", "false", "1", "0"):
            raise HarnessError(f"--cap {spec!r}: value must be true or false")
        caps[key] = not sep or value.lower() in ("true", "1")
    return caps


def render_command_line(argv: list[str], platform: str) -> str:
    if platform == "win32":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def _resolved_bin(defn: AgentDef, args: argparse.Namespace, platform: str) -> str:
    if args.bin:
        return str(args.bin)
    if platform != sys.platform:
        return defn.bin
    from harness.launch import RealFileSystem, resolve_executable

    resolution = resolve_executable(
        defn, platform=platform, env=dict(os.environ), fs=RealFileSystem(), home=str(Path.home())
    )
    return resolution.launch_path or defn.bin


def cmd_argv(args: argparse.Namespace, out: TextIO) -> int:
    from harness.defs.registry import get_agent_def
    from harness.guards.budget import check_prompt_budget

    defn = get_agent_def(args.agent, load_defs(args))
    platform = args.platform or sys.platform
    if platform not in ("win32", "darwin", "linux"):
        raise HarnessError(f"--platform {platform!r}: expected win32, darwin or linux")
    if args.prompt is not None and args.prompt_file:
        raise HarnessError("give --prompt or --prompt-file, not both")
    prompt = args.prompt or ""
    if args.prompt_file:
        try:
            prompt = Path(args.prompt_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise HarnessError(f"--prompt-file {args.prompt_file}: {exc.strerror}") from exc
    context = RuntimeContext(
        cwd=args.cwd,
        platform=platform,
        env=dict(os.environ),
        resume_session_id=args.resume,
        prompt_file_path=(
            PROMPT_FILE_PLACEHOLDER if defn.prompt_delivery is PromptDelivery.FILE else None
        ),
    )
    options = BuildOptions(
        model=args.model, reasoning=args.reasoning, capabilities=_capabilities(args.cap)
    )
    built = defn.build_args(prompt, [], list(args.add_dir), options, context)
    resolved = _resolved_bin(defn, args, platform)
    full = [resolved, *built]
    verdict: dict[str, Any] = {"ok": True}
    try:
        check_prompt_budget(defn, prompt, platform=platform, resolved_bin=resolved, args=built)
    except PromptTooLargeError as exc:
        verdict = {"ok": False, "code": exc.code, "message": exc.message, "limit": exc.limit}
        if exc.bytes is not None:
            verdict["bytes"] = exc.bytes
        if exc.command_line_length is not None:
            verdict["command_line_length"] = exc.command_line_length
    delivery = defn.prompt_delivery.value
    report = {
        "agent": defn.id,
        "platform": platform,
        "argv": full,
        "prompt_delivery": delivery,
        "prompt_input_format": defn.prompt_input_format.value,
        "prompt_bytes": len(prompt.encode("utf-8")),
        "max_prompt_arg_bytes": defn.max_prompt_arg_bytes,
        "budget": verdict,
    }
    if args.json:
        out.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        how = delivery
        if defn.prompt_delivery is PromptDelivery.STDIN:
            how += f" ({defn.prompt_input_format.value})"
        out.write(f"agent:    {defn.id} ({defn.name}) on {platform}\n")
        out.write(f"argv:     {render_command_line(full, platform)}\n")
        out.write(f"prompt:   {how}, {report['prompt_bytes']} bytes\n")
        if verdict["ok"]:
            budget = "ok" if defn.max_prompt_arg_bytes else "ok (no argv budget applies)"
            out.write(f"budget:   {budget}\n")
        else:
            out.write(f"budget:   FAIL {verdict['code']}: {verdict['message']}\n")
    if not verdict["ok"]:
        print(f"harness: error: {verdict['code']}: {verdict['message']}", file=sys.stderr)
        return 1
    return 0
