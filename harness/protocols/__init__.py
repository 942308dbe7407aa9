"""Sans-IO sessions for the two-way transports."""
