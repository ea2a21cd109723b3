"""Real SPARQL servers on 127.0.0.1 for the tests and the benchmarks: Virtuoso 7 (Debian's
``virtuoso-opensource``), each dataset in a named graph."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pyoxigraph as ox

from kgsynth.kg import KnowledgeGraph

_INI = """[Database]
DatabaseFile = {db}/virtuoso.db
ErrorLogFile = {db}/virtuoso.log
TransactionFile = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {db}/virtuoso-temp.db
TransactionFile = {db}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql_port}
DirsAllowed = ., {data}
NumberOfBuffers = 170000
MaxDirtyBuffers = 130000
[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
[SPARQL]
ResultSetMaxRows = 10000000
MaxQueryExecutionTime = 3600
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def virtuoso_missing() -> str | None:
    """Why Virtuoso cannot run here, or None."""
    if shutil.which("virtuoso-t") and shutil.which("isql-vt"):
        return None
    return "virtuoso-opensource is not installed: `make test` installs it when run as root with apt-get"


class VirtuosoServer:
    """Virtuoso 7 with its database in ``folder``; ``load`` puts a file into a named graph
    (converted to N-Triples first: Virtuoso's Turtle reader differs in edge cases)."""

    def __init__(self, folder: Path):
        self.folder, self.data = folder, folder / "data"
        (folder / "db").mkdir(parents=True, exist_ok=True)
        self.data.mkdir(exist_ok=True)
        self.sql_port, self.http_port = free_port(), free_port()
        ini = folder / "virtuoso.ini"
        ini.write_text(_INI.format(db=folder / "db", data=self.data, sql_port=self.sql_port, http_port=self.http_port))
        subprocess.run(["virtuoso-t", "-c", str(ini), "+wait"], cwd=folder, check=True, capture_output=True, timeout=120)
        self.pid = int(subprocess.run(["pgrep", "-f", f"virtuoso-t -c {ini}"], capture_output=True, text=True).stdout.split()[0])
        self.loaded: set[str] = set()
        self.files = 0
        self._wait_for_http()

    def query_url(self, graph: str) -> str:
        return f"http://127.0.0.1:{self.http_port}/sparql?default-graph-uri={urllib.parse.quote(graph, safe='')}"

    def load(self, path: Path, graph: str) -> None:
        """Add ``path`` (any RDF file kgsynth reads) to ``graph``."""
        self.files += 1  # a name Virtuoso's load list has not seen: it skips one it loaded before
        target = self.data / f"{self.files}.nt"
        if path.suffix == ".nt":
            shutil.copyfile(path, target)
        else:
            KnowledgeGraph.load(path).backend.store.dump(str(target), format=ox.RdfFormat.N_TRIPLES, from_graph=ox.DefaultGraph())
        before = self.triples(graph)
        out = self._sql(f"ld_dir('{self.data}', '{target.name}', '{graph}'); rdf_loader_run(); checkpoint;")
        target.unlink()
        if self.triples(graph) == before:
            raise RuntimeError(f"Virtuoso loaded no triple of {path}: {' | '.join(out.strip().splitlines()[-3:])}")
        self.loaded.add(graph)

    def triples(self, graph: str) -> int:
        query = urllib.parse.urlencode({"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"})
        request = urllib.request.Request(f"{self.query_url(graph)}&{query}", headers={"Accept": "application/sparql-results+json"})
        with urllib.request.urlopen(request, timeout=600) as answer:
            return int(json.load(answer)["results"]["bindings"][0]["n"]["value"])

    def stop(self) -> None:
        subprocess.run(["isql-vt", f"127.0.0.1:{self.sql_port}", "dba", "dba", "exec=shutdown;"], capture_output=True, timeout=60)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and Path(f"/proc/{self.pid}").exists():
            time.sleep(0.1)
        subprocess.run(["kill", "-9", str(self.pid)], capture_output=True)

    def _sql(self, statements: str) -> str:
        done = subprocess.run(["isql-vt", f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statements}"],
                              capture_output=True, text=True, timeout=3600)
        return done.stdout + done.stderr

    def _wait_for_http(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.http_port}/sparql?query=ASK%7B%7D", timeout=2).read()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"Virtuoso's HTTP server did not start on port {self.http_port}")
