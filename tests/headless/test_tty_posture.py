"""On a real terminal, a CLI without its headless flags stops at an approval prompt.

Rule: HEADLESS-TTY-001 (seed 000 §10; §5.9: "the daemon runs agent CLIs without a TTY, so it
must not rely on an interactive tool-approval prompt to make progress"). For every CLI in
``fake_clis.approval.GATES``, the fake is started under ``pexpect`` (a pty) through
``python -m fake_clis.approval_demo`` twice with the def's own ``build_args`` output:

* without the def's ``headless_flags``: the approval question appears, the process stays
  alive and writes nothing while nobody answers (the hang), and a "no" ends it with nothing
  written;
* with them: no question, the scenario runs to its end, exit 0, ``hello.html`` written.

POSIX only: ``pexpect.spawn`` needs a pty, which Windows does not have.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import psutil
import pytest

from fake_clis.approval import GATES, ApprovalGate
from harness.defs.registry import get_agent_def
from harness.defs.types import (
    AgentDef,
    BuildOptions,
    PromptDelivery,
    PromptInputFormat,
    RuntimeContext,
)
from tests.fakes.conftest import FakeCli
from tests.headless.test_declared import without_run

pytestmark = pytest.mark.skipif(
    sys.platform == "win32", reason="pexpect.spawn needs a POSIX pty; Windows has none"
)

PROMPT = "Build a page"
#: How long a stopped CLI is watched to show it does not move on by itself.
STUCK_FOR_S = 0.75
#: What the happy scenario's write tool creates (fake_clis/scenarios/happy.json).
WRITTEN = "hello.html"


def def_argv(defn: AgentDef, fake: FakeCli) -> list[str]:
    """The def's first-turn argv in the fake's project (every probe-gated capability found)."""
    prompt_file = fake.root / "prompt.txt"
    prompt_file.write_text(PROMPT, encoding="utf-8")
    caps = {key: True for key in defn.capability_flags.values()}
    context = RuntimeContext(
        cwd=str(fake.cwd), platform=sys.platform, prompt_file_path=str(prompt_file)
    )
    return defn.build_args(PROMPT, [], [], BuildOptions(capabilities=caps), context)


@contextmanager
def spawned(fake: FakeCli, agent_id: str, argv: list[str]) -> Iterator[pexpect.spawn]:
    """The approval demo for ``agent_id`` on a pty; always killed and reaped at the end."""
    child = pexpect.spawn(
        sys.executable,
        ["-m", "fake_clis.approval_demo", agent_id, *argv],
        env=fake.env("happy"),
        cwd=str(fake.cwd),
        timeout=60,
        encoding="utf-8",
        dimensions=(40, 250),
    )
    pid = child.pid
    try:
        yield child
    finally:
        child.close(force=True)
        if psutil.pid_exists(pid):
            assert psutil.Process(pid).status() == psutil.STATUS_ZOMBIE, f"pid {pid} survived"


def send_prompt(child: pexpect.spawn, defn: AgentDef) -> None:
    """Deliver the prompt the way the def does when it is stdin (argv/file need nothing)."""
    if defn.prompt_delivery is not PromptDelivery.STDIN:
        return
    if defn.prompt_input_format is PromptInputFormat.STREAM_JSON:
        message = {"role": "user", "content": [{"type": "text", "text": PROMPT}]}
        child.sendline(json.dumps({"type": "user", "message": message}))
    else:
        child.sendline(PROMPT)
    child.sendeof()


@pytest.mark.rule("HEADLESS-TTY-001")
@pytest.mark.parametrize("agent_id", sorted(GATES))
def test_without_the_flags_the_cli_stops_at_the_approval_prompt(
    tmp_path: Path, agent_id: str
) -> None:
    defn = get_agent_def(agent_id)
    gate: ApprovalGate = GATES[agent_id]
    fake = FakeCli(tmp_path)
    argv = without_run(def_argv(defn, fake), defn.headless_flags)
    assert not gate.bypassed(argv)
    with spawned(fake, agent_id, argv) as child:
        child.expect_exact(gate.question)
        # Nobody answers: it neither finishes nor writes (the hang the flags prevent).
        assert child.expect([pexpect.EOF, pexpect.TIMEOUT], timeout=STUCK_FOR_S) == 1
        assert child.isalive()
        assert not (fake.cwd / WRITTEN).exists()
        child.sendline("n")
        child.expect(pexpect.EOF)
    assert not (fake.cwd / WRITTEN).exists()


@pytest.mark.rule("HEADLESS-TTY-001")
@pytest.mark.parametrize("agent_id", sorted(GATES))
def test_with_the_defs_argv_the_cli_runs_to_the_end(tmp_path: Path, agent_id: str) -> None:
    defn = get_agent_def(agent_id)
    gate = GATES[agent_id]
    fake = FakeCli(tmp_path)
    argv = def_argv(defn, fake)
    assert gate.bypassed(argv)
    with spawned(fake, agent_id, argv) as child:
        send_prompt(child, defn)
        child.expect(pexpect.EOF)
        output = child.before
    assert child.exitstatus == 0, output[-2000:]
    assert gate.question not in output
    assert (fake.cwd / WRITTEN).is_file()
    assert "Done: hello.html is ready." in output


@pytest.mark.rule("HEADLESS-TTY-001")
def test_a_yes_on_the_terminal_lets_the_run_go_on(tmp_path: Path) -> None:
    # The question is a real gate, not a dead end: answering it is what moves the run on.
    fake = FakeCli(tmp_path)
    defn = get_agent_def("deepseek")
    argv = without_run(def_argv(defn, fake), defn.headless_flags)
    with spawned(fake, "deepseek", argv) as child:
        child.expect_exact(GATES["deepseek"].question)
        child.sendline("y")
        child.expect(pexpect.EOF)
    assert child.exitstatus == 0
    assert (fake.cwd / WRITTEN).is_file()


@pytest.mark.rule("HEADLESS-TTY-001")
def test_without_a_terminal_the_demo_is_the_plain_fake(fake: FakeCli) -> None:
    # No pty: the gate does not ask; the emulator answers the missing posture its own
    # headless way (copilot denies the tool), and nothing waits for a human.
    defn = get_agent_def("copilot")
    argv = without_run(def_argv(defn, fake), defn.headless_flags)
    done = subprocess.run(
        [sys.executable, "-m", "fake_clis.approval_demo", "copilot", *argv],
        input=PROMPT.encode(),
        capture_output=True,
        cwd=fake.cwd,
        env=fake.env("happy"),
        timeout=60,
        check=False,
    )
    assert GATES["copilot"].question.encode() not in done.stdout + done.stderr
    assert b"Permission denied" in done.stdout
    assert not (fake.cwd / WRITTEN).exists()


@pytest.fixture
def fake(tmp_path: Path) -> FakeCli:
    return FakeCli(tmp_path)
