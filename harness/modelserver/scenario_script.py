"""Turn a fake_clis scenario and one request into a reply plan (stateless).

Design: docs/design/modelserver.md#harness.modelserver.scenario_script
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from fake_clis.scenario import Scenario, Step
from harness.modelserver.errors import ApiErrorSpec
from harness.modelserver.structured import structured_value
from harness.modelserver.tools import (
    Probe,
    ToolCall,
    ToolOffer,
    call_for_step,
    escalation_allowed,
    find_cwd,
    find_tool,
)

__all__ = [
    "CLI_SIDE_STEPS",
    "SIDE_REQUESTS",
    "Conversation",
    "ErrorBlock",
    "HangBlock",
    "Message",
    "Pause",
    "ReplyPlan",
    "SideRequest",
    "TextBlock",
    "ThinkingBlock",
    "ToolBlock",
    "Usage",
    "classify_side_request",
    "conversation_position",
    "plan_reply",
]

#: Scenario steps that describe the CLI process, not the model: the server skips them.
CLI_SIDE_STEPS = frozenset(
    {"stderr", "noise", "malformed", "foreign", "oversize", "spawn_tree", "crash"}
)

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


# -- the request, provider-neutral ---------------------------------------------------------
@dataclass(frozen=True)
class Message:
    """One entry of a request's conversation, as far as the script needs it."""

    #: The role as the wire names it (``user``, ``assistant``, ``system``, ``tool``,
    #: ``model``, ``developer``) or, for a Responses item that is not a message, its type.
    role: str
    text: str = ""
    #: The entry carries tool results (an Anthropic user message with tool_result
    #: blocks, a ``tool`` message, a ``function_call_output`` item, a functionResponse).
    tool_result: bool = False
    #: The entry carries tool calls.
    tool_call: bool = False


_SKIPPED_ROLES = frozenset({"system", "developer"})


@dataclass(frozen=True)
class Conversation:
    """Everything the script reads from one request (built by each provider module)."""

    api: str
    model: str
    stream: bool
    messages: tuple[Message, ...] = ()
    tools: tuple[ToolOffer, ...] = ()
    system_text: str = ""
    #: The JSON schema of a structured-output request, and where it was found.
    structured_schema: Mapping[str, Any] | None = None
    structured_source: str = ""
    #: A tool the request forces (``tool_choice``); its arguments come from its schema.
    forced_tool: str | None = None
    #: Chat Completions ``stream_options.include_usage``.
    include_usage: bool = False

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(m.role for m in self.messages)

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)

    @property
    def structured(self) -> bool:
        return self.structured_schema is not None or self.forced_tool is not None

    @cached_property
    def position(self) -> tuple[int, str]:
        """``(tool results, last user text)`` since the last real user turn."""
        return conversation_position(self.messages)

    @cached_property
    def system_lower(self) -> str:
        return self.system_text.lower()

    @cached_property
    def cwd(self) -> str | None:
        """The working directory the request mentions (system text first, then messages)."""
        found = find_cwd(self.system_text)
        if found:
            return found
        for message in self.messages:
            if message.role not in ("assistant", "model") and message.text:
                found = find_cwd(message.text)
                if found:
                    return found
        return None


def _is_real_user_turn(message: Message) -> bool:
    if message.role != "user" or message.tool_result:
        return False
    return bool(_REMINDER.sub("", message.text).strip()) or not message.text


def conversation_position(messages: Sequence[Message]) -> tuple[int, str]:
    """``(tool_results, last_user_text)`` since the last real user turn (MODEL-SCRIPT-002).

    ``system``/``developer`` entries (claude puts ``role: "system"`` entries inside
    ``messages``; aider appends system reminders) are skipped; consecutive tool
    results count once.
    """
    results = 0
    in_group = False
    for message in reversed(messages):
        # design §Live mode (MODEL-SCRIPT-002); real-clis.md: "claude sends role:"system"
        # entries inside messages", "aider appends system reminders": never a user turn.
        if message.role in _SKIPPED_ROLES:
            continue
        if message.tool_result:
            if not in_group:
                results += 1
            in_group = True
            continue
        in_group = False
        if _is_real_user_turn(message):
            return results, message.text
    return results, ""


# -- the plan --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Pause:
    """Wait ``ms`` milliseconds before the next byte (a ``sleep`` step, ``stall_ms``)."""

    ms: int


Piece = str | Pause


@dataclass(frozen=True)
class ThinkingBlock:
    pieces: tuple[Piece, ...]

    @property
    def text(self) -> str:
        return "".join(p for p in self.pieces if isinstance(p, str))


@dataclass(frozen=True)
class TextBlock:
    pieces: tuple[Piece, ...]

    @property
    def text(self) -> str:
        return "".join(p for p in self.pieces if isinstance(p, str))


@dataclass(frozen=True)
class ToolBlock:
    call: ToolCall


@dataclass(frozen=True)
class ErrorBlock:
    spec: ApiErrorSpec


