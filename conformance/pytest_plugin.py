"""pytest plugin for adapter authors: test an agent def against the fake CLIs.

Registered through the ``pytest11`` entry point ``adapter_harness`` (wire §B.1: pytest-lsp
ships the same way), so installing adapter-harness is enough; without the installed entry
point use ``pytest -p conformance.pytest_plugin``. Usage: ``docs/pytest-plugin.md``; a
complete example: ``docs/adapter-author-example/``.

Design: docs/design/conformance.md#conformance.pytest_plugin
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shlex
import sys
import uuid
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psutil
import pytest

from conformance.fakes import clean_fake_env, emulator_for, speaks
from harness.errors import HarnessError

if TYPE_CHECKING:
    from syrupy.assertion import SnapshotAssertion

    from conformance.checks import Finding
    from conformance.checks.runs import RunObservation
    from conformance.rules import Rule
    from fake_clis.scenario import Scenario
    from harness.defs.types import AgentDef
    from harness.recording.record import Recording
    from harness.recording.replay import ReplayResult
    from harness.runner import RunRequest, RunResult

__all__ = [
    "DEFAULT_INACTIVITY_TIMEOUT_MS",
    "DEFAULT_PROMPT",
    "DEFAULT_SHUTDOWN_GRACE_MS",
    "EXIT_GRACE_S",
    "LEAK_MARK_VAR",
    "MARKER",
    "OPTION_GROUP",
    "AdapterPluginError",
    "AgentRun",
    "AgentRunner",
    "FakeCli",
    "FakeCliFactory",
    "Replayer",
    "Sandbox",
    "fake_env",
    "judge_findings",
    "resolve_emulator",
]

OPTION_GROUP = "adapter-harness"
MARKER = "adapter_rule"
#: Env var carrying the per-test leak mark (its name avoids the secret-name words).
LEAK_MARK_VAR = "ADAPTER_HARNESS_LEAK_MARK"
DEFAULT_PROMPT = "Create hello.html with a greeting."
#: A hung fake must not hold a test for the runner's 10-minute default (ref §10.1).
DEFAULT_INACTIVITY_TIMEOUT_MS = 30_000
DEFAULT_SHUTDOWN_GRACE_MS = 1_000
#: How long a process found alive after a test may take to finish exiting on its own.
EXIT_GRACE_S = 0.5
#: RunRequest fields ``run_agent`` sets itself and refuses as overrides.
_RESERVED = frozenset({"defn", "prompt", "env"})


class AdapterPluginError(HarnessError):
    """A problem with what the plugin was given (option, def, scenario, recording)."""

    code = "ADAPTER_PLUGIN"


# ---------------------------------------------------------------------------- state


@dataclass
class _SessionState:
    def_path: str | None
    agent_id: str | None
    fake_as: str | None
    #: The def from the options, loaded at session start.
    defn: AgentDef | None = None
    #: The def file's defs plus the built-ins (DEF-REGISTRY-001 siblings).
    siblings: tuple[AgentDef, ...] = ()
    rules: dict[str, Rule] = field(default_factory=dict)

    def option_args(self) -> list[str]:
        args: list[str] = []
        if self.def_path:
            args += ["--adapter-def", self.def_path]
        if self.agent_id:
            args += ["--adapter-agent", self.agent_id]
        if self.fake_as:
            args += ["--adapter-fake-as", self.fake_as]
        return args


@dataclass
class _TestState:
    sandbox: Sandbox | None = None
    #: (label, observation) of every run and replay the test made.
    observations: list[tuple[str, RunObservation]] = field(default_factory=list)
    #: Lines for the report section (rule verdicts), and each failed rule's evidence.
    verdicts: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    checked_def: AgentDef | None = None


_SESSION = pytest.StashKey[_SessionState]()
_TEST = pytest.StashKey[_TestState]()


def _test_state(item: pytest.Item) -> _TestState:
    state = item.stash.get(_TEST, None)
    if state is None:
        state = item.stash[_TEST] = _TestState()
    return state


def _rules(config: pytest.Config) -> dict[str, Rule]:
    state = config.stash[_SESSION]
    if not state.rules:
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from conformance.rules import all_rules

        state.rules = all_rules()
    return state.rules


# ---------------------------------------------------------------------------- options


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(OPTION_GROUP, "adapter-harness: test an agent def against fakes")
    group.addoption(
        "--adapter-def",
        dest="adapter_def",
        metavar="PATH.py",
        default=None,
        help="the def file under test (exports AGENT_DEF or AGENT_DEFS); validated at start",
    )
    group.addoption(
        "--adapter-agent",
        dest="adapter_agent",
        metavar="ID",
        default=None,
        help="a built-in def id, or which def of --adapter-def to test",
    )
    group.addoption(
        "--adapter-fake-as",
        dest="adapter_fake_as",
        metavar="ID",
        default=None,
        help="the built-in def whose fake emulator plays the def's CLI "
        "(default: same id, else the first built-in with the same stream format)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*ids): conformance rule id(s) this test proves; a rule with a check is "
        "judged on every run and replay the test makes (adapter-harness)",
    )
    config.stash[_SESSION] = _SessionState(
        def_path=config.getoption("adapter_def"),
        agent_id=config.getoption("adapter_agent"),
        fake_as=config.getoption("adapter_fake_as"),
    )


def pytest_sessionstart(session: pytest.Session) -> None:
    """Load the def named by the options, as data first (PLUGIN-DEF-001)."""
    state = session.config.stash[_SESSION]
    try:
        _load_option_def(state, session.config.invocation_params.dir)
    except AdapterPluginError as exc:
        raise pytest.UsageError(f"adapter-harness: {exc}") from None


def _load_option_def(state: _SessionState, base: Path) -> None:
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from harness.defs.registry import BUILTIN_DEFS, BUILTIN_REGISTRY, load_agent_defs

    if state.def_path:
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from conformance.checks.loader import DefFileError, load_def_file

        path = Path(state.def_path)
        if not path.is_absolute():
            path = base / path
        try:
            # seed 000 §1: a def is data; DEFCHECK-LOAD-001 names the field of every problem.
            defs = load_def_file(path, reserved_ids=BUILTIN_REGISTRY)
        except DefFileError as exc:
            problems = "\n  ".join(exc.problems)
            raise AdapterPluginError(
                f"--adapter-def {state.def_path} is not a valid def file "
                f"({exc.rule}):\n  {problems}",
                rule="PLUGIN-DEF-001",
            ) from None
        state.siblings = (*BUILTIN_DEFS, *defs)
        if state.agent_id is None and len(defs) > 1:
            ids = ", ".join(d.id for d in defs)
            raise AdapterPluginError(
                f"--adapter-def {state.def_path} holds {len(defs)} defs ({ids}); "
                "choose one with --adapter-agent ID",
                rule="PLUGIN-DEF-001",
            )
        chosen = [d for d in defs if state.agent_id in (None, d.id)]
        if not chosen:
            ids = ", ".join(d.id for d in defs)
            raise AdapterPluginError(
                f"--adapter-agent {state.agent_id!r} is not in --adapter-def "
                f"{state.def_path}; it holds: {ids}",
                rule="PLUGIN-DEF-001",
            )
        state.defn = chosen[0]
    elif state.agent_id:
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from harness.errors import UnknownAgentError

        known_defs, profile_errors = load_agent_defs()
        try:
            state.defn = next(d for d in known_defs if d.id == state.agent_id)
        except StopIteration:
            known = UnknownAgentError(state.agent_id, [d.id for d in known_defs])
            extra = "".join(f"\n  rejected local profile: {e}" for e in profile_errors)
            raise AdapterPluginError(
                f"--adapter-agent: {known.message}{extra}", rule="PLUGIN-DEF-001"
            ) from None
        state.siblings = tuple(known_defs)
    if state.fake_as:
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from fake_clis.catalog import all_specs

        if state.fake_as not in all_specs():
            raise AdapterPluginError(
                f"--adapter-fake-as {state.fake_as!r}: no fake emulator by that id; fakes "
                f"exist for: {', '.join(sorted(all_specs()))}",
                rule="PLUGIN-FAKE-001",
            )


# ---------------------------------------------------------------------------- the marker


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(
    collector: pytest.Collector,
) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
    """An ``adapter_rule`` id missing from the catalog is a collection error naming it
    (PLUGIN-MARK-001; design §Conformance model: no test names an unknown rule)."""
    report: pytest.CollectReport = yield
    if not report.passed:
        return report
    marked = [
        (node, mark)
        for node in report.result
        if isinstance(node, pytest.Item)
        for mark in node.iter_markers(MARKER)
    ]
    if not marked:
        return report
    known = _rules(collector.config)
    problems: list[str] = []
    for node, mark in marked:
        if not mark.args:
            problems.append(f"{node.nodeid}: @pytest.mark.{MARKER}() names no rule id")
        for rid in mark.args:
            if not isinstance(rid, str) or rid not in known:
                problems.append(
                    f"{node.nodeid}: unknown {MARKER} id {rid!r} "
                    f"(not in conformance.rules; {len(known)} rules are known)"
                )
    if not problems:
        return report
    return pytest.CollectReport(
        report.nodeid,
        "failed",
        "\n".join(dict.fromkeys(problems)),
        [],
        sections=list(report.sections),
    )


def _marked_rules(item: pytest.Item) -> list[str]:
    ids: list[str] = []
    for mark in item.iter_markers(MARKER):
        ids += [str(a) for a in mark.args]
    return list(dict.fromkeys(ids))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    """After the test body: the leak check, then the marked rules' checks. When the body
    itself failed, the rules are still judged, so its report says which of them broke."""
    try:
        outcome = yield
    except (Exception, pytest.fail.Exception):
        with contextlib.suppress(Exception):
            _judge_marked_rules(item)
        raise
    state = item.stash.get(_TEST, None)
    if state is not None and state.sandbox is not None:
        leaked = state.sandbox.reap_leftovers()
        if leaked:
            pytest.fail(_leak_message(leaked), pytrace=False)
    problems = _judge_marked_rules(item)
    if problems:
        _test_state(item).failures = []  # the failure message itself carries them
        pytest.fail("\n\n".join(problems), pytrace=False)
    return outcome


def _judge_marked_rules(item: pytest.Item) -> list[str]:
    """PLUGIN-MARK-002: each marked rule that has a check is judged on the test's def
    (def-level rules) or on each of its runs and replays (run-level rules)."""
    ids = _marked_rules(item)
    if not ids:
        return []
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from conformance.checks import all_checks, evaluate_def
    from conformance.checks.runs import evaluate_run

    rules = _rules(item.config)
    checks = all_checks()
    state = _test_state(item)
    session = item.config.stash[_SESSION]
    problems: list[str] = []
    for rid in ids:
        chk = checks.get(rid)
        rule = rules.get(rid)
        if rule is None:  # a marker added after collection, past PLUGIN-MARK-001
            problems.append(f"unknown {MARKER} id {rid!r} (not in conformance.rules)")
            continue
        if chk is None:
            state.verdicts.append(f"{rid}: no check; proved by this test's own assertions")
            continue
        results: list[tuple[str, Finding]] = []
        if chk.level == "def":
            defn = state.checked_def or _def_of(item)
            if defn is None:
                state.verdicts.append(f"{rid}: def-level check not run (no agent_def used)")
                continue
            ours = defn is session.defn
            found = evaluate_def(
                defn,
                siblings=session.siblings if ours else (defn,),
                source=session.def_path if ours else None,
                rule_ids=[rid],
                # PLUGIN-FAKE-001: the adapter-layer checks run the fake the tests run.
                emulator=resolve_emulator(defn, session.fake_as)
                if ours and session.fake_as
                else None,
            )
            results.append((f"def {defn.id!r}", found[rid]))
        else:
            if not state.observations:
                state.verdicts.append(f"{rid}: run-level check not run (no run or replay)")
                continue
            for label, obs in state.observations:
                results.append((label, evaluate_run(obs, rule_ids=[rid])[rid]))
        verdicts, failure = judge_findings(rule, results)
        state.verdicts += verdicts
        if failure is not None:
            problems.append(failure)
    state.failures = problems
    return problems


def judge_findings(
    rule: Rule, results: Sequence[tuple[str, Finding]]
) -> tuple[list[str], str | None]:
    """One verdict line per ``(label, finding)``, and the failure text for the test.

    A ``fail`` or ``not_tested`` finding fails the test, its text starting with the rule id
    and carrying the evidence; an advisory rule never does (design §Conformance model:
    "advisory results never fail the run"); ``pass`` and ``skipped`` never do.
    """
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from conformance.rules import Tier
    from conformance.verdicts import Status

    verdicts: list[str] = []
    bad: list[str] = []
    for label, finding in results:
        reason = finding.reason.removeprefix(f"{rule.id}: ")
        verdicts.append(f"{rule.id}: {label}: {finding.status.value} {reason}".rstrip())
        if finding.status is Status.FAIL:
            bad.append(_describe_failure(label, finding))
        elif finding.status is Status.NOT_TESTED:
            bad.append(f"  {label}: not tested: {finding.reason}")
    if not bad or rule.tier is Tier.ADVISORY:
        return verdicts, None
    head = f"{rule.id} failed [{rule.tier.value}; {rule.citation}]: {rule.statement}"
    return verdicts, head + "\n" + "\n".join(bad)


def _def_of(item: pytest.Item) -> AgentDef | None:
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from harness.defs.types import AgentDef

    funcargs: Mapping[str, Any] = getattr(item, "funcargs", {})
    value = funcargs.get("agent_def")
    return value if isinstance(value, AgentDef) else None


def _describe_failure(label: str, finding: Finding) -> str:
    ev = finding.evidence
    if ev is None:  # a failed finding always carries evidence (CONFORM-EVIDENCE-001)
        return f"  {label}: {finding.reason}"
    lines = [f"  {label}: {ev.summary}"]
    for name, text in (("expected", ev.expected), ("actual", ev.actual)):
        if text:
            lines.append(f"    {name}: " + text.strip().replace("\n", "\n      "))
    if ev.stderr_tail.strip():
        tail = ev.stderr_tail.strip().splitlines()[-5:]
        lines.append("    stderr tail: " + "\n      ".join(tail))
    lines.append(f"    reproduce: {ev.repro_command}")
    return "\n".join(lines)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """A failed test's report names its marked rules (statement and citation)."""
    report = yield
    ids = _marked_rules(item)
    if ids and report.when == "call" and report.failed:
        rules = _rules(item.config)
        lines = [
            f"{rid} [{rules[rid].tier.value}; {rules[rid].citation}]: {rules[rid].statement}"
            for rid in ids
            if rid in rules
        ]
        state = item.stash.get(_TEST, None)
        if state is not None and state.verdicts:
            lines += ["", "verdicts:", *state.verdicts]
        if state is not None and state.failures:
            lines += ["", *state.failures]
        report.sections.append(("adapter-harness rules", "\n".join(lines)))
    return report


