"""Tests for harness/native_sessions.py."""
