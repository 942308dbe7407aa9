"""Typed errors. Each names what was wrong and where; ``code`` is machine-readable."""

from __future__ import annotations

__all__ = [
    "AgentDefError",
    "BadInputError",
    "DuplicateAgentError",
    "HarnessError",
    "LocalProfileError",
    "PromptTooLargeError",
    "UnknownAgentError",
]


class HarnessError(Exception):
    """Base of every error the engine raises on bad input."""

    code: str = "HARNESS_ERROR"

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        #: The conformance rule id this error enforces, when there is one.
        self.rule = rule

    def __str__(self) -> str:
        return f"[{self.rule}] {self.message}" if self.rule else self.message


class UnknownAgentError(HarnessError, LookupError):
    code = "AGENT_UNKNOWN"

    def __init__(self, agent_id: str, known: list[str]) -> None:
        super().__init__(f"unknown agent id {agent_id!r}; known ids: {', '.join(known)}")
        self.agent_id = agent_id
        self.known = known


class DuplicateAgentError(HarnessError):
    code = "AGENT_DUPLICATE_ID"


class AgentDefError(HarnessError):
    """An AgentDef that is not valid data; ``field`` names the offending field."""

    code = "AGENT_DEF_INVALID"

    def __init__(self, agent_id: str, field: str, problem: str, *, rule: str | None = None) -> None:
        super().__init__(f"agent def {agent_id!r}: field {field!r}: {problem}", rule=rule)
        self.agent_id = agent_id
        self.field = field


class LocalProfileError(HarnessError):
    """One bad entry in a local profiles file (file, entry index, field)."""

    code = "LOCAL_PROFILE_INVALID"

    def __init__(self, path: str, index: int | None, field: str | None, problem: str) -> None:
        where = path if index is None else f"{path}: agents[{index}]"
        if field:
            where += f".{field}"
        super().__init__(f"{where}: {problem}", rule="PROFILE-VALID-001")
        self.path = path
        self.index = index
        self.field = field
        self.problem = problem


class PromptTooLargeError(HarnessError):
    """The prompt cannot be delivered on this platform's command line (seed 002 §6.3)."""

    code = "AGENT_PROMPT_TOO_LARGE"

    def __init__(
        self,
        message: str,
        *,
        limit: int,
        bytes_: int | None = None,
        command_line_length: int | None = None,
        rule: str | None = None,
    ) -> None:
        super().__init__(message, rule=rule)
        self.limit = limit
        self.bytes = bytes_
        self.command_line_length = command_line_length


class BadInputError(HarnessError):
    """Input the user handed the harness (a file, an argument) that cannot be used.

    Names the source (a path, or ``argument N``) and, when known, the 1-based line and column
    and the field; ``problem`` says what was wrong there.
    """

    code = "BAD_INPUT"

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        line: int | None = None,
        column: int | None = None,
        field: str | None = None,
        rule: str | None = None,
    ) -> None:
        where = source
        if line is not None:
            where += f":{line}" + (f":{column}" if column is not None else "")
        if field:
            where += f": {field}"
        super().__init__(f"{where}: {problem}", rule=rule)
        self.source = source
        self.problem = problem
        self.line = line
        self.column = column
        self.field = field
