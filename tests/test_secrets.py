"""No API key in any message or output, even from a server that echoes it back.

The server is the LLM FAULT INJECTOR (tests/llm_fault_injector.py), for error handling
only: its "401_echo" and "500_echo" faults answer with a body that repeats the request's
Authorization header and every other header, as a careless server or proxy does. Each
test first checks that the key really reached the server (so the echo held it), then that
it is in no error, result, exception, cache or output file.
"""

from __future__ import annotations

import html
import json
import os
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from conftest import DEMO, ROOT, _free_port
from llm_fault_injector import FaultInjectingServer

from kgsynth.errors import KgsynthError
from kgsynth.llm import REDACTED, LLMGateway, LLMUnreachableError, ModelConfig, Request, ResponseCache, redact

KEY = "kgs-test-secret-7c41e9a2d05b8f36"  # not shaped like any known key: only the configured value finds it
OPENAI_SHAPED = "sk-proj-Q2hhbmdlTWVJZllvdVNlZU1lMTIzNDU2Nzg5"
ENV = "KGSYNTH_TEST_API_KEY"


def _hi(stage: str = "t") -> Request:
    return Request([{"role": "user", "content": "hi"}], stage=stage)


def _gateway(server: FaultInjectingServer, cache: ResponseCache | None = None, **fields) -> LLMGateway:
    config = {"base_url": server.base_url, "model": "test", "api_key_env": ENV, "timeout_s": 2, "max_retries": 1,
              "backoff_s": 0.01, "max_backoff_s": 0.05} | fields
    return LLMGateway(ModelConfig(**config), cache)


def _sent_the_key(server: FaultInjectingServer, key: str = KEY) -> bool:
    return any(h.get("authorization") == f"Bearer {key}" for h in server.headers)


# ---------------------------------------------------------------------------- redact()
def test_redact_removes_the_given_secret_in_every_spelling():
    key = 'odd"key\\with/parts+and space'
    for text in (f"got {key}", json.dumps({"k": key}), repr({"k": key}), f"url?x={urllib.parse.quote(key, safe='')}"):
        assert REDACTED in redact(text, secrets=[key])
    for form in (key, json.dumps(key)[1:-1], repr(key)[1:-1]):
        assert form not in redact(json.dumps({"k": key}) + repr({"k": key}), secrets=[key])


@pytest.mark.parametrize("spelling", [
    lambda key: f"<p>token {key[:17]}</p>",  # cut short by whoever showed it
    lambda key: f"…{key[9:]}",
    lambda key: html.escape(f"<{key}>"),
    lambda key: "".join(f"%{ord(c):02x}" if not c.isalnum() else c for c in key),  # lower-case escapes
    lambda key: urllib.parse.quote_plus(key),
    lambda key: json.dumps({"t": key}).replace("&", "\\u0026"),  # as Go's encoder writes "&"
    lambda key: "".join(f"&#{ord(c)};" for c in key[:10]) + key[10:],
    lambda key: key.lower(),
])
def test_redact_removes_every_piece_of_a_secret_in_any_spelling(spelling):
    key = 'p@ss/Wo"rd+ 42&xYz=9'
    cleaned = redact(f"said: {spelling(key)} (end)", secrets=[key])
    assert REDACTED in cleaned and cleaned.startswith("said: ") and cleaned.endswith(" (end)")
    assert _key_pieces_in(cleaned, key) == [], cleaned


def test_redact_leaves_short_runs_of_a_secret_and_its_case_alone():
    key = "Zq8/wX3+vK9=pL2mR7tY4nB6"
    assert redact("Zq8/wX3 and 4nB6", secrets=[key]) == "Zq8/wX3 and 4nB6"  # 7 characters: not taken for a leak
    assert redact("a TEST of test", secrets=["test"]) == f"a TEST of {REDACTED}"  # a short secret: only as it is


@pytest.mark.parametrize("text", [
    f"Authorization: Bearer {OPENAI_SHAPED}",
    f"{{'error': {{'headers': {{'authorization': 'Bearer {OPENAI_SHAPED}'}}}}}}",
    f'{{"Authorization": "Bearer {OPENAI_SHAPED}", "x-api-key": "{OPENAI_SHAPED}"}}',
    f"proxy said: bad token {OPENAI_SHAPED}",
    f"https://user:{OPENAI_SHAPED}@proxy.example/v1",
    f"GET /v1/models?api_key={OPENAI_SHAPED}&x=1",
    f"Bearer {OPENAI_SHAPED}",
])
def test_redact_removes_anything_shaped_like_a_credential(text):
    cleaned = redact(text)
    assert OPENAI_SHAPED not in cleaned and REDACTED in cleaned
    assert redact(cleaned) == cleaned  # idempotent: a writer may apply it again


