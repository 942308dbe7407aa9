"""What the ``json-event-stream`` fakes share: frame helpers, faults, sessions, the
emulator base class.

Design: docs/design/fakes.md#fake_clis.json_events.common
"""

from __future__ import annotations

import abc
import os
import time

from fake_clis import ids, jsonio
from fake_clis.base import CliSpec, FakeRun, old_build
from fake_clis.clock import iso_utc_ms

# A fake starts hundreds of times per conform: no dataclasses, pathlib, typing or re here.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

    from fake_clis.scenario import Step

__all__ = [
    "Emulator",
    "Fail",
    "Session",
    "Usage",
    "auth_status",
    "dumps",
    "filtered_help",
    "is_old_build",
    "iso_now",
    "most_recent_session",
    "now_ms",
    "padded_line",
    "random_alnum",
    "read_prompt",
    "step_tool_input",
    "step_tool_name",
    "truncated_line",
    "write_target",
]


def dumps(frame: Any) -> str:
    """Compact JSON, the way Node's ``JSON.stringify`` and serde_json write a line."""
    return jsonio.dumps(frame, ensure_ascii=False, separators=(",", ":"))


def padded_line(frame: dict[str, Any], path: Sequence[str], nbytes: int) -> str:
    """``frame`` as one JSON line of exactly ``nbytes`` bytes, padded in the string at ``path``.

    ASCII padding, so characters equal bytes. A frame already longer than ``nbytes`` is
    returned unpadded (the scenario asked for less than one frame).
    """
    base = jsonio.loads(jsonio.dumps(frame))
    holder = base
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = ""
    missing = nbytes - len(dumps(base).encode("utf-8"))
    if missing > 0:
        holder[path[-1]] = "x" * missing
    return dumps(base)