# ---------------------------------------------------------------------------- fakes


def resolve_emulator(defn: AgentDef, fake_as: str | None) -> str:
    """The built-in id whose fake emulator plays ``defn``'s CLI (module docs; PLUGIN-FAKE-001)."""
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from fake_clis.catalog import all_specs
    from harness.defs.registry import BUILTIN_REGISTRY

    specs = all_specs()

    if fake_as is not None:
        if fake_as not in specs:
            raise AdapterPluginError(
                f"fake-as {fake_as!r}: no fake emulator by that id; fakes exist for: "
                f"{', '.join(sorted(specs))}",
                rule="PLUGIN-FAKE-001",
            )
        builtin = BUILTIN_REGISTRY.get(fake_as)
        if builtin is not None and not speaks(builtin, defn):
            raise AdapterPluginError(
                f"fake-as {fake_as!r}: its emulator speaks {builtin.stream_format!r} "
                f"(parser {builtin.event_parser!r}), but def {defn.id!r} reads "
                f"{defn.stream_format!r} (parser {defn.event_parser!r})",
                rule="PLUGIN-FAKE-001",
            )
        return fake_as
    emulator, _ = emulator_for(defn, tuple(BUILTIN_REGISTRY.values()), specs)
    if emulator is not None:
        return emulator
    raise AdapterPluginError(
        f"def {defn.id!r}: no built-in def with a fake emulator reads stream_format "
        f"{defn.stream_format!r} with event_parser {defn.event_parser!r}; name one with "
        "--adapter-fake-as ID (or override the adapter_fake_as fixture)",
        rule="PLUGIN-FAKE-001",
    )


