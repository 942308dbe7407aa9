"""Def-level checks: rules judged on an :class:`AgentDef` alone, before anything runs.

Design: docs/design/conformance.md#conformance.checks.defs
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import os
import sys
import tempfile
import threading
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.checks import DefSubject, Finding, check, failed, not_tested, passed, skipped
from harness.defs.transport import select_transport
from harness.defs.types import (
    ID_PATTERN,
    AgentDef,
    BuildOptions,
    PromptDelivery,
    ResumeStyle,
    RuntimeContext,
)
from harness.errors import AgentDefError, HarnessError
from harness.formats import UnknownStreamFormatError, is_two_way, validate_stream_format

__all__ = [
    "NEW_ID",
    "PLATFORMS",
    "PROMPT",
    "PROMPT_TOKEN",
    "RESUME_ID",
    "Case",
    "documented_cases",
    "transport_views",
]

#: A distinctive token inside the test prompt; no argv element may contain it unless the
#: def delivers the prompt in argv.
PROMPT_TOKEN = "PROMPT-SENTINEL-7d41"
#: The test prompt: multi-line, quotes, a role marker, flag-like words, a ``%VAR%``.
PROMPT = f'{PROMPT_TOKEN} "Build" a landing page\n## user\nuse --model x and -p - with %HOME%'
RESUME_ID = "resume-sentinel-5b2e"
NEW_ID = "minted-sentinel-9c0a"
PLATFORMS: tuple[str, ...] = ("linux", "darwin", "win32")
_CWD = "/conform/project"
_PROMPT_FILE = "/conform/tmp/prompt.md"
_LOG_FILE = "/conform/tmp/agent.log"
_EXTRA_DIR = "/conform/extra"
_IMAGE = "/conform/uploads/shot.png"
#: Grid cases above this are sampled evenly (deterministically).
_MAX_CASES = 2400


# -- cases ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One set of ``build_args`` inputs."""

    prompt: str
    images: tuple[str, ...]
    dirs: tuple[str, ...]
    options: BuildOptions
    ctx: RuntimeContext

    def call(self, defn: AgentDef) -> list[str]:
        """``build_args`` with fresh mutable copies of the inputs."""
        return defn.build_args(
            self.prompt,
            list(self.images),
            list(self.dirs),
            _fresh_options(self.options),
            _fresh_ctx(self.ctx),
        )

    def describe(self) -> str:
        o, c = self.options, self.ctx
        opts = [f"capabilities={dict(o.capabilities)}"]
        opts += [f"{k}={v!r}" for k, v in (("model", o.model), ("reasoning", o.reasoning)) if v]
        ctx = [f"platform={c.platform!r}", f"cwd={c.cwd!r}"]
        for name in ("resume_session_id", "new_session_id", "prompt_file_path"):
            value = getattr(c, name)
            if value is not None:
                ctx.append(f"{name}={value!r}")
        return (
            f"build_args(prompt={_short(self.prompt)}, images={list(self.images)}, "
            f"dirs={list(self.dirs)}, BuildOptions({', '.join(opts)}), "
            f"RuntimeContext({', '.join(ctx)}))"
        )


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _fresh_options(options: BuildOptions) -> BuildOptions:
    return BuildOptions(
        model=options.model,
        reasoning=options.reasoning,
        service_tier=options.service_tier,
        permission_mode=options.permission_mode,
        capabilities=dict(options.capabilities),
    )


def _fresh_ctx(ctx: RuntimeContext) -> RuntimeContext:
    return RuntimeContext(
        cwd=ctx.cwd,
        platform=ctx.platform,
        env=dict(ctx.env),
        resume_session_id=ctx.resume_session_id,
        new_session_id=ctx.new_session_id,
        prompt_file_path=ctx.prompt_file_path,
        agent_log_file_path=ctx.agent_log_file_path,
        has_prior_assistant_turn=ctx.has_prior_assistant_turn,
        skill_dirs=ctx.skill_dirs,
    )


def _env_for(platform: str) -> dict[str, str]:
    if platform == "win32":
        return {"Path": "C:\\Windows\\System32", "USERPROFILE": "C:\\Users\\conform"}
    return {"PATH": "/usr/bin:/bin", "HOME": "/home/conform"}


def transport_views(defn: AgentDef) -> list[tuple[str, AgentDef]]:
    """The def as each of its transports presents it to a run (seed 000 §5.3): ``("", defn)``
    for its own transport, then ``(name, view)`` per alt transport."""
    views = [("", defn)]
    for alt in defn.alt_transports:
        try:
            views.append((alt.name, select_transport(defn, name=alt.name)))
        except AgentDefError:
            continue
    return views


def _caps_all(defn: AgentDef, value: bool) -> dict[str, bool]:
    return dict.fromkeys(defn.capability_flags.values(), value)


