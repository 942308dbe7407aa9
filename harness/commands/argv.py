"""``harness argv``: the exact argv a def builds, how the prompt travels, the budget verdict.

For a Windows binary (``--platform win32 --bin C:\\…``) it also shows the command line the
runner would build for it (``cmd.exe /d /s /c "…"`` for a ``.cmd``/``.bat`` shim) and whether
every argument survives that command line (WIN-CMDLINE-SHIM-001 / WIN-CMDLINE-EXE-001): an
argument the CLI would receive changed is reported as ``cmdline: FAIL`` and exits 1, as a run
would be refused before spawn.

With ``--mcp-config FILE`` / ``--skill DIR`` it also shows the adapter layer of such a run
without writing anything (seed 002 §8.1, seed 000 §4): the def's MCP strategy, the files it
would write or remove, the env var names (values redacted), the ACP ``mcpServers`` (env values
redacted), and where each skill would be staged; the skills are composed into the prompt the
argv and the budget are computed from, as a run would (SKILL-RUN-002).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from harness.commands.common import choose_def
from harness.defs.types import AgentDef, BuildOptions, PromptDelivery, RuntimeContext
from harness.errors import HarnessError, PromptTooLargeError
from harness.guards.budget import ArgvPromptLimit, check_prompt_budget, explain_argv_prompt_limit
from harness.guards.budget_generations import BudgetGeneration, budgets_for
from harness.guards.command_line import check_windows_command_line
from harness.guards.windows_cmdline import (
    cmd_shim_command_line,
    direct_exe_command_line,
    is_cmd_shim,
    looks_like_windows_path,
)
from harness.host.launch import RealFileSystem, resolve_executable
from harness.host.skills import Skill, compose_skill_prompt, plan_staging
from harness.inputs import read_text_file
from harness.mcp import load_mcp_config, plan_injection
from harness.runner.prepare import SKILL_PROMPT_SEPARATOR
from harness.secrets.redact import Redactor

__all__ = ["REDACTED", "cmd_argv", "render_command_line"]

#: Shown instead of an env value or a secret (MCP-SECRET-001).
REDACTED = "<redacted>"

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
    """``argv`` as one line: for Windows the line the launch path builds, else POSIX quoting."""
    if platform == "win32":
        if is_cmd_shim(argv[0]):
            return cmd_shim_command_line(argv)
        if looks_like_windows_path(argv[0]):
            return direct_exe_command_line(argv)
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def _command_line_verdict(
    defn: AgentDef, resolved: str, built: list[str], prompt: str
) -> dict[str, Any]:
    """Whether every argument survives the Windows launch path (``launch`` names it)."""
    launch = (
        "cmd-shim"
        if is_cmd_shim(resolved)
        else "direct-exe"
        if looks_like_windows_path(resolved)
        else None
    )
    error = check_windows_command_line(defn, resolved, built, prompt=prompt)
    if error is None:
        return {"ok": True, "launch": launch}
    return {
        "ok": False,
        "launch": error.launch,
        "code": error.code,
        "rule": error.rule,
        "message": error.message,
        "argument": error.index,
        "offset": error.offset,
        "sequence": error.sequence,
    }


def _resolved_bin(defn: AgentDef, args: argparse.Namespace, platform: str) -> str:
    if args.bin:
        return str(args.bin)
    if platform != sys.platform:
        return defn.bin
    resolution = resolve_executable(
        defn, platform=platform, env=dict(os.environ), fs=RealFileSystem(), home=str(Path.home())
    )
    return resolution.launch_path or defn.bin


def cmd_argv(args: argparse.Namespace, out: TextIO) -> int:
    defn = choose_def(args, args.agent).defn
    platform = args.platform or sys.platform
    if platform not in ("win32", "darwin", "linux"):
        raise HarnessError(f"--platform {platform!r}: expected win32, darwin or linux")
    generation = _generation(defn, args.budget_generation)
    adapter, prompt, skill_dirs = _adapter_preview(defn, args, _prompt_arg(args))
    context = RuntimeContext(
        cwd=args.cwd,
        platform=platform,
        env=dict(os.environ),
        skill_dirs=skill_dirs,
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
    verdict = _budget_verdict(
        defn, prompt, platform=platform, resolved=resolved, built=built, generation=generation
    )
    command_line = _command_line_verdict(defn, resolved, built, prompt)
    delivery = defn.prompt_delivery.value
    limit = (
        explain_argv_prompt_limit(defn.max_prompt_arg_bytes, platform, generation)
        if defn.max_prompt_arg_bytes is not None
        else None
    )
    report = {
        "agent": defn.id,
        "platform": platform,
        "argv": full,
        "prompt_delivery": delivery,
        "prompt_input_format": defn.prompt_input_format.value,
        "prompt_bytes": len(prompt.encode("utf-8")),
        "max_prompt_arg_bytes": defn.max_prompt_arg_bytes,
        # BUDGET-ARGV-001: the limit the argv check applies here, and whose number it is.
        "prompt_limit": dataclasses.asdict(limit) if limit is not None else None,
        "budget_generation": {
            "name": generation.value,
            "source": budgets_for(generation).source,
        },
        "budget": verdict,
        "command_line": command_line,
    }
    if adapter is not None:
        report["adapter_layer"] = adapter
    if args.json:
        out.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        _write_text_report(out, defn, report, limit)
    if not verdict["ok"]:
        print(f"harness: error: {verdict['code']}: {verdict['message']}", file=sys.stderr)
        return 1
    if not command_line["ok"]:
        print(
            f"harness: error: {command_line['code']}: [{command_line['rule']}] "
            f"{command_line['message']}",
            file=sys.stderr,
        )
        return 1
    return 0


def _generation(defn: AgentDef, asked: str | None) -> BudgetGeneration:
    """The def's budget generation, or the one ``--budget-generation`` names
    (FIDELITY-BUDGET-001: either generation of the platform budget can be checked)."""
    if asked is None:
        return defn.prompt_budget_generation
    try:
        budgets_for(asked)
    except ValueError as exc:
        raise HarnessError(f"--budget-generation: {exc}") from None
    return BudgetGeneration(asked)


def _prompt_arg(args: argparse.Namespace) -> str:
    """The prompt from ``--prompt`` or ``--prompt-file`` (not both), else empty."""
    if args.prompt is not None and args.prompt_file:
        raise HarnessError("give --prompt or --prompt-file, not both")
    if args.prompt_file:
        return read_text_file(args.prompt_file, label=f"--prompt-file {args.prompt_file}")
    return str(args.prompt or "")


def _budget_verdict(
    defn: AgentDef,
    prompt: str,
    *,
    platform: str,
    resolved: str,
    built: list[str],
    generation: BudgetGeneration,
) -> dict[str, Any]:
    """``{"ok": True}``, or what the prompt-budget guard refused and why."""
    try:
        check_prompt_budget(
            defn,
            prompt,
            platform=platform,
            resolved_bin=resolved,
            args=built,
            generation=generation,
        )
    except PromptTooLargeError as exc:
        verdict = {"ok": False, "code": exc.code, "message": exc.message, "limit": exc.limit}
        if exc.bytes is not None:
            verdict["bytes"] = exc.bytes
        if exc.command_line_length is not None:
            verdict["command_line_length"] = exc.command_line_length
        return verdict
    return {"ok": True}


def _write_text_report(
    out: TextIO, defn: AgentDef, report: dict[str, Any], limit: ArgvPromptLimit | None
) -> None:
    """The ``harness argv`` report for a person: one labelled line per finding."""
    platform, verdict, command_line = report["platform"], report["budget"], report["command_line"]
    how = report["prompt_delivery"]
    if defn.prompt_delivery is PromptDelivery.STDIN:
        how += f" ({defn.prompt_input_format.value})"
    out.write(f"agent:    {defn.id} ({defn.name}) on {platform}\n")
    out.write(f"argv:     {render_command_line(report['argv'], platform)}\n")
    out.write(f"prompt:   {how}, {report['prompt_bytes']} bytes\n")
    if limit is not None:
        out.write(f"limit:    {limit.describe(platform)}\n")
    if verdict["ok"]:
        budget = "ok" if defn.max_prompt_arg_bytes else "ok (no argv budget applies)"
        out.write(f"budget:   {budget}\n")
    else:
        out.write(f"budget:   FAIL {verdict['code']}: {verdict['message']}\n")
    if not command_line["ok"]:
        out.write(
            f"cmdline:  FAIL {command_line['code']} [{command_line['rule']}]: "
            f"{command_line['message']}\n"
        )
    elif command_line["launch"] is not None:
        out.write(f"cmdline:  ok (every argument survives the {command_line['launch']} launch)\n")
    if "adapter_layer" in report:
        for line in _adapter_lines(report["adapter_layer"]):
            out.write(line + "\n")


def _acp_entry(entry: Mapping[str, Any], redactor: Any) -> dict[str, Any]:
    env = entry.get("env")
    names = sorted(env) if isinstance(env, Mapping) else [e.get("name") for e in env or []]
    return {
        "type": entry.get("type"),
        "name": entry.get("name"),
        "command": redactor.redact(str(entry.get("command", ""))),
        "args": [redactor.redact(str(a)) for a in entry.get("args", [])],
        "env": dict.fromkeys(names, REDACTED),
    }


def _adapter_preview(
    defn: AgentDef, args: argparse.Namespace, prompt: str
) -> tuple[dict[str, Any] | None, str, tuple[str, ...]]:
    """The MCP plan and the skill staging a run would do; pure (nothing is written)."""
    mcp_file = getattr(args, "mcp_config", None)
    skill_sources: list[str] = list(getattr(args, "skill", None) or [])
    if not mcp_file and not skill_sources:
        return None, prompt, ()
    cwd = os.path.abspath(args.cwd or os.getcwd())
    root = os.path.abspath(args.projects_root) if getattr(args, "projects_root", None) else None
    servers = load_mcp_config(mcp_file) if mcp_file else ()
    plan = plan_injection(
        defn,
        servers,
        None,
        cwd=cwd,
        managed_projects_root=root,
        agent_version=getattr(args, "agent_version", None),
    )
    redactor = Redactor(None, secrets=plan.secrets)
    summary = plan.to_json()
    preview: dict[str, Any] = {
        "writes_nothing": True,
        "mcp": {
            "strategy": summary["strategy"],
            "reason": summary["reason"],
            "would_write": summary["writes"],
            "would_remove": summary["removals"],
            "env": dict.fromkeys(summary["env_set"], REDACTED),
            "env_untouched": summary["env_untouched"],
            "acp_mcp_servers": [_acp_entry(e, redactor) for e in plan.acp_mcp_servers],
            "delivered": summary["delivered"],
            "skipped": summary["skipped"],
        },
        "skills": [],
    }
    skill_dirs: tuple[str, ...] = ()
    if skill_sources:
        skills = [Skill(os.path.basename(os.path.normpath(d)) or d, d) for d in skill_sources]
        planned = [plan_staging(cwd, skill) for skill in skills]
        prompt = (
            compose_skill_prompt(skills, planned).rstrip("\n") + SKILL_PROMPT_SEPARATOR + prompt
        )
        skill_dirs = tuple(p.staged_dir for p in planned)
        preview["skills"] = [
            {"id": p.skill_id, "staged": p.relative_dir, "source": p.source_dir} for p in planned
        ]
    return preview, prompt, skill_dirs


def _adapter_lines(preview: Mapping[str, Any]) -> list[str]:
    mcp = preview["mcp"]
    lines = [f"mcp:      {mcp['strategy']}: {mcp['reason']}"]
    lines += [f"  would write  {path}" for path in mcp["would_write"]]
    lines += [f"  would remove {path} if present" for path in mcp["would_remove"]]
    lines += [f"  env {name}={value}" for name, value in mcp["env"].items()]
    lines += [f"  env {name} left as inherited" for name in mcp["env_untouched"]]
    for entry in mcp["acp_mcp_servers"]:
        env = " ".join(f"{k}={v}" for k, v in entry["env"].items())
        argv = shlex.join([entry["command"], *entry["args"]])
        lines.append(f"  ACP mcpServers: {entry['name']}: {argv}" + (f" env {env}" if env else ""))
    lines += [f"  not delivered: {s['id']}: {s['reason']}" for s in mcp["skipped"]]
    for skill in preview["skills"]:
        lines.append(
            f"skill:    {skill['id']}: would stage {skill['source']} -> {skill['staged']}/"
        )
    lines.append("(nothing was written)")
    return lines
