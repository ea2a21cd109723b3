"""Shared fixtures: paths, the demo graph, and real SPARQL servers on 127.0.0.1: ``oxigraph serve``
and Virtuoso 7."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from kgsynth.kg import KnowledgeGraph

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data"
DEMO = ROOT / "data" / "demo"
FB15K = ROOT.parent / "shared" / "external" / "fb15k237" / "fb15k237.nt.gz"

sys.path.insert(0, str(Path(__file__).parent))  # tests import checker.py
from servers import VIRTUOSO_MISSING, VirtuosoServer, ntriples  # noqa: E402,F401 - tests import ntriples from here
from servers import free_port as _free_port  # noqa: E402


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` skip unless the marker expression names them (``pytest -m slow``):
    the default run stays within CI's time budget."""
    if "slow" in (config.option.markexpr or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(skip)


@pytest.fixture(scope="session")
def demo_kg() -> KnowledgeGraph:
    return KnowledgeGraph.load(DEMO, lang=("en", "ru"))


@pytest.fixture(scope="session")
def demo_dataset(demo_kg, tmp_path_factory) -> Path:
    """The demo graph's smallest balanced dataset: one scenario per cell, en and ru (146 items)."""
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import synthesize

    out = tmp_path_factory.mktemp("demo-dataset") / "dataset"
    synthesize(demo_kg, SynthConfig.model_validate({"dataset": {"n": 40}}), out)
    return out


@pytest.fixture(scope="session")
def handmade_kg() -> KnowledgeGraph:
    return KnowledgeGraph.load(DATA / "handmade.ttl")


def kill_when_logged(command: list[str], log: Path, marker: bytes, count: int) -> dict[str, str]:
    """Run a kgsynth command and kill it once its progress ``log`` holds ``count`` of
    ``marker`` (or after 120 s); returns the environment it ran with, for the resumed run."""
    env = os.environ | {"PYTHONPATH": str(ROOT / "src")}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not log.exists() or log.read_bytes().count(marker) < count):
        time.sleep(0.02)
    process.kill()
    process.wait()
    return env


class OxigraphServer:
    """A real Oxigraph SPARQL server (pip package ``oxigraph``), in memory, on loopback."""

    def __init__(self, binary: str):
        # another process (parallel test workers start servers too) may take the free port
        # before this server binds it: the server then exits, and another port is tried
        for _ in range(3):
            self.port = _free_port()
            self.base = f"http://127.0.0.1:{self.port}"
            self.query_url = f"{self.base}/query"
            self.process = subprocess.Popen(
                [binary, "serve", "--bind", f"127.0.0.1:{self.port}"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
            )
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    urllib.request.urlopen(f"{self.query_url}?query=ASK%7B%7D", timeout=1).read()
                    if self.process.poll() is None:
                        return
                except OSError:
                    time.sleep(0.05)
            self.stop()
        raise RuntimeError(f"oxigraph serve did not start on port {self.port}")

    def load(self, path: Path, content_type: str = "text/turtle") -> None:
        request = urllib.request.Request(
            f"{self.base}/store?default", data=path.read_bytes(), headers={"Content-Type": content_type}, method="POST"
        )
        urllib.request.urlopen(request, timeout=60).read()

    def clear(self) -> None:
        request = urllib.request.Request(
            f"{self.base}/update", data=b"CLEAR ALL", headers={"Content-Type": "application/sparql-update"}, method="POST"
        )
        urllib.request.urlopen(request, timeout=60).read()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture(scope="session")
def oxigraph_server():
    binary = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not Path(binary).exists():
        pytest.fail("the oxigraph server binary is missing: install the test extras (pip install -e '.[test]')")
    server = OxigraphServer(binary)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def virtuoso_server(tmp_path_factory):
    server, isql = shutil.which("virtuoso-t"), shutil.which("isql-vt")
    if server is None or isql is None:
        pytest.skip(VIRTUOSO_MISSING)
    virtuoso = VirtuosoServer(tmp_path_factory.mktemp("virtuoso"), server, isql)
    try:
        yield virtuoso
    finally:
        virtuoso.stop()
