"""Fake plain-text CLIs: aider, Antigravity (``agy``), AtomCode, DeepSeek TUI, Grok Build, Qwen.

Design: docs/design/fakes.md#fake_clis.plain
"""

from __future__ import annotations

import itertools
import os
import time

from fake_clis import ids, jsonio
from fake_clis.argv import Grammar
from fake_clis.base import CliSpec, FakeRun, read_text, write_text

# A fake starts hundreds of times per conform: no re, pathlib or typing on the start path.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

    from fake_clis.scenario import Step

__all__ = ["SPECS"]

_EFFORTS = ("low", "medium", "high", "xhigh", "max")
_QWEN_APPROVAL = ("plan", "default", "auto-edit", "yolo")

Option = tuple[str, str, str]


def _grammar_from(
    options: tuple[Option, ...],
    positionals: tuple[int, int] = (0, 0),
    repeatable: frozenset[str] = frozenset(),
    subcommands: dict[str, Grammar] | None = None,
) -> Grammar:
    flags: dict[str, int] = {}
    aliases: dict[str, str] = {}
    for spec, meta, _ in options:
        names = spec.split(", ")
        canonical = names[-1]
        flags[canonical] = 1 if meta else 0
        for alias in names[:-1]:
            aliases[alias] = canonical
    return Grammar(
        flags=flags,
        aliases=aliases,
        positionals=positionals,
        repeatable=repeatable,
        subcommands=subcommands or {},
    )


def _help_from(usage: str, options: tuple[Option, ...], width: int = 34) -> str:
    lines = [usage, "", "Options:"]
    lines += [f"  {(spec + ' ' + meta).rstrip():<{width}} {text}" for spec, meta, text in options]
    return "\n".join(lines)


def _clap_error(message: str) -> str:
    return f"error: {message}\n\nFor more information, try '--help'.\n"


# --------------------------------------------------------------------------- renderer


class _Plain:
    """Renders scenario steps the way one plain CLI prints them. Subclasses override hooks."""

    agent = "plain"
    #: Print only the final answer: the text of a model message that a tool call follows
    #: is not printed (qwen 0.24.4, recordings/real/qwen/happy.jsonl).
    final_answer_only = False
    #: A tool call that is not approved ends the turn: nothing after it is printed and the
    #: process exits 0 (grok 0.2.111 without ``--always-approve``).
    denial_ends_turn = False

    def __init__(self, run: FakeRun, prompt: str) -> None:
        self.run = run
        self.prompt = prompt
        self.answer: list[str] = []
        self.error = False

    # -- hooks -------------------------------------------------------------------------

    def header(self) -> None:
        """Lines printed before the answer."""

    def thinking(self, step: Step) -> None:
        """Reasoning; most plain CLIs do not print it."""

    def approve(self, kind: str, target: str) -> bool:
        """Whether a tool call may run (the CLI's headless permission posture)."""
        return True

    def show_tool(self, step: Step, name: str, target: str, ok: bool, output: str) -> None:
        """How a tool call is reported (default: not at all)."""

    def usage(self, step: Step) -> None:
        """Token accounting; most plain CLIs print none."""

    def api_error(self, step: Step) -> None:
        status = int(step.get("status", 500))
        self.run.err(f"Error: API request failed ({status}): {step.get('message', '')}\n")

    def finish(self) -> None:
        """Lines printed after the answer."""

    # -- shared behaviour ----------------------------------------------------------------

    def write_text(self, chunks: list[str]) -> None:
        for chunk in chunks:
            self.run.out_raw(chunk.encode("utf-8"))
        self.run.out_raw(b"\n")

    def tool(self, step: Step) -> bool:
        """Render one tool call; False when it was not approved (and did not run)."""
        kind = str(step.get("tool", "other"))
        if kind == "write":
            name, target = "write_file", str(step.get("path", "file.txt"))
        elif kind == "shell":
            name, target = "run_shell_command", str(step.get("command", ""))
        else:
            name = str(step.get("name", "tool"))
            target = jsonio.dumps(step.get("input", {}), separators=(",", ":"))
        ok = not bool(step.get("is_error", False))
        if not self.approve(kind, target):
            self.denied(step, name, target)
            return False
        output = str(step.get("output", ""))
        if kind == "write":
            if ok:
                self.run.write_file(target, str(step.get("content", "")))
            output = output or f"Wrote {target}"
        self.show_tool(step, name, target, ok, output)
        return True

    def denied(self, step: Step, name: str, target: str) -> None:
        self.show_tool(step, name, target, False, f"{name} was not approved")

    def fault(self, step: Step) -> bool:
        """Steps shaped like faults; True when handled."""
        run = self.run
        if step.kind == "malformed":
            # A line that starts like a JSON frame and breaks off: plain text to the parser.
            run.out('{"type":"text","text":"' + (step.text or "a frame cut short"))
        elif step.kind == "foreign":
            # Plain output carries no ids, so output of another run is just more text.
            run.out(f"[{ids.uuid4()}] output of another session")
        elif step.kind == "oversize":
            run.out("x" * int(step.get("bytes", 1)))
        elif step.kind == "crash" and step.get("mid_line"):
            run.out_raw(b"this line never ends")
            run.exit(int(step.get("exit_code", 1)))
        else:
            return run.run_common_step(step)
        return True

    def main(self) -> int:
        run = self.run
        self.header()
        steps = run.scenario.steps
        last_tool = max((i for i, s in enumerate(steps) if s.kind == "tool"), default=-1)
        for index, step in enumerate(steps):
            if step.kind == "text":
                if self.final_answer_only and index < last_tool:
                    continue  # an intermediate message: a tool call follows it
                self.answer.append(step.text)
                self.write_text(step.chunks)
            elif step.kind == "thinking":
                self.thinking(step)
            elif step.kind == "tool":
                if not self.tool(step) and self.denial_ends_turn:
                    break
            elif step.kind == "usage":
                self.usage(step)
            elif step.kind == "api_error":
                self.error = True
                self.api_error(step)
                break
            elif not self.fault(step):
                raise ValueError(f"{self.agent} fake cannot render step kind {step.kind!r}")
        self.finish()
        return run.scenario.exit_code or (1 if self.error else 0)


def _ask(run: FakeRun, question: str, *, on_stdout: bool, default: bool) -> bool:
    """Ask on the terminal that is not there: read one stdin line (EOF = the default)."""
    (run.out_raw if on_stdout else run.stderr.write)(question.encode("utf-8"))
    run.stdout.flush()
    run.stderr.flush()
    answer = run.read_stdin_line()
    if answer is None or not answer.strip():
        return default
    return answer.strip().lower() in (b"y", b"yes")