def test_redact_leaves_ordinary_text_and_keeps_json_valid():
    for text in ("Bearer bonds pay 5%", "set api_key_env = OPENAI_API_KEY", "HTTP 404: no route /v1/chat", "sk-short"):
        assert redact(text) == text
    row = json.dumps({"reason": f"HTTP 401: Authorization: Bearer {OPENAI_SHAPED}", "n": 1})
    assert json.loads(redact(row))["reason"] == f"HTTP 401: Authorization: Bearer {REDACTED}"


# ---------------------------------------------------------------------------- the gateway
@pytest.mark.parametrize(("fault", "status"), [("401_echo", "HTTP 401"), ("500_echo", "HTTP 500")])
def test_an_echoed_key_is_in_no_gateway_error(monkeypatch, fault, status):
    monkeypatch.setenv(ENV, KEY)
    with FaultInjectingServer(lambda body: "ok", script=[fault] * 2) as server:
        gateway = _gateway(server)
        [result] = gateway.complete_all([_hi()])
    assert _sent_the_key(server)
    assert not result.ok and status in result.error and REDACTED in result.error
    assert KEY not in result.error and KEY not in result.model_dump_json()
    assert redact(f"a writer's line with {KEY}") == f"a writer's line with {REDACTED}"  # the gateway registered its key


def test_an_openai_shaped_key_echoed_is_in_no_error(monkeypatch):
    monkeypatch.setenv(ENV, OPENAI_SHAPED)
    with FaultInjectingServer(lambda body: "ok", script=["401_echo"]) as server:
        [result] = _gateway(server).complete_all([_hi()])
    assert _sent_the_key(server, OPENAI_SHAPED) and not result.ok and OPENAI_SHAPED not in result.error


def test_a_reply_that_repeats_the_key_keeps_it_out_of_the_result_and_the_cache(monkeypatch, tmp_path):
    monkeypatch.setenv(ENV, KEY)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    with FaultInjectingServer(lambda body: f"the key you sent is {KEY}") as server:
        [result] = _gateway(server, cache).complete_all([_hi()])
    cache.close()
    assert _sent_the_key(server) and result.ok and result.text == f"the key you sent is {REDACTED}"
    assert not any(KEY.encode() in path.read_bytes() for path in tmp_path.iterdir())


def test_credentials_in_the_base_url_are_in_no_exception():
    base_url = f"http://someone:{KEY}@127.0.0.1:{_free_port()}/v1"
    gateway = LLMGateway(ModelConfig(base_url=base_url, model="test", max_retries=0), raise_unreachable=True)
    with pytest.raises(LLMUnreachableError) as caught:
        gateway.complete_all([_hi()])
    assert KEY not in str(caught.value) and "connection refused" in str(caught.value)


# ---------------------------------------------------------------------------- end to end
def _kgsynth(*args: str, key: str = KEY) -> subprocess.CompletedProcess:
    env = os.environ | {"PYTHONPATH": str(ROOT / "src"), ENV: key}
    return subprocess.run([sys.executable, "-m", "kgsynth.cli", *args], env=env, capture_output=True, text=True, check=False)


def _files_holding(folder: Path, secret: str) -> list[str]:
    return [str(p) for p in sorted(folder.rglob("*")) if p.is_file() and secret.encode() in p.read_bytes()]


def test_kgsynth_eval_writes_no_echoed_key(demo_dataset, tmp_path):
    """One good answer, then every request gets a 401 that echoes the key: the failure rows
    (results.jsonl), run.json, the report and the terminal hold no key."""
    (tmp_path / "eval.toml").write_text(f'[model]\napi_key_env = "{ENV}"\ncache = "{tmp_path / "cache.sqlite"}"\n'
                                        'max_retries = 0\ntimeout_s = 5\n')
    with FaultInjectingServer(lambda body: "42", script=["ok"], rate=1.0, faults=("401_echo",)) as server:
        run = _kgsynth("eval", "--dataset", str(demo_dataset), "--config", str(tmp_path / "eval.toml"),
                       "--base-url", server.base_url, "--out", str(tmp_path / "out"), "--limit", "3")
    assert _sent_the_key(server)
    assert KEY not in run.stdout + run.stderr, run.stderr
    rows = [json.loads(line) for line in (tmp_path / "out" / "results.jsonl").read_text().splitlines()]
    failures = [r["failure"] for r in rows if r["failure"]]
    assert failures and all("HTTP 401" in f and REDACTED in f for f in failures)
    assert _files_holding(tmp_path, KEY) == []


