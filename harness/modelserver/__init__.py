"""A scripted model server for live mode: real CLIs, offline, on 127.0.0.1.

Design: docs/design/modelserver.md#harness.modelserver
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