# --------------------------------------------------------------------------- sessions


def _latest_session(run: FakeRun) -> dict[str, Any] | None:
    for session_id in reversed(run.saved_sessions()):
        data = run.load_session(session_id)
        if data and data.get("turns") and data["turns"][-1].get("cwd") == run.cwd:
            return data
    return None


def _run_session(
    run: FakeRun, renderer: _Plain, prior: dict[str, Any] | None, prompt_via: str
) -> int:
    """Record the prompt, run the renderer, save the session."""
    run.record.update(prompt=renderer.prompt, prompt_via=prompt_via, resumed=prior is not None)
    turns: list[dict[str, Any]] = list(prior.get("turns", [])) if prior else []
    run.record["prior_turns"] = len(turns)
    session_id = str(prior["id"]) if prior else run.new_session_id()
    run.record["session_id"] = session_id
    code = renderer.main()
    turns.append(
        {"prompt": renderer.prompt, "reply": "".join(renderer.answer), "cwd": str(run.cwd)}
    )
    run.save_session(session_id, turns)
    run.linger_if_asked()
    return code


def _read_prompt_file(run: FakeRun, path: str) -> str | None:
    try:
        return read_text(path or os.curdir)  # Path("") is the cwd
    except OSError as exc:
        run.err(
            f"Error: failed to read prompt file {path}: {exc.strerror} (os error {exc.errno})\n"
        )
        return None


# --------------------------------------------------------------------------- aider

_AIDER_VERSION = "0.86.2"
_AIDER_OPTIONS: tuple[Option, ...] = (
    ("-h, --help", "", "show this help message and exit"),
    ("--version", "", "Show the version number and exit"),
    ("--model", "MODEL", "Specify the model to use for the main chat"),
    ("--weak-model", "WEAK_MODEL", "Specify the model to use for commit messages"),
    ("--openai-api-base", "OPENAI_API_BASE", "Specify the api base url"),
    ("--openai-api-key", "OPENAI_API_KEY", "Specify the OpenAI API key"),
    ("--anthropic-api-key", "ANTHROPIC_API_KEY", "Specify the Anthropic API key"),
    ("--api-key", "PROVIDER=KEY", "Set an API key for a provider (repeatable)"),
    ("--edit-format, --chat-mode", "EDIT_FORMAT", "Specify what edit format the LLM should use"),
    ("--reasoning-effort", "VALUE", "Set the reasoning_effort API parameter"),
    ("-m, --msg, --message", "COMMAND", "Specify a single message to send the LLM, then exit"),
    ("-f, --message-file", "MESSAGE_FILE", "Specify a file containing the message to send"),
    ("--file", "FILE", "specify a file to edit (can be used multiple times)"),
    ("--read", "FILE", "specify a read-only file (can be used multiple times)"),
    ("--yes-always", "", "Always say yes to every confirmation"),
    ("--pretty", "", "Enable pretty, colorized output"),
    ("--no-pretty", "", "Disable pretty, colorized output"),
    ("--stream", "", "Enable streaming responses"),
    ("--no-stream", "", "Disable streaming responses"),
    ("--git", "", "Enable looking for a git repo"),
    ("--no-git", "", "Disable looking for a git repo"),
    ("--auto-commits", "", "Enable auto commit of LLM changes"),
    ("--no-auto-commits", "", "Disable auto commit of LLM changes"),
    ("--suggest-shell-commands", "", "Enable suggesting shell commands"),
    ("--no-suggest-shell-commands", "", "Disable suggesting shell commands"),
    ("--show-model-warnings", "", "Enable model warnings"),
    ("--no-show-model-warnings", "", "Disable model warnings"),
    ("--check-update", "", "Check for updates and return status in the exit code"),
    ("--no-check-update", "", "Do not check for updates"),
    ("--restore-chat-history", "", "Restore the previous chat history messages"),
    ("--analytics-disable", "", "Permanently disable analytics"),
    ("--map-tokens", "MAP_TOKENS", "Suggested number of tokens to use for repo map"),
    ("--dry-run", "", "Perform a dry run without modifying files"),
    ("-v, --verbose", "", "Enable verbose output"),
)


# What aider 0.86.2 prints, read from its source (aider/main.py, io.py, coders/base_coder.py,
# coders/wholefile_coder.py, reasoning_tags.py, exceptions.py, models.py, utils.py) and
# checked against the real CLI on the scripted model server (recordings/real/aider/).

#: aider/reasoning_tags.py: the tag aider wraps streamed reasoning in, and how it shows it.
_AIDER_TAG = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"
_AIDER_THINKING = "--------------\n► **THINKING**"
_AIDER_ANSWER = "------------\n► **ANSWER**"
_AIDER_TAG_OPEN = f"<{_AIDER_TAG}>"
_AIDER_TAG_CLOSE = f"</{_AIDER_TAG}>"
#: aider/urls.py edit_errors, printed when a reply does not parse in the edit format.
_AIDER_EDIT_ERRORS = "https://aider.chat/docs/troubleshooting/edit-errors.html"
#: Coder.max_reflections: re-sends of a reply that did not parse, then "Only 3 ...".
_AIDER_MAX_REFLECTIONS = 3
#: aider/models.py RETRY_TIMEOUT: the retry delay starts at 0.125 s and doubles before each
#: retry; a retry whose delay would pass this is not made.
_AIDER_RETRY_TIMEOUT = 60.0
#: Steps that describe the aider process, not the model: played once, on the first reply
#: (the model server skips them, harness/modelserver/scenario_script.py CLI_SIDE_STEPS).
_AIDER_CLI_SIDE = frozenset(
    {"stderr", "noise", "malformed", "foreign", "oversize", "spawn_tree", "crash"}
)
_SERVERS_DOWN = "The API provider's servers are down or overloaded."
_TIMED_OUT = (
    "The API provider timed out without returning a response. They may be down or overloaded."
)
#: HTTP status -> (litellm exception, prefix of its message, aider retries it, aider's
#: description of it). litellm's exception_mapping_utils maps an OpenAI-compatible
#: provider's status this way ("litellm.<Exception>: <prefix>OpenAIException - <message>");
#: aider/exceptions.py holds the retry flag and the description. Measured: 500.
_AIDER_API_ERRORS: dict[int, tuple[str, str, bool, str | None]] = {
    400: ("BadRequestError", "", False, None),
    401: (
        "AuthenticationError",
        "AuthenticationError: ",
        False,
        "The API provider is not able to authenticate you. Check your API key.",
    ),
    404: ("NotFoundError", "NotFoundError: ", False, None),
    408: ("Timeout", "Timeout Error: ", True, _TIMED_OUT),
    422: ("BadRequestError", "", False, None),
    429: (
        "RateLimitError",
        "RateLimitError: ",
        True,
        "The API provider has rate limited you. Try again later or check your quotas.",
    ),
    500: ("InternalServerError", "InternalServerError: ", True, _SERVERS_DOWN),
    502: ("BadGatewayError", "BadGatewayError: ", True, _SERVERS_DOWN),
    503: ("ServiceUnavailableError", "ServiceUnavailableError: ", True, _SERVERS_DOWN),
    504: ("Timeout", "Timeout Error: ", True, _TIMED_OUT),
}
_AIDER_OTHER_API_ERROR = ("APIError", "APIError: ", True, None)
_URL = r'(https?://[^\s/$.?#].[^\s"]*)'