def test_kgsynth_synth_with_a_model_writes_no_echoed_key(tmp_path):
    """Every generation gets a 401 that echoes the key: rejections.jsonl records each with
    its reason, and no output file nor the terminal holds the key."""
    (tmp_path / "synth.toml").write_text(
        '[dataset]\nn = 4\ndifficulties = ["easy"]\nformats = ["number"]\n[sampling]\nsubgraphs_per_shape = 30\n'
        f'[llm]\napi_key_env = "{ENV}"\ncache = "{tmp_path / "cache.sqlite"}"\nmax_retries = 0\ntimeout_s = 5\n'
    )
    with FaultInjectingServer(lambda body: "{}", rate=1.0, faults=("401_echo",)) as server:
        run = _kgsynth("synth", "--graph", str(DEMO), "--config", str(tmp_path / "synth.toml"),
                       "--llm-base-url", server.base_url, "--out", str(tmp_path / "out"))
    assert _sent_the_key(server)
    assert KEY not in run.stdout + run.stderr, run.stderr
    rejections = [json.loads(line) for line in (tmp_path / "out" / "rejections.jsonl").read_text().splitlines()]
    failed = [r["reason"] for r in rejections if "HTTP 401" in r["reason"]]
    assert failed and all(REDACTED in reason for reason in failed)
    assert _files_holding(tmp_path, KEY) == []


ODD_KEY = "Zq8/wX3+vK9=pL2mR7tY4nB6"  # "/", "+" and "=" change when URL-encoded
HTML_ECHOES = ("html_echo_200", "html_echo_401", "html_echo_500")
_CLAIM = {"id": "c1", "setting": "world_knowledge", "language": "en", "speaker": "Alex",
          "question": "What is the nationality of Jean Dupont?", "format_instruction": "Answer with at most 4 words.",
          "answer_format": "short_text", "true_value": "France", "false_value": "Italy",
          "claim": "the nationality of Jean Dupont is Italy", "claim_value": "Italy", "kind": "entity",
          "confusability": "high", "how": "another object of nationality", "triple": "<x:s> <x:r> <x:o> ."}


def _key_pieces_in(text: str, key: str = ODD_KEY) -> list[str]:
    """The 8-character pieces of ``key`` that ``text`` holds as they are, HTML-escaped or
    URL-encoded, in any case."""
    lowered = text.lower()
    pieces = [key[i:i + 8] for i in range(len(key) - 7)]
    return [piece for piece in pieces
            if any(form.lower() in lowered for form in (piece, html.escape(piece), urllib.parse.quote(piece, safe="")))]


def _echo_run(command: str, url: str, tmp_path: Path, demo_dataset: Path) -> list[str]:
    cache = f'cache = "{tmp_path / "cache.sqlite"}"\nmax_retries = 0\ntimeout_s = 5\n'
    config = tmp_path / "c.toml"
    if command == "synth":
        config.write_text('[dataset]\nn = 4\ndifficulties = ["easy"]\nformats = ["number"]\n[sampling]\nsubgraphs_per_shape = 30\n'
                          f"[llm]\n{cache}")
        return ["synth", "--graph", str(DEMO), "--config", str(config), "--llm-base-url", url, "--out", str(tmp_path / "out")]
    if command == "eval":
        config.write_text(f"[model]\n{cache}")
        return ["eval", "--dataset", str(demo_dataset), "--config", str(config), "--base-url", url, "--out", str(tmp_path / "out"),
                "--limit", "3"]
    if command == "ingest":
        config.write_text(f"[extraction]\n{cache}")
        (tmp_path / "doc.txt").write_text("Anna Petrova works at Zarechye Bank. She was born in 1990.")
        return ["ingest", str(tmp_path / "doc.txt"), "--config", str(config), "--llm-base-url", url, "--out", str(tmp_path / "g.trig")]
    (tmp_path / "claims.jsonl").write_text(json.dumps(_CLAIM) + "\n")
    config.write_text(f'policies = ["farm"]\n[model]\n{cache}')
    return ["pressure", "run", "--claims", str(tmp_path / "claims.jsonl"), "--config", str(config), "--base-url", url,
            "--out", str(tmp_path / "out")]


