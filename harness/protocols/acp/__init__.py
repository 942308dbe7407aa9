"""The acp-json-rpc session, one module per concern.

``session`` takes the host's calls and routes the agent's messages; ``state`` is the
transition table; ``handshake``, ``turn``, ``agent_requests``, ``error_responses`` and
``continuation`` each own one part of the conversation; ``context`` is what they share,
``config`` what the session is given and ``mcp`` how the host's MCP servers are sent.

Design: docs/design/protocols.md#harness.protocols.acp
"""
