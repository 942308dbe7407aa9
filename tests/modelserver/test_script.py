"""The stateless reply decision, without a server (MODEL-SCRIPT-*).

Conversations are built directly as :class:`Conversation` values so each rule of
``scenario_script`` is pinned on its own; the HTTP tests check the same rules through
each API.
"""

from __future__ import annotations

import pytest

from harness.modelserver.scenario_script import (
    Conversation,
    ErrorBlock,
    HangBlock,
    Message,
    Pause,
    TextBlock,
    ThinkingBlock,
    ToolBlock,
    conversation_position,
    plan_reply,
)
from harness.modelserver.tools import ToolOffer
from tests.modelserver.support import scenario_of

BASH = ToolOffer(
    "bash",
    "Run a command",
    {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)
WRITE = ToolOffer(
    "write",
    "Write a file",
    {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
)

USER = Message("user", "do it")
CALL = Message("assistant", tool_call=True)
RESULT = Message("tool", "ok", tool_result=True)


def conv(*messages: Message, tools: tuple[ToolOffer, ...] = (BASH, WRITE)) -> Conversation:
    return Conversation(api="openai-chat", model="m", stream=True, messages=messages, tools=tools)


TWO_TOOLS = scenario_of(
    "two",
    [
        {"kind": "thinking", "text": "plan"},
        {"kind": "text", "text": "first"},
        {"kind": "tool", "tool": "shell", "id": "t1", "command": "ls"},
        {"kind": "text", "text": "second"},
        {"kind": "tool", "tool": "write", "id": "t2", "path": "a.txt", "content": "A"},
        {"kind": "text", "text": "done"},
        {"kind": "usage", "input_tokens": 7, "output_tokens": 3},
    ],
)


@pytest.mark.rule("MODEL-SCRIPT-001", "MODEL-SCRIPT-004")
@pytest.mark.parametrize(
    ("messages", "segment", "texts", "tool"),
    [
        ((USER,), 0, ["first"], "bash"),
        ((USER, CALL, RESULT), 1, ["second"], "write"),
        ((USER, CALL, RESULT, CALL, RESULT), 2, ["done"], None),
        # more results than tool steps: the last segment (no tool), never a loop
        ((USER, CALL, RESULT, CALL, RESULT, CALL, RESULT), 2, ["done"], None),
        # a new user turn starts over
        ((USER, CALL, RESULT, CALL, RESULT, USER), 0, ["first"], "bash"),
    ],
)
def test_segment_follows_the_tool_results_since_the_last_user_turn(
    messages: tuple[Message, ...], segment: int, texts: list[str], tool: str | None
) -> None:
    plan = plan_reply(TWO_TOOLS, conv(*messages))
    assert plan.segment == segment
    assert [b.text for b in plan.blocks if isinstance(b, TextBlock)] == texts
    calls = [c.name for c in plan.tool_calls]
    assert calls == ([tool] if tool else [])
    assert plan.kind == ("tool_call" if tool else "text")
    assert plan.stop_reason == ("tool_use" if tool else "end_turn")
    assert (plan.usage.input_tokens, plan.usage.output_tokens) == (
        (7, 3) if segment == 2 else (0, 0)
    )


@pytest.mark.rule("MODEL-SCRIPT-003")
def test_thinking_and_text_keep_scenario_order_and_chunks() -> None:
    scenario = scenario_of(
        "order",
        [
            {"kind": "thinking", "text": "ab", "chunks": ["a", "b"]},
            {"kind": "text", "text": "xyz", "chunks": ["x", "y", "z"]},
            {"kind": "text", "text": "!"},
        ],
    )
    plan = plan_reply(scenario, conv(USER))
    assert plan.blocks == (ThinkingBlock(("a", "b")), TextBlock(("x", "y", "z", "!")))


@pytest.mark.rule("MODEL-SCRIPT-002")
def test_position_skips_system_and_developer_entries_and_groups_results() -> None:
    system = Message("system", "reminder")
    developer = Message("developer", "rules")
    reminder = Message("user", "<system-reminder>x</system-reminder>")
    assert conversation_position([USER]) == (0, "do it")
    assert conversation_position([USER, system]) == (0, "do it")
    assert conversation_position([developer, USER, CALL, RESULT, system]) == (1, "do it")
    assert conversation_position([USER, CALL, RESULT, reminder]) == (1, "do it")
    # two tool results of one call (consecutive) count once
    assert conversation_position([USER, CALL, RESULT, RESULT]) == (1, "do it")
    assert conversation_position([USER, CALL, RESULT, system, RESULT]) == (1, "do it")
    assert conversation_position([]) == (0, "")


@pytest.mark.rule("MODEL-TOOL-002", "MODEL-SCRIPT-001")
def test_a_tool_step_no_offered_tool_fits_becomes_text_and_does_not_cut() -> None:
    plan = plan_reply(TWO_TOOLS, conv(USER, tools=(WRITE,)))  # no shell tool offered
    assert plan.segment == 0
    text = plan.text
    assert text.startswith("first\n```bash\nls\n```\nsecond")
    assert [c.name for c in plan.tool_calls] == ["write"]
    none = plan_reply(TWO_TOOLS, conv(USER, tools=()))
    assert none.tool_calls == () and none.kind == "text"
    assert none.text.endswith("done")
    assert (none.usage.input_tokens, none.usage.output_tokens) == (7, 3)


@pytest.mark.rule("MODEL-ERR-001", "MODEL-SCRIPT-006")
def test_api_error_and_hang_end_the_scenario() -> None:
    failing = scenario_of(
        "f",
        [
            {"kind": "api_error", "message": "quota", "code": "rate_limit_error", "status": 429},
            {"kind": "text", "text": "never"},
        ],
    )
    plan = plan_reply(failing, conv(USER))
    assert plan.kind == "error"
    assert plan.leading_error is not None
    assert (plan.leading_error.status, plan.leading_error.code) == (429, "rate_limit_error")
    assert plan.text == ""
    late = plan_reply(
        scenario_of("l", [{"kind": "text", "text": "hi"}, {"kind": "api_error", "message": "x"}]),
        conv(USER),
    )
    assert late.leading_error is None and isinstance(late.blocks[-1], ErrorBlock)
    assert late.blocks[-1].spec.status == 500
    hang = plan_reply(
        scenario_of(
            "h",
            [{"kind": "text", "text": "hi"}, {"kind": "hang"}, {"kind": "text", "text": "never"}],
        ),
        conv(USER),
    )
    assert isinstance(hang.blocks[-1], HangBlock) and hang.text == "hi"


@pytest.mark.rule("MODEL-SCRIPT-006")
def test_sleep_between_text_pauses_inside_one_block_and_stall_is_first_segment_only() -> None:
    scenario = scenario_of(
        "s",
        [
            {"kind": "sleep", "ms": 5},
            {"kind": "text", "text": "a"},
            {"kind": "sleep", "ms": 10},
            {"kind": "text", "text": "b"},
            {"kind": "tool", "tool": "shell", "id": "x", "command": "ls"},
            {"kind": "text", "text": "c"},
        ],
        stall_ms=40,
    )
    first = plan_reply(scenario, conv(USER))
    assert first.blocks[0] == Pause(5)
    assert first.blocks[1] == TextBlock(("a", Pause(10), "b"))
    assert isinstance(first.blocks[2], ToolBlock)
    assert first.stall_ms == 40
    assert plan_reply(scenario, conv(USER, CALL, RESULT)).stall_ms == 0


@pytest.mark.rule("MODEL-SCRIPT-005", "MODEL-STRUCT-001")
def test_structured_and_side_requests_do_not_play_the_scenario() -> None:
    structured = Conversation(
        api="x",
        model="m",
        stream=False,
        messages=(USER,),
        tools=(BASH, WRITE),
        structured_schema={
            "type": "object",
            "properties": {"ok": {"type": "boolean"}},
            "required": ["ok"],
        },
    )
    plan = plan_reply(TWO_TOOLS, structured)
    assert plan.kind == "structured" and plan.text == '{"ok": true}'
    assert plan.structured_valid is True and plan.segment is None
    title = Conversation(
        api="x",
        model="m",
        stream=True,
        messages=(Message("system", ""), USER),
        system_text="Generate a short title for this conversation.",
    )
    assert plan_reply(TWO_TOOLS, title).text == "Two scenario"
    # the same system text with tools offered is the main conversation
    assert (
        plan_reply(
            TWO_TOOLS,
            Conversation(
                api="x",
                model="m",
                stream=True,
                messages=(USER,),
                tools=(BASH,),
                system_text="Generate a short title for this conversation.",
            ),
        ).kind
        == "tool_call"
    )
    # a forced tool the request does not offer falls back to the scenario
    unknown = Conversation(
        api="x", model="m", stream=True, messages=(USER,), tools=(BASH,), forced_tool="Missing"
    )
    assert plan_reply(TWO_TOOLS, unknown).kind == "tool_call"
