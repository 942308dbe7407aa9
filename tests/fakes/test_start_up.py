"""A fake's start-up: the shim's emulator hint, its imports, and the ids it makes.

``harness conform`` starts a fake hundreds of times, so a fake imports only the one
emulator module its shim names and none of the heavier standard modules it does not
need (``uuid`` pulls in ``platform``, ``secrets`` pulls in ``hashlib``). These tests pin
that, and that the hint never changes which spec runs.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import fake_clis
from fake_clis import ids
from fake_clis.catalog import EMULATOR_MODULES, all_specs, emulator_module_of, spec_for

SHIM = Path(fake_clis.__file__).parent / "_shim.py"
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\Z")


@pytest.mark.rule("RUN-FAKES-001")
def test_every_agent_has_the_module_that_claims_it() -> None:
    for agent_id, spec in all_specs().items():
        module = emulator_module_of(agent_id)
        assert module in EMULATOR_MODULES, agent_id
        assert spec_for(agent_id, module=module) is spec
    assert emulator_module_of("no-such-agent") is None


@pytest.mark.rule("RUN-FAKES-001")
def test_a_wrong_or_unknown_hint_falls_back_to_the_full_search() -> None:
    claude = all_specs()["claude"]
    assert spec_for("claude", module="fake_clis.json_events") is claude
    assert spec_for("claude", module="os") is claude  # never imports a non-emulator
    assert spec_for("claude", module="-") is claude
    with pytest.raises(KeyError, match="no fake CLI for agent 'nope'"):
        spec_for("nope", module="fake_clis.claude_stream")


def _imported_after_version(module: str, agent: str) -> set[str]:
    code = (
        "import runpy, sys\n"
        f"sys.argv = [{str(SHIM)!r}, {module!r}, {agent!r}, '--version']\n"
        "try:\n"
        f"    runpy.run_path({str(SHIM)!r}, run_name='__main__')\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-S", "-c", code], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    return set(out.splitlines()[-1].split())


@pytest.mark.rule("RUN-FAKES-001")
def test_a_shim_start_imports_one_emulator_and_no_heavy_stdlib() -> None:
    for agent in ("claude", "codex", "opencode", "copilot", "qwen", "kimi"):
        module = emulator_module_of(agent)
        assert module is not None
        loaded = _imported_after_version(module, agent)
        emulators = {m for m in loaded if m in EMULATOR_MODULES}
        # Some emulators share a helper with another (copilot pads lines as claude does),
        # but a start never loads the catalog's whole list.
        assert module in emulators and len(emulators) <= 2, (agent, emulators)
        heavy = loaded & {"uuid", "platform", "secrets", "hashlib", "subprocess", "jsonschema"}
        assert not heavy, (agent, heavy)


#: What a fake's start must not import: each costs a good part of a bare start (``signal``
#: brings enum, functools and collections with it).
START_PATH_FREE = {
    "json",
    "re",
    "dataclasses",
    "pathlib",
    "typing",
    "contextlib",
    "inspect",
    "signal",
    "enum",
    "functools",
    "collections",
}


def _loaded_after(
    module: str, agent: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> set[str]:
    """The modules a shim start of ``agent`` has loaded when it exits 0 (no bytecode cache
    involved: the shim's source is compiled here, as a fresh checkout would)."""
    code = (
        "import sys\n"
        f"sys.argv = [{str(SHIM)!r}, {module!r}, {agent!r}, *{list(args)!r}]\n"
        f"source = open({str(SHIM)!r}).read()\n"
        "status = 0\n"
        "try:\n"
        f"    scope = {{'__name__': '__main__', '__file__': {str(SHIM)!r}}}\n"
        f"    exec(compile(source, {str(SHIM)!r}, 'exec'), scope)\n"
        "except SystemExit as exc:\n"
        "    status = exc.code\n"
        "sys.stdout.flush()\n"
        "sys.stderr.write(f'\\n{status} ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=cwd,
        env=env,
    )
    status, *loaded = done.stderr.splitlines()[-1].split()
    assert status == "0", done.stderr
    return set(loaded)


#: Agents whose emulators start lean (each emulator module, and each flavour in one that
#: differs on its start path).
LEAN_STARTS = (
    "claude",
    "copilot",
    "qoder",
    "aider",
    "grok-build",
    "codex",
    "opencode",
    "gemini",
    "cursor-agent",
    "pi",
    "prime-agent",
    "deepseek-harness",
    "amr",
    "kimi",
    "hermes",
    "reasonix",
)


@pytest.mark.rule("RUN-FAKES-001")
@pytest.mark.parametrize("agent", LEAN_STARTS)
def test_a_fake_starts_without_json_re_dataclasses_pathlib_typing_or_signal(agent: str) -> None:
    module = emulator_module_of(agent)
    assert module is not None
    loaded = _loaded_after(module, agent, "--version")
    assert module in loaded
    assert not loaded & START_PATH_FREE, loaded & START_PATH_FREE


@pytest.mark.rule("RUN-FAKES-001")
def test_the_shim_names_its_usage() -> None:
    done = subprocess.run(
        [sys.executable, "-S", str(SHIM), "fake_clis.claude_stream"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "usage: _shim.py MODULE AGENT" in done.stderr


@pytest.mark.rule("RUN-FAKES-001")
def test_uuid4_is_a_canonical_version_4_uuid() -> None:
    import uuid

    seen = {ids.uuid4() for _ in range(200)}
    assert len(seen) == 200
    for value in seen:
        assert UUID_RE.match(value), value
        parsed = uuid.UUID(value)
        assert parsed.version == 4 and parsed.variant == uuid.RFC_4122 and str(parsed) == value
    assert re.fullmatch(r"[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}", ids.uuid4_hex())


@pytest.mark.rule("RUN-FAKES-001")
@given(st.integers(min_value=0, max_value=300))
def test_alnum_and_token_hex_have_the_asked_length_and_alphabet(n: int) -> None:
    word = ids.alnum(n)
    assert len(word) == n and re.fullmatch(r"[A-Za-z0-9]*", word)
    token = ids.token_hex(n)
    assert len(token) == 2 * n and re.fullmatch(r"[0-9a-f]*", token)


@pytest.mark.rule("RUN-FAKES-001")
def test_alnum_uses_the_whole_alphabet() -> None:
    assert set(ids.alnum(20_000)) == set(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    )


#: A one-shot happy turn per one-shot wire format: argv with the prompt in it.
HAPPY_TURNS = {
    "claude": (
        "-p",
        "hi",
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
    ),
    "copilot": ("-p", "hi", "--allow-all-tools", "--output-format", "json"),
    "qoder": ("-p", "hi", "--output-format", "stream-json", "--yolo"),
    "codex": ("exec", "--json", "--skip-git-repo-check", "hi"),
    "gemini": ("--output-format", "stream-json", "--yolo", "-p", "hi"),
    "opencode": ("run", "--format", "json", "hi"),
    "cursor-agent": ("--print", "--output-format", "stream-json", "--force", "hi"),
    "aider": ("--yes-always", "--no-pretty", "--no-git", "--message", "hi"),
    "grok-build": ("-p", "hi", "--always-approve"),
}


@pytest.mark.rule("RUN-FAKES-001")
@pytest.mark.parametrize("agent", sorted(HAPPY_TURNS))
def test_a_happy_turn_stays_off_the_heavy_modules(agent: str, tmp_path: Path) -> None:
    """The turn itself (a thought, text, a file write, usage) imports nothing heavy either:
    an error path that imports json to raise, or a helper that imports re for an empty
    flag list, costs every run."""
    module = emulator_module_of(agent)
    assert module is not None
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    env["FAKE_CLI_SCENARIO"] = "happy"
    loaded = _loaded_after(module, agent, *HAPPY_TURNS[agent], cwd=tmp_path, env=env)
    assert (tmp_path / "hello.html").is_file() or agent == "codex"  # codex exec: read-only
    assert not loaded & START_PATH_FREE, loaded & START_PATH_FREE
