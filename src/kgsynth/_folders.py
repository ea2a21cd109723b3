"""Output folders: made before a run writes anything (or one line on why they cannot be), and
the work folder of a finished run removed so that a kill during the removal does no harm."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kgsynth.errors import KgsynthError


def make_writable_folder(folder: Path) -> None:
    """Create ``folder`` (and its parents); a file in the way, a refusal of the system, or a
    folder without write permission is a :class:`KgsynthError` the caller puts in context."""
    blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), None)
    if blocking is not None:
        raise KgsynthError(f"{blocking} is a file, so nothing can be written under it")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise KgsynthError(f"cannot create the folder {folder} ({e.strerror or e})") from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise KgsynthError(f"the folder {folder} is not writable")


# A finished run renames .work before removing it: a kill during the removal leaves this
# name, which the next run removes; .work itself is either whole or absent.
_REMOVING = ".work.finished"


def remove_work_folder(out: Path) -> None:
    """Remove ``out/.work``, the finished run's resume state."""
    removing = out / f"{_REMOVING}.{os.getpid()}"  # not a leftover the system would not let go of
    os.replace(out / ".work", removing)
    shutil.rmtree(removing, ignore_errors=True)


def finish_removal(out: Path) -> None:
    """Remove what runs killed while removing their work folders left."""
    for leftover in out.glob(f"{_REMOVING}*"):
        shutil.rmtree(leftover, ignore_errors=True)
