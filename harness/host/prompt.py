"""How the composed prompt reaches the CLI: stdin bytes, a private prompt file, or neither.

Seed 002 §6.2 names three routes (ref §8.1 gives their precedence): a prompt file
(``PromptDelivery.FILE``), stdin (``STDIN``: plain text, or one stream-json user
message with stdin held open), and argv (``ARGV``: ``build_args`` places it, guarded
by :mod:`harness.guards.budget`). Two-way sessions send it as a protocol frame
(``PROTOCOL``). This module builds the bytes and the file; ``harness/runtime/probe.py``
writes them.

Strings are encoded the way upstream's JavaScript encodes them: a valid surrogate
pair is one character, and a lone surrogate becomes U+FFFD on the wire
(``Buffer.from(s, 'utf8')``) or a ``\\uXXXX`` escape inside JSON (ES2019
``JSON.stringify``), so no prompt makes encoding raise.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from types import TracebackType

from harness.defs.types import AgentDef, PromptDelivery, PromptInputFormat
from harness.events import Event, TurnEnd, Usage

__all__ = [
    "PROMPT_FILE_NAME",
    "PromptFile",
    "is_clean_terminal_turn",
    "is_terminal_turn",
    "keep_stdin_open",
    "prepare_prompt_file",
    "should_close_stdin",
    "stdin_payload",
    "stream_json_user_message",
    "utf8_encode",
    "utf8_len",
]

#: The file name inside the private directory (seed 002 §6.2: "写 prompt.md").
PROMPT_FILE_NAME = "prompt.md"

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _well_formed(text: str) -> str:
    """Join surrogate pairs into one character; keep lone surrogates as they are."""
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def utf8_encode(text: str) -> bytes:
    """UTF-8 bytes of ``text``; a lone surrogate becomes U+FFFD (as Node's ``Buffer``)."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        fixed = _LONE_SURROGATE.sub("\ufffd", _well_formed(text))
        return fixed.encode("utf-8")


def utf8_len(text: str) -> int:
    """Byte length of :func:`utf8_encode` (``Buffer.byteLength``; ref §4.1 ``utf8_len``)."""
    return len(utf8_encode(text))


def stream_json_user_message(prompt: str) -> bytes:
    """The one JSONL line a stream-json CLI reads as the user's turn (PROMPT-STREAMJSON-001).

    ref §2.1.8 / seed 002 §6.2: ``{"type":"user","message":{"role":"user","content":
    [{"type":"text","text":<prompt>}]}}`` and a ``\\n``. Newlines in the prompt are
    JSON-escaped, so the record is exactly one line; non-ASCII text stays literal.
    """
    message = {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
    }
    line = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    if _LONE_SURROGATE.search(line) is not None:
        # ES2019 JSON.stringify: pairs stay one character, lone surrogates become \uXXXX.
        line = _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", _well_formed(line))
    return line.encode("utf-8") + b"\n"


def stdin_payload(defn: AgentDef, prompt: str) -> bytes | None:
    """What to write to the child's stdin at spawn, or ``None`` (PROMPT-STDIN-001).

    seed 002 §6.2 / ref §8.1: ``STDIN`` + ``text`` -> the prompt's UTF-8 bytes (then stdin
    is closed); ``STDIN`` + ``stream-json`` -> :func:`stream_json_user_message` (stdin stays
    open, see :func:`keep_stdin_open`). ``FILE``, ``ARGV`` and ``PROTOCOL`` write no prompt.
    """
    if defn.prompt_delivery is not PromptDelivery.STDIN:
        return None
    if defn.prompt_input_format is PromptInputFormat.STREAM_JSON:
        return stream_json_user_message(prompt)
    return utf8_encode(prompt)


def keep_stdin_open(defn: AgentDef) -> bool:
    """True when stdin must stay open after the prompt (PROMPT-STREAMJSON-002).

    seed 002 §6.2: a stream-json prompt keeps stdin open "直到一个非 tool_use 的
    stop_reason 到达才关"; a text prompt closes stdin once written.
    """
    return (
        defn.prompt_delivery is PromptDelivery.STDIN
        and defn.prompt_input_format is PromptInputFormat.STREAM_JSON
    )


def is_terminal_turn(event: Event) -> bool:
    """A ``turn_end`` or ``usage`` whose stop reason is not ``tool_use`` (ref §2.1.8).

    A ``tool_use`` stop is a mid-tool pause: the CLI will continue the same turn, so
    closing stdin there would cut off the reply (seed 002 §7.2). A ``usage`` without a
    stop reason is terminal (upstream: ``stopReason !== 'tool_use'``).
    """
    if isinstance(event, (TurnEnd, Usage)):
        return event.stop_reason != "tool_use"
    return False


def is_clean_terminal_turn(event: Event) -> bool:
    """A terminal turn that did not fail: ``usage.is_error`` is not ``True`` (ref §2.1.8).

    seed 000 §5.1: stdin "is closed after a clean terminal ``turn_end``/``usage`` rather
    than at a mid-tool ``tool_use`` pause".
    """
    if not is_terminal_turn(event):
        return False
    return not (isinstance(event, Usage) and event.is_error is True)


def should_close_stdin(defn: AgentDef, event: Event) -> bool:
    """True at the event where a held-open stdin is closed (PROMPT-STREAMJSON-002).

    ref §2.1.8: stdin is closed at the first terminal turn, and upstream closes it even
    when that turn reports ``isError`` (only "completed cleanly" differs); otherwise a
    CLI that waits for more stdin after a failed turn would never exit.
    """
    return keep_stdin_open(defn) and is_terminal_turn(event)


class PromptFile:
    """A private ``prompt.md`` for one run; removed on exit, also when the body raises.

    seed 002 §6.2 (PROMPT-FILE-001): ``mkdtemp`` a directory, write ``prompt.md`` with mode
    0600, hand the path to ``build_args`` (``RuntimeContext.prompt_file_path``), delete
    after the run. The directory is created 0700 by :func:`tempfile.mkdtemp`; on POSIX the
    file mode is set to exactly 0600 whatever the umask. Use::

        with PromptFile(prompt) as path:
            ...
    """

    def __init__(self, prompt: str, *, parent: str | None = None) -> None:
        self._data = utf8_encode(prompt)
        self._parent = parent
        self._dir: str | None = None
        self._entered = False

    @property
    def path(self) -> str | None:
        """The file's path while inside the ``with`` block, else ``None``."""
        return None if self._dir is None else os.path.join(self._dir, PROMPT_FILE_NAME)

    def __enter__(self) -> str:
        if self._entered:
            raise RuntimeError("PromptFile is single-use: it was already entered")
        self._entered = True
        directory = tempfile.mkdtemp(prefix="harness-prompt-", dir=self._parent)
        self._dir = directory
        path = os.path.join(directory, PROMPT_FILE_NAME)
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
            fd = os.open(path, flags, 0o600)
            try:
                if sys.platform != "win32":
                    os.fchmod(fd, 0o600)  # the umask may only have narrowed it; make it exact
                view = memoryview(self._data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            finally:
                os.close(fd)
        except BaseException:
            self._remove()
            raise
        return path

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._remove()

    def _remove(self) -> None:
        directory = self._dir
        self._dir = None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)


def prepare_prompt_file(
    defn: AgentDef, prompt: str, *, parent: str | None = None
) -> PromptFile | None:
    """A :class:`PromptFile` when ``defn`` takes its prompt from a file, else ``None``.

    seed 002 §6.2: "def.promptViaFile 不为真就直接返回 null，所以调用点不用判断".
    """
    if defn.prompt_delivery is not PromptDelivery.FILE:
        return None
    return PromptFile(prompt, parent=parent)