@pytest.mark.parametrize("command", ["synth", "eval", "ingest", "pressure"])
def test_a_key_echoed_in_html_pages_in_part_escaped_and_encoded_is_in_no_output(command, demo_dataset, tmp_path):
    """Every request gets an HTML page (200, 401 or 500) showing the key cut short, in full
    HTML-escaped and URL-encoded with lower-case escapes: no 8-character piece of it, in
    any of those spellings, reaches the terminal or a file the command wrote."""
    (tmp_path / "run").mkdir()
    with FaultInjectingServer(lambda body: "{}", rate=1.0, faults=HTML_ECHOES) as server:
        argv = _echo_run(command, server.base_url, tmp_path / "run", demo_dataset)
        env = os.environ | {"PYTHONPATH": str(ROOT / "src"), "OPENAI_API_KEY": ODD_KEY}
        run = subprocess.run([sys.executable, "-m", "kgsynth.cli", *argv], env=env, capture_output=True, text=True, check=False, timeout=300)
    assert _sent_the_key(server, ODD_KEY) and len(server.requests) >= 1
    assert _key_pieces_in(run.stdout + run.stderr) == [], run.stderr
    written = {str(p): _key_pieces_in(p.read_bytes().decode("latin-1")) for p in (tmp_path / "run").rglob("*") if p.is_file()}
    assert {path: pieces for path, pieces in written.items() if pieces} == {}


def test_rejection_reasons_are_redacted_before_they_are_written(demo_kg, tmp_path, monkeypatch):
    """The second layer: a filter whose reason quotes a credential (as a server's error body
    may) gets it redacted in the progress log and rejections.jsonl."""
    from kgsynth.filters import StructureFilter
    from kgsynth.pipeline.config import SynthConfig
    from kgsynth.pipeline.run import synthesize

    leaked = "Authorization: Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123"
    original = StructureFilter.reason
    monkeypatch.setattr(StructureFilter, "reason", lambda self, item: f"server said {leaked}" if item.language == "ru" else original(self, item))
    with pytest.raises(KgsynthError, match="wrote no item"):  # every Russian item rejected: no scenario passes
        synthesize(demo_kg, SynthConfig.model_validate({"dataset": {"n": 122}}), tmp_path / "out")
    written = (tmp_path / "out" / "rejections.jsonl").read_text(encoding="utf-8")
    assert f"server said Authorization: Bearer {REDACTED}" in written and "sk-proj" not in written


@pytest.mark.parametrize("argv", [["graph", "stats", "--endpoint", "http://alice:S3cretPw@127.0.0.1/sparql"],
                                  ["synth", "--llm-base-url", "http://bob:S3cretPw@127.0.0.1:8001/v1"]])
def test_a_password_in_a_url_is_refused_without_being_repeated(argv, tmp_path, capsys):
    from kgsynth.cli._app import run

    assert run([*argv, *(["--out", str(tmp_path / "out")] if argv[0] == "synth" else [])]) == 1
    err = capsys.readouterr().err
    assert "a user name or password in the URL is refused" in err and "S3cretPw" not in err and err.count("\n") == 1


def test_an_endpoint_backend_refuses_a_password_in_its_url():
    from kgsynth.errors import EndpointError
    from kgsynth.kg import EndpointBackend

    with pytest.raises(EndpointError, match="^SPARQL endpoint http://127.0.0.1/sparql: a user name or password") as caught:
        EndpointBackend("http://alice:S3cretPw@127.0.0.1/sparql")
    assert "S3cretPw" not in str(caught.value)


# ---------------------------------------------------------------------------- SPARQL endpoint credentials
# The gate is FakeAuthGate (tests/sparql_fakes.py): HTTP Basic or Digest in front of the real
# `oxigraph serve`, as nginx or Virtuoso's /sparql-auth would be; echo=True makes it a careless
# server whose HTTP 500 repeats the Authorization header and the password.
SPARQL_USER = "kgs-reader"
SPARQL_PASSWORD = "Kgs:sparql/pw-5e81c07d"  # a colon and a slash: the URL-encoded and Basic forms differ


