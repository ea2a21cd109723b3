"""Release versions: semantic (``X.Y.Z``) or dated (``YYYY.MM``, then ``YYYY.MM.N`` for a
second release in a month); compared as numbers, part by part."""

from __future__ import annotations

import re
from datetime import date

from kgsynth.errors import KgsynthError

FIRST = "1.0.0"
_SEMANTIC = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
_DATED = re.compile(r"(\d{4})\.(0[1-9]|1[0-2])(?:\.(0|[1-9]\d*))?")  # a four-digit year and a two-digit month: dated


def version_key(version: str) -> tuple[int, ...]:
    """The version as numbers (``2025.06`` -> (2025, 6)); KgsynthError if it is neither form."""
    if not (_DATED.fullmatch(version) or _SEMANTIC.fullmatch(version)):
        raise KgsynthError(f"version {version!r} is neither semantic (X.Y.Z, e.g. 1.2.0) nor dated (YYYY.MM, e.g. 2025.06)")
    return tuple(int(part) for part in version.split("."))


def next_version(previous: str | None, today: date) -> str:
    """The version after ``previous``: none -> 1.0.0; ``X.Y.Z`` -> ``X.(Y+1).0``; dated ->
    this month's ``YYYY.MM``, or ``YYYY.MM.N`` after a release of this month."""
    if previous is None:
        return FIRST
    version_key(previous)
    if dated := _DATED.fullmatch(previous):
        month = f"{today.year}.{today.month:02d}"
        if version_key(month) > version_key(previous):
            return month
        year, mm, n = dated.groups()
        return f"{year}.{mm}.{int(n or 0) + 1}"
    major, minor, _ = previous.split(".")
    return f"{major}.{int(minor) + 1}.0"


def check_newer(version: str, previous: str | None, where: str) -> None:
    """``version`` is well formed and greater than ``previous`` (the release in ``where``)."""
    key = version_key(version)
    if previous is not None and key <= version_key(previous):
        raise KgsynthError(f"version {version} is not greater than {previous}, the version of the previous release {where}")
