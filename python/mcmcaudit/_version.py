"""The version of the mcmcaudit package: its one source (pyproject.toml reads it)."""

__version__ = "0.1.0"