def _sparql_env(monkeypatch, password: str = SPARQL_PASSWORD) -> None:
    monkeypatch.setenv("KGSYNTH_SPARQL_USER", SPARQL_USER)
    monkeypatch.setenv("KGSYNTH_SPARQL_PASSWORD", password)


def _secret_forms(password: str = SPARQL_PASSWORD) -> list[str]:
    import base64

    return [password, urllib.parse.quote(password, safe=""), base64.b64encode(f"{SPARQL_USER}:{password}".encode()).decode()]


@pytest.fixture
def handmade_served(oxigraph_server):
    oxigraph_server.clear()
    oxigraph_server.load(ROOT / "tests" / "data" / "handmade.ttl")
    return oxigraph_server


@pytest.mark.parametrize("scheme", ["Basic", "Digest"])
def test_sparql_credentials_from_the_environment_open_a_protected_endpoint(scheme, handmade_served, monkeypatch):
    from sparql_fakes import FakeAuthGate

    from kgsynth.kg import Credentials, KnowledgeGraph

    _sparql_env(monkeypatch)
    auth = Credentials.from_env()
    with FakeAuthGate(handmade_served.query_url, scheme, SPARQL_USER, SPARQL_PASSWORD) as gate:
        kg = KnowledgeGraph.from_endpoint(gate.url, auth=auth)
        triples = len(kg)
    assert triples == len(KnowledgeGraph.load(ROOT / "tests" / "data" / "handmade.ttl"))
    assert gate.challenged >= 1 and gate.authorized >= 2  # challenged, then every query answered with the credentials
    assert all(a.startswith(f"{scheme} ") for a in gate.authorizations if a)
    for text in (repr(auth), repr(kg.backend), repr(kg), kg.backend.description, str(vars(kg.backend).get("description"))):
        assert not any(form in text for form in _secret_forms()), text


def test_sparql_credentials_are_in_no_output_of_graph_subgraphs(handmade_served, tmp_path):
    from sparql_fakes import FakeAuthGate

    out = tmp_path / "out" / "simple.jsonl"
    env = os.environ | {"PYTHONPATH": str(ROOT / "src"), "KGSYNTH_SPARQL_USER": SPARQL_USER, "KGSYNTH_SPARQL_PASSWORD": SPARQL_PASSWORD}
    with FakeAuthGate(handmade_served.query_url, "Digest", SPARQL_USER, SPARQL_PASSWORD) as gate:
        run = subprocess.run([sys.executable, "-m", "kgsynth.cli", "graph", "subgraphs", "--endpoint", gate.url, "--shape", "simple",
                              "--limit", "5", "--out", str(out)], env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 0 and len(out.read_text().splitlines()) == 5, run.stderr
    assert gate.authorized > 0
    for form in _secret_forms():
        assert form not in run.stdout + run.stderr and _files_holding(tmp_path, form) == []


@pytest.mark.parametrize("scheme", ["Basic", "Digest"])
def test_an_echoed_sparql_password_is_in_no_error(scheme, handmade_served, monkeypatch, capsys):
    """The backend takes the password out itself (the kg layer knows no redact()), and the
    command line's one line holds it in no form either."""
    from sparql_fakes import FakeAuthGate

    from kgsynth.cli._app import run
    from kgsynth.errors import EndpointError
    from kgsynth.kg import Credentials, EndpointBackend

    with FakeAuthGate(handmade_served.query_url, scheme, SPARQL_USER, SPARQL_PASSWORD, echo=True) as gate:
        with pytest.raises(EndpointError) as caught:
            list(EndpointBackend(gate.url, auth=Credentials(SPARQL_USER, SPARQL_PASSWORD), retries=0).select("SELECT * {?s ?p ?o}"))
        _sparql_env(monkeypatch)
        code = run(["graph", "stats", "--endpoint", gate.url, "--retries", "0"])
    assert gate.authorized == 2  # the credentials reached the gate, and it echoed them
    message, err = str(caught.value), capsys.readouterr().err
    assert "HTTP 500" in message and "[REDACTED]" in message
    assert code == 1 and err.startswith("error: ") and err.count("\n") == 1 and "HTTP 500" in err
    for form in _secret_forms():
        assert form not in message and form not in err


ODD_PASSWORD = "Pw/8+Kq=zR4&x<Y7>mN2"  # "/", "+", "=", "&" and "<" change when URL-encoded or HTML-escaped
ENDPOINT_COMMANDS = {
    "stats": lambda url, out: ["graph", "stats", "--endpoint", url, "--retries", "0"],
    "subgraphs": lambda url, out: ["graph", "subgraphs", "--endpoint", url, "--shape", "simple", "--retries", "0",
                                   "--out", str(out / "s.jsonl")],
    "rules": lambda url, out: ["rules", "suggest", "--endpoint", url, "--retries", "0", "--out", str(out / "rules.ttl")],
    "synth": lambda url, out: ["synth", "--endpoint", url, "--n", "4", "--out", str(out / "dataset")],
}


@pytest.mark.parametrize("command", ENDPOINT_COMMANDS)
@pytest.mark.parametrize("status", [200, 401, 500])
def test_a_sparql_password_echoed_in_an_html_page_is_in_no_output(command, status, monkeypatch, tmp_path, capsys):
    """The endpoint path: a server that answers an HTML page (200, 401 or 500) showing the
    password cut short, HTML-escaped and URL-encoded, and the Authorization header: no
    8-character piece of the password, in any of those spellings, reaches the terminal or a
    file the command wrote."""
    from sparql_fakes import FakeAuthGate

    from kgsynth.cli._app import run

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys.modules["kgsynth.llm.redact"], "_registered", set())  # what earlier tests registered does not help here
    _sparql_env(monkeypatch, ODD_PASSWORD)
    with FakeAuthGate("http://127.0.0.1:9/never", "Basic", SPARQL_USER, ODD_PASSWORD, echo=status) as gate:
        code = run(ENDPOINT_COMMANDS[command](gate.url, tmp_path))
    out, err = capsys.readouterr()
    assert gate.authorized >= 1 and code == 1, err
    assert _key_pieces_in(out + err, ODD_PASSWORD) == [], err
    written = {str(p): _key_pieces_in(p.read_bytes().decode("latin-1"), ODD_PASSWORD) for p in tmp_path.rglob("*") if p.is_file()}
    assert {path: pieces for path, pieces in written.items() if pieces} == {}


