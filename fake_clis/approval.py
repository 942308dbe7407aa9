"""Interactive approval prompts: which CLIs stop at one, and what argv makes them not ask.

Rules: HEADLESS-DECLARED-001, HEADLESS-TTY-001.
Design: docs/design/fakes.md#fake_clis.approval
"""

from __future__ import annotations

import os

# Read by the approval demo's start: no dataclasses or typing at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    #: argv -> True when the CLI will run tools without asking.
    Posture = Callable[[Sequence[str]], bool]

__all__ = [
    "GATES",
    "NO_TERMINAL_PROMPT",
    "PROTOCOL_APPROVAL_FORMATS",
    "ApprovalGate",
    "ask_on_terminal",
    "gate_for",
]


def _flag(*names: str) -> Posture:
    """Any of ``names`` present as a flag (``--x`` or ``--x=...``)."""

    def check(argv: Sequence[str]) -> bool:
        return any(arg.split("=", 1)[0] in names for arg in argv)

    return check


def _option(name: str, *values: str) -> Posture:
    """``name`` given one of ``values`` (``--name value`` or ``--name=value``)."""

    def check(argv: Sequence[str]) -> bool:
        for i, arg in enumerate(argv):
            if arg == name and i + 1 < len(argv) and argv[i + 1] in values:
                return True
            if arg.startswith(name + "=") and arg.split("=", 1)[1] in values:
                return True
        return False

    return check


def _either(*postures: Posture) -> Posture:
    def check(argv: Sequence[str]) -> bool:
        return any(p(argv) for p in postures)

    return check


class ApprovalGate:
    """One CLI's interactive approval prompt."""

    __slots__ = ("agent_id", "bypassed", "citation", "native", "question")

    def __init__(
        self,
        agent_id: str,
        bypassed: Posture,
        question: str,
        citation: str,
        *,
        native: bool = False,
    ) -> None:
        self.agent_id = agent_id
        #: True when ``argv`` is the CLI's do-not-ask posture.
        self.bypassed = bypassed
        #: What it asks before the scenario's file write (``hello.html``), as printed.
        self.question = question
        #: Where the posture is documented.
        self.citation = citation
        #: The emulator asks and waits by itself; the demo does not add a question.
        self.native = native

    def __repr__(self) -> str:
        return f"ApprovalGate({self.agent_id!r}, native={self.native})"

    @property
    def denial(self) -> str:
        return f"{self.agent_id}: the tool call was not approved; nothing was run"


_CLAUDE_POSTURE = _either(
    _option("--permission-mode", "bypassPermissions"), _flag("--dangerously-skip-permissions")
)
_WRITE = "hello.html"

