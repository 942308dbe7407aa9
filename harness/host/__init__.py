"""Host policy: what a run is given and what it may touch.

``prompt`` (how the prompt reaches the CLI), ``selection`` (which agent runs),
``skills`` (skill files staged for a run), ``artifacts`` (files a plain run may write) and
``mcp_shapes`` (the MCP config shapes accepted). Import from the submodule; this package
re-exports nothing.

Design: docs/design/host.md
"""
