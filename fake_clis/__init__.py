"""Fake coding-agent CLIs, one emulator per wire format."""
