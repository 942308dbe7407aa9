"""Host policy: what a run is given and what it may touch.

``prompt`` (how the prompt reaches the CLI), ``selection`` (which agent runs),
``skills`` (skill files staged for a run), ``artifacts`` (files a plain run may write),
``mcp_shapes`` (the MCP config shapes accepted), ``launch`` (from ``def.bin`` to a spawnable
path and its environment), ``native_sessions`` (which CLI session a turn continues),
``detect_result`` (what detection found, as plain data) and ``failures`` (why a run failed,
as the host tells its user). Import from the submodule; this package re-exports nothing.

Design: docs/design/host.md
"""