def _aider_tokens(count: int) -> str:
    """aider/utils.py format_tokens: 589, 1.2k, 12k."""
    if count < 1000:
        return f"{count}"
    if count < 10000:
        return f"{count / 1000:.1f}k"
    return f"{round(count / 1000)}k"


def _aider_cost(value: float) -> str:
    """Coder.calculate_and_show_tokens_and_cost's format_cost."""
    if value == 0:
        return "0.00"
    magnitude = abs(value)
    if magnitude >= 0.01:
        return f"{value:.2f}"
    import math  # only a scenario that prices a reply under a cent gets here

    return f"{value:.{max(2, 2 - int(math.log10(magnitude)))}f}"


def _aider_tool_text(step: Step) -> str:
    """A tool step as the scripted model server renders it for aider, which offers no tools
    (harness/modelserver/scenario_script.py ``_tool_as_text``, "whole" edit format)."""
    tool = step.get("tool")
    if tool == "write":
        content = str(step.get("content", ""))
        if not content.endswith("\n"):
            content += "\n"
        return f"\n{step.get('path', 'hello.html')}\n```\n{content}```\n"
    if tool == "shell":
        return f"\n```bash\n{step.get('command', '')}\n```\n"
    return f"\n{step.get('name', 'tool')}: {jsonio.dumps(step.get('input', {}))}\n"


def _aider_edits(content: str, chat_files: list[str]) -> list[tuple[str, str]]:
    """WholeFileCoder.get_edits: ``(path, new content)`` per file listing, in reply order
    (the first listing of a path wins). Raises ValueError as aider does for a fence with no
    file name before it (and no single chat file to fall back on)."""
    lines = content.splitlines(keepends=True)
    listings = _Listings(chat_files)
    for i, line in enumerate(lines):
        if line.startswith(_FENCE):
            listings.fence(lines[i - 1] if i > 0 else None)
        elif listings.fname is not None:
            listings.new_lines.append(line)
        else:
            listings.mention(line)
    listings.close()
    return _first_edits(listings.edits)


_FENCE = "```"


class _Listings:
    """WholeFileCoder.get_edits while it reads a reply: the file listings found so far,
    the one open (its name, where the name came from, its lines) and the chat file last
    named in backquotes outside a listing."""

    def __init__(self, chat_files: list[str]) -> None:
        self.chat_files = chat_files
        self.edits: list[tuple[str, str, list[str]]] = []
        self.saw: str | None = None
        self.fname: str | None = None
        self.source = ""
        self.new_lines: list[str] = []

    def fence(self, before: str | None) -> None:
        """A fence line: it ends the open listing, else opens one named by the line
        ``before`` it (or by the chat file last named, or by the only chat file)."""
        if self.fname is not None:
            self.saw = None
            self.edits.append((self.fname, self.source, self.new_lines))
            self.fname, self.source, self.new_lines = None, "", []
            return
        if before is not None:
            self.source = "block"
            self.fname = _listing_name(before, self.chat_files)
        if not self.fname:
            self.fname, self.source = self._unnamed()

    def _unnamed(self) -> tuple[str, str]:
        """The name of a listing with none before its fence, and where it came from."""
        if self.saw:
            return self.saw, "saw"
        if len(self.chat_files) == 1:
            return self.chat_files[0], "chat"
        raise ValueError(f"No filename provided before {_FENCE} in file listing")

    def mention(self, line: str) -> None:
        """A line outside a listing: remember the last chat file it names in backquotes."""
        for raw_word in line.strip().split():
            word = raw_word.rstrip(".:,;!")
            for chat_file in self.chat_files:
                if word == f"`{chat_file}`":
                    self.saw = chat_file

    def close(self) -> None:
        """At the end of the reply: keep a listing left open, when it has a name."""
        if self.fname:
            self.edits.append((self.fname, self.source, self.new_lines))


def _listing_name(line: str, chat_files: list[str]) -> str:
    """The file name on the line before a fence, markdown stripped; a bare name stands for
    the chat file it names; over 250 characters it is no name."""
    fname = line.strip().strip("*").rstrip(":").strip("`").lstrip("#").strip()
    if len(fname) > 250:
        return ""
    if fname and fname not in chat_files and _path_name(fname) in chat_files:
        return _path_name(fname)
    return fname


def _first_edits(edits: list[tuple[str, str, list[str]]]) -> list[tuple[str, str]]:
    """One edit per path: a listing named before its fence over one named earlier in the
    text over the lone chat file; among equals, the first in the reply."""
    seen: set[str] = set()
    refined: list[tuple[str, str]] = []
    for wanted in ("block", "saw", "chat"):
        for path, origin, body in edits:
            if origin == wanted and path not in seen:
                seen.add(path)
                refined.append((path, "".join(body)))
    return refined


def _path_name(path: str) -> str:
    """``PurePath(path).name``: the last part, ``.`` parts and trailing separators left out."""
    path = os.path.splitdrive(path)[1]
    if os.altsep:
        path = path.replace(os.altsep, os.sep)
    parts = [part for part in path.split(os.sep) if part not in ("", ".")]
    return parts[-1] if parts else ""