def truncated_line(frame: dict[str, Any]) -> str:
    """The first half of ``frame``'s JSON line: a frame that starts well and breaks off."""
    line = dumps(frame)
    return line[: max(1, len(line) // 2)]


def now_ms() -> int:
    return int(time.time() * 1000)


def iso_now() -> str:
    return iso_utc_ms()


def random_alnum(length: int) -> str:
    return ids.alnum(length)


def is_old_build(run: FakeRun) -> bool:
    """``FAKE_CLI_VERSION=old`` or a scenario with ``old_version`` (fake_clis.base)."""
    return old_build(run.env) or run.scenario.old_version


def filtered_help(text: str, optional: Sequence[str], old: bool) -> str:
    """Help text without the lines naming an optional flag, for an old build."""
    if not old:
        return text
    return "\n".join(line for line in text.splitlines() if not any(f in line for f in optional))


class Fail(Exception):
    """The CLI reports ``message`` on stderr and exits ``code`` before any stream output."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class Usage:
    """The scenario's ``usage`` steps, summed over the turn."""

    __slots__ = ("cached_read", "cached_write", "cost", "input", "output", "thought")

    def __init__(self) -> None:
        self.input = 0
        self.output = 0
        self.cached_read = 0
        self.cached_write = 0
        self.thought = 0
        self.cost: float | None = None

    def add(self, step: Step) -> None:
        self.input += int(step.get("input_tokens", 0))
        self.output += int(step.get("output_tokens", 0))
        self.cached_read += int(step.get("cached_read_tokens", 0))
        self.cached_write += int(step.get("cached_write_tokens", 0))
        self.thought += int(step.get("thought_tokens", 0))
        if step.get("cost_usd") is not None:
            self.cost = (self.cost or 0.0) + float(step.get("cost_usd"))


def step_tool_name(step: Step, default: str) -> str:
    name = step.get("name")
    return name if isinstance(name, str) and name else default


def step_tool_input(step: Step) -> dict[str, Any]:
    value = step.get("input")
    return dict(value) if isinstance(value, dict) else {}  # a step is JSON: a mapping is a dict


class Emulator(abc.ABC):
    """One turn of one CLI: renders every scenario step in that CLI's frames.

    :meth:`drive` walks the steps; the per-kind hooks write frames. The common steps
    (sleep, stderr, noise, spawn_tree, hang, plain crash) go to ``FakeRun.run_common_step``.
    """

    #: What the CLI exits with after reporting a failed model call itself.
    api_error_exit = 1

    def __init__(self, run: FakeRun) -> None:
        self.run = run
        self.usage = Usage()
        #: Assistant text of this turn, in order (the session keeps it as the reply).
        self.replies: list[str] = []
        self.started = time.monotonic()
        self.tool_calls = 0

    def emit(self, frame: dict[str, Any]) -> None:
        self.run.out(dumps(frame))

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    # -- hooks ------------------------------------------------------------------

    @abc.abstractmethod
    def start(self) -> None:
        """Frames before the first step."""

    @abc.abstractmethod
    def text(self, step: Step) -> None: ...

    @abc.abstractmethod
    def thinking(self, step: Step) -> None: ...

    @abc.abstractmethod
    def tool(self, step: Step) -> None: ...

    @abc.abstractmethod
    def api_error(self, step: Step) -> int:
        """Report the failed model call the CLI's own way; return the exit code."""

    @abc.abstractmethod
    def foreign(self) -> None: ...

    @abc.abstractmethod
    def sample_frame(self, text: str) -> tuple[dict[str, Any], tuple[str, ...]]:
        """A real frame of this CLI and the path of a string field in it (for faults)."""

    @abc.abstractmethod
    def finish(self) -> None:
        """The CLI's terminal frames after the last step."""

    # -- driver -------------------------------------------------------------------

    def drive(self) -> int:
        run = self.run
        self.start()
        for step in run.scenario.steps:
            kind = step.kind
            if kind == "text":
                self.text(step)
            elif kind == "thinking":
                self.thinking(step)
            elif kind == "tool":
                self.tool_calls += 1
                self.tool(step)
            elif kind == "usage":
                self.usage.add(step)
            elif kind == "api_error":
                code = self.api_error(step)
                run.linger_if_asked()
                return code
            elif kind == "malformed":
                custom = step.get("text")
                frame, _ = self.sample_frame("a frame cut short")
                run.out(custom if isinstance(custom, str) and custom else truncated_line(frame))
            elif kind == "foreign":
                self.foreign()
            elif kind == "oversize":
                frame, path = self.sample_frame("")
                run.out(padded_line(frame, path, int(step.get("bytes", 1))))
            elif kind == "crash" and step.get("mid_line"):
                frame, _ = self.sample_frame("cut off in the middle of a frame")
                run.out_raw(truncated_line(frame).encode("utf-8"))
                run.exit(int(step.get("exit_code", 1)))
            elif not run.run_common_step(step):
                raise ValueError(f"{run.spec.agent_id} fake cannot render step kind {kind!r}")
        self.finish()
        run.linger_if_asked()
        return run.scenario.exit_code


def auth_status(run: FakeRun, spec: CliSpec) -> int:
    """The auth probe reached through a longer argv (``codex -c k=v login status``).

    Same answers as ``fake_clis.base`` gives for the exact ``auth_args``.
    """
    missing = run.env.get("FAKE_CLI_AUTH") == "missing" or run.scenario.auth == "missing"
    text, code = spec.auth_missing if missing else spec.auth_ok
    if code == 0:
        run.out(text)
    else:
        run.err(text + "\n")
    return code


def read_prompt(run: FakeRun, positional: Sequence[str]) -> str:
    """A positional prompt (``-`` = stdin), else stdin read to EOF; recorded either way."""
    args = [p for p in positional if p != "-"]
    if args:
        prompt = " ".join(args)
        run.record["prompt"] = prompt
        run.record["prompt_via"] = "argv"
        return prompt
    return run.read_stdin_text()


def most_recent_session(run: FakeRun) -> dict[str, Any] | None:
    for session_id in reversed(run.saved_sessions()):
        data = run.load_session(session_id)
        if data is not None:
            return data
    return None


class Session:
    """A fake CLI session under ``$HOME/.fake-cli/<agent>/sessions`` (fake_clis.base)."""

    def __init__(self, run: FakeRun, session_id: str, prior: dict[str, Any] | None) -> None:
        self.run = run
        self.id = session_id
        self.turns: list[dict[str, Any]] = list(prior.get("turns", [])) if prior else []
        run.record["resumed"] = prior is not None
        run.record["prior_turns"] = len(self.turns)
        run.record["session_id"] = session_id

    def begin(self, prompt: str) -> None:
        """Save the turn now, so a resume after a crash still finds the session."""
        self.turns.append({"prompt": prompt, "reply": ""})
        self.run.save_session(self.id, self.turns)

    def end(self, reply: str) -> None:
        self.turns[-1]["reply"] = reply
        self.run.save_session(self.id, self.turns)
        self.run.record["turns"] = len(self.turns)


def write_target(run: FakeRun, step: Step) -> tuple[str, str, bool, str]:
    """The scenario's write tool: ``(relative path, absolute path, existed, content)``."""
    rel = str(step.get("path") or "output.txt")
    content = str(step.get("content", ""))
    target = run.resolve(rel)
    return rel, target, os.path.exists(target), content
