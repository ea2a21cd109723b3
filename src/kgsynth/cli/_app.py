"""Root Typer app: one-line errors, ``--debug`` for tracebacks, sub-command groups."""

from __future__ import annotations

import sys

import typer

from kgsynth import __version__
from kgsynth.cli import graph
from kgsynth.cli.evaluate import eval_command, report_command
from kgsynth.cli.synth import synth
from kgsynth.errors import KgsynthError

app = typer.Typer(
    name="kgsynth",
    help="Turn a knowledge graph into contamination-resistant LLM benchmark items.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(graph.app, name="graph")
app.command()(synth)
app.command("eval")(eval_command)
app.command("report")(report_command)

_debug = False


def _version(value: bool) -> None:
    if value:
        typer.echo(f"kgsynth {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show the full traceback on errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version."),
) -> None:
    global _debug
    _debug = debug


def main() -> None:
    """Entry point: a user error prints one line and exits 1 (usage errors exit 2)."""
    try:
        app()
    except KgsynthError as e:
        if _debug:
            raise
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