def _replace_spaced(text: str, mark: str, replacement: str) -> str:
    """``re.sub(rf"\\s*{re.escape(mark)}\\s*", replacement, text)`` for a ``mark`` that
    neither starts nor ends with whitespace: the whitespace around each mark goes too."""
    parts = text.split(mark)
    if len(parts) == 1:
        return text
    kept = [parts[0].rstrip(), *(part.strip() for part in parts[1:-1]), parts[-1].lstrip()]
    return replacement.join(kept)


def _drop_pairs(text: str, opening: str, closing: str) -> str:
    """``re.sub(f"{opening}.*?{closing}", "", text, flags=re.DOTALL)`` for literal marks."""
    out: list[str] = []
    pos = 0
    while True:
        start = text.find(opening, pos)
        end = text.find(closing, start + len(opening)) if start >= 0 else -1
        if end < 0:
            break
        out.append(text[pos:start])
        pos = end + len(closing)
    out.append(text[pos:])
    return "".join(out)


def _aider_strip_reasoning(text: str) -> str:
    """aider/reasoning_tags.py remove_reasoning_content (the reply aider parses)."""
    text = _drop_pairs(text, _AIDER_TAG_OPEN, _AIDER_TAG_CLOSE).strip()
    if _AIDER_TAG_CLOSE in text:
        text = text.split(_AIDER_TAG_CLOSE, 1)[1].strip()
    return text


# -- Rich, as aider's --no-pretty console prints a line (rich/_wrap.py, rich/text.py) --------


def _word_end(text: str, pos: int) -> int | None:
    """Where rich's word pattern ``\\s*\\S+\\s*`` matched at ``pos`` ends (``None``: no
    word left); ``str.isspace`` is the regex's ``\\s``."""
    size = len(text)
    while pos < size and text[pos].isspace():
        pos += 1
    if pos == size:
        return None
    while pos < size and not text[pos].isspace():
        pos += 1
    while pos < size and text[pos].isspace():
        pos += 1
    return pos


def _cells(text: str) -> int:
    """Terminal cells of ``text`` (rich.cells.cell_len: wide East Asian characters take two,
    combining marks and control characters none)."""
    import unicodedata  # only aider measures cells; the other plain CLIs never load it

    total = 0
    for char in text:
        if ord(char) < 32 or unicodedata.combining(char):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def _chop_cells(text: str, width: int) -> list[str]:
    """rich.cells.chop_cells: ``text`` cut into pieces of at most ``width`` cells."""
    lines: list[str] = []
    start = size = 0
    for index, char in enumerate(text):
        cell = _cells(char)
        if size + cell > width:
            lines.append(text[start:index])
            start, size = index, 0
        size += cell
    if size:
        lines.append(text[start:])
    return lines


def _divide_line(text: str, width: int) -> list[int]:
    """rich._wrap.divide_line (fold=True): the offsets where ``text`` wraps."""
    breaks: list[int] = []
    offset = 0
    pos = 0
    end = _word_end(text, pos)
    while end is not None:
        start, word = pos, text[pos:end]
        length = _cells(word.rstrip())
        if width - offset >= length:
            offset += _cells(word)
        elif length > width:
            folded = _chop_cells(word, width)
            for number, piece in enumerate(folded, 1):
                if start:
                    breaks.append(start)
                if number == len(folded):
                    offset = _cells(piece)
                else:
                    start += len(piece)
        elif offset and start:
            breaks.append(start)
            offset = _cells(word)
        pos, end = end, _word_end(text, end)
    return breaks


def _crop_cells(text: str, width: int) -> str:
    size = 0
    for index, char in enumerate(text):
        size += _cells(char)
        if size > width:
            return text[:index]
    return text


def _rich_lines(message: str, width: int) -> list[str]:
    """The lines Rich's ``Console.print(Text(message))`` writes at ``width`` columns: each
    line word-wrapped, whitespace past the width dropped, then cropped (rich Text.wrap)."""
    out: list[str] = []
    for line in message.split("\n"):
        bounds = [0, *_divide_line(line, width), len(line)]
        for a, b in itertools.pairwise(bounds):
            piece = line[a:b]
            trailing = len(piece) - len(piece.rstrip())  # rich's r"\s+$" (no "\n" here)
            if len(piece) > width and trailing:
                piece = piece[: len(piece) - min(trailing, len(piece) - width)]
            if _cells(piece) > width:
                piece = _crop_cells(piece, width)
            out.append(piece)
    return out


def _console_width(env: Mapping[str, str]) -> int:
    """rich Console.size off a terminal: $COLUMNS, else a terminal on fd 0-2, else 80."""
    width = 0
    for fd in (0, 1, 2):
        try:
            width = os.get_terminal_size(fd).columns
        except (AttributeError, ValueError, OSError):
            continue
        break
    columns = env.get("COLUMNS", "")
    if columns.isdigit():
        width = int(columns)
    return width or 80


