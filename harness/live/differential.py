"""The differential check: the same scenario on the real CLI and on its fake.

Design: docs/design/live.md#harness.live.differential
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conformance.checks import Finding, failed, passed, skipped
from conformance.evidence import Direction, Frame
from fake_clis.scenario import Scenario, load_scenario
from harness.events import (
    Event,
    Raw,
    Status,
    TextDelta,
    ThinkingDelta,
    ToolInputDelta,
    ToolResult,
    ToolUse,
    events_to_json,
)
from harness.live.recipes import VolatileText

__all__ = [
    "DIFF_RULES",
    "Side",
    "compare_sides",
    "event_kinds",
    "failure_reason",
    "normalize",
    "side_from_run",
]

DIFF_RULES = (
    "LIVE-DIFF-KINDS-001",
    "LIVE-DIFF-TEXT-001",
    "LIVE-DIFF-TOOLS-001",
    "LIVE-DIFF-RESULTS-001",
    "LIVE-DIFF-SESSION-001",
    "LIVE-DIFF-STATUS-001",
)
#: Kinds whose consecutive repeats are one streamed piece (the split is the model's).
#: Runs of these kinds count once: deltas split where each side's stream splits, and a
#: CLI prints a varying number of lines nobody parses (copilot 1.0.102 prints 22 or 23
#: ``session.background_tasks_changed`` around the same shell call).
_MERGED = frozenset({TextDelta.type, ThinkingDelta.type, ToolInputDelta.type, Raw.type})


@dataclass(frozen=True)
class Side:
    """One side of the comparison, already reduced to what the rules look at.

    ``turns`` holds each turn's events; ``paths`` the run-specific directories
    (``{"cwd": ..., "home": ..., "tmp": ...}``) that :func:`normalize` replaces.
    """

    label: str
    turns: tuple[tuple[Event, ...], ...]
    outcomes: tuple[str, ...]
    exit_codes: tuple[int | None, ...]
    session_ids: tuple[str | None, ...]
    files: tuple[tuple[str, str], ...]
    paths: tuple[tuple[str, str], ...] = ()
    stderr: str = ""
    #: Per turn, why it failed (:func:`failure_reason`; ``None``: it did not fail).
    reasons: tuple[str | None, ...] = ()


def _exit_code(result: Any) -> int | None:
    """A succeeded run the host stopped by signal after its turn completed (an ACP agent
    slow to exit at stdin EOF, e.g. kimi-cli, mistral-vibe) counts as a clean exit 0, and
    so does a cancel the CLI acknowledged: the host terminates the tree as soon as the
    acknowledgement arrives (seed 001 §10), so whether the CLI exited first is a race."""
    stopped = result.exit_code is None and result.signal is not None
    status = getattr(getattr(result, "status", None), "value", None)
    acknowledged = status == "cancelled" and getattr(result, "error", None) is None
    if stopped and (result.succeeded or acknowledged):
        return 0
    code: int | None = result.exit_code
    return code


def failure_reason(result: Any) -> str | None:
    """Why a turn failed: ``reported`` (the CLI said so in its stream or protocol),
    ``crashed`` (it exited non-zero or died saying nothing), else the runner's code (a
    timeout, a refused spawn). ``None`` when the turn has no error."""
    error = getattr(result, "error", None)
    if error is None:
        return None
    if error.source in {"session", "stream"}:
        return "reported"
    if error.source == "process":
        return "crashed"
    return str(error.code)


def side_from_run(label: str, run: Any) -> Side:
    """A :class:`Side` from a :class:`harness.live.session.LiveRun`."""
    return Side(
        label=label,
        turns=tuple(tuple(t.result.events) for t in run.turns),
        outcomes=tuple(t.result.status.value for t in run.turns),
        exit_codes=tuple(_exit_code(t.result) for t in run.turns),
        session_ids=tuple(t.result.session_id for t in run.turns),
        files=tuple(sorted(run.files.items())),
        paths=(
            ("cwd", str(run.dirs.cwd)),
            ("home", str(run.dirs.home)),
            ("tmp", str(run.dirs.tmp)),
            ("server", getattr(run, "server_host", "") or ""),
        ),
        stderr=run.turns[-1].result.stderr_tail if run.turns else "",
        reasons=tuple(failure_reason(t.result) for t in run.turns),
    )


# -- normalization -------------------------------------------------------------------------
def normalize(value: Any, paths: Sequence[tuple[str, str]]) -> Any:
    """``value`` with run paths as placeholders; ``{cwd}/x`` becomes ``x``."""
    if isinstance(value, str):
        known = sorted(((n, p) for n, p in paths if p), key=lambda item: -len(item[1]))
        if not known:
            return value
        # One pass, longest path first, whole path components only: a replaced part is
        # never scanned again, and /w never matches inside /work.
        pattern = re.compile("|".join(f"(?P<{n}>{re.escape(p)})(?![\\w.-])" for n, p in known))
        out = pattern.sub(lambda m: "{" + str(m.lastgroup) + "}", value)
        return out.replace("{cwd}/", "")
    if isinstance(value, list):
        return [normalize(v, paths) for v in value]
    if isinstance(value, dict):
        return {k: normalize(v, paths) for k, v in value.items()}
    return value


def event_kinds(events: Sequence[Event]) -> list[str]:
    """Event kinds with ``status`` dropped (timing/lifecycle only; the session id is judged
    by LIVE-DIFF-SESSION-001) and consecutive deltas of one kind merged."""
    kinds: list[str] = []
    for e in events:
        if isinstance(e, Status):
            continue
        if kinds and e.type in _MERGED and kinds[-1] == e.type:
            continue
        kinds.append(e.type)
    return kinds


def _text(events: Sequence[Event]) -> str:
    return "".join(e.delta for e in events if isinstance(e, TextDelta))


def _tools(events: Sequence[Event], paths: Sequence[tuple[str, str]]) -> list[Any]:
    return [[e.name, normalize(e.input, paths)] for e in events if isinstance(e, ToolUse)]


def _results(events: Sequence[Event]) -> list[tuple[bool, bool]]:
    """(is_error, answers a tool_use of this run) per tool result."""
    ids = {e.id for e in events if isinstance(e, ToolUse)}
    return [(e.is_error, e.tool_use_id in ids) for e in events if isinstance(e, ToolResult)]


# -- the comparison ------------------------------------------------------------------------
def _transcript(side: Side) -> list[Frame]:
    frames: list[Frame] = []
    for i, events in enumerate(side.turns, 1):
        lines = [
            json.dumps(normalize(e, side.paths), sort_keys=True)
            for e in events_to_json(list(events))
        ]
        frames.append(Frame(Direction.STDOUT, f"[{side.label} turn {i}]\n" + "\n".join(lines)))
    return frames


def _blame(real_ok: bool | None, fake_ok: bool | None, real: Side, fake: Side) -> str:
    if real_ok is None or fake_ok is None or real_ok == fake_ok:
        return f"{real.label} and {fake.label} differ"
    return f"the {fake.label} side diverged" if real_ok else f"the {real.label} side diverged"


def compare_sides(
    real: Side,
    fake: Side,
    *,
    scenario: Scenario | str | None = None,
    repro_command: str = "harness live diff",
    volatile: Sequence[VolatileText] = (),
) -> list[tuple[str, Finding]]:
    """One finding per LIVE-DIFF rule (in :data:`DIFF_RULES` order).

    ``volatile`` (the recipe's ``volatile_text``) masks text the CLI varies by itself on
    both sides before LIVE-DIFF-TEXT-001 compares; nothing else is masked.
    """
    scen = load_scenario(scenario) if isinstance(scenario, str) else scenario
    transcript = [*_transcript(real), *_transcript(fake)]
    stderr = f"[{real.label}]\n{real.stderr[-2000:]}\n[{fake.label}]\n{fake.stderr[-2000:]}"

    def fail(rule: str, what: str, blame: str, expected: Any, actual: Any) -> Finding:
        return failed(
            f"{rule}: {blame}: {what}",
            repro_command=repro_command,
            expected=f"{real.label}: {json.dumps(expected, ensure_ascii=False)}",
            actual=f"{fake.label}: {json.dumps(actual, ensure_ascii=False)}",
            transcript=transcript,
            stderr=stderr,
        )

    out: list[tuple[str, Finding]] = []

    def judge(
        rule: str,
        what: str,
        get: Callable[[Side], Any],
        expect: Callable[[Any], bool | None] | None = None,
    ) -> None:
        a, b = get(real), get(fake)
        if a == b:
            out.append((rule, passed(f"{what}: same on both sides")))
            return
        ra = expect(a) if expect else None
        fb = expect(b) if expect else None
        out.append((rule, fail(rule, f"{what} differs", _blame(ra, fb, real, fake), a, b)))

    judge(
        "LIVE-DIFF-KINDS-001",
        "event kinds (status dropped, deltas merged)",
        lambda s: [event_kinds(t) for t in s.turns],
    )
    final_text = scen.final_text if scen is not None and scen.exit_code == 0 else None

    def masked(text: str) -> str:
        for v in volatile:
            text = v.apply(text)
        return text

    judge(
        "LIVE-DIFF-TEXT-001",
        "assistant text",
        lambda s: [masked(normalize(_text(t), s.paths)) for t in s.turns],
        (lambda v: all(x == final_text for x in v)) if final_text is not None else None,
    )
    n_tools = len(scen.tool_steps()) if scen is not None else None
    judge(
        "LIVE-DIFF-TOOLS-001",
        "tool calls (name, normalized input)",
        lambda s: [_tools(t, s.paths) for t in s.turns],
        (lambda v: all(len(x) == n_tools for x in v)) if n_tools is not None else None,
    )
    judge(
        "LIVE-DIFF-RESULTS-001",
        "tool results (is_error, answers a call) and work-dir files",
        lambda s: {"results": [_results(t) for t in s.turns], "files": [list(f) for f in s.files]},
    )
    captured = [[sid is not None and sid != "" for sid in x.session_ids] for x in (real, fake)]
    if not any(captured[0]) and not any(captured[1]):
        why = "neither side captured a session id, so there is nothing to compare"
        out.append(("LIVE-DIFF-SESSION-001", skipped(why)))
    else:
        judge(
            "LIVE-DIFF-SESSION-001",
            "session id captured",
            lambda s: [sid is not None and sid != "" for sid in s.session_ids],
        )
    want_ok = scen.exit_code == 0 if scen is not None else None

    def status(s: Side) -> list[list[Any]]:
        reasons = [*s.reasons, *([""] * (len(s.outcomes) - len(s.reasons)))]
        return [[o, c == 0, r] for o, c, r in zip(s.outcomes, s.exit_codes, reasons, strict=False)]

    def as_scripted(v: list[list[Any]]) -> bool:
        # A scripted failure is one the CLI reports; a crash or a timeout is not it.
        return all(ok == want_ok and (ok or r in {"reported", ""}) for _o, ok, r in v)

    judge(
        "LIVE-DIFF-STATUS-001",
        "terminal status (outcome, exit code zero, why it failed)",
        status,
        as_scripted if want_ok is not None else None,
    )
    return out