def fake_env(
    base: Mapping[str, str],
    *,
    defn: AgentDef,
    bin_dir: Path,
    home: Path,
    scenario: str,
    record: Path,
    mark: str,
) -> dict[str, str]:
    """The environment a fake runs in (PLUGIN-FAKE-001).

    From ``base``: drops ``FAKE_CLI_*``, every var whose name holds KEY, TOKEN, SECRET or
    PASSWORD (no real credential reaches a fake), every built-in's and the def's
    ``bin_env_key`` and ``transport_env_var`` (an inherited override would bypass the
    fake or switch its transport). Then puts ``bin_dir`` first on PATH (``Path`` when
    that is how the platform spells it), sets HOME and USERPROFILE to ``home``,
    FAKE_CLI_SCENARIO, FAKE_CLI_RECORD and the leak mark.
    """
    env = clean_fake_env(base, defn, bin_dir, home)
    env.update(
        FAKE_CLI_SCENARIO=scenario,
        FAKE_CLI_RECORD=str(record),
    )
    env[LEAK_MARK_VAR] = mark
    return env


@dataclass
class Sandbox:
    """One test's private directories and its leak mark."""

    tmp_path: Path
    root: Path
    cwd: Path
    home: Path
    bin_dir: Path
    mark: str
    #: Children of the test process when the sandbox was made.
    preexisting: frozenset[int]
    counter: int = 0

    @classmethod
    def create(cls, tmp_path: Path) -> Sandbox:
        root = tmp_path / "adapter-harness"
        dirs = {name: root / name for name in ("cwd", "home", "bin")}
        for d in dirs.values():
            d.mkdir(parents=True, exist_ok=True)
        return cls(
            tmp_path=tmp_path,
            root=root,
            cwd=dirs["cwd"],
            home=dirs["home"],
            bin_dir=dirs["bin"],
            mark=uuid.uuid4().hex,
            preexisting=frozenset(p.pid for p in psutil.Process().children(recursive=True)),
        )

    def next_number(self) -> int:
        self.counter += 1
        return self.counter

    def placeholder_dirs(self) -> dict[str, str]:
        """Directories the event snapshots write as placeholders (conformance.snapshots)."""
        return {
            "cwd": str(self.cwd),
            "home": str(self.home),
            "bin": str(self.bin_dir),
            "tmp": str(self.tmp_path),
        }

    def _ours(self, proc: psutil.Process) -> bool:
        try:
            if proc.environ().get(LEAK_MARK_VAR) == self.mark:
                return True
        except psutil.Error:
            pass
        return False

    def _from_here(self, proc: psutil.Process) -> bool:
        try:
            text = " ".join(proc.cmdline()) + " " + proc.cwd()
        except psutil.Error:
            return False
        return str(self.root) in text or "fake_clis" in text

    def leftovers(self) -> list[psutil.Process]:
        """Live processes this test started through the plugin (see the module docs)."""
        me = os.getpid()
        found: dict[int, psutil.Process] = {}
        for child in psutil.Process(me).children(recursive=True):
            if (
                child.pid not in self.preexisting
                and _alive(child)
                and (self._ours(child) or self._from_here(child))
            ):
                found[child.pid] = child
        for proc in psutil.process_iter():
            if proc.pid == me or proc.pid in found:
                continue
            if self._ours(proc) and _alive(proc):
                found[proc.pid] = proc
        return list(found.values())

    def reap_leftovers(self) -> list[str]:
        """Kill what :meth:`leftovers` finds; describe each (empty when nothing leaked).

        A process found is first given :data:`EXIT_GRACE_S` to finish exiting (one that
        was already signalled, e.g. by the runner's last kill, is not a leak).
        """
        found = self.leftovers()
        if not found:
            return []
        _, procs = psutil.wait_procs(found, timeout=EXIT_GRACE_S)
        described: list[str] = []
        for proc in procs:
            try:
                described.append(f"pid {proc.pid}: {' '.join(proc.cmdline())[:300]}")
                proc.kill()
            except psutil.Error:
                continue
        psutil.wait_procs(procs, timeout=5)
        return described


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _leak_message(described: Sequence[str]) -> str:
    head = "PLUGIN-LEAK-001: the test left processes running (now killed):"
    return "\n  ".join([head, *described])


