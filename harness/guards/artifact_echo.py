"""Artifact-echo suppression: drop an inline ``<artifact>`` that repeats a file just written.

Rules: ECHO-CHUNKING-001.
Design: docs/design/guards.md#harness.guards.artifact_echo
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "ARTIFACT_CLOSE_TAG",
    "ARTIFACT_OPEN_TAG",
    "FILE_WRITE_TOOL_NAMES",
    "MAX_RECENT_WRITES",
    "ArtifactEchoGuard",
    "is_file_write_tool_use",
    "normalize_artifact_echo_content",
]

ARTIFACT_OPEN_TAG = "<artifact"
ARTIFACT_CLOSE_TAG = "</artifact>"

#: Tool names that write a file (ref §2.1.6 ``isFileWriteToolUse``).
FILE_WRITE_TOOL_NAMES = frozenset({"Write", "Edit", "write_file", "replace"})
#: How many recent write contents are remembered (FIFO).
MAX_RECENT_WRITES = 5

#: Characters JavaScript's ``\s`` matches (upstream's regexes are JS).
_JS_WS = (
    "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
_JS_WS_CLASS = "[" + re.escape(_JS_WS) + "]"

# re.ASCII: a JS regex without the ``u`` flag folds case and finds ``\b`` in ASCII only.
_WRITE_PATH_RE = re.compile(r"\.(?:html|htm|css|js|jsx|ts|tsx|md)\Z", re.IGNORECASE | re.ASCII)
_HTML_PATH_RE = re.compile(r"\.(?:html?|xhtml)\Z", re.IGNORECASE | re.ASCII)
_HTML_CONTENT_RE = re.compile(
    r"<!doctype" + _JS_WS_CLASS + r"+html\b|<html\b", re.IGNORECASE | re.ASCII
)
_HTML_TYPE_ATTR_RE = re.compile(
    r"\btype" + _JS_WS_CLASS + r"*=" + _JS_WS_CLASS + r"*[\"']text/html[\"']",
    re.IGNORECASE | re.ASCII,
)
_NEWLINES_RE = re.compile(r"\r\n?")


def is_file_write_tool_use(name: object, tool_input: object) -> bool:
    """ref §2.1.6 (ECHO-ARM-001): does this tool use write a file?"""
    if not isinstance(name, str) or not isinstance(tool_input, Mapping):
        return False
    if name not in FILE_WRITE_TOOL_NAMES:
        return False
    path = tool_input.get("file_path")
    if not isinstance(path, str):
        path = tool_input.get("path")
        if not isinstance(path, str):
            path = ""
    if _WRITE_PATH_RE.search(path):
        return True
    return isinstance(tool_input.get("content"), str) or isinstance(
        tool_input.get("new_string"), str
    )


def _written_text(tool_input: Mapping[str, Any]) -> str | None:
    content = tool_input.get("content")
    if isinstance(content, str):
        return content
    new_string = tool_input.get("new_string")
    return new_string if isinstance(new_string, str) else None


def _is_html_write(tool_input: Mapping[str, Any]) -> bool:
    # ``file_path ?? filePath``: only a missing/null file_path falls back.
    raw_path = tool_input.get("file_path")
    if raw_path is None:
        raw_path = tool_input.get("filePath")
    if isinstance(raw_path, str) and _HTML_PATH_RE.search(raw_path):
        return True
    text = _written_text(tool_input)
    return text is not None and _HTML_CONTENT_RE.search(text) is not None


def normalize_artifact_echo_content(value: str) -> str:
    """ref §2.1.6 (ECHO-NORMALIZE-001): the form two artifact bodies are compared in.

    Equivalent to upstream's ``/^(?:\\s|\\\\r|\\\\n)+|(?:\\s|\\\\r|\\\\n)+$/g`` trim,
    written as two linear scans (a backtracking regex is quadratic on long
    blank runs). Upstream's separate leading-BOM strip is subsumed: U+FEFF is
    JavaScript whitespace, so the trim removes it.
    """
    value = _NEWLINES_RE.sub("\n", value)
    start, end = 0, len(value)
    while start < end:
        if value[start] in _JS_WS:
            start += 1
        elif value[start] == "\\" and start + 1 < end and value[start + 1] in "rn":
            start += 2
        else:
            break
    while end > start:
        if value[end - 1] in _JS_WS:
            end -= 1
        elif end - 2 >= start and value[end - 2] == "\\" and value[end - 1] in "rn":
            end -= 2
        else:
            break
    return value[start:end]


def _open_tag_prefix_length(text: str) -> int:
    """Length of the longest proper prefix of ``<artifact`` that ``text`` ends with."""
    for size in range(min(len(ARTIFACT_OPEN_TAG) - 1, len(text)), 0, -1):
        if ARTIFACT_OPEN_TAG.startswith(text[-size:]):
            return size
    return 0


class ArtifactEchoGuard:
    """Per-run state of the artifact-echo suppression (ref §2.1.6).

    ``suppress_html_after_write`` is upstream's ``suppressHtmlArtifactsAfterFileWrite``
    option: also drop any ``type="text/html"`` artifact once an HTML file was
    written this turn, and keep the recent writes across blocks.
    """

    __slots__ = (
        "_block",
        "_block_tail",
        "_held",
        "_in_block",
        "_recent",
        "_suppress_html",
        "_suppress_next",
        "_wrote_html",
    )

    def __init__(self, *, suppress_html_after_write: bool = False) -> None:
        self._suppress_html = suppress_html_after_write
        #: Armed by a file write and no block seen since.
        self._suppress_next = False
        #: Inside ``<artifact …`` waiting for ``</artifact>``; ``_block`` holds its parts
        #: (joined once, at the close tag: a long artifact in small deltas stays linear).
        self._in_block = False
        self._block: list[str] = []
        #: The block's last characters, enough to find a close tag split across chunks.
        self._block_tail = ""
        #: A trailing proper prefix of ``<artifact`` held back.
        self._held = ""
        self._recent: list[str] = []
        self._wrote_html = False

    @property
    def armed(self) -> bool:
        """True while text is being inspected (else :meth:`feed_text` is a pass-through)."""
        return bool(self._suppress_next or self._in_block or self._held or self._recent)

    @property
    def recent_writes(self) -> tuple[str, ...]:
        """The normalized recent write contents, oldest first."""
        return tuple(self._recent)

    def observe_tool_use(self, name: object, tool_input: object) -> None:
        """Note a tool use; a file write arms the guard (ECHO-ARM-001)."""
        if not is_file_write_tool_use(name, tool_input):
            return
        assert isinstance(tool_input, Mapping)  # guaranteed by is_file_write_tool_use
        self._suppress_next = True
        text = _written_text(tool_input)
        if text:
            self._wrote_html = self._wrote_html or _is_html_write(tool_input)
            self._recent.append(normalize_artifact_echo_content(text))
            if len(self._recent) > MAX_RECENT_WRITES:
                del self._recent[0]

    def passes_through(self, text: str) -> bool:
        """True when :meth:`feed_text` would return ``text`` as is and change nothing.

        One cheap check for a parser's hot loop: outside a block, with nothing held,
        text with no ``<`` can neither open a block nor end in a prefix of its tag.
        """
        if self._in_block or self._held:
            return False
        return "<" not in text or not (self._suppress_next or self._recent)

    def feed_text(self, text: str) -> str:
        """Feed one chunk of visible text; return what may be shown now."""
        # ``armed``, spelled out: this runs once per text delta.
        if not (self._suppress_next or self._in_block or self._held or self._recent):
            return text
        current = self._held + text
        self._held = ""
        out: list[str] = []
        while True:
            if self._in_block:
                # ref §2.1.6 (ECHO-SUPPRESS-001): buffer the block until its close tag.
                window = self._block_tail + current
                close = window.find(ARTIFACT_CLOSE_TAG)
                self._block.append(current)
                if close == -1:
                    self._block_tail = window[-(len(ARTIFACT_CLOSE_TAG) - 1) :]
                    return "".join(out)
                block = "".join(self._block)
                end = len(block) - len(window) + close + len(ARTIFACT_CLOSE_TAG)
                candidate, current = block[:end], block[end:]
                self._block = []
                self._block_tail = ""
                self._in_block = False
                self._suppress_next = False
                duplicate = self._is_redundant(candidate)
                if not self._suppress_html:
                    self._recent.clear()
                if not duplicate:
                    out.append(candidate)
                if not self.armed:
                    out.append(current)
                    return "".join(out)
                continue
            open_at = current.find(ARTIFACT_OPEN_TAG)
            if open_at == -1:
                # ref §2.1.6 (ECHO-HOLD-001): keep back a possible start of ``<artifact``.
                held = _open_tag_prefix_length(current)
                if held and (self._suppress_next or self._recent):
                    self._held = current[-held:]
                    out.append(current[:-held])
                else:
                    out.append(current)
                return "".join(out)
            out.append(current[:open_at])
            self._in_block = True
            self._suppress_next = False
            current = current[open_at:]

    def flush(self) -> str:
        """Give back held text (message start, end of output) and disarm.

        As upstream's ``flushPendingArtifactText``: when something was held,
        the guard also forgets the recent writes and the HTML flag.
        """
        text = self._held + "".join(self._block)
        if not text:
            return ""
        self._held = ""
        self._block = []
        self._block_tail = ""
        self._in_block = False
        self._suppress_next = False
        self._recent.clear()
        self._wrote_html = False
        return text

    def reset_turn(self) -> None:
        """ref §2.1.6 (ECHO-RESET-001): a new user turn starts from a clean slate."""
        self._recent.clear()
        self._wrote_html = False

    def _is_redundant(self, candidate: str) -> bool:
        gt = candidate.find(">")
        close = candidate.rfind(ARTIFACT_CLOSE_TAG)
        if gt == -1 or close == -1 or close <= gt:
            return False
        if self._suppress_html and self._wrote_html:
            open_tag = candidate[: gt + 1]
            if _HTML_TYPE_ATTR_RE.search(open_tag):
                return True
        body = normalize_artifact_echo_content(candidate[gt + 1 : close])
        return body in self._recent
