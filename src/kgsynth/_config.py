"""Configuration helpers every config tree shares: the strict base model, URL checks, and
reading a TOML or YAML file into a pydantic schema with one-line errors."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, ValidationError

from kgsynth.errors import KgsynthError


class Strict(BaseModel):
    """Frozen, and unknown keys are errors (a misspelt option never passes silently)."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def check_http_url(url: str) -> str:
    """``url`` if it is an http(s) URL with a host, else ValueError saying so."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL with a host, e.g. http://127.0.0.1:8001/v1")
    if parts.username or parts.password:
        shown = parts._replace(netloc=parts.netloc.rpartition("@")[2]).geturl()
        raise ValueError(f"{shown}: a user name or password in the URL is refused (the manifest and logs would hold it)")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError:
        raise ValueError(f"{url!r} has no valid port number") from None
    return url


def http_url_or_none(url: str | None) -> str | None:
    """:func:`check_http_url` for an optional setting (a field validator of the configs)."""
    return None if url is None else check_http_url(url)




_Config = TypeVar("_Config", bound=BaseModel)


def load_config_file(path: str | Path, schema: type[_Config]) -> _Config:
    """Read a TOML (or YAML) config into ``schema``; any error is one line naming the file and the key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark some editors write is no error
    except UnicodeDecodeError as e:
        raise KgsynthError(f"config {path} is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start}): "
                           "give a TOML or YAML file") from None
    except IsADirectoryError:
        raise KgsynthError(f"cannot read config {path}: it is a folder, give a TOML or YAML file") from None
    except OSError as e:
        raise KgsynthError(f"cannot read config {path}: {e.strerror or e}") from None
    if "\x00" in text:
        raise KgsynthError(f"config {path} holds NUL bytes: give a TOML or YAML text file")
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
            data = {} if data is None else data
        else:
            data = tomllib.loads(text)
    except Exception as e:  # noqa: BLE001 - every parser's own error type, reported in one line
        raise KgsynthError(f"config {path} does not parse: {_parse_error(e)}") from None
    try:
        return schema.model_validate(data)
    except ValidationError as e:
        raise KgsynthError(f"config {path}: {validation_message(e)}") from None


def validation_message(e: ValidationError) -> str:
    """The first error of a validation in one line: where (dotted keys) and what."""
    first = e.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    message = first["msg"].removeprefix("Value error, ")
    return f"{where}: {' '.join(message.split())}"


def _parse_error(e: Exception) -> str:
    mark = getattr(e, "problem_mark", None)  # YAML: the problem and where it is
    if mark is not None:
        return f"{getattr(e, 'problem', None) or e} at line {mark.line + 1}, column {mark.column + 1}"
    lines = [line for line in str(e).splitlines() if line.strip()]
    return lines[0] if lines else type(e).__name__