class FakeCli:
    """A fake CLI installed for one test: run it yourself with :attr:`env`."""

    def __init__(
        self,
        *,
        agent_id: str,
        emulator: str,
        scenario: str,
        bin_dir: Path,
        executable: Path,
        env: Mapping[str, str],
        record_path: Path,
        cwd: Path,
    ) -> None:
        #: The def's id, and the built-in id whose emulator plays it.
        self.agent_id = agent_id
        self.emulator = emulator
        #: Scenario name or absolute path, as FAKE_CLI_SCENARIO carries it.
        self.scenario = scenario
        self.bin_dir = bin_dir
        #: The shim named like the def's ``bin`` (``.cmd`` on Windows).
        self.executable = executable
        self.record_path = record_path
        #: The sandbox's project directory (``run_agent`` runs there).
        self.cwd = cwd
        self._env = dict(env)

    @property
    def env(self) -> dict[str, str]:
        """A fresh copy of the fake's environment (PATH first, scenario, record, HOME)."""
        return dict(self._env)

    def record(self) -> dict[str, Any]:
        """What the fake received (argv, cwd, prompt and how it came, stdin frames, ...)."""
        try:
            data: dict[str, Any] = json.loads(self.record_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise AdapterPluginError(
                f"the fake {self.emulator!r} wrote no record at {self.record_path}: it has "
                "not run with this env, or it was killed before it could write one"
            ) from None
        return data

    def __repr__(self) -> str:
        return (
            f"FakeCli(agent_id={self.agent_id!r}, emulator={self.emulator!r}, "
            f"scenario={self.scenario!r}, executable={str(self.executable)!r})"
        )


ScenarioArg = str | os.PathLike[str] | Mapping[str, Any]


class FakeCliFactory:
    """``fake_cli(scenario)``: install the def's fake in the sandbox's bin dir."""

    def __init__(self, defn: AgentDef, emulator: str, sandbox: Sandbox, test_dir: Path) -> None:
        self.defn = defn
        self.emulator = emulator
        self.sandbox = sandbox
        self._test_dir = test_dir

    def scenario(self, scenario: ScenarioArg) -> tuple[str, Scenario]:
        """The FAKE_CLI_SCENARIO value for ``scenario`` and the parsed scenario."""
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from fake_clis.scenario import ScenarioError, load_scenario

        if isinstance(scenario, Mapping):
            number = self.sandbox.next_number()
            path = self.sandbox.root / f"scenario-{number}.json"
            path.write_text(json.dumps(scenario), encoding="utf-8")
            value = str(path)
        else:
            value = os.fspath(scenario)
            if Path(value).suffix:
                # A path: relative to the test file's directory, else to the current one.
                candidate = Path(value)
                if not candidate.is_absolute() and (self._test_dir / candidate).exists():
                    candidate = self._test_dir / candidate
                value = str(candidate.resolve())
        try:
            return value, load_scenario(value)
        except ScenarioError as exc:
            raise AdapterPluginError(f"scenario: {exc}") from None

    def install(self, scenario: ScenarioArg = "happy") -> tuple[FakeCli, Scenario]:
        """Install the fake for ``scenario``; raises :class:`AdapterPluginError`."""
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from harness.runtime.fakes_install import shim_name, shim_text

        value, parsed = self.scenario(scenario)
        number = self.sandbox.next_number()
        executable = self.sandbox.bin_dir / shim_name(self.defn.bin, sys.platform)
        text = shim_text(self.emulator, sys.executable, sys.platform)
        for name in (self.defn.bin, *self.defn.fallback_bins):
            shim = self.sandbox.bin_dir / shim_name(name, sys.platform)
            shim.write_text(text, encoding="utf-8", newline="")
            if sys.platform != "win32":
                shim.chmod(0o755)
        record = self.sandbox.root / f"fake-record-{number}.json"
        env = fake_env(
            os.environ,
            defn=self.defn,
            bin_dir=self.sandbox.bin_dir,
            home=self.sandbox.home,
            scenario=value,
            record=record,
            mark=self.sandbox.mark,
        )
        fake = FakeCli(
            agent_id=self.defn.id,
            emulator=self.emulator,
            scenario=value,
            bin_dir=self.sandbox.bin_dir,
            executable=executable,
            env=env,
            record_path=record,
            cwd=self.sandbox.cwd,
        )
        return fake, parsed

    def __call__(self, scenario: ScenarioArg = "happy") -> FakeCli:
        """The installed fake; a bad scenario fails the test with the scenario's error."""
        try:
            fake, _ = self.install(scenario)
        except AdapterPluginError as exc:
            pytest.fail(str(exc), pytrace=False)
        return fake


@dataclass(frozen=True)
class AgentRun:
    """One ``run_agent`` call: what was asked, what happened, and the fake that ran."""

    request: RunRequest
    result: RunResult
    fake: FakeCli
    scenario: Scenario


class AgentRunner:
    """``run_agent(prompt=..., scenario=..., **overrides) -> RunResult`` (PLUGIN-RUN-001).

    Runs the def against its fake through the real runner (:func:`harness.runner.run_agent`)
    in the sandbox's project directory. ``overrides`` are :class:`~harness.runner.RunRequest`
    fields (``model``, ``capabilities``, ``resume_session_id``, ``env_overlay``, ``cwd``,
    timeouts, ...); ``defn``, ``prompt`` and ``env`` are refused (override the
    ``agent_def`` fixture, pass ``prompt=``, use ``env_overlay``). Defaults differ from the
    runner's in three places: ``bin_override`` is the fake's shim (a real CLI is never
    resolved), the inactivity timeout is 30 s, the shutdown grace 1 s. Synchronous tests
    only (the runner runs its own event loop).
    """

    def __init__(self, fakes: FakeCliFactory, state: _TestState, repro: str) -> None:
        self._fakes = fakes
        self._state = state
        self._repro = repro
        #: Every run this test made, in order.
        self.runs: list[AgentRun] = []

    @property
    def last(self) -> AgentRun:
        if not self.runs:
            raise AdapterPluginError("run_agent has not run yet in this test")
        return self.runs[-1]

    def __call__(
        self, prompt: str = DEFAULT_PROMPT, scenario: ScenarioArg = "happy", **overrides: Any
    ) -> RunResult:
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from conformance.checks.runs import observe_run
        from harness.runner import RunRequest, run_agent

        allowed = {f.name for f in dataclasses.fields(RunRequest)} - _RESERVED
        unknown = sorted(set(overrides) - allowed)
        if unknown:
            raise TypeError(
                f"run_agent() got unknown or reserved override(s) {unknown}; allowed: "
                f"{', '.join(sorted(allowed))}"
            )
        try:
            fake, parsed = self._fakes.install(scenario)
        except AdapterPluginError as exc:
            pytest.fail(str(exc), pytrace=False)
        sandbox = self._fakes.sandbox
        settings: dict[str, Any] = {
            "cwd": str(sandbox.cwd),
            "home": str(sandbox.home),
            "bin_override": str(fake.executable),
            "inactivity_timeout_ms": DEFAULT_INACTIVITY_TIMEOUT_MS,
            "shutdown_grace_ms": DEFAULT_SHUTDOWN_GRACE_MS,
        }
        settings.update(overrides)
        request = RunRequest(defn=self._fakes.defn, prompt=prompt, env=fake.env, **settings)
        result = run_agent(request)
        number = len(self.runs) + 1
        obs = observe_run(result, request=request, scenario=parsed, repro_command=self._repro)
        self._state.observations.append((f"run {number} (scenario {parsed.name})", obs))
        self.runs.append(AgentRun(request, result, fake, parsed))
        return result


class Replayer:
    """``replay(recording, chunking=..., ...) -> ReplayResult`` (PLUGIN-REPLAY-001).

    ``recording`` is a path (relative: to the test file's directory first, then the
    current one) or a :class:`~harness.recording.record.Recording`. Keyword arguments go to
    :func:`harness.recording.replay.replay_recording` (``chunking``, ``seed``, ``timing``,
    ``clock``, ``defn``, ``paths``); ``defn`` defaults to the built-in def the header names.
    """

    def __init__(self, state: _TestState, test_dir: Path) -> None:
        self._state = state
        self._test_dir = test_dir

    def __call__(
        self, recording: str | os.PathLike[str] | Recording, **options: Any
    ) -> ReplayResult:
        # start-up: pytest loads this plugin in every run; this waits until it is used
        from conformance.checks.runs import observe_replay
        from harness.recording.record import Recording, load_recording
        from harness.recording.replay import replay_recording

        if isinstance(recording, Recording):
            loaded = recording
        else:
            path = Path(os.fspath(recording))
            if not path.is_absolute() and (self._test_dir / path).exists():
                path = self._test_dir / path
            loaded = load_recording(path)
        result = replay_recording(loaded, **options)
        obs = observe_replay(result, loaded)
        label = f"replay of {loaded.source or 'a recording'} ({result.chunking})"
        self._state.observations.append((label, obs))
        return result


# ---------------------------------------------------------------------------- fixtures


@pytest.fixture
def agent_def(request: pytest.FixtureRequest) -> AgentDef:
    """The def under test: ``--adapter-def PATH.py`` / ``--adapter-agent ID`` (PLUGIN-DEF-001).

    Override this fixture to test a def built in code; the other fixtures validate
    whatever it returns as data first (PLUGIN-DEF-002).
    """
    state = request.config.stash[_SESSION]
    if state.defn is None:
        pytest.fail(
            "adapter-harness: no def under test: run pytest with --adapter-def PATH.py or "
            "--adapter-agent ID, or define an agent_def fixture (PLUGIN-DEF-001)",
            pytrace=False,
        )
    return state.defn


@pytest.fixture
def adapter_fake_as(request: pytest.FixtureRequest) -> str | None:
    """The built-in id whose emulator plays the def (``--adapter-fake-as``; None = infer)."""
    value: str | None = request.config.stash[_SESSION].fake_as
    return value


def _checked(request: pytest.FixtureRequest, value: object) -> AgentDef:
    """PLUGIN-DEF-002: what ``agent_def`` gave, validated as data (each problem names the
    field, ``agent_def.<field>: ...``) before any fake or run uses it."""
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from conformance.checks.loader import validate_def_data
    from harness.defs.types import AgentDef

    if not isinstance(value, AgentDef):
        pytest.fail(
            f"agent_def: must be a harness.defs.types.AgentDef, got {type(value).__name__} "
            "(PLUGIN-DEF-002)",
            pytrace=False,
        )
    problems = validate_def_data(value, "agent_def")
    if problems:
        pytest.fail(
            "agent_def is not a valid def (PLUGIN-DEF-002):\n  " + "\n  ".join(problems),
            pytrace=False,
        )
    _test_state(request.node).checked_def = value
    return value


@pytest.fixture
def _adapter_sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Sandbox]:
    """The test's directories and leak mark; the last leak check runs at teardown."""
    sandbox = Sandbox.create(tmp_path)
    _test_state(request.node).sandbox = sandbox
    yield sandbox
    leaked = sandbox.reap_leftovers()
    if leaked:
        pytest.fail(_leak_message(leaked), pytrace=False)


