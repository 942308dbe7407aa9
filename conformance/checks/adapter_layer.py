"""Def-level checks of the adapter layer: the def's fake run through the runner.

Design: docs/design/conformance.md#conformance.checks.adapter_layer
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from conformance.checks import DefSubject, Finding, check, failed, passed, skipped
from conformance.fakes import fake_for
from harness.defs.types import AgentDef, McpInjection, ResumeStyle
from harness.formats import is_two_way
from harness.host.launch import path_env_key
from harness.host.native_sessions import SessionStore, TurnMode
from harness.mcp.builders import (
    build_acp_mcp_servers,
    build_claude_mcp_json,
    build_opencode_config_content,
)
from harness.mcp.inject import ENV_CONTENT_VARS
from harness.mcp.servers import McpServerConfig, McpTransport
from harness.runner.conversation import run_conversation_turn
from harness.runner.engine import run_agent_async
from harness.runner.types import RunRequest, RunResult
from harness.runtime.fakes_install import install_fakes, prepare_fake_home
from harness.secrets.redact import Redactor

__all__ = ["AdapterObservations", "observe_adapter_layer"]

#: A fault-free scenario every fake knows (text only: fast, no file writes).
SCENARIO = "text"
#: A secret-shaped env value of the conformance MCP server (never shown in evidence).
_SECRET = "od-conform-secret-value-7f3a9c"
_HEADER_SECRET = "od-conform-header-value-2b8e41"
BOOTSTRAP = "BOOTSTRAP-od-conform-4d1e: you are helping with a landing page."
TURN_ONE = "TURN-ONE-od-conform: write a greeting."
TURN_TWO = "TURN-TWO-od-conform: make it friendlier."
_OLD_MCP_JSON = '{"mcpServers": {"users-own": {"command": "keep-me"}}}\n'

FS = McpServerConfig(
    id="od-fs",
    transport=McpTransport.STDIO,
    command="od-conform-mcp-fs",
    args=("--root", "."),
    env={"OD_CONFORM_TOKEN": _SECRET},
)
REMOTE = McpServerConfig(
    id="od-remote",
    transport=McpTransport.HTTP,
    url="https://mcp.example.invalid/mcp",
    headers={"X-Conform": _HEADER_SECRET},
    auth_mode=None,
)
OFF = McpServerConfig(
    id="od-off", transport=McpTransport.STDIO, command="od-conform-disabled", enabled=False
)
BUNDLE_FS = dataclasses.replace(FS, args=("--from-bundle",))
BUNDLE_EXTRA = McpServerConfig(
    id="od-extra", transport=McpTransport.STDIO, command="od-conform-mcp-extra"
)
#: The persisted servers of the MCP turn, and those the agent may see (enabled ones).
PERSISTED = (FS, REMOTE, OFF)
ENABLED = (FS, REMOTE)
#: Bundle run: persisted FS, bundle overrides it and adds EXTRA -> what the agent must see.
BUNDLE_PERSISTED = (FS,)
BUNDLE = (BUNDLE_FS, BUNDLE_EXTRA)
BUNDLE_EXPECTED = (BUNDLE_FS, BUNDLE_EXTRA)


@dataclass
class Observed:
    """One run: its result, what the fake recorded, and facts read after the run."""

    result: RunResult
    record: dict[str, Any]
    #: ``.mcp.json`` in the cwd after the run: its text, or ``None``.
    mcp_json_after: str | None = None
    #: The managed-dir run: the staged skill equals its source byte for byte.
    staged_equal: bool | None = None
    staged_problem: str = ""


@dataclass
class AdapterObservations:
    """Every run the adapter-layer checks of one def judge."""

    defn: AgentDef
    skill_source: str = ""
    mcp_turn: Observed | None = None
    unmanaged: Observed | None = None
    empty: Observed | None = None
    bundle: Observed | None = None
    #: Second turn of the conversation whose first turn is ``mcp_turn``.
    second: Observed | None = None
    first_mode: TurnMode | None = None
    second_mode: TurnMode | None = None
    first_native: str | None = None
    second_native: str | None = None
    second_resume_id: str | None = None
    problems: list[str] = field(default_factory=list)


_T = TypeVar("_T")


def _run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run`` here, or in a helper thread when a loop already runs on this one."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    box: list[_T] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            box.append(asyncio.run(coro))
        except BaseException as exc:  # re-raised on the caller's thread
            errors.append(exc)

    thread = threading.Thread(target=target, name="adapter-layer-checks")
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return box[0]


class _Lab:
    """A private PATH with the def's fake, a HOME, a managed projects root and a skill."""

    def __init__(self, root: Path, defn: AgentDef, emulator: str) -> None:
        self.root = root
        self.defn = defn
        self.bin = root / "bin"
        install_fakes(self.bin, [defn], played_by={defn.id: emulator})
        self.home = root / "home"
        self.home.mkdir()
        prepare_fake_home(self.home)
        self.projects = root / "projects"
        self.projects.mkdir()
        self.outside = root / "users-own-repo"
        self.outside.mkdir()
        self.skill = root / "skills" / "conform-skill"
        (self.skill / "references").mkdir(parents=True)
        (self.skill / "SKILL.md").write_text(
            "---\nname: conform-skill\n---\n# Conform skill\nRead references/guide.md first.\n",
            encoding="utf-8",
        )
        (self.skill / "references" / "guide.md").write_text("Be brief.\n", encoding="utf-8")
        bin_key = (defn.bin_env_key or "").upper()
        strip = ("FAKE_CLI_", "OD_", "OPENCODE_CONFIG", "MIMOCODE_CONFIG")
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.upper().startswith(strip) and k.upper() != bin_key
        }
        key = path_env_key(env, sys.platform)
        env[key] = str(self.bin) + os.pathsep + env.get(key, "")
        env.update(HOME=str(self.home), USERPROFILE=str(self.home), FAKE_CLI_SCENARIO=SCENARIO)
        self.env = env
        self._count = 0

    def project(self, parent: Path) -> Path:
        self._count += 1
        path = parent / f"p{self._count}"
        path.mkdir()
        return path

    def request(self, cwd: Path, record: Path, **fields: Any) -> RunRequest:
        fields.setdefault("prompt", TURN_ONE)
        return RunRequest(
            defn=self.defn,
            cwd=str(cwd),
            env={**self.env, "FAKE_CLI_RECORD": str(record)},
            projects_root=str(self.projects),
            shutdown_grace_ms=1000,
            inactivity_timeout_ms=20_000,
            **fields,
        )


