"""``harness live``: install pinned real CLIs and run them offline.

* ``harness live recipes`` — validate every recipe, one line each;
* ``harness live install [ID...]`` — the pinned CLIs into the cache dir (idempotent);
* ``harness live run ID --scenario S [--transport T] [--record FILE [--force]] [--json]`` —
  the real CLI against the scripted model server, events printed as they come, then the
  server's request log summary. ``--record`` stops before anything runs when FILE, or a
  file the run would also write (``<stem>.turnN<ext>``, ``<name>.continued<ext>``),
  already exists, unless ``--force`` (then each is replaced whole; USERFILE-RECORD-001);
* ``harness live diff ID --scenario S [--transport T]`` — the differential check of one
  case (real vs fake), one verdict line per LIVE rule.
"""

from __future__ import annotations

import argparse
import glob
import json
from collections import Counter
from pathlib import Path
from typing import TextIO

from harness.defs.types import AgentDef
from harness.errors import HarnessError
from harness.events import Event

__all__ = ["add_live_parser", "cmd_live"]


def add_live_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``harness live`` and its subcommands on the top-level subparsers."""
    live = sub.add_parser("live", help="real CLIs offline against the scripted model server")
    live_sub = live.add_subparsers(dest="live_command", required=True, metavar="SUBCOMMAND")
    recipes = live_sub.add_parser("recipes", help="validate the live recipes")
    recipes.add_argument("--dir", metavar="DIR", help="recipe dir (default: built-in)")
    install = live_sub.add_parser("install", help="install pinned CLIs into the cache dir")
    install.add_argument("ids", nargs="*", metavar="ID", help="agent ids (default: every recipe)")
    install.add_argument("--cache", metavar="DIR", help="cache dir (default: .cache/live)")
    install.add_argument("--force", action="store_true", help="reinstall even when present")
    for name, text in (
        ("run", "run one scenario on the real CLI"),
        ("diff", "run one scenario on the real CLI and the fake; compare"),
    ):
        p = live_sub.add_parser(name, help=text)
        p.add_argument("id", metavar="ID", help="agent id")
        p.add_argument("--scenario", required=True, metavar="S", help="case id or scenario")
        p.add_argument("--transport", metavar="T", help="one of the recipe's transports")
        p.add_argument("--cache", metavar="DIR", help="cache dir (default: .cache/live)")
        p.add_argument("--json", action="store_true", help="one JSON object per line")
        if name == "run":
            p.add_argument("--record", metavar="FILE", help="record the real run (format v1)")
            p.add_argument("--force", action="store_true", help="--record may replace files")
            p.add_argument("--fake", action="store_true", help="run the fake instead")


def cmd_live(args: argparse.Namespace, out: TextIO) -> int:
    # start-up: cli imports this module to build its parser; only `harness live` loads this
    from harness.live.recipes import RECIPE_DIR, load_recipes

    if args.live_command == "recipes":
        from harness.live.recipes import main as recipes_main  # start-up, as above

        return recipes_main([args.dir] if args.dir else [str(RECIPE_DIR)])
    cache = Path(args.cache) if getattr(args, "cache", None) else None
    if args.live_command == "install":
        from harness.live.install import InstallError, install_recipe  # start-up, as above

        recipes = load_recipes()
        ids = args.ids or sorted(recipes)
        unknown = [i for i in ids if i not in recipes]
        if unknown:
            raise HarnessError(f"no live recipe for {unknown}; recipes: {sorted(recipes)}")
        status = 0
        for agent in ids:
            try:
                install_recipe(
                    recipes[agent],
                    cache,
                    out=lambda m: print(m, file=out, flush=True),
                    force=args.force,
                )
            except InstallError as exc:
                print(f"{agent}: install failed: {exc}", file=out)
                status = 1
        return status
    # start-up, as above: the def registry and the recipes load only for `harness live`
    from harness.commands.common import check_scenario
    from harness.defs.registry import get_agent_def
    from harness.live.recipes import recipe_for

    defn = get_agent_def(args.id)
    recipe = recipe_for(defn.id)
    check_scenario(args.scenario, cases=[c.id for c in recipe.scenarios] if recipe else ())
    if args.live_command == "run":
        return _run(args, defn, cache, out)
    return _diff(args, defn, cache, out)


def _print_event(out: TextIO, as_json: bool) -> object:
    def on_event(event: Event) -> None:
        data = event.to_json()
        if as_json:
            print(json.dumps(data, ensure_ascii=False), file=out, flush=True)
        else:
            rest = {k: v for k, v in data.items() if k != "type"}
            print(
                f"{data['type']:<14} {json.dumps(rest, ensure_ascii=False)[:300]}",
                file=out,
                flush=True,
            )

    return on_event


def _check_record(raw: str, force: bool) -> None:
    """USERFILE-RECORD-001: refuse, before anything runs, to replace FILE or a file the
    recording of a multi-turn or continued run writes beside it, unless ``force``."""
    # start-up: the record command's module loads the runner; only --record needs it
    from harness.commands.record import RecordOutputError, check_out_path

    target = check_out_path(raw, force=force)
    if force:
        return
    stem, suffix = target.path.stem, target.path.suffix
    turns = target.path.parent.glob(f"{glob.escape(stem)}.turn*{glob.escape(suffix)}")
    # harness.live.session names turn N > 1 <stem>.turnN<suffix>.
    taken = sorted(
        str(p) for p in turns if p.name[len(stem) + 5 : len(p.name) - len(suffix)].isdigit()
    )
    if taken:
        raise RecordOutputError(
            taken[0], "it already exists and a later turn is recorded there; pass --force"
        )


def _run(args: argparse.Namespace, defn: AgentDef, cache: Path | None, out: TextIO) -> int:
    # start-up: harness.live.session loads the model server (aiohttp)
    from harness.live.session import LiveNotInstalled, LiveUnavailable, run_live

    if args.record and not args.fake:
        _check_record(args.record, bool(args.force))
    try:
        run = run_live(
            defn,
            args.scenario,
            transport=args.transport,
            side="fake" if args.fake else "real",
            cache_dir=cache,
            record=args.record,
            on_event=_print_event(out, args.json),  # type: ignore[arg-type]
        )
    except LiveNotInstalled as exc:
        # Asked to run this CLI, and it is not there: a failure that says how to install it.
        raise HarnessError(exc.reason, rule="CLIERR-LIVE-INSTALL-001") from None
    except LiveUnavailable as exc:
        print(f"skipped: {exc.reason}", file=out)
        return 0
    try:
        kinds = Counter(f"{r.method} {r.path} -> {r.reply_kind} {r.status}" for r in run.requests)
        summary = {
            "agent": run.agent,
            "transport": run.transport,
            "case": run.case.id,
            "side": run.side,
            "cli_version": run.cli_version,
            "outcomes": [t.result.status.value for t in run.turns],
            "exit_codes": [t.result.exit_code for t in run.turns],
            "session_ids": [t.result.session_id for t in run.turns],
            "files": sorted(run.files),
            "requests": dict(kinds),
            "network": _network(run),
            "wall_s": round(run.wall_s, 1),
        }
        if args.json:
            print(json.dumps({"type": "live_summary", **summary}), file=out)
        else:
            print("-- request log", file=out)
            for line, n in kinds.items():
                print(f"  {n} x {line}", file=out)
            print(f"-- network: {summary['network']}", file=out)
            print(
                f"-- {run.agent} {run.cli_version or ''} [{run.transport}] {run.case.id}: "
                f"{summary['outcomes']} exit {summary['exit_codes']} files {summary['files']}",
                file=out,
            )
        return (
            0
            if all(t.result.error is None or run.case.scenario == "api_error" for t in run.turns)
            else 1
        )
    finally:
        run.dirs.cleanup()


def _network(run: object) -> object:
    """LIVE-NET-001 evidence of a real run: the attempts outside loopback, or why unsealed."""
    net = getattr(run, "net", None)
    if net is None:
        return None
    if not net.sealing.sealed:
        return {"sealed": False, "reason": net.sealing.reason}
    return {"sealed": True, "launches": net.launches, "attempts": [str(a) for a in net.attempts]}


def _diff(args: argparse.Namespace, defn: AgentDef, cache: Path | None, out: TextIO) -> int:
    # start-up: harness.live.conform loads the model server and the conformance checks
    from harness.live.conform import CliReport, real_findings

    status = 0
    report = CliReport(defn.id)
    found = real_findings(
        defn,
        scenarios=[args.scenario],
        transports=[args.transport] if args.transport else None,
        cache_dir=cache,
        report=report,
    )
    if report.scenarios and not args.json:
        print(f"-- {report.line()}", file=out)
    for rule, label, finding in found:
        if args.json:
            row = {
                "rule": rule,
                "case": label,
                "status": finding.status.value,
                "reason": finding.reason,
                "evidence": finding.evidence.to_json() if finding.evidence else None,
            }
            print(json.dumps(row, ensure_ascii=False), file=out)
        else:
            print(f"{finding.status.value:<10} {rule:<24} {label}: {finding.reason}", file=out)
            if finding.evidence is not None:
                print(f"    {finding.evidence.expected}\n    {finding.evidence.actual}", file=out)
        if finding.status.value in ("fail", "not_tested"):
            status = 1
    return status