def _context(
    defn: AgentDef,
    platform: str,
    *,
    resume: bool,
    cwd: str = _CWD,
    prompt_file: str = _PROMPT_FILE,
    log_file: str = _LOG_FILE,
) -> RuntimeContext:
    specify = defn.resume_style is ResumeStyle.SPECIFY
    return RuntimeContext(
        cwd=cwd,
        platform=platform,
        env=_env_for(platform),
        resume_session_id=RESUME_ID if resume else None,
        # The host mints an id only for a specify-style first turn (seed 002 §3.1).
        new_session_id=NEW_ID if specify and not resume else None,
        prompt_file_path=prompt_file if defn.prompt_delivery is PromptDelivery.FILE else None,
        agent_log_file_path=log_file,
        has_prior_assistant_turn=resume,
    )


def documented_cases(
    defn: AgentDef,
    caps_variants: Sequence[Mapping[str, bool]] | None = None,
    *,
    prompt: str = PROMPT,
    cwd: str = _CWD,
    prompt_file: str = _PROMPT_FILE,
    log_file: str = _LOG_FILE,
) -> list[Case]:
    """The documented-options grid of ``defn`` (module docstring), sampled to a bound."""
    if caps_variants is None:
        caps_variants = (_caps_all(defn, True), {}, _caps_all(defn, False))
    models: list[str | None] = [None, *(m.id for m in defn.fallback_models)]
    reasoning: list[str | None] = [None, *(r.id for r in defn.reasoning_options)]
    images = (_IMAGE,) if defn.supports_image_paths else ()
    cases = [
        Case(
            prompt=prompt,
            images=images,
            dirs=(_EXTRA_DIR,),
            options=BuildOptions(model=model, reasoning=effort, capabilities=dict(caps)),
            ctx=_context(
                defn,
                platform,
                resume=resume,
                cwd=cwd,
                prompt_file=prompt_file,
                log_file=log_file,
            ),
        )
        for caps, model, effort, platform, resume in itertools.product(
            caps_variants, models, reasoning, PLATFORMS, (False, True)
        )
    ]
    if len(cases) > _MAX_CASES:
        step = -(-len(cases) // _MAX_CASES)
        cases = cases[::step]
    return cases


def _first_turn(defn: AgentDef, caps: Mapping[str, bool], **options: Any) -> Case:
    return Case(
        prompt=PROMPT,
        images=(_IMAGE,) if defn.supports_image_paths else (),
        dirs=(_EXTRA_DIR,),
        options=BuildOptions(capabilities=dict(caps), **options),
        ctx=_context(defn, "linux", resume=False),
    )


@dataclass(frozen=True)
class _Result:
    argv: list[str] | None
    error: BaseException | None

    @property
    def shown(self) -> str:
        if self.error is not None:
            return f"raised {type(self.error).__name__}: {self.error}"
        return repr(self.argv)


def _run(defn: AgentDef, case: Case) -> _Result:
    try:
        return _Result(case.call(defn), None)
    except Exception as exc:
        return _Result(None, exc)


def _where(name: str, view: AgentDef) -> str:
    """``def 'x'`` for the def's own transport, ``def 'x' (transport 'y')`` for an alt one.

    :func:`transport_views` names the def's own transport ``""``.
    """
    return f"def {view.id!r}" + (f" (transport {name!r})" if name else "")


# -- data checks ---------------------------------------------------------------------------------


@check("DEF-REGISTRY-001", level="def")
def unique_id(subject: DefSubject) -> Finding:
    """DEF-REGISTRY-001 (seed 000 §1: "a boot-time loop throws on any duplicate id")."""
    defn = subject.defn
    same = [d for d in subject.siblings if d.id == defn.id]
    extra = len(same) - (1 if any(d is defn for d in subject.siblings) else 0)
    if extra > 0:
        others = [f"{d.name!r} (bin {d.bin!r})" for d in same if d is not defn] or ["itself"]
        return failed(
            f"id {defn.id!r} is used by {extra} other def(s) in the set",
            repro_command=subject.repro_command,
            expected=f"exactly one def with id {defn.id!r}",
            actual=f"{defn.name!r} (bin {defn.bin!r}) and {', '.join(others)}",
        )
    return passed(f"unique among {max(len(subject.siblings), 1)} def(s)")


@check("DEF-ID-001", level="def")
def id_and_names(subject: DefSubject) -> Finding:
    """DEF-ID-001 (ref §6: ``^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$``; name and bin non-empty)."""
    defn = subject.defn
    problems: list[str] = []
    if not isinstance(defn.id, str) or not ID_PATTERN.match(defn.id):
        problems.append(f"id {defn.id!r} does not match {ID_PATTERN.pattern}")
    for name in ("name", "bin"):
        value = getattr(defn, name)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{name} {value!r} is not a non-empty string")
    if problems:
        return failed(
            "; ".join(problems),
            repro_command=subject.repro_command,
            expected=f"id matching {ID_PATTERN.pattern}, non-empty name and bin",
            actual=f"id={defn.id!r}, name={defn.name!r}, bin={defn.bin!r}",
        )
    return passed()


def _argv_views(defn: AgentDef) -> list[str]:
    return [n for n, v in transport_views(defn) if v.prompt_delivery is PromptDelivery.ARGV]


@check("DEF-BUDGET-001", level="def")
def argv_budget_declared(subject: DefSubject) -> Finding:
    """DEF-BUDGET-001 (seed 000 §12: "argv-only definitions must declare and enforce a prompt
    budget so Windows' command-line limit fails observably before spawn")."""
    defn = subject.defn
    argv_views = _argv_views(defn)
    if not argv_views:
        return skipped(f"prompt delivery is {defn.prompt_delivery.value}, not argv")
    budget = defn.max_prompt_arg_bytes
    if isinstance(budget, bool) or not isinstance(budget, int) or budget <= 0:
        return failed(
            f"transport(s) {argv_views} deliver the prompt in argv without a prompt budget",
            repro_command=subject.repro_command,
            expected="max_prompt_arg_bytes: a positive integer (bytes)",
            actual=f"max_prompt_arg_bytes={budget!r}",
        )
    return passed(f"budget {budget} bytes")


@check("DEF-BUDGET-002", level="def")
def no_budget_off_argv(subject: DefSubject) -> Finding:
    """DEF-BUDGET-002 (ref §4: every budget guard runs iff the budget is set)."""
    defn = subject.defn
    if _argv_views(defn):
        return skipped("the def delivers the prompt in argv, where a budget is required")
    if defn.max_prompt_arg_bytes is not None:
        return failed(
            f"a {defn.prompt_delivery.value}-delivery def declares a prompt budget",
            repro_command=subject.repro_command,
            expected="max_prompt_arg_bytes=None (only argv delivery is budgeted)",
            actual=f"max_prompt_arg_bytes={defn.max_prompt_arg_bytes!r}",
        )
    return passed()


@check("DEF-FORMAT-001", level="def")
def known_format(subject: DefSubject) -> Finding:
    """DEF-FORMAT-001 (seed 000 §1: the engine routes ``streamFormat`` / ``eventParser`` to
    the matching parser): each transport names a known format and a dialect it accepts."""
    for name, view in transport_views(subject.defn):
        try:
            validate_stream_format(view.stream_format, view.event_parser)
        except UnknownStreamFormatError as exc:
            return failed(
                f"{_where(name, view)}: {exc}",
                repro_command=subject.repro_command,
                expected="a stream_format / event_parser pair the engine has a parser for",
                actual=f"stream_format={view.stream_format!r}, event_parser={view.event_parser!r}",
            )
        except Exception as exc:  # the format is known, but its parser module is broken
            return not_tested(
                f"{_where(name, view)}: the parser of {view.stream_format!r} did not load: "
                f"{type(exc).__name__}: {exc}"
            )
    return passed()


# -- purity --------------------------------------------------------------------------------------


@dataclass
class _Watch:
    """What build_args did while recording on this thread."""

    recording: bool = False
    env_reads: list[str] = field(default_factory=list)
    effects: list[str] = field(default_factory=list)


_LOCAL = threading.local()
_INSTALL_LOCK = threading.Lock()
_PLATFORM_LOCK = threading.Lock()


class _Installed:
    """Process-wide install state of the audit hook and the environ traps."""

    hook = False
    trap_users = 0


_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_FS_EVENTS = frozenset(
    {
        "os.remove",
        "os.rename",
        "os.mkdir",
        "os.rmdir",
        "os.symlink",
        "os.link",
        "os.chmod",
        "os.chown",
        "os.truncate",
        "os.utime",
        "shutil.rmtree",
        "shutil.copyfile",
        "shutil.copymode",
        "shutil.copystat",
        "shutil.copytree",
        "shutil.move",
    }
)
_ENV_EVENTS = frozenset({"os.putenv", "os.unsetenv"})
_PROCESS_EVENTS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
    }
)
_NET_EVENTS = frozenset({"socket.connect", "socket.sendto", "socket.getaddrinfo"})


