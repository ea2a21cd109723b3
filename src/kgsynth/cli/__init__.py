"""The ``kgsynth`` command line."""

from kgsynth.cli._app import app, main

__all__ = ["app", "main"]
