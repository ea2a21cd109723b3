"""Real SPARQL servers on 127.0.0.1 for the tests (fixtures in conftest.py) and the
benchmarks (bench/server.py): Virtuoso 7, Debian's ``virtuoso-opensource``."""

from __future__ import annotations

import contextlib
import ctypes
import json
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pyoxigraph as ox

from kgsynth.kg._load import load_file, rdf_files


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


VIRTUOSO_MISSING = "virtuoso-opensource is not installed: `make test` installs it when run as root with apt-get"
_VIRTUOSO_INI = """\
[Database]
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
NumberOfBuffers = 40000
MaxDirtyBuffers = 30000
[HTTPServer]
ServerPort = 127.0.0.1:{http_port}
[SPARQL]
ResultSetMaxRows = {max_rows}
MaxQueryExecutionTime = 600
"""
_LOAD_STATE = re.compile(r"^LOADSTATE\s+(\d+)\s+(.*?)\s*$", re.MULTILINE)


def ntriples(paths: list[Path] | tuple[Path, ...], out: Path) -> int:
    """The triples of RDF files or folders, read as ``KnowledgeGraph.load`` reads them (named
    graphs merged), written to ``out`` as N-Triples; returns how many there are."""
    store = ox.Store()
    for path in paths:
        for file in rdf_files(Path(path)):
            load_file(store, file)
    triples = {quad.triple for quad in store}
    ox.serialize(triples, out, ox.RdfFormat.N_TRIPLES)
    return len(triples)


def _die_with_parent() -> None:
    """Run in the server's process before it starts: the kernel kills it when the test session's
    process ends, however that ends (a killed pytest leaves no server behind)."""
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class VirtuosoServer:
    """A real Virtuoso 7 (Debian's ``virtuoso-opensource``), run in the foreground as this
    session's child, in its own folder on free loopback ports, so sessions side by side never
    meet. It is shared and stateful: each dataset is a named graph, loaded once per session
    (:meth:`load`), and queried through :meth:`query_url`."""

    def __init__(self, folder: Path, server: str, isql: str, max_rows: int = 200_000):
        """``max_rows``: Virtuoso's ResultSetMaxRows, where it cuts an answer (and says so in a header)."""
        self.folder, self.isql, self.max_rows = folder, isql, max_rows
        self.db, self.data = folder / "db", folder / "data"
        self.db.mkdir(parents=True, exist_ok=True)
        self.data.mkdir(exist_ok=True)
        self.graphs: dict[str, tuple[Path, ...]] = {}
        for _ in range(3):  # another process may take a free port before Virtuoso binds it
            self.sql_port, self.http_port = free_port(), free_port()
            if self.sql_port == self.http_port:
                continue
            self.base = f"http://127.0.0.1:{self.http_port}"
            ini = _VIRTUOSO_INI.format(db=self.db, data=self.data, sql_port=self.sql_port, http_port=self.http_port,
                                       max_rows=max_rows)
            (folder / "virtuoso.ini").write_text(ini)
            with (folder / "virtuoso.out").open("ab") as out:
                self.process = subprocess.Popen(
                    [server, "-f", "-c", "virtuoso.ini"], cwd=folder, stdin=subprocess.DEVNULL, stdout=out,
                    stderr=subprocess.STDOUT, preexec_fn=_die_with_parent if sys.platform == "linux" else None,
                )
            if self._wait_up(timeout=60):
                return
            self._kill()
        raise RuntimeError(f"virtuoso-t did not start in {folder}: {self._log_tail()}")

    def _wait_up(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        ask = urllib.request.Request(f"{self.base}/sparql?query=ASK%7B%7D", headers={"Accept": "application/sparql-results+json"})
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                answer = urllib.request.urlopen(ask, timeout=2).read()
                return b'"head"' in answer and self.process.poll() is None  # ours, not a stranger on the port
            except OSError:
                time.sleep(0.1)
        return False

    def _log_tail(self) -> str:
        log = (self.folder / "virtuoso.out").read_text(errors="replace").strip().splitlines()
        return " / ".join(log[-3:]) or "no output"

    def _sql(self, statements: str) -> str:
        """Run SQL statements with isql-vt; it exits 0 after some errors, so stderr is read."""
        result = subprocess.run(
            [self.isql, f"127.0.0.1:{self.sql_port}", "dba", "dba", f"exec={statements}"],
            capture_output=True, text=True, timeout=600,
        )
        errors = [line for line in result.stderr.splitlines() if "Error" in line]
        if result.returncode != 0 or errors:
            raise RuntimeError(f"isql-vt {statements[:200]!r} failed: {' / '.join(errors) or result.stderr.strip()}")
        return result.stdout

    def query_url(self, graph: str) -> str:
        """The SPARQL endpoint URL that queries the named graph ``graph`` as its default graph."""
        return f"{self.base}/sparql?default-graph-uri={urllib.parse.quote(graph, safe='')}"

    def load(self, graph: str, *paths: Path) -> str:
        """Load RDF files (via N-Triples written by pyoxigraph: Virtuoso's Turtle parser differs
        in edge cases) into the named graph ``graph``, once per session; returns its query URL.
        A load Virtuoso reports as failed, or that leaves another number of triples, fails here."""
        files = tuple(Path(p).resolve() for p in paths)
        if graph in self.graphs:
            if self.graphs[graph] != files:
                raise ValueError(f"graph {graph} holds {[str(f) for f in self.graphs[graph]]}: load other files into another graph")
            return self.query_url(graph)
        ox.NamedNode(graph)  # an IRI, and no quote to escape in the SQL below
        name = f"graph-{len(self.graphs) + 1}.nt"
        count = ntriples(files, self.data / name)
        output = self._sql(
            f"ld_dir('{self.data}', '{name}', '{graph}'); rdf_loader_run(); checkpoint; "
            f"SELECT 'LOADSTATE', ll_state, ll_error FROM DB.DBA.load_list WHERE ll_file = '{self.data / name}';"
        )
        state = _LOAD_STATE.search(output)
        if state is None or state[1] != "2" or state[2] != "NULL":
            detail = state[2] if state else output.strip().splitlines()[-1:]
            raise RuntimeError(f"Virtuoso did not load {', '.join(map(str, files))} into {graph}: {detail}")
        loaded = self._count(graph)
        if loaded != count:
            raise RuntimeError(f"Virtuoso holds {loaded:,} triples in {graph}, the files {count:,}")
        (self.data / name).unlink()
        self.graphs[graph] = files
        return self.query_url(graph)

    def _count(self, graph: str) -> int:
        query = urllib.parse.quote("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        request = urllib.request.Request(
            f"{self.query_url(graph)}&query={query}", headers={"Accept": "application/sparql-results+json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return int(json.load(response)["results"]["bindings"][0]["n"]["value"])

    def _kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def stop(self) -> None:
        """Shut down cleanly (``shutdown`` through isql-vt), killing the server if it lingers;
        the database files go, the log stays."""
        if self.process.poll() is None:
            with contextlib.suppress(RuntimeError, OSError, subprocess.SubprocessError):
                self._sql("shutdown;")
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self._kill()
        for path in self.db.glob("*"):
            if path.suffix != ".log":
                path.unlink(missing_ok=True)
        shutil.rmtree(self.data, ignore_errors=True)