def _current_watch() -> _Watch | None:
    watch = getattr(_LOCAL, "watch", None)
    return watch if isinstance(watch, _Watch) and watch.recording else None


def _is_bytecode_cache(path: object) -> bool:
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
    return "__pycache__" in text


def _audit(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: idle unless this thread is recording a build_args call."""
    watch = getattr(_LOCAL, "watch", None)
    if watch is None or not watch.recording:
        return
    try:
        if event == "open":
            path, mode, flags = (*tuple(args), None, None, None)[:3]
            writes = (
                any(c in mode for c in "wax+")
                if isinstance(mode, str)
                else isinstance(flags, int) and bool(flags & _WRITE_FLAGS)
            )
            if writes and not _is_bytecode_cache(path):
                watch.effects.append(f"opened {path!r} for writing")
        elif event in _FS_EVENTS:
            if not (args and _is_bytecode_cache(args[0])):
                watch.effects.append(f"{event}{_short_args(args)}")
        elif event in _ENV_EVENTS:
            watch.effects.append(f"{event}{_short_args(args[:1])} (environment change)")
        elif event in _PROCESS_EVENTS:
            watch.effects.append(f"{event}{_short_args(args[:2])} (process start)")
        elif event in _NET_EVENTS:
            watch.effects.append(f"{event}{_short_args(args[1:2])} (network)")
    except Exception:  # an audit hook must never break the audited operation
        return


def _short_args(args: Sequence[Any]) -> str:
    return "(" + ", ".join(_short(repr(a), 80) for a in args) + ")"


class _EnvironTrap(MutableMapping[Any, Any]):
    """Stands in for ``os.environ``: forwards everything, notes reads of the recording thread."""

    def __init__(self, real: MutableMapping[Any, Any], name: str) -> None:
        self._real = real
        self._name = name

    def _note(self, what: str) -> None:
        watch = _current_watch()
        if watch is not None:
            watch.env_reads.append(f"{self._name}{what}")

    def __getitem__(self, key: Any) -> Any:
        self._note(f"[{key!r}]")
        return self._real[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self._note(f"[{key!r}] = ...")
        self._real[key] = value

    def __delitem__(self, key: Any) -> None:
        self._note(f"del [{key!r}]")
        del self._real[key]

    def __iter__(self) -> Iterator[Any]:
        self._note(" iterated")
        return iter(self._real)

    def __len__(self) -> int:
        self._note(" measured (len)")
        return len(self._real)

    def __contains__(self, key: object) -> bool:
        self._note(f" tested for {key!r}")
        return key in self._real

    def copy(self) -> dict[Any, Any]:
        self._note(".copy()")
        return dict(self._real)

    def __or__(self, other: Mapping[Any, Any]) -> dict[Any, Any]:
        self._note(" | ...")
        return {**self._real, **other}

    def __ror__(self, other: Mapping[Any, Any]) -> dict[Any, Any]:
        self._note(" | ...")
        return {**other, **self._real}

    def __ior__(self, other: Mapping[Any, Any]) -> _EnvironTrap:
        self._note(" |= ...")
        self._real.update(other)
        return self

    def __repr__(self) -> str:
        return repr(self._real)

    def __getattr__(self, name: str) -> Any:
        self._note(f".{name}")
        return getattr(self._real, name)


@contextlib.contextmanager
def _watching() -> Iterator[_Watch]:
    """Install the environ traps and the audit hook; give this thread a watch."""
    with _INSTALL_LOCK:
        if not _Installed.hook:
            sys.addaudithook(_audit)
            _Installed.hook = True
        if _Installed.trap_users == 0:
            setattr(os, "environ", _EnvironTrap(os.environ, "os.environ"))  # noqa: B010
            if hasattr(os, "environb"):
                setattr(os, "environb", _EnvironTrap(os.environb, "os.environb"))  # noqa: B010
        _Installed.trap_users += 1
    previous = getattr(_LOCAL, "watch", None)
    watch = _Watch()
    _LOCAL.watch = watch
    try:
        yield watch
    finally:
        _LOCAL.watch = previous
        with _INSTALL_LOCK:
            _Installed.trap_users -= 1
            if _Installed.trap_users == 0:
                for name in ("environ", "environb"):
                    trap = getattr(os, name, None)
                    if isinstance(trap, _EnvironTrap):
                        setattr(os, name, trap._real)


@contextlib.contextmanager
def _recording(watch: _Watch) -> Iterator[None]:
    watch.recording = True
    try:
        yield
    finally:
        watch.recording = False


@contextlib.contextmanager
def _platform_flipped(platform: str) -> Iterator[None]:
    """Set ``sys.platform`` to something other than ``platform`` for one call."""
    with _PLATFORM_LOCK:
        real = sys.platform
        setattr(sys, "platform", "win32" if platform != "win32" else "linux")  # noqa: B010
        try:
            yield
        finally:
            setattr(sys, "platform", real)  # noqa: B010


class _Violation(Exception):
    def __init__(self, summary: str, case: Case, expected: str, actual: str) -> None:
        super().__init__(summary)
        self.summary = summary
        self.case = case
        self.expected = expected
        self.actual = actual


def _same(a: _Result, b: _Result) -> bool:
    if a.error is not None or b.error is not None:
        return type(a.error) is type(b.error) and str(a.error) == str(b.error)
    return a.argv == b.argv


def _pure_once(defn: AgentDef, case: Case, watch: _Watch) -> None:
    """ARGV-PURE-001 on one case; raises :class:`_Violation`."""
    images, dirs = list(case.images), list(case.dirs)
    options, ctx = _fresh_options(case.options), _fresh_ctx(case.ctx)
    before = (case.prompt, list(images), list(dirs), copy.deepcopy(options), copy.deepcopy(ctx))

    def call() -> _Result:
        with _recording(watch):
            try:
                return _Result(defn.build_args(case.prompt, images, dirs, options, ctx), None)
            except Exception as exc:
                return _Result(None, exc)

    def env_reads() -> None:
        if watch.env_reads:
            reads = sorted(set(watch.env_reads))
            watch.env_reads.clear()
            raise _Violation(
                f"build_args read the process environment: {', '.join(reads[:5])}",
                case,
                "platform and env only from RuntimeContext (ctx.platform, ctx.env)",
                "; ".join(reads),
            )

    first = call()
    if (case.prompt, images, dirs, options, ctx) != before:
        raise _Violation(
            "build_args mutated its inputs",
            case,
            repr(before),
            repr((case.prompt, images, dirs, options, ctx)),
        )
    second = call()
    env_reads()
    if not _same(first, second):
        raise _Violation("equal inputs gave different results", case, first.shown, second.shown)
    if first.argv is not None and first.argv is second.argv:
        raise _Violation(
            "build_args returned the same list object twice (a shared, mutable argv)",
            case,
            "a fresh list per call",
            f"id {id(first.argv)} both times",
        )
    with _platform_flipped(ctx.platform):
        third = call()
    env_reads()
    if not _same(first, third):
        raise _Violation(
            f"the result depends on sys.platform (ctx.platform is {ctx.platform!r})",
            case,
            first.shown,
            third.shown + f"  (with sys.platform changed, same ctx.platform {ctx.platform!r})",
        )


def _arbitrary_ctx(platform: str, **fields: Any) -> RuntimeContext:
    return RuntimeContext(platform=platform, env=_env_for(platform), **fields)


@contextlib.contextmanager
def _scratch_hypothesis_home() -> Iterator[None]:
    """Run hypothesis with a temporary home directory, restored after (USERFILE-CONFORM-001).

    Hypothesis caches constants it reads from local source under its home directory,
    ``./.hypothesis`` unless told otherwise, so a conform run would leave that directory
    in the user's working directory. A home the user chose
    (``HYPOTHESIS_STORAGE_DIRECTORY``) is theirs and is kept.
    """
    from hypothesis import configuration

    if os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    # The module's own global: None until a home is set or first used (then the default).
    previous = vars(configuration).get("__hypothesis_home_directory")
    with tempfile.TemporaryDirectory(prefix="harness-hypothesis-") as home:
        configuration.set_hypothesis_home_dir(home)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(previous)


def _hypothesis_pure(defn: AgentDef, watch: _Watch, max_examples: int) -> str:
    """Explore arbitrary inputs with hypothesis; returns a note for the reason."""
    try:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import strategies as st
        from hypothesis.errors import Flaky
    except ImportError:
        return "; hypothesis is not installed, so only the documented grid was checked"
    safe = st.text(alphabet="abcxyz019-./_:", min_size=1, max_size=16)
    keys = sorted(set(defn.capability_flags.values()))
    models = [m.id for m in defn.fallback_models]
    efforts = [r.id for r in defn.reasoning_options]
    maybe = st.one_of(st.none(), safe)
    options = st.builds(
        BuildOptions,
        model=st.one_of(st.none(), st.sampled_from(models), safe) if models else maybe,
        reasoning=st.one_of(st.none(), st.sampled_from(efforts)) if efforts else st.none(),
        capabilities=(
            st.dictionaries(st.sampled_from(keys), st.booleans()) if keys else st.just({})
        ),
    )
    contexts = st.builds(
        _arbitrary_ctx,
        platform=st.sampled_from(PLATFORMS),
        cwd=maybe,
        resume_session_id=st.one_of(st.none(), st.just(""), safe),
        new_session_id=maybe,
        prompt_file_path=maybe,
        has_prior_assistant_turn=st.booleans(),
    )
    cases = st.builds(
        Case,
        prompt=st.text(max_size=80),
        images=st.lists(safe, max_size=2).map(tuple),
        dirs=st.lists(st.one_of(st.just(""), safe), max_size=3).map(tuple),
        options=options,
        ctx=contexts,
    )

    @settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        print_blob=False,
    )
    @given(cases)
    def prop(case: Case) -> None:
        _pure_once(defn, case, watch)

    try:
        with _scratch_hypothesis_home():
            prop()
    except Flaky as exc:
        raise _Violation(
            "build_args is not deterministic (hypothesis saw a failure that did not repeat)",
            Case(PROMPT, (), (), BuildOptions(), RuntimeContext()),
            "the same result for the same inputs",
            str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
        ) from exc
    return f"; plus {max_examples} hypothesis examples"


@check("ARGV-PURE-001", level="def")
def build_args_pure(subject: DefSubject) -> Finding:
    """ARGV-PURE-001 (seed 002 §3.2: "buildArgs 是纯函数"; types.py): equal inputs give equal
    argv (a fresh list each time), inputs are not mutated, and neither ``os.environ`` nor
    ``sys.platform`` is read."""
    notes: list[str] = []
    with _watching() as watch:
        for name, view in transport_views(subject.defn):
            grid = documented_cases(view)
            sample = grid[:: max(1, len(grid) // 48)]
            try:
                for case in sample:
                    _pure_once(view, case, watch)
                notes.append(
                    f"{name or view.transport_name}: {len(sample)} documented cases"
                    + _hypothesis_pure(view, watch, subject.max_examples)
                )
            except _Violation as v:
                return failed(
                    f"{_where(name, view)}: {v.summary}",
                    repro_command=subject.repro_command,
                    expected=v.expected,
                    actual=f"{v.actual}\ninputs: {v.case.describe()}",
                )
    return passed("; ".join(notes))


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for path in sorted(root.rglob("*")):
        try:
            st = path.lstat()
        except OSError:
            continue
        size = -1 if path.is_dir() else st.st_size
        out[path.relative_to(root).as_posix()] = (size, st.st_mtime_ns)
    return out


@check("DEFCHECK-PURE-001", level="def")
def build_args_side_effect_free(subject: DefSubject) -> Finding:
    """DEFCHECK-PURE-001 (design §Principles 2: "an AgentDef is a frozen dataclass plus a pure
    build_args"): no file written (the cwd and prompt-file directory are real temp dirs
    whose listing is compared; writes anywhere else are caught by the audit hook), no
    environment change, no process started, no network connection."""
    with tempfile.TemporaryDirectory(prefix="harness-defcheck-") as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        prompt_file = root / "prompt.md"
        prompt_file.write_text(PROMPT, encoding="utf-8")
        before = _listing(root)
        effects: list[tuple[str, Case, str]] = []
        with _watching() as watch:
            for name, view in transport_views(subject.defn):
                cases = documented_cases(
                    view,
                    (_caps_all(view, True), {}),
                    cwd=str(project),
                    prompt_file=str(prompt_file),
                    log_file=str(root / "agent.log"),
                )
                for case in cases:
                    with _recording(watch):
                        _run(view, case)
                    effects.extend((name, case, e) for e in dict.fromkeys(watch.effects))
                    watch.effects.clear()
                    if effects:  # one case proves it; the rest would repeat it
                        break
                if effects:
                    break
        after = _listing(root)
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    if not effects and not changed:
        return passed()
    lines = [f"{_where(n, subject.defn)}: {e}" for n, _, e in effects[:10]]
    lines += [f"temp dir entry created/changed/removed: {p}" for p in changed[:10]]
    first_case = effects[0][1].describe() if effects else "(any documented case)"
    return failed(
        f"build_args has side effects: {lines[0]}",
        repro_command=subject.repro_command,
        expected="no file write, environment change, process start or network connection",
        actual="\n".join(lines) + f"\nfirst seen with: {first_case}",
    )


# -- totality ------------------------------------------------------------------------------------


@check("DEFCHECK-TOTAL-001", level="def")
def build_args_total(subject: DefSubject) -> Finding:
    """DEFCHECK-TOTAL-001 (seed 000 §1: every field is data or a pure arg-builder; design
    principle 3: "unsupported" is a value the engine reports): with every capability found,
    every documented option works; otherwise only a typed HarnessError may be raised."""
    total = 0
    for name, view in transport_views(subject.defn):
        all_found = _caps_all(view, True)
        for case in documented_cases(view):
            total += 1
            result = _run(view, case)
            problem = ""
            if result.error is not None:
                if dict(case.options.capabilities) == all_found:
                    problem = "raised although every capability was found"
                elif not isinstance(result.error, HarnessError):
                    problem = "raised an untyped exception (only a HarnessError may be raised)"
            elif not isinstance(result.argv, list) or not all(
                isinstance(a, str) for a in result.argv
            ):
                problem = "did not return a list of strings"
            if problem:
                return failed(
                    f"{_where(name, view)}: build_args {problem}",
                    repro_command=subject.repro_command,
                    expected="a list of strings (or a typed HarnessError for an unsupported "
                    "option when a capability is missing)",
                    actual=f"{result.shown}\ninputs: {case.describe()}",
                )
    return passed(f"{total} documented cases")


# -- capability gates ----------------------------------------------------------------------------


def _build_with_caps(
    view: AgentDef,
    caps: dict[str, bool],
    *,
    resume: bool,
    model: str | None,
    effort: str | None,
) -> _Result:
    case = Case(
        PROMPT,
        (_IMAGE,) if view.supports_image_paths else (),
        (_EXTRA_DIR,),
        BuildOptions(model=model, reasoning=effort, capabilities=caps),
        _context(view, "linux", resume=resume),
    )
    return _run(view, case)


def _has_flag(argv: Sequence[str] | None, flag: str) -> bool:
    return argv is not None and any(a == flag or a.startswith(flag + "=") for a in argv)


@check("ARGV-CAPS-001", level="def")
def capability_gates(subject: DefSubject) -> Finding:
    """ARGV-CAPS-001 (seed 002 §5.5: a failed probe gives ``{}`` and the safe baseline "no
    optional flag"; §4.1 / §9 ④: an old flag may default on, ``caps.addDir !== false``)."""
    defn = subject.defn
    if not defn.capability_flags:
        return skipped("the def declares no capability_flags")
    notes: list[str] = []
    for name, view in transport_views(defn):
        model = next((m.id for m in view.fallback_models if m.id != "default"), None)
        effort = next((r.id for r in view.reasoning_options if r.id != "default"), None)
        for flag, key in sorted(view.capability_flags.items()):
            for resume in (False, True):
                unknown, found, missing = (
                    _build_with_caps(view, caps, resume=resume, model=model, effort=effort)
                    for caps in ({}, {key: True}, {key: False})
                )
                turn = "resume turn" if resume else "first turn"
                if _has_flag(missing.argv, flag):
                    return failed(
                        f"{_where(name, view)}: {flag} is passed although the probe reported "
                        f"it missing ({key}: False) on a {turn}",
                        repro_command=subject.repro_command,
                        expected=f"{flag} absent when capabilities[{key!r}] is False",
                        actual=f"{{{key!r}: False}} -> {missing.shown}\n"
                        f"{{}} -> {unknown.shown}\n{{{key!r}: True}} -> {found.shown}",
                    )
                if _has_flag(unknown.argv, flag):
                    notes.append(f"{flag} default-on")
                elif _has_flag(found.argv, flag):
                    notes.append(f"{flag} gated")
                else:
                    notes.append(f"{flag} probe-only")
    return passed(", ".join(sorted(set(notes))))


# -- sessions, headless posture, prompt ----------------------------------------------------------


def _contains(argv: Sequence[str] | None, needle: str) -> bool:
    return argv is not None and any(needle in a for a in argv)


@check("DEFCHECK-RESUME-001", level="def")
def resume_argv_shape(subject: DefSubject) -> Finding:
    """DEFCHECK-RESUME-001 (seed 002 §3.1: specify-style = the host mints the id and passes it;
    capture-style = the CLI mints it; ref §8.1: ACP load, profile stdio and pi sessions resume
    in protocol frames, except ``piRpcResumeViaProcessArgs``)."""
    for name, view in transport_views(subject.defn):
        two_way = is_two_way(view.stream_format)
        style = view.resume_style
        if view.pi.resume_via_process_args:
            carries = True
        elif two_way:
            carries = False
        else:
            carries = style in (ResumeStyle.SPECIFY, ResumeStyle.CAPTURE)
        mints = style is ResumeStyle.SPECIFY and not two_way
        caps = _caps_all(view, True)
        fields = _ctx_fields(_context(view, "linux", resume=False))
        contexts = {
            label: RuntimeContext(
                **{**fields, "resume_session_id": resume_id, "new_session_id": new_id}
            )
            for label, resume_id, new_id in (
                ("resume turn", RESUME_ID, None),
                ("first turn with a minted id", None, NEW_ID),
                ("resume turn with a minted id too", RESUME_ID, NEW_ID),
            )
        }
        for label, ctx in contexts.items():
            case = Case(PROMPT, (), (), BuildOptions(capabilities=caps), ctx)
            result = _run(view, case)
            if result.argv is None:
                return not_tested(
                    f"{_where(name, view)}: build_args failed on a {label}: {result.shown}"
                )
            resuming = ctx.resume_session_id is not None
            want_resume = carries and resuming
            want_new = mints and not resuming and ctx.new_session_id is not None
            has_resume = _contains(result.argv, RESUME_ID)
            has_new = _contains(result.argv, NEW_ID)
            if has_resume != want_resume or has_new != want_new:
                wrong = [
                    f"{what} id {'missing' if want else 'present'}"
                    for what, want, has in (
                        ("the resume", want_resume, has_resume),
                        ("the minted", want_new, has_new),
                    )
                    if want != has
                ]
                return failed(
                    f"{_where(name, view)} ({style.value} resume over {view.stream_format}): "
                    f"on a {label}, {' and '.join(wrong)} in argv",
                    repro_command=subject.repro_command,
                    expected=f"resume id {RESUME_ID!r} {'present' if want_resume else 'absent'}"
                    f", minted id {NEW_ID!r} {'present' if want_new else 'absent'}",
                    actual=f"{result.shown}\ninputs: {case.describe()}",
                )
    return passed()


def _ctx_fields(ctx: RuntimeContext) -> dict[str, Any]:
    return {
        "cwd": ctx.cwd,
        "platform": ctx.platform,
        "env": dict(ctx.env),
        "resume_session_id": ctx.resume_session_id,
        "new_session_id": ctx.new_session_id,
        "prompt_file_path": ctx.prompt_file_path,
        "agent_log_file_path": ctx.agent_log_file_path,
        "has_prior_assistant_turn": ctx.has_prior_assistant_turn,
        "skill_dirs": ctx.skill_dirs,
    }


def _contiguous(argv: Sequence[str], run: Sequence[str]) -> bool:
    n = len(run)
    return any(list(argv[i : i + n]) == list(run) for i in range(len(argv) - n + 1))


@check("ARGV-HEADLESS-001", level="def")
def headless_flags_passed(subject: DefSubject) -> Finding:
    """ARGV-HEADLESS-001 (seed 000 §10: "its headless arg builders intentionally choose
    non-interactive permission modes"). The flags belong to the def's own transport."""
    defn = subject.defn
    flags = list(defn.headless_flags)
    if not flags:
        return skipped("the def declares no headless_flags")
    case = _first_turn(defn, _caps_all(defn, True))
    result = _run(defn, case)
    if result.argv is None or not _contiguous(result.argv, flags):
        return failed(
            f"headless flags {flags} are not passed as one contiguous run on a first turn",
            repro_command=subject.repro_command,
            expected=f"{flags} contiguous in argv",
            actual=f"{result.shown}\ninputs: {case.describe()}",
        )
    return passed()


def _delivery_views(defn: AgentDef, delivery: PromptDelivery) -> list[tuple[str, AgentDef]]:
    return [(n, v) for n, v in transport_views(defn) if v.prompt_delivery is delivery]


def _prompt_grid(view: AgentDef) -> list[Case]:
    return documented_cases(view, (_caps_all(view, True), {}))


@check("DEF-PROMPT-001", level="def")
def prompt_not_in_argv(subject: DefSubject) -> Finding:
    """DEF-PROMPT-001 (seed 002 §6.1/§6.2: a prompt in argv hits E2BIG / ENAMETOOLONG, so
    stdin, file and protocol delivery keep it out of argv)."""
    views = [
        (n, v)
        for n, v in transport_views(subject.defn)
        if v.prompt_delivery is not PromptDelivery.ARGV
    ]
    if not views:
        return skipped("every transport delivers the prompt in argv")
    for name, view in views:
        for case in _prompt_grid(view):
            result = _run(view, case)
            if _contains(result.argv, PROMPT_TOKEN):
                return failed(
                    f"{_where(name, view)}: a {view.prompt_delivery.value}-delivery def puts "
                    "the prompt in argv",
                    repro_command=subject.repro_command,
                    expected=f"no argv element containing {PROMPT_TOKEN!r}",
                    actual=f"{result.shown}\ninputs: {case.describe()}",
                )
    return passed()


@check("DEFCHECK-PROMPT-001", level="def")
def argv_prompt_whole(subject: DefSubject) -> Finding:
    """DEFCHECK-PROMPT-001 (seed 002 §6.2: argv delivery passes the prompt "作为位置参数")."""
    views = _delivery_views(subject.defn, PromptDelivery.ARGV)
    if not views:
        return skipped(f"prompt delivery is {subject.defn.prompt_delivery.value}, not argv")
    for name, view in views:
        for case in _prompt_grid(view):
            result = _run(view, case)
            if result.argv is not None and PROMPT not in result.argv:
                return failed(
                    f"{_where(name, view)}: argv delivery does not pass the prompt as one "
                    "whole element",
                    repro_command=subject.repro_command,
                    expected=f"an argv element equal to the prompt {_short(PROMPT)}",
                    actual=f"{result.shown}\ninputs: {case.describe()}",
                )
    return passed()


@check("DEFCHECK-PROMPTFILE-001", level="def")
def prompt_file_referenced(subject: DefSubject) -> Finding:
    """DEFCHECK-PROMPTFILE-001 (seed 002 §6.2: the path reaches build_args through
    ``RuntimeContext.promptFilePath``; seed 002 §3.2)."""
    views = _delivery_views(subject.defn, PromptDelivery.FILE)
    if not views:
        return skipped(f"prompt delivery is {subject.defn.prompt_delivery.value}, not file")
    for name, view in views:
        for case in _prompt_grid(view):
            result = _run(view, case)
            if result.argv is not None and not _contains(result.argv, _PROMPT_FILE):
                return failed(
                    f"{_where(name, view)}: file delivery does not pass the prompt file path",
                    repro_command=subject.repro_command,
                    expected=f"an argv element containing {_PROMPT_FILE!r}",
                    actual=f"{result.shown}\ninputs: {case.describe()}",
                )
    return passed()


@check("DEF-FILE-001", level="def")
def prompt_file_required(subject: DefSubject) -> Finding:
    """DEF-FILE-001 (seed 002 §6.2 and §9 ⑧: ``defs/grok-build.ts:81-83`` throws when the
    path is missing -- an internal contract violation, never a silent fallback)."""
    views = _delivery_views(subject.defn, PromptDelivery.FILE)
    if not views:
        return skipped(f"prompt delivery is {subject.defn.prompt_delivery.value}, not file")
    for name, view in views:
        base = _first_turn(view, _caps_all(view, True))
        case = Case(
            base.prompt,
            base.images,
            base.dirs,
            base.options,
            RuntimeContext(**{**_ctx_fields(base.ctx), "prompt_file_path": None}),
        )
        result = _run(view, case)
        if not isinstance(result.error, AgentDefError):
            return failed(
                f"{_where(name, view)}: build_args without a prompt file path does not raise "
                "AgentDefError",
                repro_command=subject.repro_command,
                expected="AgentDefError naming RuntimeContext.prompt_file_path",
                actual=f"{result.shown}\ninputs: {case.describe()}",
            )
    return passed()