def _test_dir(request: pytest.FixtureRequest) -> Path:
    return Path(request.path).parent


@pytest.fixture
def fake_cli(
    request: pytest.FixtureRequest,
    agent_def: AgentDef,
    adapter_fake_as: str | None,
    _adapter_sandbox: Sandbox,
) -> FakeCliFactory:
    """``fake_cli(scenario="happy") -> FakeCli``: the def's fake, installed under the def's
    ``bin`` (and ``fallback_bins``) in the test's bin dir (PLUGIN-FAKE-001).

    ``scenario`` is a scenario name (``fake_clis/scenarios``), a path to a scenario file,
    or a scenario as a mapping.
    """
    defn = _checked(request, agent_def)
    try:
        emulator = resolve_emulator(defn, adapter_fake_as)
    except AdapterPluginError as exc:
        pytest.fail(str(exc), pytrace=False)
    return FakeCliFactory(defn, emulator, _adapter_sandbox, _test_dir(request))


def _node_from_invocation_dir(item: pytest.Item) -> str:
    """The test's node id with its file path relative to where pytest was started, so the
    reproduce command runs from there (PLUGIN-REPRO-001); a node id is rootdir-relative."""
    file, sep, rest = item.nodeid.partition("::")
    start = item.config.invocation_params.dir
    path = os.path.relpath(item.config.rootpath / file, start)
    return Path(path).as_posix() + sep + rest