@dataclass(frozen=True)
class HangBlock:
    """Stop sending; hold the stream open until the client leaves or the server stops."""


Block = ThinkingBlock | TextBlock | ToolBlock | ErrorBlock | HangBlock | Pause


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    thought_tokens: int = 0

    @classmethod
    def from_step(cls, step: Step) -> Usage:
        def n(key: str) -> int:
            value = step.get(key, 0)
            return int(value) if isinstance(value, int) else 0

        return cls(
            n("input_tokens"),
            n("output_tokens"),
            n("cached_read_tokens"),
            n("cached_write_tokens"),
            n("thought_tokens"),
        )


@dataclass(frozen=True)
class ReplyPlan:
    """What one reply says, provider-neutral; each provider module renders it."""

    #: ``text``, ``tool_call``, ``error``, ``structured``, ``side:<name>``.
    kind: str
    blocks: tuple[Block, ...] = ()
    usage: Usage = field(default_factory=Usage)
    #: Anthropic vocabulary: ``end_turn``, ``tool_use``, ``max_tokens``, ...
    stop_reason: str = "end_turn"
    #: Wait before anything is sent (the scenario's ``stall_ms``, first segment only).
    stall_ms: int = 0
    #: Which scenario segment this is (None for structured and side replies).
    segment: int | None = None
    #: For structured replies: whether the JSON validates against the request's schema.
    structured_valid: bool | None = None

    @property
    def leading_error(self) -> ApiErrorSpec | None:
        """The error when the reply fails before any content (an HTTP error status)."""
        for block in self.blocks:
            if isinstance(block, Pause):
                continue
            return block.spec if isinstance(block, ErrorBlock) else None
        return None

    @property
    def text(self) -> str:
        return "".join(b.text for b in self.blocks if isinstance(b, TextBlock))

    @property
    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(b.call for b in self.blocks if isinstance(b, ToolBlock))


# -- side requests ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SideRequest:
    """A request a CLI makes beside the conversation (MODEL-SCRIPT-005)."""

    name: str
    #: Searched in the system text and the last user turn.
    probe: Probe
    #: Only when the request offers no tools (a title call never offers any).
    without_tools: bool = False
    #: The reply; ``{title}`` becomes a title made from the scenario's name.
    reply: str = ""


#: real-clis.md: opencode and vibe make a title request (no tools) on a session's first
#: turn; qwen makes memory-extraction and "SUGGESTION MODE" requests on every turn.
SIDE_REQUESTS: tuple[SideRequest, ...] = (
    SideRequest(
        "suggestion", Probe(re.compile(r"SUGGESTION MODE"), "suggestion mode"), reply="Thanks!"
    ),
    SideRequest(
        "memory",
        Probe(
            re.compile(r"(?i)\bmemory\s+extraction\b|\bextract\w*\b[^.\n]{0,80}\bmemor(?:y|ies)\b"),
            "memor",
            before=120,
        ),
        reply="No new memories.",
    ),
    SideRequest(
        "title",
        Probe(
            re.compile(
                r"(?i)\btitle\s+generator\b|\b(?:generate|create|write|produce|suggest)\b"
                r"[^.\n]{0,60}\btitles?\b"
            ),
            "title",
            before=100,
        ),
        without_tools=True,
        reply="{title}",
    ),
)


def classify_side_request(conv: Conversation) -> SideRequest | None:
    _, last_user = conv.position
    for side in SIDE_REQUESTS:
        if side.without_tools and conv.tools:
            continue
        if side.probe.search(conv.system_text, conv.system_lower) or side.probe.search(last_user):
            return side
    return None


def _title(scenario: Scenario) -> str:
    words = scenario.name.replace("_", " ").replace("-", " ").strip()
    return f"{words[:1].upper()}{words[1:]} scenario" if words else "Scripted session"


# -- planning ----------------------------------------------------------------------------------
def plan_reply(scenario: Scenario, conv: Conversation) -> ReplyPlan:
    """The reply to ``conv`` under ``scenario`` (see the module docstring)."""
    # design §Live mode (MODEL-STRUCT-001, MODEL-SCRIPT-005): JSON-schema and side
    # requests get replies of their own and never play (or skip) a scenario step.
    if conv.forced_tool is not None:
        offer = find_tool(conv.tools, conv.forced_tool)
        if offer is not None:
            return _forced_tool_plan(offer)
    if conv.structured_schema is not None:
        text, valid = _structured_text(conv.structured_schema)
        return ReplyPlan("structured", (TextBlock((text,)),), structured_valid=valid)
    side = classify_side_request(conv)
    if side is not None:
        reply = side.reply.replace("{title}", _title(scenario))
        return ReplyPlan(f"side:{side.name}", (TextBlock((reply,)),))
    # design §Live mode (MODEL-SCRIPT-001): stateless; k tool results since the last real
    # user turn -> segment k, clamped to the last one (no tool in it, so no loop).
    segments = _segments(scenario, conv)
    tool_results, _ = conv.position
    index = min(tool_results, len(segments) - 1)
    seg = segments[index]
    blocks = tuple(seg.blocks)
    stop = scenario.stop_reason
    kind = "text"
    content = [b for b in blocks if not isinstance(b, Pause)]
    if content and isinstance(content[0], ErrorBlock):
        kind = "error"
    elif content and isinstance(content[-1], ToolBlock):
        kind, stop = "tool_call", "tool_use"
    return ReplyPlan(
        kind,
        blocks,
        seg.usage or Usage(),
        stop,
        stall_ms=scenario.stall_ms if index == 0 else 0,
        segment=index,
    )


