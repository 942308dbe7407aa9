"""``harness run AGENT``: one turn of an agent CLI, events printed live, then a summary.

``--fake`` installs the fake CLI shims into a temporary directory put first on PATH
(removing the def's ``<ID>_BIN`` override, which would bypass it) and selects the
scenario with ``FAKE_CLI_SCENARIO``. Exit code: 0 when the run succeeded, 1 when it
failed or was cancelled (rule RUN-CLI-001).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import uuid
from pathlib import Path
from typing import TextIO

from harness.commands import load_defs
from harness.errors import HarnessError

__all__ = ["DEFAULT_FAKE_PROMPT", "cmd_run", "format_summary"]

#: The prompt of a ``--fake`` run when none is given (fakes follow their scenario).
DEFAULT_FAKE_PROMPT = "Create hello.html with a greeting."


def _prompt(args: argparse.Namespace) -> str:
    raw: str | None = args.prompt
    if raw is None:
        if args.fake:
            return DEFAULT_FAKE_PROMPT
        raise HarnessError("harness run: give --prompt TEXT or --prompt @FILE")
    if raw.startswith("@"):
        path = raw[1:]
        try:
            return Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise HarnessError(f"--prompt @{path}: {exc.strerror or exc}") from exc
    return raw


def format_summary(result: object) -> list[str]:
    from harness.runner import RunResult

    assert isinstance(result, RunResult)
    if result.exit_code is not None:
        how = f"exit {result.exit_code}"
    elif result.signal is not None:
        how = f"signal {result.signal}"
    else:
        how = "not started" if result.pid is None else "exit unknown"
    lines = [f"status:   {result.status.value} ({how}) in {result.duration_ms / 1000:.2f} s"]
    lines.append(f"session:  {result.session_id or '-'}")
    lines.append("files:    " + (", ".join(result.files_written) or "-"))
    if result.cancel_latency_ms is not None:
        lines.append(f"cancel:   tree reaped {result.cancel_latency_ms:.0f} ms after the request")
    if result.error is not None:
        lines.append(f"error:    {result.error.code}: {result.error.message}")
        tail = result.stderr_tail.strip().splitlines()[-5:]
        lines.extend(f"stderr:   {line}" for line in tail)
    return lines


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    from harness.defs.registry import get_agent_def
    from harness.defs.types import ResumeStyle
    from harness.events import Event
    from harness.launch import path_env_key
    from harness.render import format_event
    from harness.runner import RunRequest, run_agent_async

    defs = load_defs(args)
    defn = get_agent_def(args.agent, defs)
    if args.scenario and not args.fake:
        raise HarnessError("--scenario needs --fake")
    if args.cancel_after is not None and args.cancel_after < 0:
        raise HarnessError("--cancel-after must be >= 0 seconds")
    prompt = _prompt(args)
    cwd = args.cwd or os.getcwd()
    env = dict(os.environ)

    def show(event: Event) -> None:
        if args.json:
            out.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
        else:
            out.write(format_event(event) + "\n")
        out.flush()

    with contextlib.ExitStack() as stack:
        if args.fake:
            from harness.fakes_install import install_fakes

            bin_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="harness-fakes-"))
            report = install_fakes(bin_dir, defs, agents=[defn.id])
            if not report.written:
                reasons = "; ".join(report.skipped)
                raise HarnessError(f"no fake CLI for agent {defn.id!r}: {reasons}")
            key = path_env_key(env, sys.platform)
            env[key] = bin_dir + os.pathsep + env.get(key, "")
            env["FAKE_CLI_SCENARIO"] = args.scenario or "happy"
            if defn.bin_env_key:
                for name in [k for k in env if k.upper() == defn.bin_env_key.upper()]:
                    del env[name]
        new_session_id = None
        if defn.resume_style is ResumeStyle.SPECIFY and not args.resume:
            new_session_id = str(uuid.uuid4())  # the host mints specify-style ids
        request = RunRequest(
            defn=defn,
            prompt=prompt,
            cwd=cwd,
            model=args.model,
            resume_session_id=args.resume,
            new_session_id=new_session_id,
            transport=args.transport,
            env=env,
            first_output_timeout_ms=args.first_output_timeout,
            inactivity_timeout_ms=args.inactivity_timeout,
        )

        async def main() -> object:
            cancel = asyncio.Event()
            if args.cancel_after is not None:
                asyncio.get_running_loop().call_later(args.cancel_after, cancel.set)
            return await run_agent_async(request, on_event=show, cancel=cancel)

        result = asyncio.run(main())

    from harness.runner import RunResult

    assert isinstance(result, RunResult)
    if args.json:
        out.write(json.dumps({"summary": result.to_json(include_events=False)}) + "\n")
    else:
        for line in format_summary(result):
            out.write(line + "\n")
    out.flush()
    return 0 if result.succeeded else 1
