"""The ``kgsynth`` command line.

Its modules load inside :func:`main`, not when this package is imported: a Ctrl-C in the
second or two they take is then one line and exit 130, as it is later, not an import
traceback."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import NoReturn

__all__ = ["app", "main"]

INTERRUPTED_WHILE_LOADING = "interrupted while kgsynth was loading: nothing was done"


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point of the ``kgsynth`` command (``kgsynth.cli._app.main`` once loaded)."""
    try:
        from kgsynth.cli._app import main as run
    except KeyboardInterrupt:
        print(INTERRUPTED_WHILE_LOADING, file=sys.stderr)
        sys.exit(130)
    run(argv)


def __getattr__(name: str) -> object:
    if name == "app":  # the Typer app, for tests and embedding: loaded when asked for
        from kgsynth.cli._app import app

        return app
    raise AttributeError(f"module 'kgsynth.cli' has no attribute {name!r}")