def _read_record(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _mcp_after(cwd: Path) -> str | None:
    target = cwd / ".mcp.json"
    return target.read_text(encoding="utf-8") if target.is_file() else None


def _staged_equal(cwd: Path, source: Path, result: RunResult) -> tuple[bool, str]:
    if len(result.skills_staged) != 1:
        return False, f"skills_staged is {list(result.skills_staged)}, expected one root"
    staged = cwd / result.skills_staged[0]
    if staged.is_symlink() or not staged.is_dir():
        return False, f"{result.skills_staged[0]} is not a real directory"
    for path in sorted(source.rglob("*")):
        rel = path.relative_to(source)
        copy = staged / rel
        if path.is_file():
            if copy.is_symlink() or not copy.is_file():
                return False, f"{rel.as_posix()} is not a real file in the staged copy"
            if copy.read_bytes() != path.read_bytes():
                return False, f"{rel.as_posix()} differs from the source"
    return True, ""


async def _observe(lab: _Lab, obs: AdapterObservations) -> None:
    defn = lab.defn
    strategy = McpInjection(defn.external_mcp_injection)
    store = SessionStore(lab.root / "state" / "sessions.json")

    async def plain_run(req: RunRequest, record: Path) -> Observed:
        result = await run_agent_async(req)
        return Observed(result, _read_record(record), _mcp_after(Path(req.cwd)))

    # Turn 1 of a conversation, with MCP servers and a skill, in a managed project dir. A
    # user's old .mcp.json sits there and must be back after the run (MCP-RUN-001).
    cwd1 = lab.project(lab.projects)
    (cwd1 / ".mcp.json").write_text(_OLD_MCP_JSON, encoding="utf-8")
    rec1 = lab.root / "record-turn1.json"
    req1 = lab.request(cwd1, rec1, mcp_config=PERSISTED, skill_dirs=(str(lab.skill),))

    async def first_turn() -> Observed:
        turn = await run_conversation_turn(
            req1, store=store, conversation_id="conv-od-conform", bootstrap=BOOTSTRAP
        )
        obs.first_mode = turn.plan.mode
        record = turn.update.record
        obs.first_native = record.native_id if record is not None else None
        seen = Observed(turn.result, _read_record(rec1), _mcp_after(cwd1))
        seen.staged_equal, seen.staged_problem = _staged_equal(cwd1, lab.skill, turn.result)
        return seen

    jobs: dict[str, Coroutine[Any, Any, Observed]] = {"mcp_turn": first_turn()}
    cwd_b = lab.project(lab.projects)
    rec_b = lab.root / "record-bundle.json"
    jobs["bundle"] = plain_run(
        lab.request(cwd_b, rec_b, mcp_config=BUNDLE_PERSISTED, run_tool_bundle=BUNDLE), rec_b
    )
    if strategy is McpInjection.CLAUDE_MCP_JSON:
        cwd_u = lab.project(lab.outside)
        rec_u = lab.root / "record-unmanaged.json"
        jobs["unmanaged"] = plain_run(lab.request(cwd_u, rec_u, mcp_config=PERSISTED), rec_u)
    if strategy in ENV_CONTENT_VARS:
        cwd_e = lab.project(lab.projects)
        rec_e = lab.root / "record-empty.json"
        jobs["empty"] = plain_run(lab.request(cwd_e, rec_e, mcp_config=(OFF,)), rec_e)
    done = await asyncio.gather(*jobs.values())
    for name, seen in zip(jobs, done, strict=True):
        setattr(obs, name, seen)
    if defn.resume_style is ResumeStyle.NONE or obs.mcp_turn is None:
        return
    if not obs.mcp_turn.result.succeeded:
        obs.problems.append("turn 1 did not succeed; no second turn")
        return
    # Turn 2: same conversation, same agent, same key -> a healthy resume (SESSION-RUN-001).
    rec2 = lab.root / "record-turn2.json"
    req2 = dataclasses.replace(
        req1,
        prompt=TURN_TWO,
        env={**req1.env, "FAKE_CLI_RECORD": str(rec2)} if req1.env else None,
    )
    turn2 = await run_conversation_turn(
        req2, store=store, conversation_id="conv-od-conform", bootstrap=BOOTSTRAP
    )
    obs.second_mode = turn2.attempts[0][0].mode
    obs.second_resume_id = turn2.attempts[0][0].resume_session_id
    record2 = turn2.update.record
    obs.second_native = record2.native_id if record2 is not None else None
    obs.second = Observed(turn2.result, _read_record(rec2), _mcp_after(cwd1))


class _Slot:
    """One def object's observations, made once under the slot's own lock."""

    __slots__ = ("defn", "lock", "obs")

    def __init__(self, defn: AgentDef) -> None:
        self.defn = defn
        self.lock = threading.Lock()
        self.obs: AdapterObservations | None = None


#: Slots by ``id()`` of the def object and the fake that plays it (the slot holds the def,
#: so the id stays its own).
#: Big enough that conform's workers never evict a def whose checks are still running: an
#: evicted def is observed again, a second set of fake runs for the same answer.
_SLOTS: OrderedDict[tuple[int, str], _Slot] = OrderedDict()
_CACHE_SIZE = 64
#: Guards ``_SLOTS`` only, never a run: defs are observed concurrently, each once.
_LOCK = threading.Lock()


def _slot(defn: AgentDef, emulator: str) -> _Slot:
    key = (id(defn), emulator)
    with _LOCK:
        slot = _SLOTS.get(key)
        if slot is None or slot.defn is not defn:
            slot = _SLOTS[key] = _Slot(defn)
        _SLOTS.move_to_end(key)
        while len(_SLOTS) > _CACHE_SIZE:
            _SLOTS.popitem(last=False)
        return slot


def observe_adapter_layer(defn: AgentDef, emulator: str | None = None) -> AdapterObservations:
    """The runs of ``defn``'s fake the checks judge (made once per def object and fake);
    ``emulator``: the fake that plays it (default: :func:`~conformance.fakes.fake_for`'s)."""
    if emulator is None:
        emulator, why = fake_for(defn)
        if emulator is None:
            raise ValueError(f"no fake plays {defn.id!r}: {why}")
    slot = _slot(defn, emulator)
    with slot.lock:
        if slot.obs is None:
            obs = AdapterObservations(defn)
            with tempfile.TemporaryDirectory(prefix="od-adapter-layer-") as tmp:
                lab = _Lab(Path(os.path.realpath(tmp)), defn, emulator)
                obs.skill_source = str(lab.skill)
                _run_sync(_observe(lab, obs))
            slot.obs = obs
        return slot.obs


def _evidence(
    subject: DefSubject,
    summary: str,
    *,
    expected: str,
    actual: str,
    seen: Observed | None = None,
) -> Finding:
    redact = Redactor(None, secrets=(_SECRET, _HEADER_SECRET)).redact
    return failed(
        f"def {subject.defn.id!r}: {summary}",
        repro_command=subject.repro_command,
        expected=redact(expected),
        actual=redact(actual),
        stderr=seen.result.stderr_tail if seen is not None else "",
    )


def _no_fake(subject: DefSubject) -> Finding | None:
    if subject.emulator is not None:
        return None
    emulator, why = fake_for(subject.defn)
    if emulator is not None:
        return None
    return skipped(
        f"{why}; the adapter-layer checks run the def's fake (judge the real CLI with a live run)"
    )


def _ran(subject: DefSubject, seen: Observed | None, what: str) -> Finding | None:
    """A failed finding when the run meant to observe ``what`` did not succeed."""
    if seen is None:
        return _evidence(subject, f"no run observed {what}", expected="a run", actual="none")
    if not seen.result.succeeded:
        error = seen.result.error
        return _evidence(
            subject,
            f"the run observing {what} did not succeed",
            expected="status succeeded",
            actual=f"{seen.result.status.value}: "
            + (f"{error.code}: {error.message}" if error else ""),
            seen=seen,
        )
    return None


def _js(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=True, default=str)


def _mcp_turn(subject: DefSubject, what: str) -> tuple[AdapterObservations, Observed] | Finding:
    """The def's observations and its succeeded MCP turn, or the finding that ends the check
    (no fake: skipped; the turn missing or failed: failed with evidence)."""
    early = _no_fake(subject)
    if early is not None:
        return early
    obs = observe_adapter_layer(subject.defn, subject.emulator)
    turn = obs.mcp_turn
    bad = _ran(subject, turn, what)
    if bad is not None:
        return bad
    assert turn is not None  # _ran fails a missing run
    return obs, turn


def _strategy(defn: AgentDef) -> McpInjection:
    return McpInjection(defn.external_mcp_injection)


# --------------------------------------------------------------------------- MCP


@check("MCP-RUN-001", level="def")
def check_mcp_json_run(subject: DefSubject) -> Finding:
    """seed 002 §8.1: .mcp.json only in a managed project dir, removed/restored after."""
    if _strategy(subject.defn) is not McpInjection.CLAUDE_MCP_JSON:
        return skipped(f"external_mcp_injection is {_strategy(subject.defn).value}")
    found = _mcp_turn(subject, "the managed-dir MCP turn")
    if isinstance(found, Finding):
        return found
    obs, turn = found
    expected = build_claude_mcp_json(ENABLED)
    seen = turn.record.get("mcp_json")
    if seen != expected:
        return _evidence(
            subject,
            "the CLI did not find the built .mcp.json in its managed project dir",
            expected=_js(expected),
            actual=_js(seen),
            seen=turn,
        )
    if turn.mcp_json_after != _OLD_MCP_JSON:
        return _evidence(
            subject,
            "after the run the project's own .mcp.json was not put back",
            expected=_OLD_MCP_JSON,
            actual=str(turn.mcp_json_after),
            seen=turn,
        )
    bad = _ran(subject, obs.unmanaged, "the unmanaged-dir MCP turn")
    if bad is not None or obs.unmanaged is None:
        return bad or passed()
    if "mcp_json" in obs.unmanaged.record or obs.unmanaged.mcp_json_after is not None:
        return _evidence(
            subject,
            ".mcp.json was written into a directory outside the managed projects root",
            expected="no .mcp.json in a user's own directory",
            actual=_js(obs.unmanaged.record.get("mcp_json")),
            seen=obs.unmanaged,
        )
    return passed("managed dir: built .mcp.json seen, old file restored; unmanaged: none")


@check("MCP-RUN-002", level="def")
def check_env_content_run(subject: DefSubject) -> Finding:
    """seed 002 §8.1: the env var holds the built config, or is absent (never '{}')."""
    strategy = _strategy(subject.defn)
    variable = ENV_CONTENT_VARS.get(strategy)
    if variable is None:
        return skipped(f"external_mcp_injection is {strategy.value}")
    found = _mcp_turn(subject, "the MCP turn")
    if isinstance(found, Finding):
        return found
    obs, turn = found
    expected = build_opencode_config_content(ENABLED)
    seen = turn.record.get("env", {}).get(variable)
    if seen != expected:
        return _evidence(
            subject,
            f"the CLI's {variable} is not the built config",
            expected=str(expected),
            actual=str(seen),
            seen=turn,
        )
    bad = _ran(subject, obs.empty, "the run with no enabled server")
    if bad is not None or obs.empty is None:
        return bad or passed()
    if variable in obs.empty.record.get("env", {}):
        return _evidence(
            subject,
            f"with no enabled server the CLI still got {variable}",
            expected=f"{variable} absent",
            actual=str(obs.empty.record["env"][variable]),
            seen=obs.empty,
        )
    return passed(f"{variable} equals the built config; absent with no enabled server")


def _acp_expected(defn: AgentDef, servers: Sequence[McpServerConfig]) -> Any:
    """The stdio entries ``session/new`` must carry, env in the def's shape (ref §2.6)."""
    stdio = [s for s in servers if s.transport is McpTransport.STDIO and s.enabled]
    return build_acp_mcp_servers(
        stdio, defn.acp.mcp_env_format, None, defn.acp.stdio_mcp_removed_in_version
    )


@check("MCP-RUN-003", level="def")
def check_acp_merge_run(subject: DefSubject) -> Finding:
    """seed 002 §8.1: stdio servers reach session/new (and session/load)."""
    defn = subject.defn
    if _strategy(defn) is not McpInjection.ACP_MERGE:
        return skipped(f"external_mcp_injection is {_strategy(defn).value}")
    found = _mcp_turn(subject, "the MCP turn")
    if isinstance(found, Finding):
        return found
    obs, turn = found
    expected = _acp_expected(defn, ENABLED)
    runs = [("session/new", turn)]
    if obs.second is not None:
        runs.append(("session/load", obs.second))
    for method, seen in runs:
        calls = [c for c in seen.record.get("session_new", []) if c.get("method") == method]
        if method == "session/load" and not calls:
            continue  # the second turn's checks judge whether it loaded
        got = calls[0].get("mcpServers") if calls else None
        if got != expected:
            return _evidence(
                subject,
                f"ACP {method} did not carry the planned stdio mcpServers",
                expected=_js(expected),
                actual=_js(got),
                seen=seen,
            )
    return passed(f"{len(expected)} stdio server(s) in session/new (and session/load)")


@check("MCP-RUN-004", level="def")
def check_none_run(subject: DefSubject) -> Finding:
    """seed 002 §8.1 "未设 = 显式提示": none is a reported value, and nothing is forwarded."""
    if _strategy(subject.defn) is not McpInjection.NONE:
        return skipped(f"external_mcp_injection is {_strategy(subject.defn).value}")
    found = _mcp_turn(subject, "the MCP turn")
    if isinstance(found, Finding):
        return found
    _, turn = found
    summary = turn.result.mcp_injection or {}
    skipped_ids = sorted(s.get("id") for s in summary.get("skipped", []))
    want = sorted(s.id for s in ENABLED)
    if summary.get("strategy") != "none" or skipped_ids != want:
        return _evidence(
            subject,
            "the run did not report the none plan with every enabled server not delivered",
            expected=f"strategy none, not delivered: {want}",
            actual=_js(summary),
            seen=turn,
        )
    env = turn.record.get("env", {})
    leaked = [v for v in ENV_CONTENT_VARS.values() if v in env]
    if leaked or turn.record.get("mcp_json") not in (None, json.loads(_OLD_MCP_JSON)):
        return _evidence(
            subject,
            "a def without a strategy was handed MCP servers",
            expected="no MCP env variable, only the project's own .mcp.json",
            actual=_js({"env": leaked, "mcp_json": turn.record.get("mcp_json")}),
            seen=turn,
        )
    return passed("none reported; nothing forwarded")


@check("MCP-RUN-005", level="def")
def check_bundle_run(subject: DefSubject) -> Finding:
    """seed 002 §8.4: the bundle, merged over persisted servers by id, or a refusal."""
    defn = subject.defn
    strategy = _strategy(defn)
    early = _no_fake(subject)
    if early is not None:
        return early
    obs = observe_adapter_layer(defn, subject.emulator)
    seen = obs.bundle
    if seen is None:
        return _evidence(subject, "no bundle run observed", expected="a run", actual="none")
    if strategy is McpInjection.NONE:
        error = seen.result.error
        if error is None or error.rule != "MCP-BUNDLE-004" or seen.result.pid is not None:
            return _evidence(
                subject,
                "a def without a strategy did not refuse the run tool bundle before spawning",
                expected="refused with MCP-BUNDLE-004, nothing spawned",
                actual=_js(seen.result.to_json(include_events=False)),
                seen=seen,
            )
        if defn.name not in error.message and defn.id not in error.message:
            return _evidence(
                subject,
                "the bundle refusal does not name the agent",
                expected=f"a message naming {defn.name!r}",
                actual=error.message,
                seen=seen,
            )
        return passed("bundle refused before spawn, naming the agent")
    bad = _ran(subject, seen, "the bundle run")
    if bad is not None:
        return bad
    record = seen.record
    if strategy is McpInjection.CLAUDE_MCP_JSON:
        expected: Any = build_claude_mcp_json(BUNDLE_EXPECTED)
        got: Any = record.get("mcp_json")
    elif strategy is McpInjection.ACP_MERGE:
        expected = _acp_expected(defn, BUNDLE_EXPECTED)
        calls = [c for c in record.get("session_new", []) if c.get("method") == "session/new"]
        got = calls[0].get("mcpServers") if calls else None
    else:
        expected = build_opencode_config_content(BUNDLE_EXPECTED)
        got = record.get("env", {}).get(ENV_CONTENT_VARS[strategy])
    if got != expected:
        return _evidence(
            subject,
            "the run tool bundle did not reach the CLI merged over the persisted servers",
            expected=_js(expected),
            actual=_js(got),
            seen=seen,
        )
    return passed(f"bundle delivered by {strategy.value}, run servers override persisted ones")


# --------------------------------------------------------------------------- skills


@check("SKILL-RUN-001", level="def")
def check_skill_run(subject: DefSubject) -> Finding:
    """seed 000 §4: staged real copies, both roots named in the prompt the CLI received."""
    found = _mcp_turn(subject, "the skill turn")
    if isinstance(found, Finding):
        return found
    obs, seen = found
    staged = list(seen.result.skills_staged)
    named = seen.record.get("skills", [])
    paths = [entry.get("path") for entry in named]
    if paths != staged:
        return _evidence(
            subject,
            "the prompt the CLI received does not name the staged skill root",
            expected=_js(staged),
            actual=_js(paths),
            seen=seen,
        )
    entry = named[0]
    want_files = ["SKILL.md", "references/guide.md"]
    if not entry.get("is_dir") or entry.get("links") or entry.get("files") != want_files:
        return _evidence(
            subject,
            "the CLI did not find real files in the staged skill root",
            expected=_js({"is_dir": True, "links": [], "files": want_files}),
            actual=_js(entry),
            seen=seen,
        )
    prompts = seen.record.get("prompts") or [seen.record.get("prompt") or ""]
    text = "\n".join(str(p) for p in prompts)
    if obs.skill_source not in text:
        return _evidence(
            subject,
            "the prompt does not name the absolute source fallback",
            expected=obs.skill_source,
            actual=text[:400],
            seen=seen,
        )
    if not seen.staged_equal:
        return _evidence(
            subject,
            "the staged copy is not equal to the source",
            expected="every source file copied as a regular file with the same bytes",
            actual=seen.staged_problem,
            seen=seen,
        )
    return passed(f"{staged[0]} staged with real files; both roots in the prompt")


# --------------------------------------------------------------------------- sessions


def _resume_evidence(
    style: ResumeStyle, record: Mapping[str, Any], resume_id: str, stream_format: str
) -> str:
    """'' when the fake's record shows the resume the style calls for, else what is wrong.

    seed 002 §3.1 / ref §8.1: over a one-way stream the id travels in argv (specify, capture,
    pi via process args); over a two-way transport in a frame (ACP ``session/load``, dsh
    ``execute.resume_session_id``, app-server ``thread/resume``, pi ``parentSession``).
    """
    argv = [str(a) for a in record.get("argv", [])]
    frames = _js(record.get("stdin_frames", [])) + _js(record.get("session_new", []))
    if not is_two_way(stream_format) and resume_id not in argv:
        return f"argv does not carry the resume id ({style.value} style, one-way stream)"
    if is_two_way(stream_format) and resume_id not in argv and resume_id not in frames:
        return f"no frame or argument carried the resume id ({style.value} style)"
    if style is ResumeStyle.ACP_LOAD:
        methods = [c.get("method") for c in record.get("session_new", [])]
        if "session/load" not in methods:
            return f"no ACP session/load (methods: {methods})"
    return ""


@check("SESSION-RUN-001", level="def")
def check_session_resume_run(subject: DefSubject) -> Finding:
    """seed 001 §7-§8: a second turn resumes the native session with only the new turn."""
    defn = subject.defn
    style = ResumeStyle(defn.resume_style)
    if style is ResumeStyle.NONE:
        return skipped("resume_style none: every turn carries the transcript")
    early = _no_fake(subject)
    if early is not None:
        return early
    obs = observe_adapter_layer(defn, subject.emulator)
    bad = _ran(subject, obs.mcp_turn, "turn 1")
    if bad is not None:
        return bad
    bad = _ran(subject, obs.second, "turn 2")
    if bad is not None or obs.second is None:
        return bad or passed()
    record = obs.second.record
    facts = {
        "turn1_mode": obs.first_mode.value if obs.first_mode else None,
        "turn2_mode": obs.second_mode.value if obs.second_mode else None,
        "turn1_handle": obs.first_native,
        "turn2_resume_id": obs.second_resume_id,
        "fake_resumed": record.get("resumed"),
    }
    if obs.first_mode is not TurnMode.FRESH or obs.second_mode is not TurnMode.RESUME:
        return _evidence(
            subject,
            "the second turn of the conversation did not resume",
            expected="turn 1 fresh, turn 2 resume of the stored handle",
            actual=_js(facts),
            seen=obs.second,
        )
    if record.get("resumed") is not True:
        return _evidence(
            subject,
            "the CLI did not resume its session on the second turn",
            expected="the fake reports resumed=true",
            actual=_js(facts),
            seen=obs.second,
        )
    problem = _resume_evidence(
        style, record, obs.second_resume_id or "", obs.second.result.stream_format
    )
    if problem:
        return _evidence(
            subject,
            problem,
            expected=f"{style.value} resume of {obs.second_resume_id}",
            actual=_js({k: record.get(k) for k in ("argv", "session_new", "stdin_frames")}),
            seen=obs.second,
        )
    prompts = record.get("prompts") or [record.get("prompt") or ""]
    text = "\n".join(str(p) for p in prompts)
    if TURN_TWO not in text or BOOTSTRAP in text or TURN_ONE in text:
        return _evidence(
            subject,
            "the resumed turn did not carry only the new turn",
            expected=TURN_TWO,
            actual=text[:400],
            seen=obs.second,
        )
    if style is not ResumeStyle.PI_SESSION and obs.second_native != obs.first_native:
        return _evidence(
            subject,
            "the stored handle changed on a healthy resume",
            expected=str(obs.first_native),
            actual=str(obs.second_native),
            seen=obs.second,
        )
    return passed(f"{style.value}: turn 2 resumed {obs.second_resume_id} with only the new turn")
