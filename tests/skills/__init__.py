"""Tests for harness/host/skills.py."""
