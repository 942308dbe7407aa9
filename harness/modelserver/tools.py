"""Map a scenario's tool step onto a tool the request itself offers.

No table per CLI: the tool is picked from the request's tool list by name and
schema (design §Live mode; real-clis.md "How the tool call is built"), so a new
CLI whose write tool is called ``WriteFile`` or ``mcp__acp__Write`` works as is.

Rules: MODEL-TOOL-005.
Design: docs/design/modelserver.md#harness.modelserver.tools
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.modelserver.structured import structured_value

__all__ = [
    "PATCH_TOOL_NAMES",
    "SHELL_TOOL_NAMES",
    "SKIP_WORDS",
    "WRITE_TOOL_NAMES",
    "Probe",
    "ToolCall",
    "ToolOffer",
    "add_file_patch",
    "call_for_step",
    "escalation_allowed",
    "fill_arguments",
    "find_cwd",
    "pick_shell_tool",
    "pick_write_tool",
    "write_command",
]

#: Write-like tool names, best first, compared without case, ``_`` or ``-`` and
#: after an MCP ``server__`` prefix (real-clis.md: Write, write, write_file, create,
#: mcp__acp__Write, WriteFile).
WRITE_TOOL_NAMES = (
    "write",
    "writefile",
    "writetofile",
    "filewrite",
    "create",
    "createfile",
    "newfile",
)
#: Shell tool names, best first (real-clis.md: exec_command, bash, run_shell_command).
SHELL_TOOL_NAMES = (
    "execcommand",
    "bash",
    "runshellcommand",
    "shell",
    "shellcommand",
    "runcommand",
    "executecommand",
    "runterminalcmd",
    "terminal",
    "exec",
    "localshell",
    "powershell",
)
PATCH_TOOL_NAMES = ("applypatch",)
#: A tool whose name contains one of these is never picked for a write or shell step.
SKIP_WORDS = ("todo", "memory", "notebook", "stdin", "goal", "plan", "agent")
_SHELL_SKIP = (*SKIP_WORDS, "background", "output", "kill")

#: Argument keys, best first, by role.
PATH_KEYS = (
    "file_path",
    "path",
    "filepath",
    "absolute_path",
    "filename",
    "file_name",
    "file",
    "target_file",
    "target_path",
    "target",
    "destination",
    "dest",
)
CONTENT_KEYS = (
    "content",
    "file_text",
    "contents",
    "file_content",
    "new_content",
    "text",
    "data",
    "body",
    "code",
)
COMMAND_KEYS = ("command", "cmd", "commands", "shell_command", "script", "code", "input")
_PROSE_KEYS = ("description", "justification", "reason", "explanation", "summary", "title")

_ABSOLUTE = re.compile(r"(?i)\babsolute\b")
#: Either is fine ("relative or absolute", pi's write), or relative is required (codex's
#: apply_patch "NEVER ABSOLUTE"): the scenario's path is kept as it is.
_NOT_ABSOLUTE = re.compile(
    r"(?i)never\s+absolute|must\s+be\s+relative|not\s+(an\s+)?absolute|"
    r"relative\s*(?:or|/)\s*absolute|absolute\s*(?:or|/)\s*relative"
)


@dataclass(frozen=True)
class Probe:
    """A regex tried only around occurrences of a literal ``needle`` (lower-case).

    Requests carry system prompts of 20-60 KiB; a case-insensitive pattern without a
    literal prefix would scan every position. The needle is found with ``str.find``
    and the pattern runs in a window around each occurrence, so a probe costs one
    lower-casing and a few short searches (benchmarks/modelserver.py).
    """

    pattern: re.Pattern[str]
    needle: str
    before: int = 80
    after: int = 320

    def search(self, text: str, lower: str | None = None) -> re.Match[str] | None:
        low = text.lower() if lower is None else lower
        if len(low) != len(text):  # a case mapping changed the length: scan it all
            return self.pattern.search(text)
        start = 0
        while True:
            at = low.find(self.needle, start)
            if at < 0:
                return None
            found = self.pattern.search(text, max(0, at - self.before), at + self.after)
            if found:
                return found
            start = at + 1


#: A request that says escalation will be rejected (codex under approval policy "never":
#: "Do not provide the `sandbox_permissions` for any reason, commands will be rejected").
_NO_ESCALATION = (
    Probe(
        re.compile(r"(?i)do\s+not\s+provide\s+(?:the\s+)?`?sandbox_permissions"),
        "sandbox_permissions",
    ),
    Probe(re.compile(r"(?i)approval\s+policy\s+is\s+(?:currently\s+)?`?never"), "approval"),
)

#: Where requests say which directory the CLI runs in, most specific first:
#: codex ``<cwd>`` in its environment context, claude "Working directory:",
#: gemini "I'm currently working in the directory:", generic "cwd:".
_PATH = r"((?:/|[A-Za-z]:\\)[^\s`'\"]*)"
_CWD_PROBES = (
    Probe(re.compile(r"<cwd>\s*([^<\n]+?)\s*</cwd>"), "<cwd>"),
    Probe(
        re.compile(r"(?im)^[ \t>*-]*(?:primary\s+)?working\s+directory\s*:\s*`?([^\s`]+)`?\s*$"),
        "directory",
    ),
    Probe(re.compile(r"(?i)working\s+in\s+the\s+directory\s*:?\s*[`'\"]?" + _PATH), "directory"),
    Probe(
        re.compile(r"(?i)current\s+working\s+directory(?:\s+is)?\s*:?\s*[`'\"]?" + _PATH),
        "directory",
    ),
    Probe(re.compile(r"(?i)\bcwd\b\s*[:=]\s*[`'\"]?" + _PATH), "cwd"),
)


@dataclass(frozen=True)
class ToolOffer:
    """One tool as the request offers it, in provider-neutral form."""

    name: str
    description: str = ""
    #: JSON Schema of the arguments (``{}`` when the tool has none, e.g. a custom tool).
    schema: Mapping[str, Any] = field(default_factory=dict)
    #: ``function`` (JSON arguments) or ``custom`` (free-form text ``input``).
    kind: str = "function"


@dataclass(frozen=True)
class ToolCall:
    """One tool call of a reply."""

    call_id: str
    name: str
    #: ``function`` -> ``arguments``; ``custom`` -> ``input`` (Responses custom tools).
    kind: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    input: str = ""

    @property
    def payload(self) -> str:
        """What streams as argument deltas: the JSON arguments, or the custom input."""
        if self.kind == "custom":
            return self.input
        return json.dumps(self.arguments, ensure_ascii=False)


def _norm(name: str) -> str:
    tail = name.rsplit("__", 1)[-1]
    return re.sub(r"[\s_\-.]", "", tail.lower())


def _skipped(name: str, words: Sequence[str]) -> bool:
    low = name.lower()
    return any(w in low for w in words)


def _props(offer: ToolOffer) -> Mapping[str, Any]:
    props = offer.schema.get("properties") if isinstance(offer.schema, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def _key_for(offer: ToolOffer, preferred: Sequence[str], words: Sequence[str]) -> str | None:
    props = _props(offer)
    lowered = {k.lower(): k for k in props}
    for key in preferred:
        if key in lowered:
            return lowered[key]
    for key in props:
        if any(w in key.lower() for w in words):
            return key
    return None


def _path_key(offer: ToolOffer) -> str | None:
    key = _key_for(offer, PATH_KEYS, ("path", "file"))
    return None if key is not None and "content" in key.lower() else key


def _content_key(offer: ToolOffer) -> str | None:
    return _key_for(offer, CONTENT_KEYS, ("content", "text"))


def pick_write_tool(offers: Sequence[ToolOffer]) -> ToolOffer | None:
    """The best write-like tool (MODEL-TOOL-001), or None."""
    best: tuple[int, int, ToolOffer] | None = None
    for order, offer in enumerate(offers):
        # design §Live mode; real-clis.md "How the tool call is built": names with todo,
        # memory, notebook, stdin, goal, plan or agent are skipped (TodoWrite, write_stdin).
        if offer.kind != "function" or _skipped(offer.name, SKIP_WORDS):
            continue
        norm = _norm(offer.name)
        if norm in WRITE_TOOL_NAMES:
            rank = WRITE_TOOL_NAMES.index(norm)
        elif ("write" in norm or "create" in norm) and _path_key(offer) and _content_key(offer):
            rank = len(WRITE_TOOL_NAMES)
        else:
            continue
        if best is None or (rank, order) < best[:2]:
            best = (rank, order, offer)
    return best[2] if best else None


def pick_shell_tool(offers: Sequence[ToolOffer]) -> ToolOffer | None:
    """The best shell tool (``exec_command``, ``bash``, ``run_shell_command``...), or None.

    A known name wins; else a name with shell/bash/command/terminal whose schema has a
    command key. Names with a skip word or background/output/kill never count.
    """
    best: tuple[int, int, ToolOffer] | None = None
    for order, offer in enumerate(offers):
        if offer.kind != "function" or _skipped(offer.name, _SHELL_SKIP):
            continue
        norm = _norm(offer.name)
        if norm in SHELL_TOOL_NAMES:
            rank = SHELL_TOOL_NAMES.index(norm)
        elif any(w in norm for w in ("shell", "bash", "command", "terminal")) and _key_for(
            offer, COMMAND_KEYS, ("command", "cmd")
        ):
            rank = len(SHELL_TOOL_NAMES)
        else:
            continue
        if best is None or (rank, order) < best[:2]:
            best = (rank, order, offer)
    return best[2] if best else None


def pick_patch_tool(offers: Sequence[ToolOffer]) -> ToolOffer | None:
    return next((o for o in offers if _norm(o.name) in PATCH_TOOL_NAMES), None)


def find_tool(offers: Sequence[ToolOffer], name: str) -> ToolOffer | None:
    """The tool called ``name`` (exactly, else ignoring case and separators)."""
    exact = next((o for o in offers if o.name == name), None)
    if exact is not None:
        return exact
    return next((o for o in offers if _norm(o.name) == _norm(name)), None)


def find_cwd(text: str) -> str | None:
    """The working directory a request mentions (system prompt or environment context)."""
    lower = text.lower()
    for probe in _CWD_PROBES:
        match = probe.search(text, lower)
        if match:
            found = match.group(1).strip().rstrip(".,;:")
            if found:
                return found
    return None


def _wants_absolute(offer: ToolOffer, key: str) -> bool:
    sub = _props(offer).get(key)
    texts = [offer.description]
    if isinstance(sub, Mapping):
        texts.append(str(sub.get("description", "")))
    joined = " ".join(texts)
    return bool(_ABSOLUTE.search(joined)) and not _NOT_ABSOLUTE.search(joined)


def _absolute(path: str, cwd: str | None) -> str:
    if path.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", path) or not cwd:
        return path
    if re.match(r"^[A-Za-z]:\\", cwd):
        return cwd.rstrip("\\") + "\\" + path.replace("/", "\\")
    return posixpath.join(cwd, path)


def add_file_patch(path: str, content: str) -> str:
    """An apply_patch ``*** Add File`` patch creating ``path`` with ``content``."""
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "".join(f"+{line}\n" for line in lines)
    return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch"


def write_command(path: str, content: str) -> str:
    """A POSIX shell command that writes ``content`` to ``path`` (parents created)."""
    parent = posixpath.dirname(path)
    write = f"printf '%s' {shlex.quote(content)} > {shlex.quote(path)}"
    return f"mkdir -p -- {shlex.quote(parent)} && {write}" if parent else write


def fill_arguments(
    offer: ToolOffer,
    *,
    path: str | None = None,
    content: str | None = None,
    command: str | None = None,
    cwd: str | None = None,
    purpose: str = "",
    escalate: bool = True,
) -> dict[str, Any]:
    """Arguments for ``offer`` from its schema (MODEL-TOOL-003).

    ``escalate=False`` (see :func:`escalation_allowed`) never sets ``sandbox_permissions``.
    """
    props = _props(offer)
    required = [r for r in offer.schema.get("required", []) if isinstance(r, str)]
    args: dict[str, Any] = {}
    if path is not None:
        key = _path_key(offer) or "path"
        # MODEL-TOOL-004: claude's Write wants "The absolute path ... (must be absolute, not
        # relative)"; gemini's write_file too. Anything else keeps the scenario's path.
        args[key] = _absolute(path, cwd) if _wants_absolute(offer, key) else path
    if content is not None:
        args[_content_key(offer) or "content"] = content
    if command is not None:
        key = _key_for(offer, COMMAND_KEYS, ("command", "cmd")) or "command"
        sub = props.get(key)
        wants_list = isinstance(sub, Mapping) and sub.get("type") == "array"
        args[key] = ["bash", "-lc", command] if wants_list else command
    sandbox = props.get("sandbox_permissions")
    if escalate and isinstance(sandbox, Mapping) and _offers(sandbox, "require_escalated"):
        # real-clis.md (codex-acp): without bubblewrap the sandbox fails, so the model must
        # ask sandbox_permissions "require_escalated"; codex pairs it with a justification.
        args["sandbox_permissions"] = "require_escalated"
        if "justification" in props:
            args["justification"] = purpose or "The scenario runs this step."
    for key in required:
        if key in args:
            continue
        sub = props.get(key, {})
        if key.lower() in _PROSE_KEYS and _is_string(sub):
            args[key] = purpose or "Scenario step"
        else:
            args[key] = structured_value(sub)[0]
    return args


def escalation_allowed(system_text: str) -> bool:
    """False when the request says escalated sandbox permissions would be rejected."""
    lower = system_text.lower()
    return not any(probe.search(system_text, lower) for probe in _NO_ESCALATION)


def _offers(schema: Mapping[str, Any], value: str) -> bool:
    if value in (schema.get("enum") or ()):
        return True
    for key in ("anyOf", "oneOf"):
        for option in schema.get(key) or ():
            if isinstance(option, Mapping) and (
                option.get("const") == value or value in (option.get("enum") or ())
            ):
                return True
    return schema.get("type") == "string" and value in str(schema.get("description", ""))


def _is_string(schema: Any) -> bool:
    return (
        isinstance(schema, Mapping)
        and schema.get("type") in ("string", None)
        and ("enum" not in schema)
    )


def call_for_step(
    step_tool: str,
    data: Mapping[str, Any],
    offers: Sequence[ToolOffer],
    *,
    call_id: str,
    cwd: str | None,
    escalate: bool = True,
) -> ToolCall | None:
    """The tool call for one scenario tool step, or None when no offered tool fits."""
    if step_tool == "write":
        return _write_call(data, offers, call_id=call_id, cwd=cwd, escalate=escalate)
    if step_tool == "shell":
        shell = pick_shell_tool(offers)
        if shell is None:
            return None
        command = str(data.get("command", ""))
        args = fill_arguments(
            shell, command=command, cwd=cwd, purpose=f"Run {command}", escalate=escalate
        )
        return ToolCall(call_id, shell.name, "function", args)
    name = str(data.get("name", ""))
    offer = find_tool(offers, name) if name else None
    if offer is None:
        return None
    raw = data.get("input")
    given = dict(raw) if isinstance(raw, Mapping) else {}
    if offer.kind == "custom":
        return ToolCall(call_id, offer.name, "custom", input=json.dumps(given))
    return ToolCall(call_id, offer.name, "function", given)


def _write_call(
    data: Mapping[str, Any],
    offers: Sequence[ToolOffer],
    *,
    call_id: str,
    cwd: str | None,
    escalate: bool,
) -> ToolCall | None:
    path = str(data.get("path", "hello.html"))
    content = str(data.get("content", ""))
    purpose = f"Write {path}"
    writer = pick_write_tool(offers)
    if writer is not None:
        args = fill_arguments(
            writer, path=path, content=content, cwd=cwd, purpose=purpose, escalate=escalate
        )
        return ToolCall(call_id, writer.name, "function", args)
    patcher = pick_patch_tool(offers)
    if patcher is not None:  # MODEL-TOOL-002, real-clis.md: codex -m gpt-5.5 has no write tool
        # codex's apply_patch: relative paths ("File references can only be relative").
        patch = add_file_patch(path, content)
        if patcher.kind == "custom":
            return ToolCall(call_id, patcher.name, "custom", input=patch)
        key = _key_for(patcher, ("input", "patch"), ("patch", "input")) or "input"
        args = fill_arguments(patcher, cwd=cwd, purpose=purpose, escalate=escalate)
        args[key] = patch
        return ToolCall(call_id, patcher.name, "function", args)
    shell = pick_shell_tool(offers)
    if shell is not None:
        command = write_command(path, content)
        args = fill_arguments(shell, command=command, cwd=cwd, purpose=purpose, escalate=escalate)
        return ToolCall(call_id, shell.name, "function", args)
    return None