@pytest.mark.parametrize("scheme", ["Basic", "Digest"])
def test_refused_or_missing_sparql_credentials_are_one_line_without_the_password(scheme, handmade_served, monkeypatch, capsys):
    from sparql_fakes import FakeAuthGate

    from kgsynth.cli._app import run

    wrong = "Wrong:sparql/pw-9a7b3c1d"
    with FakeAuthGate(handmade_served.query_url, scheme, SPARQL_USER, SPARQL_PASSWORD) as gate:
        _sparql_env(monkeypatch, wrong)
        refused = run(["graph", "stats", "--endpoint", gate.url])
        refused_err = capsys.readouterr().err
        monkeypatch.delenv("KGSYNTH_SPARQL_USER")
        monkeypatch.delenv("KGSYNTH_SPARQL_PASSWORD")
        missing = run(["graph", "stats", "--endpoint", gate.url])
        missing_err = capsys.readouterr().err
    assert gate.authorized == 0
    assert refused == 1 and refused_err.count("\n") == 1 and "HTTP 401" in refused_err
    assert refused_err.rstrip().endswith("(the user name and password given were refused)"), refused_err
    assert not any(form in refused_err for form in _secret_forms(wrong) + _secret_forms())
    assert missing == 1 and missing_err.rstrip().endswith(
        "(no user name and password were given: set KGSYNTH_SPARQL_USER and KGSYNTH_SPARQL_PASSWORD)"), missing_err


@pytest.mark.parametrize(("env", "message"), [
    ({"KGSYNTH_SPARQL_USER": SPARQL_USER}, "KGSYNTH_SPARQL_USER is set but KGSYNTH_SPARQL_PASSWORD is not"),
    ({"KGSYNTH_SPARQL_PASSWORD": SPARQL_PASSWORD}, "KGSYNTH_SPARQL_PASSWORD is set but KGSYNTH_SPARQL_USER is not"),
])
def test_half_a_sparql_credential_is_one_line_naming_the_variables(env, message, monkeypatch, capsys):
    from kgsynth.cli._app import run

    monkeypatch.delenv("KGSYNTH_SPARQL_USER", raising=False)
    monkeypatch.delenv("KGSYNTH_SPARQL_PASSWORD", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert run(["graph", "stats", "--endpoint", f"http://127.0.0.1:{_free_port()}/sparql"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {message}") and err.count("\n") == 1 and SPARQL_PASSWORD not in err
