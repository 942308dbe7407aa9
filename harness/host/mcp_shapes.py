"""The document shapes an MCP config file may take (MCP-CONFIG-002).

One statement for the parser (:mod:`harness.mcp.servers`), ``--help`` and the README; its
own module so the command line states it without importing the MCP package.
"""

from __future__ import annotations

__all__ = ["ACCEPTED_SHAPES"]

ACCEPTED_SHAPES = (
    '{"mcpServers": {ID: {command, args, env} | {type, url, headers}}}; also "servers" for '
    '"mcpServers", an array of entries with an "id" for the object, or a bare array'
)
