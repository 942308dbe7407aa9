"""Tests for harness/sessions.py."""