class _Aider(_Plain):
    """aider 0.86.2 with ``--message``: the "whole" edit format, streamed, no colours.

    One ``send`` is one model reply: the scenario played as the scripted server streams it
    to aider (all of it in one reply: aider offers no tools, so a write or a shell step is
    text). The reply is parsed as file listings; a reply that does not parse is sent back
    ("reflected") up to three times, and the server answers the same each time.
    """

    agent = "aider"

    def __init__(self, run: FakeRun, prompt: str) -> None:
        super().__init__(run, prompt)
        self.width = _console_width(run.env)
        self.restored = False
        self.chat_files: list[str] = []
        self.total_cost = 0.0
        self.message_cost = 0.0
        self.api_failed = False
        self.line_start = True
        self.played_cli_steps = False

    # -- output ------------------------------------------------------------------------

    def emit(self, text: str) -> None:
        """Raw stdout (the streamed reply, an input() question)."""
        if text:
            self.run.out_raw(text.encode("utf-8"))
            self.line_start = text.endswith("\n")

    def say(self, message: str = "") -> None:
        """io.tool_output / tool_warning / tool_error with --no-pretty: a Rich console line
        on stdout, wrapped at the console width."""
        self.emit("".join(line + "\n" for line in _rich_lines(message, self.width)))

    def header(self) -> None:
        """main.py: io.rule() (a blank line without --pretty), then the announcements.

        Before them, aider's InputOutput sets up its terminal: on a dumb TERM it says so on
        stdout; otherwise prompt_toolkit warns on stderr when stdin is not a terminal."""
        p = self.run.parsed
        if self.run.env.get("TERM", "").lower() in ("dumb", "unknown"):
            self.say("Detected dumb terminal, disabling fancy input and pretty output.")
        elif not self.run.stdin.isatty():
            self.run.err(f"Warning: Input is not a terminal (fd={self.run.stdin.fileno()}).\n")
        self.emit("\n")
        self.say(f"Aider v{_AIDER_VERSION}")
        self.say(f"Model: {p.value('--model') or 'gpt-4o'} with whole edit format")
        self.say("Git repo: none" if p.has("--no-git") else "Git repo: .git with 0 files")
        self.say("Repo-map: disabled")
        if self.restored:
            self.say("Restored previous conversation history.")

    def confirm(self, question: str, subject: str, *, allow_never: bool = False) -> bool:
        """io.confirm_ask: a blank line and the subject, then, without --yes-always, the
        question through input() (stdout, no newline; EOF or an empty answer is Yes).

        This is aider's plain input() path (as with TERM=dumb); on a capable TERM aider asks
        through prompt_toolkit even with stdin on a pipe, which redraws the question."""
        self.say()
        self.say(subject)
        if self.run.parsed.has("--yes-always"):
            return True
        valid = ["yes", "no", "skip", "all"]
        options = " (Y)es/(N)o"
        if allow_never:
            options += "/(D)on't ask again"
            valid.append("don't")
        while True:
            self.emit(f"{question}{options} [Yes]: ")
            line = self.run.read_stdin_line()
            answer = "y" if line is None else line.decode("utf-8", "replace").lower() or "y"
            if any(v.startswith(answer) for v in valid):
                return answer[0] in ("y", "a")
            self.say(f"Please answer with one of: {', '.join(valid)}")

    # -- one reply -----------------------------------------------------------------------

    def send(self) -> str:
        """Coder.send_message: stream a reply (retrying an API error as aider does), print
        the token report; returns the reply aider parses."""
        delay = 0.125
        while True:
            partial, error = self.stream()
            if error is None:
                break
            status = int(error.get("status", 500))
            name, prefix, retry, description = _AIDER_API_ERRORS.get(status, _AIDER_OTHER_API_ERROR)
            text = f"litellm.{name}: {prefix}OpenAIException - {error.get('message', '')}"
            if retry:
                delay *= 2
                retry = delay <= _AIDER_RETRY_TIMEOUT
            self.say(text)
            if description:
                self.say(description)
            if not retry:
                # check_and_open_urls: each URL in the error is offered in a browser.
                import re  # only an API error aider does not retry offers its URLs

                for found in dict.fromkeys(re.findall(_URL, text)):
                    url = found.rstrip(".',\"}")
                    self.confirm("Open URL for more info?", url, allow_never=True)
                self.api_failed = True
                break
            # The fake does not wait out aider's backoff (about 64 s for a 5xx).
            self.say(f"Retrying in {delay:.1f} seconds...")
        self.say()
        content = _aider_strip_reasoning(partial)
        if self.api_failed:
            return content  # no token report: the request raised
        usage = self.usage_step()
        if usage is not None:
            sent = int(usage.get("input_tokens", 0))
            received = int(usage.get("output_tokens", 0))
        else:
            # aider counts with its own tokenizer; a rough estimate stands in for it.
            sent, received = max(1, len(self.prompt) // 4), max(1, len(content) // 4)
        report = f"Tokens: {_aider_tokens(sent)} sent, {_aider_tokens(received)} received."
        # Offline the model has no price, so aider prints no cost; a scenario that gives one
        # (cost_usd) gets aider's cost report.
        if usage is not None and usage.get("cost_usd") is not None:
            cost = float(usage.get("cost_usd"))
            self.message_cost += cost
            self.total_cost += cost
            report += (
                f" Cost: ${_aider_cost(self.message_cost)} message,"
                f" ${_aider_cost(self.total_cost)} session."
            )
        self.say(report)
        return content

    def usage_step(self) -> Step | None:
        steps = [s for s in self.run.scenario.steps if s.kind == "usage"]
        return steps[-1] if steps else None

    def stream(self) -> tuple[str, Step | None]:
        """Coder.show_send_output_stream without --pretty: each delta written as it comes,
        reasoning framed by aider's THINKING/ANSWER markers. Returns the raw reply and the
        api_error step that ended it, if any."""
        partial = ""
        got_reasoning = ended_reasoning = received = False
        first = not self.played_cli_steps
        self.played_cli_steps = True

        def delta(kind: str, piece: str) -> None:
            nonlocal partial, got_reasoning, ended_reasoning, received
            if not piece:
                return
            text = ""
            if kind == "reasoning":
                if not got_reasoning:
                    text += f"<{_AIDER_TAG}>\n\n"
                got_reasoning = True
            elif got_reasoning and not ended_reasoning:
                text += f"\n\n</{_AIDER_TAG}>\n\n"
                ended_reasoning = True
            text += piece
            received = True
            partial += text
            text = _replace_spaced(text, _AIDER_TAG_OPEN, f"\n{_AIDER_THINKING}\n\n")
            self.emit(_replace_spaced(text, _AIDER_TAG_CLOSE, f"\n\n{_AIDER_ANSWER}\n\n"))

        for step in self.run.scenario.steps:
            if step.kind == "thinking":
                for piece in step.chunks:
                    delta("reasoning", piece)
            elif step.kind == "text":
                for piece in step.chunks:
                    delta("content", piece)
            elif step.kind == "tool":
                delta("content", _aider_tool_text(step))
            elif step.kind == "sleep":
                self.run.sleep(float(step.get("ms", 0)))
            elif step.kind == "hang":
                self.run.hang()
            elif step.kind == "api_error":
                return partial, step
            elif step.kind in _AIDER_CLI_SIDE:
                if first:
                    self.cli_step(step)
            elif step.kind != "usage":
                raise ValueError(f"aider fake cannot render step kind {step.kind!r}")
        if not received:
            self.say("Empty response received from LLM. Check your provider account?")
        return partial, None

    def cli_step(self, step: Step) -> None:
        """A fault of the process itself, on a line of its own."""
        if step.kind in ("noise", "malformed", "foreign", "oversize", "crash"):
            if not self.line_start and (step.kind != "crash" or step.get("mid_line")):
                self.emit("\n")
            self.line_start = step.kind != "crash"
        self.fault(step)

    def apply(self, content: str) -> bool:
        """Coder.apply_updates for the whole format; True when the reply is reflected."""
        try:
            edits = _aider_edits(content, self.chat_files)
        except ValueError as exc:
            self.say("The LLM did not conform to the edit format.")
            self.say(_AIDER_EDIT_ERRORS)
            self.say()
            self.say(str(exc))
            return True
        allowed: dict[str, bool] = {}
        for path, _body in edits:
            if path not in allowed:
                allowed[path] = self.allowed_to_edit(path)
        edited = [(path, body) for path, body in edits if allowed[path]]
        dry = self.run.parsed.has("--dry-run")
        for path, body in edited:
            if not dry:
                self.run.write_file(path, body)
        for path, _body in edited:
            done = f"Did not apply edit to {path} (--dry-run)" if dry else f"Applied edit to {path}"
            self.say(done)
        return False

    def allowed_to_edit(self, path: str) -> bool:
        """Coder.allowed_to_edit without git: a file not in the chat is confirmed first."""
        if path in self.chat_files:
            return True
        if os.path.exists(os.path.join(self.run.cwd, path)):
            question = "Allow edits to file that has not been added to the chat?"
        else:
            question = "Create new file?"
        if not self.confirm(question, path):
            self.say(f"Skipping edits to {path}")
            return False
        self.chat_files.append(path)
        return True

    # -- the run -------------------------------------------------------------------------

    def main(self) -> int:
        self.header()
        self.say()  # main.py: io.tool_output() before coder.run(with_message=...)
        # Coder.run_one: a reply that does not parse is sent back, at most three times.
        for reflection in range(_AIDER_MAX_REFLECTIONS + 1):
            content = self.send()
            self.answer = [content]
            if not self.apply(content):
                break
            if reflection == _AIDER_MAX_REFLECTIONS:
                self.say(f"Only {_AIDER_MAX_REFLECTIONS} reflections allowed, stopping.")
        # aider reports a failed model call as text and exits 0.
        return 0 if self.api_failed else self.run.scenario.exit_code


def _aider_main(run: FakeRun) -> int:
    p = run.parsed
    if p.has("--message"):
        prompt, via = p.value("--message") or "", "argv"
    elif p.has("--message-file"):
        text = _read_prompt_file(run, p.value("--message-file") or "")
        if text is None:
            return 1
        prompt, via = text, "file"
    else:
        # No --message: aider's chat loop reads stdin and ends at EOF.
        prompt, via = run.read_stdin_text(), "stdin"
        if not prompt.strip():
            _Aider(run, "").header()
            return 0
    prior = _latest_session(run) if p.has("--restore-chat-history") else None
    aider = _Aider(run, prompt)
    aider.restored = prior is not None
    return _run_session(run, aider, prior, via)


# --------------------------------------------------------------------------- antigravity

_AGY_OPTIONS: tuple[Option, ...] = (
    ("-p, --print", "", "Print mode: answer the prompt (argument, or '-' for stdin) and exit"),
    ("--log-file", "<path>", "Write the debug log to this file"),
    ("-c, --continue", "", "Continue the most recent conversation"),
    ("-v, --version", "", "Output the version number"),
    ("-h, --help", "", "Display help for command"),
)


class _Antigravity(_Plain):
    agent = "antigravity"

    def __init__(self, run: FakeRun, prompt: str, log: str | None) -> None:
        super().__init__(run, prompt)
        self.log = log

    def write_log(self, line: str) -> None:
        if self.log is not None:
            stamp = time.strftime("%m%d %H:%M:%S")
            with open(self.log, "a", encoding="utf-8") as handle:
                handle.write(f"I{stamp} {line}\n")

    def header(self) -> None:
        self.write_log("print mode: reading the prompt from stdin")

    def api_error(self, step: Step) -> None:
        # seed 002 §4.4 pit one: silent on stdout and stderr; only the log says why.
        status = int(step.get("status", 500))
        self.write_log(f"model request failed: status {status}: {step.get('message', '')}")

    def main(self) -> int:
        if self.run.scenario.auth == "missing" or self.run.env.get("FAKE_CLI_AUTH") == "missing":
            self.write_log("authentication required: no signed-in account; run agy to sign in")
            return self.run.scenario.exit_code
        return super().main()


def _agy_main(run: FakeRun) -> int:
    p = run.parsed
    if not p.has("--print"):
        run.err("Error: agy needs an interactive terminal; use -p for print mode\n")
        return 1
    log: str | None = None
    log_path = p.value("--log-file")
    if log_path is not None:
        log = log_path or os.curdir  # Path("") is the cwd
        parent = os.path.dirname(log)
        if parent:
            os.makedirs(parent, exist_ok=True)
        write_text(log, "")
        # seed 002 §4.4: `agy -p --log-file x -` runs but its log stays empty.
        order = [a.split("=", 1)[0] for a in run.argv]
        if order.index("--log-file") > order.index("-p" if "-p" in order else "--print"):
            run.record["log_ignored"] = True
            log = None
    positional = p.positionals[0] if p.positionals else "-"
    if positional == "-":
        prompt, via = run.read_stdin_text(), "stdin"
    else:
        prompt, via = positional, "argv"
    prior = _latest_session(run) if p.has("--continue") else None
    return _run_session(run, _Antigravity(run, prompt, log), prior, via)


# --------------------------------------------------------------------------- atomcode

_ATOM_OPTIONS: tuple[Option, ...] = (
    ("--prompt-file", "<PATH>", "Read the prompt from a file"),
    ("-y, --yes", "", "Approve every tool call without asking"),
    ("-m, --model", "<MODEL>", "Model to use"),
    ("-V, --version", "", "Print version"),
    ("-h, --help", "", "Print help"),
)


class _AtomCode(_Plain):
    agent = "atomcode"

    def approve(self, kind: str, target: str) -> bool:
        if self.run.parsed.has("--yes") or kind == "other":
            return True
        return _ask(self.run, f"Allow {kind} {target}? [y/N] ", on_stdout=False, default=False)

    def show_tool(self, step: Step, name: str, target: str, ok: bool, output: str) -> None:
        label = {"write_file": "Write", "run_shell_command": "Bash"}.get(name, name)
        self.run.out(f"⏺ {label}({target})")
        self.run.out(f"  ⎿  {output if ok else 'Error: ' + output}")

    def api_error(self, step: Step) -> None:
        status = int(step.get("status", 500))
        self.run.err(f"Error: API error {status}: {step.get('message', '')}\n")


def _atom_main(run: FakeRun) -> int:
    p = run.parsed
    path = p.value("--prompt-file")
    if path is not None:
        text = _read_prompt_file(run, path)
        if text is None:
            return 1
        prompt, via = text, "file"
    elif p.positionals:
        prompt, via = p.positionals[0], "argv"
    else:
        run.err(_clap_error("a prompt is required: pass --prompt-file <PATH> or a prompt"))
        return 2
    return _run_session(run, _AtomCode(run, prompt), None, via)


# --------------------------------------------------------------------------- deepseek

_DEEPSEEK_VERSION = "0.8.31"
_DEEPSEEK_EXEC: tuple[Option, ...] = (
    ("--auto", "", "Agentic mode: approve every tool call (YOLO)"),
    ("-m, --model", "<MODEL>", "Model id"),
    ("--json", "", "Print one JSON summary at the end instead of streaming"),
    ("--max-turns", "<N>", "Maximum agent turns"),
    ("-h, --help", "", "Print help"),
)
_DEEPSEEK_TOP: tuple[Option, ...] = (
    ("-V, --version", "", "Print version"),
    ("-h, --help", "", "Print help"),
)


class _DeepSeek(_Plain):
    agent = "deepseek"

    def __init__(self, run: FakeRun, prompt: str) -> None:
        super().__init__(run, prompt)
        self.batch = run.parsed.has("--json")
        self.tokens = {"input": 0, "output": 0}
        self.calls: list[dict[str, Any]] = []

    def write_text(self, chunks: list[str]) -> None:
        if not self.batch:
            super().write_text(chunks)

    def thinking(self, step: Step) -> None:
        if not self.batch:
            self.run.err(f"[thinking] {step.text}\n")

    def approve(self, kind: str, target: str) -> bool:
        if self.run.parsed.has("--auto") or kind == "other":
            return True
        # seed 000 §5.11: without --auto the run waits on an approval prompt.
        return _ask(self.run, f"Approve {kind} {target}? [y/N] ", on_stdout=False, default=False)

    def show_tool(self, step: Step, name: str, target: str, ok: bool, output: str) -> None:
        self.calls.append({"name": name, "target": target, "ok": ok, "output": output})
        if not self.batch:
            # seed 000 §5.11: tool-call notifications go to stderr.
            self.run.err(f"→ {name} {target}\n")
            self.run.err(f"{'✓' if ok else '✗'} {name}: {output}\n")

    def usage(self, step: Step) -> None:
        self.tokens["input"] += int(step.get("input_tokens", 0))
        self.tokens["output"] += int(step.get("output_tokens", 0))
        if not self.batch:
            self.run.err(f"tokens: {self.tokens['input']} in / {self.tokens['output']} out\n")

    def finish(self) -> None:
        if self.batch:
            summary: dict[str, Any] = {
                "response": "".join(self.answer),
                "tool_calls": self.calls,
                "usage": self.tokens,
            }
            self.run.out(jsonio.dumps(summary, ensure_ascii=False))


def _deepseek_main(run: FakeRun) -> int:
    p = run.parsed
    if p.command != ("exec",):
        run.err("Error: the DeepSeek TUI needs an interactive terminal; use `deepseek exec`\n")
        return 1
    prompt = p.positionals[0]
    return _run_session(run, _DeepSeek(run, prompt), None, "argv")


# --------------------------------------------------------------------------- grok

_GROK_OPTIONS: tuple[Option, ...] = (
    ("--prompt-file", "<PATH>", "Read the prompt from a file"),
    ("-p, --prompt", "<PROMPT>", "Prompt text (headless)"),
    ("-m, --model", "<MODEL>", "Model to use"),
    ("--effort", "<EFFORT>", "Reasoning effort [possible values: low, medium, high, xhigh, max]"),
    ("--always-approve", "", "Auto-approve all tool executions"),
    ("-V, --version", "", "Print version"),
    ("-h, --help", "", "Print help"),
)
_GROK_MODELS = (
    "Default model: grok-build\n"
    "Available models:\n"
    "  grok-build\n"
    "  grok-4.3\n"
    "  grok-4.20-reasoning\n"
    "  grok-4.20-non-reasoning\n"
)


class _Grok(_Plain):
    """grok in ``--prompt-file`` mode never asks: without ``--always-approve`` the model's
    first tool call is dropped and the turn ends there, exit 0 (grok 0.2.111, offline)."""

    agent = "grok-build"
    denial_ends_turn = True

    def approve(self, kind: str, target: str) -> bool:
        return self.run.parsed.has("--always-approve")

    def denied(self, step: Step, name: str, target: str) -> None:
        """Nothing is printed for the dropped call."""

    def write_text(self, chunks: list[str]) -> None:
        """The model's messages run together; one newline ends the answer (finish)."""
        for chunk in chunks:
            self.run.out_raw(chunk.encode("utf-8"))

    def finish(self) -> None:
        if self.answer:
            self.run.out_raw(b"\n")

    def api_error(self, step: Step) -> None:
        status = int(step.get("status", 500))
        self.run.err(f"Error: request failed with status {status}: {step.get('message', '')}\n")


def _grok_main(run: FakeRun) -> int:
    p = run.parsed
    effort = p.value("--effort")
    if effort is not None and effort not in _EFFORTS:
        run.err(
            _clap_error(
                f"invalid value '{effort}' for '--effort <EFFORT>'\n"
                f"  [possible values: {', '.join(_EFFORTS)}]"
            )
        )
        return 2
    path = p.value("--prompt-file")
    if path is not None:
        text = _read_prompt_file(run, path)
        if text is None:
            return 1
        prompt, via = text, "file"
    elif p.has("--prompt") or p.positionals:
        prompt, via = p.value("--prompt") or p.positionals[0], "argv"
    else:
        run.err("Error: no prompt: pass --prompt-file <PATH>, --prompt or a positional prompt\n")
        return 2
    return _run_session(run, _Grok(run, prompt), None, via)


# --------------------------------------------------------------------------- qwen

_QWEN_VERSION = "0.24.4"
_QWEN_OPTIONS: tuple[Option, ...] = (
    ("-m, --model", "<string>", "Model"),
    ("-p, --prompt", "<string>", "Prompt. Appended to input on stdin (if any)."),
    ("-y, --yolo", "", "Automatically accept all actions (YOLO mode)"),
    (
        "--approval-mode",
        "<string>",
        'Approval mode (choices: "plan", "default", "auto-edit", "yolo")',
    ),
    ("--auth-type", "<string>", "Authentication type"),
    ("--continue", "", "Resume the most recent session for this project"),
    ("--resume", "<string>", "Resume a session by id"),
    ("-d, --debug", "", "Run in debug mode"),
    ("-s, --sandbox", "", "Run in sandbox"),
    ("--checkpointing", "", "Enable checkpointing of file edits"),
    ("-v, --version", "", "Show version number"),
    ("-h, --help", "", "Show help"),
)


class _Qwen(_Plain):
    """qwen 0.24.4's text mode: the final answer only (recordings/real/qwen/happy.jsonl
    prints "Done: hello.html is ready." and neither the text before the write nor an echo
    of the written file: an artifact block is the model's to write, as scenario text)."""

    agent = "qwen"
    final_answer_only = True

    def approve(self, kind: str, target: str) -> bool:
        p = self.run.parsed
        mode = p.value("--approval-mode", "default")
        if p.has("--yolo") or mode == "yolo" or kind == "other":
            return True
        return kind == "write" and mode == "auto-edit"

    def denied(self, step: Step, name: str, target: str) -> None:
        self.run.err(
            f'Error executing tool {name}: Tool "{name}" not found in registry. '
            "Tools must use the exact names that are registered.\n"
        )

    def api_error(self, step: Step) -> None:
        status = int(step.get("status", 500))
        self.run.err(f"[API Error: {step.get('message', '')} (Status: {status})]\n")


def _qwen_main(run: FakeRun) -> int:
    p = run.parsed
    mode = p.value("--approval-mode")
    if mode is not None and mode not in _QWEN_APPROVAL:
        run.err(
            f'Invalid values:\n  Argument: approval-mode, Given: "{mode}", Choices: '
            + ", ".join(f'"{m}"' for m in _QWEN_APPROVAL)
            + "\n"
        )
        return 1
    if p.has("--yolo") and mode is not None:
        run.err(
            "Cannot use both --yolo (-y) and --approval-mode together. "
            "Use --approval-mode=yolo instead.\n"
        )
        return 1
    if p.has("--prompt") or p.positionals:
        prompt, via = p.value("--prompt") or p.positionals[0], "argv"
    else:
        prompt, via = run.read_stdin_text(), "stdin"
    if not prompt.strip():
        run.err("No input provided via stdin. Input can be provided by piping data into qwen.\n")
        return 1
    prior: dict[str, Any] | None = None
    resume = p.value("--resume")
    if resume is not None:
        prior = run.load_session(resume)
        if prior is None:
            run.err(f"No saved session found with ID {resume}.\n")
            return 1
    elif p.has("--continue"):
        prior = _latest_session(run)
    return _run_session(run, _Qwen(run, prompt), prior, via)


# --------------------------------------------------------------------------- specs


def _spec(
    agent_id: str,
    prog: str,
    *,
    version: str,
    grammar: Grammar,
    style: str,
    run: Callable[[FakeRun], int],
    help_text: str,
    version_args: tuple[tuple[str, ...], ...] = (("--version",),),
    models: tuple[tuple[str, ...] | None, str] = (None, ""),
) -> CliSpec:
    """A plain CLI's spec; none of them has optional (version-gated) flags."""
    return CliSpec(
        agent_id=agent_id,
        prog=prog,
        version_output=version,
        grammar=lambda old: grammar,
        style=style,
        run=run,
        version_args=version_args,
        help_args=(("--help",), ("-h",)),
        help_text=help_text,
        models_args=models[0],
        models_output=models[1],
    )


_DEEPSEEK_GRAMMAR = _grammar_from(
    _DEEPSEEK_TOP, subcommands={"exec": _grammar_from(_DEEPSEEK_EXEC, positionals=(1, 1))}
)
_DEEPSEEK_HELP = _help_from(
    "Usage: deepseek [OPTIONS] [COMMAND]\n\nCommands:\n  exec  Run one prompt headless and exit",
    _DEEPSEEK_TOP + _DEEPSEEK_EXEC[:3],
)

SPECS: dict[str, CliSpec] = {
    "aider": _spec(
        "aider",
        "aider",
        version=f"aider {_AIDER_VERSION}",
        grammar=_grammar_from(
            _AIDER_OPTIONS,
            positionals=(0, -1),
            repeatable=frozenset({"--api-key", "--file", "--read"}),
        ),
        style="argparse",
        run=_aider_main,
        help_text=_help_from("usage: aider [-h] [options] [FILE ...]", _AIDER_OPTIONS),
    ),
    "antigravity": _spec(
        "antigravity",
        "agy",
        version="1.0.3",
        grammar=_grammar_from(_AGY_OPTIONS, positionals=(0, 1)),
        style="commander",
        run=_agy_main,
        help_text=_help_from("Usage: agy [options] [prompt]", _AGY_OPTIONS),
        version_args=(("--version",), ("-v",)),
    ),
    "atomcode": _spec(
        "atomcode",
        "atomcode",
        version="atomcode 0.9.4",
        grammar=_grammar_from(_ATOM_OPTIONS, positionals=(0, 1)),
        style="clap",
        run=_atom_main,
        help_text=_help_from("Usage: atomcode [OPTIONS] [PROMPT]", _ATOM_OPTIONS),
        version_args=(("--version",), ("-V",)),
    ),
    "deepseek": _spec(
        "deepseek",
        "deepseek",
        version=f"deepseek {_DEEPSEEK_VERSION}",
        grammar=_DEEPSEEK_GRAMMAR,
        style="clap",
        run=_deepseek_main,
        help_text=_DEEPSEEK_HELP,
        version_args=(("--version",), ("-V",)),
    ),
    "grok-build": _spec(
        "grok-build",
        "grok",
        version="grok 0.6.2",
        grammar=_grammar_from(_GROK_OPTIONS, positionals=(0, 1), subcommands={"models": Grammar()}),
        style="clap",
        run=_grok_main,
        help_text=_help_from("Usage: grok [OPTIONS] [PROMPT] [COMMAND]", _GROK_OPTIONS),
        version_args=(("--version",), ("-V",)),
        models=(("models",), _GROK_MODELS),
    ),
    "qwen": _spec(
        "qwen",
        "qwen",
        version=_QWEN_VERSION,
        grammar=_grammar_from(_QWEN_OPTIONS, positionals=(0, 1)),
        style="yargs",
        run=_qwen_main,
        help_text=_help_from("Usage: qwen [options] [query]", _QWEN_OPTIONS),
        version_args=(("--version",), ("-v",)),
    ),
}
