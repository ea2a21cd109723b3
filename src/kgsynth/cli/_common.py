"""What the commands share: the stderr console, Ctrl-C, and checks of option values that
say which option is wrong in one line (the same messages a config file's value gets)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from kgsynth._config import check_http_url, validation_message
from kgsynth._folders import make_writable_folder
from kgsynth.errors import KgsynthError

# soft_wrap: a message is one line however narrow the terminal (rich would break it at 80
# columns when stderr is a pipe)
err = Console(stderr=True, soft_wrap=True)

GRAPH_URI_WITHOUT_ENDPOINT = "--graph-uri needs --endpoint: graph files are read as one graph"


AnchorClassOpt = typer.Option(
    None, "--anchor-class", help="Sample only around members of this class (an IRI): no query scans the whole graph for anchors.")
AnchorsQueryOpt = typer.Option(
    None, "--anchors-query", help="A file with a SPARQL SELECT whose first variable lists the anchor entities (read in pages).")


def anchor_options(anchor_class: str | None, anchors_query: Path | None) -> dict:
    """--anchor-class / --anchors-query as the fields of kgsynth.queries.Anchors (none: every entity)."""
    if anchor_class and anchors_query:
        raise KgsynthError("give --anchor-class or --anchors-query, not both")
    if anchor_class:
        return {"anchor_class": anchor_class, "anchors_query": None}
    if anchors_query:
        try:
            return {"anchors_query": anchors_query.read_text(encoding="utf-8"), "anchor_class": None}
        except (OSError, UnicodeDecodeError) as e:
            raise KgsynthError(f"cannot read --anchors-query {anchors_query}: {getattr(e, 'strerror', None) or e}") from None
    return {}


class Interrupted(Exception):  # noqa: N818 - what the user did, not an error of the program
    """Ctrl-C during a command; the message says where the run stopped and how to go on."""


def option_error(e: ValidationError, options: Mapping[str, tuple[str, object]], config: Path | None) -> KgsynthError:
    """A config validation error in one line: named by the command-line option when the
    wrong value came from one (``--n -5: dataset.n: ...``), else by the config file."""
    first = e.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    if where in options:
        flag, value = options[where]
        shown = value if str(value).strip() else repr(value)  # an empty value is seen as ''
        return KgsynthError(f"{flag} {shown}: {validation_message(e)}")
    source = f"config {config}" if config else "the settings"
    return KgsynthError(f"{source}: {validation_message(e)}")


def check_url(flag: str, url: str | None) -> None:
    if url is not None:
        try:
            check_http_url(url)
        except ValueError as e:
            raise KgsynthError(f"{flag}: {e}") from None


def output_folder(flag: str, out: Path) -> None:
    """Create ``out`` (and its parents) as a folder we can write, or say in one line why not."""
    not_a_file(flag, out)
    _make_folder(flag, out, out)


def not_a_file(flag: str, out: Path) -> None:
    """``out`` is a folder or nothing yet: checked before any input is read, made later."""
    if out.exists() and not out.is_dir():
        raise KgsynthError(f"{flag} {out} is a file, not a folder: give a folder path")


def output_file(flag: str, out: Path, example: str) -> None:
    """``out`` can be written as a file (its folder made if missing), or one line why not
    (naming ``example``, a file name the command writes, inside the folder given)."""
    if out.is_dir():
        raise KgsynthError(f"{flag} {out} is a folder: give a file path, e.g. {out / example}")
    _make_folder(flag, out, out.parent)


def _make_folder(flag: str, given: Path, folder: Path) -> None:
    try:
        make_writable_folder(folder)
    except KgsynthError as e:
        raise KgsynthError(f"{flag} {given}: {e}") from None


def progress_bar(*columns) -> Progress:
    """A transient progress bar on stderr, drawn only when stderr is a terminal: in a pipe or
    a log, rich would leave a blank line where the bar was, before any message."""
    return Progress(*columns, console=err, transient=True, disable=not err.is_terminal)


@contextmanager
def phase_progress() -> Iterator[Callable[[str, int, int], None]]:
    """A progress bar per phase of a run; yields the ``(phase, done, total)`` callback the run reports to."""
    tasks: dict[str, int] = {}
    with progress_bar(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()) as bar:
        def show(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=total)
            bar.update(tasks[stage], completed=done, total=total)
        yield show
