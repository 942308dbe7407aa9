"""A scripted model server for live mode: real CLIs, offline, on 127.0.0.1.

The same scenario files that drive the fake CLIs (``fake_clis/scenarios``) drive
this server, which speaks Anthropic Messages, OpenAI Responses, OpenAI Chat
Completions and the Gemini API with SSE streaming (design §Live mode)::

    from harness.modelserver import ModelServer

    with ModelServer("happy", log_path=tmp / "requests.jsonl") as server:
        env["ANTHROPIC_BASE_URL"] = server.url
        ...  # run the real CLI
        assert all(r.path.startswith("/v1/") for r in server.requests)

Modules: :mod:`.app` (routing, start/stop), :mod:`.scenario_script` (the stateless
reply decision), :mod:`.tools` (tool choice and arguments from the request's own
schemas), :mod:`.structured` (schema-valid JSON), one module per API
(:mod:`.anthropic`, :mod:`.openai_responses`, :mod:`.openai_chat`, :mod:`.gemini`),
:mod:`.errors` (typed errors and each API's error body), :mod:`.log` (request log).
"""

from __future__ import annotations

from harness.modelserver.app import DEFAULT_MODELS, ModelServer, RequestTiming, resolve_route
from harness.modelserver.errors import (
    ApiErrorSpec,
    ModelServerError,
    NonLoopbackHostError,
    ServerStateError,
    UnsatisfiableSchemaError,
)
from harness.modelserver.log import RequestRecord
from harness.modelserver.scenario_script import Conversation, ReplyPlan, plan_reply
from harness.modelserver.structured import structured_value

__all__ = [
    "DEFAULT_MODELS",
    "ApiErrorSpec",
    "Conversation",
    "ModelServer",
    "ModelServerError",
    "NonLoopbackHostError",
    "ReplyPlan",
    "RequestRecord",
    "RequestTiming",
    "ServerStateError",
    "UnsatisfiableSchemaError",
    "plan_reply",
    "resolve_route",
    "structured_value",
]
