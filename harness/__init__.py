"""adapter-harness: a reference engine for coding-agent CLI adapters."""

__version__ = "0.1.0"

__all__ = ["__version__"]