GATES: Mapping[str, ApprovalGate] = {
    gate.agent_id: gate
    for gate in (
        ApprovalGate(
            "claude",
            _CLAUDE_POSTURE,
            f"Claude wants to write {_WRITE}. Do you want to proceed? [y/N] ",
            "seed 000 §5.1, §10",
        ),
        ApprovalGate(
            "codebuddy",
            _either(_CLAUDE_POSTURE, _flag("-y")),
            f"CodeBuddy wants to write {_WRITE}. Do you want to proceed? [y/N] ",
            "ref §8.3",
        ),
        ApprovalGate(
            "amp",
            _flag("--dangerously-allow-all"),
            f"Allow Amp to create {_WRITE}? [y/N] ",
            "seed 000 §10",
        ),
        ApprovalGate(
            "cursor-agent",
            _flag("--force"),
            f"Run write on {_WRITE}? [y/N] ",
            "seed 000 §5.5, §10",
        ),
        ApprovalGate(
            "copilot",
            _flag("--allow-all-tools", "--allow-all", "--yolo"),
            f"Allow Copilot to use the create tool on {_WRITE}? [y/N] ",
            "seed 000 §5.7",
        ),
        ApprovalGate(
            "qoder",
            _flag("--yolo"),
            f"Allow Write {_WRITE}? [y/N] ",
            "seed 000 §5.8",
        ),
        ApprovalGate(
            "qwen",
            _either(_flag("--yolo", "-y"), _option("--approval-mode", "yolo")),
            f"Apply this change to {_WRITE}? [y/N] ",
            "ref §8.3",
        ),
        ApprovalGate(
            "opencode",
            _flag("--dangerously-skip-permissions", "--auto"),
            f"Permission required: write {_WRITE}. Allow? [y/N] ",
            "seed 000 §5.6, §10",
        ),
        ApprovalGate(
            "byok-opencode",
            _flag("--dangerously-skip-permissions", "--auto"),
            f"Permission required: write {_WRITE}. Allow? [y/N] ",
            "seed 000 §5.2, §10",
        ),
        ApprovalGate(
            "gemini",
            _either(_flag("--yolo", "-y"), _option("--approval-mode", "yolo")),
            f"Allow WriteFile {_WRITE}? [y/N] ",
            "ref §8.3",
        ),
        # Emulators that ask by themselves (fake_clis/plain.py); the text is theirs.
        ApprovalGate(
            "deepseek",
            _flag("--auto"),
            f"Approve write {_WRITE}? [y/N] ",
            "seed 000 §5.11",
            native=True,
        ),
        ApprovalGate(
            "aider",
            _flag("--yes-always"),
            # aider 0.86.2 prints the path on its own line first (io.confirm_ask's subject).
            "Create new file? (Y)es/(N)o [Yes]: ",
            "ref §8.3",
            native=True,
        ),
        ApprovalGate(
            "atomcode",
            _flag("-y", "--yes"),
            f"Allow write {_WRITE}? [y/N] ",
            "ref §8.3",
            native=True,
        ),
    )
}

#: One-way CLIs that never ask on a terminal, and why.
NO_TERMINAL_PROMPT: Mapping[str, str] = {
    "codex": (
        "`codex exec` runs non-interactively and never asks; its posture is the sandbox "
        "mode it is given (seed 000 §5.3, §10)"
    ),
    "grok-build": (
        "grok 0.2.111 in --prompt-file mode never asks: without --always-approve it drops the "
        "model's first tool call and ends the turn (exit 0), so the def passes that flag "
        "(observed offline against the scripted model server)"
    ),
    "antigravity": (
        "print mode (`agy -p -`) has no approval prompt in the seeds; failures go to the log "
        "file only (seed 002 §4.4)"
    ),
    "mimo": "the seeds give mimo no approval prompt and no posture flag (seed 000 §10)",
}

#: Two-way formats: approval is a protocol request the host session answers.
PROTOCOL_APPROVAL_FORMATS: Mapping[str, str] = {
    "acp-json-rpc": "session/request_permission is answered by the client (wire §A.1.2)",
    "pi-rpc": "extension dialogs are auto-resolved by the host (seed 000 §5.10)",
    "dsh-profile-jsonl": "the profile applies OD's unattended permission policy (seed 001 §14)",
}


def gate_for(agent_id: str) -> ApprovalGate:
    try:
        return GATES[agent_id]
    except KeyError:
        known = ", ".join(sorted(GATES))
        raise KeyError(f"no approval gate for {agent_id!r}; gates exist for: {known}") from None


def _read_line(fd: int) -> bytes | None:
    """One line from ``fd``, read a byte at a time so nothing after it is consumed."""
    line = bytearray()
    while True:
        byte = os.read(fd, 1)
        if not byte:
            return bytes(line) if line else None
        if byte == b"\n":
            return bytes(line)
        line += byte


def ask_on_terminal(gate: ApprovalGate, *, stdin_fd: int = 0, stderr_fd: int = 2) -> bool:
    """Print ``gate.question`` and wait for the answer; only ``y``/``yes`` approves.

    This blocks for as long as nobody answers: the hang a headless run must never reach.
    """
    os.write(stderr_fd, gate.question.encode("utf-8"))
    answer = _read_line(stdin_fd)
    return answer is not None and answer.strip().lower() in (b"y", b"yes")
