"""``run_live``: one scenario on a real CLI (or its fake) under a temporary world.

Design: docs/design/live.md#harness.live.session
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from harness.defs.types import AgentDef
from harness.errors import HarnessError
from harness.events import Event
from harness.live.home import LiveDirs, build_env, make_dirs, placeholder_values, write_home_files
from harness.live.install import default_cache_dir, installed_bin
from harness.live.netns import NetEvidence, NetSeal, probe_sealing
from harness.live.recipes import Recipe, ScenarioCase, recipe_for
from harness.modelserver import ModelServer, RequestRecord, RequestTiming
from harness.recording.record import Expectation, RunRecorder, set_expectation
from harness.runner import RunRequest, RunResult, run_agent
from harness.runner.user_cancel import run_cancelled_after
from harness.runtime.fakes_install import shim_name, shim_text

__all__ = [
    "LiveNotInstalled",
    "LiveRun",
    "LiveTurn",
    "LiveUnavailable",
    "cli_version",
    "live_prompt",
    "resolve_case",
    "run_live",
]

SIDES = ("real", "fake")
_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-.+][0-9A-Za-z.]+)?")


class LiveUnavailable(HarnessError):
    """The live run cannot happen here: no recipe, a ``skip`` recipe, or not installed.

    Conformance reports this as ``skipped`` with :attr:`reason` (never a silent pass).
    """

    code = "LIVE_UNAVAILABLE"

    def __init__(self, reason: str) -> None:
        super().__init__(reason, rule="LIVE-SKIP-001")
        self.reason = reason


class LiveNotInstalled(LiveUnavailable):
    """The recipe's CLI is not in the cache; the reason says how to install it.

    Conformance skips it like any :class:`LiveUnavailable`; ``harness live run`` fails on it
    (CLIERR-LIVE-INSTALL-001).
    """


@dataclass(frozen=True)
class LiveTurn:
    result: RunResult
    #: The model-server requests made during this turn.
    requests: tuple[RequestRecord, ...]


@dataclass
class LiveRun:
    agent: str
    transport: str
    case: ScenarioCase
    side: str
    dirs: LiveDirs
    cli_version: str | None
    turns: list[LiveTurn] = field(default_factory=list)
    #: The request log file of the model server (kept under the run's root).
    request_log: str | None = None
    #: ``127.0.0.1:<port>`` of this run's model server (normalized away when comparing).
    server_host: str = ""
    #: The model server's own time per request of this run (benchmarks/live.py).
    server_timings: list[RequestTiming] = field(default_factory=list)
    #: What the sealed launches recorded (LIVE-NET-001); ``None`` on the fake side.
    net: NetEvidence | None = None
    #: Seconds from the model server's start to the last turn's end (probe included).
    wall_s: float = 0.0

    @property
    def events(self) -> list[Event]:
        return [e for t in self.turns for e in t.result.events]

    @property
    def requests(self) -> list[RequestRecord]:
        return [r for t in self.turns for r in t.requests]

    @property
    def result(self) -> RunResult:
        return self.turns[-1].result

    @property
    def files(self) -> dict[str, str]:
        """Files under the work dir after the run (relative path -> text, ``""`` if binary)."""
        out: dict[str, str] = {}
        for path in sorted(self.dirs.cwd.rglob("*")):
            rel = path.relative_to(self.dirs.cwd).as_posix()
            if not path.is_file() or rel.split("/")[0].startswith("."):
                continue
            try:
                out[rel] = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                out[rel] = ""
        return out


def live_prompt(case: ScenarioCase, turn: int) -> str:
    """The user prompt of ``turn`` (1-based). The scripted model ignores its wording (the
    scenario decides the reply); it names the scenario for a reader of the transcript."""
    if turn == 1:
        return f"Live scenario {case.scenario}: please do what the script says."
    return f"Live scenario {case.scenario}, turn {turn}: please continue."


def resolve_case(recipe: Recipe, name: str) -> ScenarioCase:
    """The recipe's case ``name``, else a one-turn case of the scenario file ``name``."""
    found = recipe.case(name)
    return found if found is not None else ScenarioCase(id=name, scenario=name)


