"""Root Typer app: one-line errors, ``--debug`` for tracebacks, sub-command groups.

Exit codes: 0 done; 1 an input the command cannot use (a file, a config, an option's
value, a dataset, an endpoint), one line ``error: ...`` on stderr; 2 a malformed command
line (an unknown command or option, a missing required option or an extra argument),
one line naming the ``--help`` to read; 130 interrupted (Ctrl-C), one line saying where
the run stopped and how to resume. No traceback unless ``kgsynth --debug ...``.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import NoReturn

import typer

# typer carries its own copy of click (0.29, the lower bound in pyproject.toml) and raises that copy's exceptions
from typer._click import exceptions as click

from kgsynth import __version__
from kgsynth.cli import graph, lexicon, pressure, rules
from kgsynth.cli._common import Interrupted
from kgsynth.cli.evaluate import eval_command, report_command
from kgsynth.cli.ingest import ingest_command
from kgsynth.cli.release import release_command
from kgsynth.cli.synth import synth
from kgsynth.errors import KgsynthError
from kgsynth.llm import redact

app = typer.Typer(
    name="kgsynth",
    help="Turn a knowledge graph into contamination-resistant LLM benchmark items.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(graph.app, name="graph")
app.add_typer(rules.app, name="rules")
app.add_typer(lexicon.app, name="lexicon")
app.add_typer(pressure.app, name="pressure")
app.command("ingest")(ingest_command)
app.command()(synth)
app.command("release")(release_command)
app.command("eval")(eval_command)
app.command("report")(report_command)

_debug = False
INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a command stopped with Ctrl-C


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


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Entry point: see the module docstring for what each exit code means."""
    code = run(sys.argv[1:] if argv is None else list(argv))
    if code == INTERRUPTED:
        _quiet_finalisers()
    sys.exit(code)


def _quiet_finalisers() -> None:
    # A Ctrl-C can land while asyncio is still building an event loop: at exit the half-built
    # loop's finaliser and the coroutine it never ran print tracebacks under the one line that
    # says where the run stopped. Only the process's entry point does this, as it is ending.
    sys.unraisablehook = lambda _: None
    warnings.simplefilter("ignore")


def run(argv: list[str]) -> int:
    """Run the command line ``argv``; every failure is one line on stderr. Returns the exit code."""
    global _debug
    _debug = False
    try:
        code = app(args=argv, prog_name="kgsynth", standalone_mode=False)
    except Interrupted as e:
        return _fail(str(e), INTERRUPTED, prefix="")
    except KgsynthError as e:
        if _debug:
            raise
        return _fail(str(e), 1)
    except click.NoArgsIsHelpError as e:
        if (text := e.format_message()).strip():  # rich-formatted help is printed as the error is made
            typer.echo(text)
        return 2
    except click.BadParameter as e:
        if _debug:
            raise
        if isinstance(e, click.MissingParameter):  # a required option left out: a malformed command line
            return _fail(f"{e.format_message()}{_see_help(e)}", 2)
        return _fail(e.format_message(), 1)  # a value the option cannot take, like a bad value in a config
    except click.UsageError as e:
        if _debug:
            raise
        return _fail(f"{e.format_message()}{_see_help(e)}", 2)
    except click.ClickException as e:
        if _debug:
            raise
        return _fail(e.format_message(), e.exit_code or 1)
    except typer.Abort:
        return _fail("aborted", 1)
    except OSError as e:  # a file or folder the command could not use; each command names its own where it can
        if _debug:
            raise
        where = f" {e.filename}" if e.filename else ""
        return _fail(f"cannot use{where}: {e.strerror or e}", 1)
    except Exception as e:  # noqa: BLE001 - a bug: still one line, the traceback behind --debug
        if _debug:
            raise
        return _fail(f"internal error: {type(e).__name__}: {_first_line(str(e))} (kgsynth --debug ... shows the traceback)", 1)
    if code == INTERRUPTED:  # Typer turns a Ctrl-C outside a command's own handling into exit code 130
        return _fail("interrupted", INTERRUPTED, prefix="")  # where it stopped is unknown here: say no more
    return code or 0


def _fail(message: str, code: int, prefix: str = "error: ") -> int:
    print(f"{prefix}{redact(_first_line(message))}", file=sys.stderr)  # a server's error may quote a key
    return code


def _first_line(text: str) -> str:
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return " ".join(lines) if len(lines) <= 3 else lines[0]


def _see_help(e: click.UsageError) -> str:
    path = e.ctx.command_path if e.ctx else "kgsynth"
    return f" (see {path} --help)"
