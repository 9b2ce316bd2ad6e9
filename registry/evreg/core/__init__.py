"""The core: plain values, codes, findings and the readers and writers every layer uses."""

VERSION = "0.1.0"
"""The version of evreg (the distribution's: pyproject.toml reads it here; ``evreg --version`` prints it)."""
