"""Agent definitions: the :class:`AgentDef` contract, one module per runtime, the registry.

* :mod:`harness.defs.types`: the contract (seed 000 §1);
* ``harness/defs/<runtime>.py``: one module per CLI, each exporting one ``AGENT_DEF``;
* :mod:`harness.defs.registry`: ``BUILTIN_DEFS`` in shipped order, checked at import;
* :mod:`harness.defs.local_profiles`: user-defined profiles layered on a built-in.

The contract names are imported eagerly. The registry and profile names are re-exported lazily
(PEP 562 ``__getattr__``): importing ``harness.defs.types`` must not import every runtime module,
and runtime modules import ``harness.defs.types`` while this package is still initialising.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from harness.defs.types import (
    DEFAULT_MODEL_OPTION,
    ID_PATTERN,
    AcpEnvFormat,
    AgentDef,
    AuthProbe,
    BuildArgs,
    BuildOptions,
    CompatibilityProbe,
    EnvStripRule,
    ListModels,
    McpInjection,
    ModelOption,
    NodeWrapperNative,
    PromptDelivery,
    PromptInputFormat,
    ResumeStyle,
    RuntimeContext,
    VersionPolicy,
)

if TYPE_CHECKING:
    from harness.defs.local_profiles import (
        PROFILES_ENV_VARS,
        create_local_agent_def,
        parse_local_profiles,
        profiles_path,
        read_local_profiles,
    )
    from harness.defs.registry import (
        BUILTIN_DEFS,
        BUILTIN_REGISTRY,
        build_registry,
        get_agent_def,
        load_agent_defs,
        validate_def,
    )

__all__ = [
    "BUILTIN_DEFS",
    "BUILTIN_REGISTRY",
    "DEFAULT_MODEL_OPTION",
    "ID_PATTERN",
    "PROFILES_ENV_VARS",
    "AcpEnvFormat",
    "AgentDef",
    "AuthProbe",
    "BuildArgs",
    "BuildOptions",
    "CompatibilityProbe",
    "EnvStripRule",
    "ListModels",
    "McpInjection",
    "ModelOption",
    "NodeWrapperNative",
    "PromptDelivery",
    "PromptInputFormat",
    "ResumeStyle",
    "RuntimeContext",
    "VersionPolicy",
    "build_registry",
    "create_local_agent_def",
    "get_agent_def",
    "load_agent_defs",
    "parse_local_profiles",
    "profiles_path",
    "read_local_profiles",
    "validate_def",
]

_LAZY: dict[str, str] = {
    "BUILTIN_DEFS": "harness.defs.registry",
    "BUILTIN_REGISTRY": "harness.defs.registry",
    "build_registry": "harness.defs.registry",
    "get_agent_def": "harness.defs.registry",
    "load_agent_defs": "harness.defs.registry",
    "validate_def": "harness.defs.registry",
    "PROFILES_ENV_VARS": "harness.defs.local_profiles",
    "create_local_agent_def": "harness.defs.local_profiles",
    "parse_local_profiles": "harness.defs.local_profiles",
    "profiles_path": "harness.defs.local_profiles",
    "read_local_profiles": "harness.defs.local_profiles",
}


def __getattr__(name: str) -> object:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value