def _structured_text(schema: Mapping[str, Any]) -> tuple[str, bool]:
    value, valid = structured_value(schema)
    return json.dumps(value, ensure_ascii=False), valid


def _forced_tool_plan(offer: ToolOffer) -> ReplyPlan:
    value, valid = structured_value(offer.schema or {"type": "object"})
    args = value if isinstance(value, dict) else {"value": value}
    if offer.kind == "custom":
        call = ToolCall("call_structured_1", offer.name, "custom", input=json.dumps(value))
    else:
        call = ToolCall("call_structured_1", offer.name, "function", args)
    return ReplyPlan(
        "structured", (ToolBlock(call),), stop_reason="tool_use", structured_valid=valid
    )


@dataclass
class _Segment:
    blocks: list[Block] = field(default_factory=list)
    usage: Usage | None = None


def _segments(scenario: Scenario, conv: Conversation) -> list[_Segment]:
    segments = [_Segment()]
    for number, step in enumerate(scenario.steps, start=1):
        seg = segments[-1]
        kind = step.kind
        if kind in CLI_SIDE_STEPS:  # MODEL-SCRIPT-006: the CLI's process, not the model
            continue
        if kind in ("text", "thinking"):
            _add_text(seg, step.chunks, thinking=kind == "thinking")
        elif kind == "sleep":
            ms = step.get("ms", 0)
            _add_pause(seg, int(ms) if isinstance(ms, int) else 0)
        elif kind == "usage":  # MODEL-SCRIPT-004: on the reply of its own segment only
            seg.usage = Usage.from_step(step)
        elif kind == "tool":
            call_id = str(step.get("id") or f"call_{number}")
            call = call_for_step(
                str(step.get("tool")),
                step.data,
                conv.tools,
                call_id=call_id,
                cwd=conv.cwd,
                escalate=escalation_allowed(conv.system_text),
            )
            if call is None:  # MODEL-TOOL-002: no offered tool fits; text, no cut
                _add_text(seg, [_tool_as_text(step, conv)], thinking=False)
                continue
            seg.blocks.append(ToolBlock(call))
            segments.append(_Segment())
        elif kind == "api_error":  # MODEL-ERR-001: the API's own error; the scenario ends
            status = step.get("status", 500)
            spec = ApiErrorSpec(
                message=str(step.get("message", "error")),
                code=step.get("code"),
                status=status if isinstance(status, int) else 500,
            )
            seg.blocks.append(ErrorBlock(spec))
            break
        elif kind == "hang":
            seg.blocks.append(HangBlock())
            break
    return segments


def _add_text(seg: _Segment, chunks: Sequence[str], *, thinking: bool) -> None:
    if not chunks:
        return
    pieces = tuple(chunks)
    last = seg.blocks[-1] if seg.blocks else None
    before_pause = seg.blocks[-2] if len(seg.blocks) >= 2 else None
    cls = ThinkingBlock if thinking else TextBlock
    if isinstance(last, cls):
        seg.blocks[-1] = cls(last.pieces + pieces)
    elif isinstance(last, Pause) and isinstance(before_pause, cls):
        # text, sleep, text: one block that pauses between its deltas (the slow scenario)
        seg.blocks[-2:] = [cls((*before_pause.pieces, last, *pieces))]
    else:
        seg.blocks.append(cls(pieces))


def _add_pause(seg: _Segment, ms: int) -> None:
    if ms > 0:
        seg.blocks.append(Pause(ms))


def _tool_as_text(step: Step, conv: Conversation) -> str:
    """A tool step no offered tool fits, as the text a tool-less CLI understands.

    real-clis.md: aider has no tools; its edits are parsed from text, so a write
    becomes a file listing ("whole" format) or, when the system prompt asks for them,
    a SEARCH/REPLACE block.
    """
    tool = step.get("tool")
    if tool == "write":
        path = str(step.get("path", "hello.html"))
        content = str(step.get("content", ""))
        if not content.endswith("\n"):
            content += "\n"
        if "SEARCH/REPLACE" in conv.system_text:
            return f"\n{path}\n```\n<<<<<<< SEARCH\n=======\n{content}>>>>>>> REPLACE\n```\n"
        return f"\n{path}\n```\n{content}```\n"
    if tool == "shell":
        return f"\n```bash\n{step.get('command', '')}\n```\n"
    return f"\n{step.get('name', 'tool')}: {json.dumps(step.get('input', {}))}\n"
