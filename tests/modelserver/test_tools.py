"""Tool choice and arguments from the request's own schemas (MODEL-TOOL-*).

Tool names and schemas are the ones real-clis.md lists per CLI (claude Write/Bash,
codex exec_command/write_stdin/apply_patch, gemini write_file/run_shell_command,
copilot create, kimi WriteFile, claude-code-acp mcp__acp__Write, opencode
write/bash/todowrite); a hypothesis property checks that filled arguments validate
against arbitrary tool schemas.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.modelserver.tools import (
    ToolOffer,
    add_file_patch,
    call_for_step,
    escalation_allowed,
    fill_arguments,
    find_cwd,
    pick_shell_tool,
    pick_write_tool,
    write_command,
)

OBJ: dict[str, Any] = {"type": "object", "properties": {}}
PATH_CONTENT = {
    "type": "object",
    "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
    "required": ["path", "content"],
}


def offers(*names: str, schema: dict[str, Any] | None = None) -> list[ToolOffer]:
    return [ToolOffer(n, "", schema if schema is not None else OBJ) for n in names]


@pytest.mark.rule("MODEL-TOOL-001")
@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["Agent", "Bash", "Edit", "Read", "TodoWrite", "Write"], "Write"),
        (["bash", "edit", "todowrite", "write"], "write"),
        (["list_directory", "write_file", "run_shell_command", "save_memory"], "write_file"),
        (["view", "create", "edit", "bash"], "create"),
        (["ReadFile", "WriteFile", "Shell", "SetTodoList"], "WriteFile"),
        (["mcp__acp__Read", "mcp__acp__Edit", "mcp__acp__Write"], "mcp__acp__Write"),
        (["create", "Write"], "Write"),  # write beats create
        (["exec_command", "write_stdin", "update_plan", "create_goal"], None),
        (["TodoWrite", "NotebookEdit", "write_memory", "agent_write", "write_plan"], None),
    ],
)
def test_the_best_write_like_tool_is_picked(names: list[str], expected: str | None) -> None:
    picked = pick_write_tool(offers(*names))
    assert (picked.name if picked else None) == expected


@pytest.mark.rule("MODEL-TOOL-001")
def test_a_write_named_tool_needs_path_and_content_keys_when_not_a_known_name() -> None:
    assert pick_write_tool(offers("fs_write_text", schema=PATH_CONTENT)) is not None
    assert pick_write_tool(offers("fs_write_text")) is None  # no path/content keys
    assert pick_write_tool(offers("create_directory")) is None
    custom = [ToolOffer("write", "", {}, kind="custom")]
    assert pick_write_tool(custom) is None  # only function tools take JSON arguments
    # skip words hold even when the schema looks like a file write
    skipped = offers(
        "todo_write_file",
        "write_memory",
        "NotebookWrite",
        "write_stdin",
        "write_goal",
        "write_plan",
        "agent_create_file",
        schema=PATH_CONTENT,
    )
    assert pick_write_tool(skipped) is None


@pytest.mark.rule("MODEL-TOOL-005")
@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["exec_command", "write_stdin"], "exec_command"),
        (["Agent", "Bash", "Write"], "Bash"),
        (
            ["run_shell_command", "list_background_processes", "read_background_output"],
            "run_shell_command",
        ),
        (["Shell", "WriteFile"], "Shell"),
        (["shell"], "shell"),
        (["write_stdin", "kill_shell"], None),
        (["run_bash_script", "read"], "run_bash_script"),
        (["kill_shell", "list_background_commands", "read_shell_output", "write_stdin"], None),
        (["run_bash_script", "Bash"], "Bash"),  # a known name first
    ],
)
def test_the_shell_tool_is_picked(names: list[str], expected: str | None) -> None:
    command = {"type": "object", "properties": {"command": {"type": "string"}}}
    picked = pick_shell_tool(offers(*names, schema=command))
    assert (picked.name if picked else None) == expected
    # a name that only sounds like a shell needs a command key
    assert pick_shell_tool(offers("run_bash_script")) is None


CLAUDE_WRITE_SCHEMA = {
    "type": "object",
    "properties": {
        "file_path": {
            "type": "string",
            "description": "The absolute path to the file to write (must be absolute, "
            "not relative)",
        },
        "content": {"type": "string"},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}
KIMI_WRITE_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "content": {"type": "string"},
        "mode": {"type": "string", "enum": ["overwrite", "append"]},
    },
    "required": ["path", "content", "mode"],
}
COPILOT_CREATE_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Full path to file to create."},
        "file_text": {"type": "string"},
    },
    "required": ["path", "file_text"],
}
CODEX_SHELL_ARRAY = {
    "type": "object",
    "properties": {
        "command": {"type": "array", "items": {"type": "string"}},
        "workdir": {"type": "string"},
        "timeout_ms": {"type": "number"},
    },
    "required": ["command"],
    "additionalProperties": False,
}


@pytest.mark.rule("MODEL-TOOL-003", "MODEL-TOOL-004")
@pytest.mark.parametrize(
    ("schema", "description", "expected"),
    [
        (
            CLAUDE_WRITE_SCHEMA,
            "Writes a file.",
            {"file_path": "/w/p/hello.html", "content": "hi\n"},
        ),
        (
            KIMI_WRITE_SCHEMA,
            "Write a file.",
            {"path": "hello.html", "content": "hi\n", "mode": "overwrite"},
        ),
        (COPILOT_CREATE_SCHEMA, "Create a file.", {"path": "hello.html", "file_text": "hi\n"}),
        (PATH_CONTENT, "Paths must be absolute.", {"path": "/w/p/hello.html", "content": "hi\n"}),
        (
            PATH_CONTENT,
            "File references must be relative, NEVER ABSOLUTE.",
            {"path": "hello.html", "content": "hi\n"},
        ),
        (
            {
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "Path to the file to write (relative or absolute)",
                    },
                    "content": {"type": "string"},
                },
                "required": ["path", "content"],
            },
            "Write content to a file.",
            {"path": "hello.html", "content": "hi\n"},
        ),
    ],
    ids=["claude", "kimi-enum", "copilot", "tool-description", "never-absolute", "pi-either"],
)
def test_write_arguments_come_from_the_schema(
    schema: dict[str, Any], description: str, expected: dict[str, Any]
) -> None:
    offer = ToolOffer("write", description, schema)
    args = fill_arguments(offer, path="hello.html", content="hi\n", cwd="/w/p")
    assert args == expected
    jsonschema.validate(args, schema)
    # no cwd known: the path stays as the scenario wrote it
    assert next(iter(fill_arguments(offer, path="hello.html", content="x").values())) == (
        "hello.html"
    )


@pytest.mark.rule("MODEL-TOOL-003", "MODEL-TOOL-005")
def test_shell_arguments_take_the_schemas_command_shape() -> None:
    array = fill_arguments(ToolOffer("shell", "", CODEX_SHELL_ARRAY), command="echo hi")
    assert array == {"command": ["bash", "-lc", "echo hi"]}
    jsonschema.validate(array, CODEX_SHELL_ARRAY)
    call = call_for_step(
        "shell",
        {"command": "echo hi"},
        [ToolOffer("Bash", "", {"type": "object", "properties": {"command": {"type": "string"}}})],
        call_id="c",
        cwd=None,
    )
    assert call is not None and call.arguments == {"command": "echo hi"}
    assert call_for_step("shell", {"command": "x"}, offers("write"), call_id="c", cwd=None) is None


@pytest.mark.rule("MODEL-TOOL-003")
def test_escalation_is_taken_when_offered_and_not_forbidden() -> None:
    schema = {
        "type": "object",
        "properties": {
            "cmd": {"type": "string"},
            "justification": {"type": "string"},
            "sandbox_permissions": {"type": "string", "enum": ["use_default", "require_escalated"]},
        },
        "required": ["cmd"],
    }
    offer = ToolOffer("exec_command", "", schema)
    args = fill_arguments(offer, command="ls", purpose="List files")
    assert args == {
        "cmd": "ls",
        "sandbox_permissions": "require_escalated",
        "justification": "List files",
    }
    assert fill_arguments(offer, command="ls", escalate=False) == {"cmd": "ls"}
    assert not escalation_allowed(
        "Approval policy is currently never. Do not provide the `sandbox_permissions` for any "
        "reason, commands will be rejected."
    )
    assert escalation_allowed("Approval policy is currently on-request.")


@pytest.mark.rule("MODEL-TOOL-002")
def test_write_falls_back_to_apply_patch_then_shell() -> None:
    step = {"path": "web/hello.html", "content": "<h1>Hi</h1>\n"}
    patch = ToolOffer("apply_patch", "FREEFORM", {}, kind="custom")
    shell = ToolOffer(
        "exec_command", "", {"type": "object", "properties": {"cmd": {"type": "string"}}}
    )
    call = call_for_step("write", step, [shell, patch], call_id="w", cwd="/p")
    assert call is not None and (call.kind, call.name) == ("custom", "apply_patch")
    assert call.input == (
        "*** Begin Patch\n*** Add File: web/hello.html\n+<h1>Hi</h1>\n*** End Patch"
    )
    assert call.payload == call.input
    call = call_for_step("write", step, [shell], call_id="w", cwd="/p")
    assert call is not None and call.name == "exec_command"
    assert call.arguments["cmd"] == write_command("web/hello.html", "<h1>Hi</h1>\n")
    assert call_for_step("write", step, offers("read", "grep"), call_id="w", cwd=None) is None


@pytest.mark.rule("MODEL-TOOL-002")
@given(
    path=st.lists(st.text(alphabet="abc-_. 'x\"$", min_size=1, max_size=6), min_size=1, max_size=3)
    .map("/".join)
    .filter(lambda p: all(s not in (".", "..") for s in p.split("/"))),
    content=st.text(
        alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"),
        max_size=60,
    ),
)
@settings(max_examples=25)
def test_the_shell_write_command_writes_exactly_the_content(
    path: str, content: str, tmp_path_factory: Any
) -> None:
    root: Path = tmp_path_factory.mktemp("w")
    subprocess.run(["sh", "-c", write_command(path, content)], cwd=root, check=True, timeout=10)
    assert (root / path).read_bytes() == content.encode()


@pytest.mark.rule("MODEL-TOOL-002")
def test_add_file_patch_shape() -> None:
    assert add_file_patch("a.txt", "x\ny\n") == (
        "*** Begin Patch\n*** Add File: a.txt\n+x\n+y\n*** End Patch"
    )
    assert add_file_patch("a.txt", "x") == "*** Begin Patch\n*** Add File: a.txt\n+x\n*** End Patch"
    assert add_file_patch("e.txt", "") == "*** Begin Patch\n*** Add File: e.txt\n*** End Patch"


@pytest.mark.rule("MODEL-TOOL-004")
@pytest.mark.parametrize(
    ("text", "cwd"),
    [
        ("<environment_context>\n  <cwd>/tmp/x/proj</cwd>\n</environment_context>", "/tmp/x/proj"),
        (
            "Here is useful information:\nWorking directory: /home/u/p\nIs a git repo: no",
            "/home/u/p",
        ),
        (" - Primary working directory: /srv/app\n", "/srv/app"),
        ("I'm currently working in the directory: /data/w\nHere is the folder", "/data/w"),
        ("The current working directory is `/opt/q`.", "/opt/q"),
        ("cwd: /var/tmp/z", "/var/tmp/z"),
        ("Working directory: C:\\Users\\me\\proj", "C:\\Users\\me\\proj"),
        ("Nothing about directories here.", None),
    ],
)
def test_the_cwd_is_found_where_each_cli_states_it(text: str, cwd: str | None) -> None:
    assert find_cwd(text) == cwd


# -- property: any tool schema with path/content keys gets valid arguments -------------------
_names = st.sampled_from(["file_path", "path", "filePath", "target_file", "filename"])
_contents = st.sampled_from(["content", "file_text", "contents", "text"])
_extra_schema = st.one_of(
    st.builds(
        lambda vals: {"type": "string", "enum": vals},
        st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=3, unique=True),
    ),
    st.builds(
        lambda lo, span: {"type": "integer", "minimum": lo, "maximum": lo + span},
        st.integers(-5, 50),
        st.integers(0, 10),
    ),
    st.just({"type": "boolean"}),
    st.builds(
        lambda n: {"type": "array", "items": {"type": "string"}, "minItems": n}, st.integers(0, 3)
    ),
    st.just(
        {"type": "object", "properties": {"k": {"type": "number", "minimum": 2}}, "required": ["k"]}
    ),
)


@pytest.mark.rule("MODEL-TOOL-003")
@given(
    path_key=_names,
    content_key=_contents,
    extras=st.dictionaries(
        st.sampled_from(["mode", "overwrite", "tags", "opts", "level"]), _extra_schema, max_size=3
    ),
    required_extra=st.booleans(),
    closed=st.booleans(),
)
@settings(max_examples=60)
def test_filled_arguments_validate_against_any_write_schema(
    path_key: str, content_key: str, extras: dict[str, Any], required_extra: bool, closed: bool
) -> None:
    if path_key == content_key:
        return
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {path_key: {"type": "string"}, content_key: {"type": "string"}, **extras},
        "required": [path_key, content_key, *(extras if required_extra else [])],
    }
    if closed:
        schema["additionalProperties"] = False
    offer = ToolOffer("write", "", schema)
    args = fill_arguments(offer, path="hello.html", content="<p>x</p>", cwd="/w")
    jsonschema.validate(args, schema)
    assert args[path_key] == "hello.html" and args[content_key] == "<p>x</p>"