def cli_version(
    bin_path: str, defn: AgentDef, env: dict[str, str], cwd: str, timeout_s: float = 60.0
) -> str | None:
    """The version the CLI prints for the def's ``version_args`` (first version-like token)."""
    try:
        proc = subprocess.run(
            [bin_path, *defn.version_args],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=timeout_s,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = _VERSION.search(proc.stdout or proc.stderr or "")
    return m.group(0) if m else None


def _fake_bin(defn: AgentDef, dirs: LiveDirs) -> str:
    bindir = dirs.root / "fakebin"
    bindir.mkdir(exist_ok=True)
    target = bindir / shim_name(defn.bin, sys.platform)
    target.write_text(shim_text(defn.id, sys.executable, sys.platform), encoding="utf-8")
    if sys.platform != "win32":
        target.chmod(0o755)
    return str(target)


def _recipe_argv(recipe: Recipe, transport: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """What the recipe puts before and after the def's own argv (``argv``, ``telemetry.args``,
    the transport's ``argv``); the runner adds them around ``build_args``."""
    spec = recipe.transport(transport)
    prepend = (*recipe.argv.prepend, *spec.argv.prepend)
    append = (*recipe.telemetry_args, *recipe.argv.append, *spec.argv.append)
    return prepend, append


def run_live(
    defn: AgentDef,
    case: ScenarioCase | str,
    *,
    recipe: Recipe | None = None,
    transport: str | None = None,
    side: str = "real",
    cache_dir: str | os.PathLike[str] | None = None,
    bin_path: str | None = None,
    record: str | os.PathLike[str] | None = None,
    on_event: Callable[[Event], None] | None = None,
    work_base: str | os.PathLike[str] | None = None,
    timeout_s: float | None = None,
) -> LiveRun:
    """Run one case of ``defn`` live (``side="real"``) or on its fake (``side="fake"``).

    Raises :class:`LiveUnavailable` (a ``skipped`` verdict) when there is no recipe, the
    recipe is a ``skip``, or the real CLI is not installed. The caller owns the returned
    run's ``dirs`` (``run.dirs.cleanup()``). ``record`` writes a recording of the real
    CLI (turn N of a multi-turn case goes to ``<stem>.turnN<suffix>`` for N > 1).
    """
    if side not in SIDES:
        raise ValueError(f"side must be one of {SIDES}, got {side!r}")
    recipe = _runnable_recipe(defn, recipe)
    if isinstance(case, str):
        case = resolve_case(recipe, case)
    name = _transport_name(defn, recipe, transport)
    found = _real_bin(defn, recipe, cache_dir, bin_path) if side == "real" else None
    dirs = make_dirs(work_base, prefix=f"live-{defn.id}-{side}-")
    run = LiveRun(
        agent=defn.id,
        transport=name,
        case=case,
        side=side,
        dirs=dirs,
        cli_version=None,
        request_log=str(dirs.root / "requests.jsonl"),
    )
    started = time.monotonic()
    sealing = probe_sealing() if side == "real" else None
    if sealing is not None and not sealing.sealed:
        warnings.warn(f"live {defn.id}: {sealing.reason}", RuntimeWarning, stacklevel=2)
    with (
        ModelServer(case.scenario, log_path=run.request_log) as server,
        NetSeal(dirs.root, server.port, sealing) if sealing is not None else _no_seal() as seal,
    ):
        values = placeholder_values(recipe, dirs, base_url=server.url, port=server.port)
        run.server_host = server.url.split("://", 1)[1]
        write_home_files(recipe, dirs, values)
        env = build_env(recipe, dirs, values, transport=recipe.transport(name))
        if side == "fake" or seal is None:
            exe = _fake_launch(defn, dirs, case, env)
        else:
            assert found is not None
            exe = _sealed_launch(defn, found, seal, env, run)
        per_turn = timeout_s or case.timeout_s or recipe.timeout_s
        prepend, append = _recipe_argv(recipe, name)
        resume: str | None = None
        for turn in range(1, case.turns + 1):
            before = len(server.requests)
            options = recipe.build_options()
            req = RunRequest(
                defn=defn,
                prompt=live_prompt(case, turn),
                cwd=str(dirs.cwd),
                model=options.model,
                reasoning=options.reasoning,
                permission_mode=options.permission_mode,
                resume_session_id=resume,
                env=env,
                bin_override=exe,
                transport=name,
                home=str(dirs.home),
                first_output_timeout_ms=int(per_turn * 1000),
                inactivity_timeout_ms=int(per_turn * 1000),
                shutdown_grace_ms=3000,
                argv_prepend=prepend,
                argv_append=append,
            )
            recorder = (
                _turn_recorder(Path(record), turn, recipe, run, cache_dir)
                if record is not None and side == "real"
                else None
            )
            working = partial(_model_called, server, before) if side == "real" else None
            result = _run_turn(req, case, working, on_event, recorder)
            if recorder is not None and recorder.complete and not result.succeeded:
                # REPLAY-STATUS-001: a recording of a failed real run says so.
                set_expectation(
                    _turn_path(Path(record or ""), turn), Expectation(result.status.value)
                )
            run.turns.append(LiveTurn(result, tuple(server.requests[before:])))
            resume = result.session_id
            if turn < case.turns and not resume:
                break
        run.server_timings = server.timings
        if seal is not None:
            run.net = seal.evidence()
    run.wall_s = time.monotonic() - started
    return run


def _runnable_recipe(defn: AgentDef, recipe: Recipe | None) -> Recipe:
    """``recipe``, else the def's own; :class:`LiveUnavailable` when there is none or it
    is a ``skip`` (a CLI that cannot run offline is never launched)."""
    if recipe is None:
        recipe = recipe_for(defn.id)
    if recipe is None:
        raise LiveUnavailable(f"no live recipe for {defn.id!r} (harness/live/recipes)")
    if recipe.skip_reason is not None:
        raise LiveUnavailable(recipe.skip_reason)
    return recipe


def _transport_name(defn: AgentDef, recipe: Recipe, transport: str | None) -> str:
    """The transport asked for, else the recipe's first; it must be one the recipe runs."""
    transports = recipe.transport_names(defn)
    name = transport or transports[0]
    if name not in transports:
        raise LiveUnavailable(f"transport {name!r} is not in the recipe (runs {transports})")
    return name


def _real_bin(
    defn: AgentDef,
    recipe: Recipe,
    cache_dir: str | os.PathLike[str] | None,
    bin_path: str | None,
) -> str:
    """The real CLI's executable: ``bin_path``, else the cached install of the recipe's
    package; :class:`LiveNotInstalled` when there is neither."""
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    found = bin_path or (str(p) if (p := installed_bin(recipe, cache)) else None)
    if found is None:
        pkg = recipe.package
        what = f"{pkg.manager} {pkg.key}" if pkg else defn.bin
        raise LiveNotInstalled(
            f"{what} is not installed under {cache} (run `harness live install {defn.id}`)"
        )
    return found


def _turn_recorder(
    record: Path,
    turn: int,
    recipe: Recipe,
    run: LiveRun,
    cache_dir: str | os.PathLike[str] | None,
) -> RunRecorder:
    """The recorder of one real turn, scrubbing the run's paths (the live cache the CLI is
    installed in among them) and the recipe's secrets; the program is named by its own name."""
    dirs = run.dirs
    cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    return RunRecorder(
        _turn_path(record, turn),
        cwd=str(dirs.cwd),
        home=str(dirs.home),
        tmp=str(dirs.tmp),
        cli_version=run.cli_version,
        secrets=(recipe.fake_key,),
        env_names=sorted({*recipe.env, *recipe.telemetry_env}),
        program=os.path.basename(recipe.package.bin) if recipe.package else None,
        install=str(cache),
    )


def _fake_launch(defn: AgentDef, dirs: LiveDirs, case: ScenarioCase, env: dict[str, str]) -> str:
    """The fake's executable; ``env`` gains the scenario (and this PYTHONPATH)."""
    exe = _fake_bin(defn, dirs)
    env["FAKE_CLI_SCENARIO"] = case.scenario
    if os.environ.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return exe


def _sealed_launch(
    defn: AgentDef, found: str, seal: NetSeal, env: dict[str, str], run: LiveRun
) -> str:
    """The real CLI's sealed launcher; its version is probed sealed too (LIVE-NET-001)."""
    exe = seal.launcher(found, "run")
    probe = seal.launcher(found, "version")
    run.cli_version = cli_version(probe, defn, env, str(run.dirs.cwd))
    return exe


def _run_turn(
    req: RunRequest,
    case: ScenarioCase,
    working: Callable[[], bool] | None,
    on_event: Callable[[Event], None] | None,
    recorder: RunRecorder | None,
) -> RunResult:
    """One turn, cancelled ``case.cancel_after_ms`` after its first text when asked."""
    if case.cancel_after_ms is None:
        return run_agent(req, on_event=on_event, tap=recorder)
    # Without text first, the real CLI's cancel waits for the model call itself
    # (a fake calls no model: ``working`` is None).
    return run_cancelled_after(
        req,
        case.cancel_after_ms,
        after_session_ms=case.cancel_after_ms,
        working=working,
        on_event=on_event,
        tap=recorder,
    )


def _model_called(server: ModelServer, since: int) -> bool:
    """Whether the turn's model call arrived (a side request, e.g. a title, is not it)."""
    return any(not r.reply_kind.startswith("side:") for r in server.requests[since:])


@contextlib.contextmanager
def _no_seal() -> Iterator[None]:
    yield None


def _turn_path(path: Path, turn: int) -> Path:
    if turn == 1:
        return path
    return path.with_name(f"{path.stem}.turn{turn}{path.suffix}")
