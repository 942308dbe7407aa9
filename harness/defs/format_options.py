"""The format-only option groups of a def: which field holds which group.

A def holds the options of one wire format in one field (``acp``, ``pi``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.protocols.def_options import AcpOptions, FormatOptions, PiOptions

__all__ = ["FORMAT_OPTION_FIELDS"]

#: AgentDef field -> the option group it holds (each group names its format).
FORMAT_OPTION_FIELDS: Mapping[str, type[FormatOptions]] = MappingProxyType(
    {"acp": AcpOptions, "pi": PiOptions}
)
