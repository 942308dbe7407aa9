"""Tests for harness/host/native_sessions.py."""