@pytest.fixture
def run_agent(request: pytest.FixtureRequest, fake_cli: FakeCliFactory) -> AgentRunner:
    """``run_agent(prompt=..., scenario="happy", **overrides) -> RunResult`` (PLUGIN-RUN-001)."""
    session = request.config.stash[_SESSION]
    args = [shlex.quote(_node_from_invocation_dir(request.node))]
    if fake_cli.defn is session.defn:
        args += [shlex.quote(a) for a in session.option_args()]
    repro = "python -m pytest " + " ".join(args)
    return AgentRunner(fake_cli, _test_state(request.node), repro)


@pytest.fixture
def replay(request: pytest.FixtureRequest) -> Replayer:
    """``replay(recording, **options) -> harness.recording.replay.ReplayResult``
    (PLUGIN-REPLAY-001)."""
    return Replayer(_test_state(request.node), _test_dir(request))


@pytest.fixture
def snapshot_events(snapshot: SnapshotAssertion, _adapter_sandbox: Sandbox) -> SnapshotAssertion:
    """syrupy's ``snapshot`` with :class:`conformance.snapshots.EventStreamExtension`, bound
    to this test's directories: ``assert snapshot_events == result`` (PLUGIN-SNAP-001)."""
    # start-up: pytest loads this plugin in every run; this waits until it is used
    from conformance.snapshots import EventStreamExtension

    bound = EventStreamExtension.with_paths(**_adapter_sandbox.placeholder_dirs())
    return snapshot.use_extension(bound)
