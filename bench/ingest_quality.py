"""`kgsynth ingest` on real documents nobody on the team wrote, scored against their gold
(../shared/external: Re-DocRED, English Wikipedia with Wikidata facts and entity clusters;
WebNLG 2020, short English and Russian texts with the DBpedia triples they state).

Steps: sample 6 Re-DocRED and 5 + 5 WebNLG documents (seeded) in two batches; build a
Wikidata-shaped graph holding every second Re-DocRED fact of them (items with labels and
aliases, wdt: statements; a date as xsd:dateTime) in ``oxigraph serve``; ingest batch 1,
then both batches, with the model and ``--wikidata``; score; synthesise items from the
graph; release batch 1 as 1.0.0 and both as 1.1.0 and check that no item repeats and that
``datasets.load_dataset(dir, "questions")`` loads each.

Scores (English only: WebNLG's Russian texts come with English DBpedia names):
- triples: an extracted triple is right when its subject and object name the head and the
  tail of a gold fact (either way round: a model may say "founder of" for "founded by");
  relations are not compared (the model's phrases against Wikidata / DBpedia ids). Names
  match when folded they have rapidfuzz ratio >= 85, one holds the other as whole words
  (4+ letters), or both read as the same date. Precision over distinct (subject, object)
  pairs extracted, recall over gold facts.
- entity resolution: pairs of distinct extracted names of one Re-DocRED document, each
  mapped to the gold cluster it names: merged and in one cluster (right), merged and not
  (wrong), one cluster and not merged (missed).
- entity resolution on gold mentions: the same pairs over Re-DocRED's own mentions (name,
  type, sentence) of 40 documents (seeded), resolved with the model against exact names only.
- Wikidata: the label of every checked fact that matches a gold fact, by whether that fact
  was loaded.

Run: ``.venv/bin/python bench/ingest_quality.py`` (starts Qwen2.5-Coder-0.5B, ``make
llm-local``) or ``--base-url URL`` for a running server. About 10 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

from rapidfuzz import fuzz

ROOT = Path(__file__).resolve().parents[1]
EXTERNAL = ROOT.parent / "shared" / "external"
sys.path.insert(0, str(ROOT / "tests"))

from local_llm import QWEN05_SHA256, llama_server, qwen05_path, verify  # noqa: E402
from servers import free_port  # noqa: E402

from kgsynth.ingest.extraction import fold  # noqa: E402
from kgsynth.ingest.values import date_of  # noqa: E402


# ----------------------------------------------------------------------------- the sample and its gold
def _detokenised(sentences: list[list[str]]) -> str:
    text = " ".join(" ".join(s) for s in sentences)
    text = re.sub(r" ([.,;:!?%)\]])", r"\1", text)
    text = re.sub(r"([(\[]) ", r"\1", text)
    text = re.sub(r'" (.*?) "', r'"\1"', text)
    return text.replace(" 's", "'s").replace(" n't", "n't")


def _dbpedia_name(name: str) -> str:
    return re.sub(r"\s*\(.*?\)$", "", name.strip('"').replace("_", " ")).strip()


def sample(seed: int) -> tuple[list[list[dict]], dict]:
    """Two batches of documents and the gold of each document."""
    rng = random.Random(seed)
    redocred = json.load(gzip.open(EXTERNAL / "redocred" / "dev_revised.json.gz"))
    short = sorted(range(len(redocred)), key=lambda i: len(_detokenised(redocred[i]["sents"])))[:40]
    docs, gold = [], {}
    for i in sorted(rng.sample(short, 6)):
        d = redocred[i]
        docs.append({"id": f"redocred-{i}", "lang": "en", "title": d["title"], "text": _detokenised(d["sents"])})
        sentences = [_detokenised([s]) for s in d["sents"]]
        gold[f"redocred-{i}"] = {"source": "redocred", "lang": "en", "clusters": [sorted({m["name"] for m in v}) for v in d["vertexSet"]],
                                 "types": [v[0]["type"] for v in d["vertexSet"]], "facts": d["labels"],
                                 "mentions": [[(m["name"], sentences[m["sent_id"]]) for m in v] for v in d["vertexSet"]]}
    for lang in ("en", "ru"):
        rows = [json.loads(line) for line in gzip.open(EXTERNAL / "webnlg2020" / f"train_{lang}.jsonl.gz", "rt")]
        for r in rng.sample([r for r in rows if 3 <= r["size"] <= 5], 5):
            doc_id = f"webnlg-{lang}-{r['eid']}"
            docs.append({"id": doc_id, "lang": lang, "title": r["category"], "text": r["text"]})
            gold[doc_id] = {"source": "webnlg", "lang": lang, "triples": [[_dbpedia_name(s), p, _dbpedia_name(o)] for s, p, o in r["triples"]]}
    return [docs[0:3] + docs[6:8] + docs[11:13], docs[3:6] + docs[8:11] + docs[13:16]], gold


def wikidata_shaped(gold: dict) -> tuple[str, dict[str, bool]]:
    """Turtle holding every second Re-DocRED fact (by index in its document), and which were loaded."""
    lines = ["@prefix wd: <http://www.wikidata.org/entity/> .", "@prefix wdt: <http://www.wikidata.org/prop/direct/> .",
             "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .", "@prefix skos: <http://www.w3.org/2004/02/skos/core#> .",
             "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> ."]
    loaded = {}
    for doc_id, g in gold.items():
        if g["source"] != "redocred":
            continue
        number = int(doc_id.split("-")[1])

        def item(index: int, number: int = number) -> str:
            return f"wd:Q{1_000_000 + number * 1000 + index}"

        for index, names in enumerate(g["clusters"]):
            main = max(names, key=len)
            aliases = "".join(f" ; skos:altLabel {json.dumps(a, ensure_ascii=False)}@en" for a in names if a != main)
            lines.append(f"{item(index)} rdfs:label {json.dumps(main, ensure_ascii=False)}@en{aliases} .")
        for k, fact in enumerate(g["facts"]):
            loaded[f"{doc_id}:{k}"] = k % 2 == 0
            if k % 2:
                continue
            value = next((v for name in sorted(g["clusters"][fact["t"]], key=len, reverse=True)
                          if (v := date_of(name, "en")) is not None), None) if g["types"][fact["t"]] == "TIME" else None
            if value is not None:
                day = f"{value}-01-01" if isinstance(value, int) else value.isoformat()
                lines.append(f'{item(fact["h"])} wdt:{fact["r"]} "{day}T00:00:00Z"^^xsd:dateTime .')
            else:
                lines.append(f"{item(fact['h'])} wdt:{fact['r']} {item(fact['t'])} .")
    return "\n".join(lines) + "\n", loaded


# ----------------------------------------------------------------------------- scoring
def same_name(a: str, b: str) -> bool:
    a, b = fold(a), fold(b)
    if not a or not b:
        return False
    short, long_ = sorted((a, b), key=len)
    if fuzz.ratio(a, b) >= 85 or (len(short) >= 4 and f" {short} " in f" {long_} "):
        return True
    return (d := date_of(a, "en")) is not None and d == date_of(b, "en")


def gold_pairs(g: dict) -> list[tuple[list[str], list[str]]]:
    if g["source"] == "redocred":
        return [(g["clusters"][f["h"]], g["clusters"][f["t"]]) for f in g["facts"]]
    return [([s], [o]) for s, _, o in g["triples"]]


def matching(subject: str, obj: str, g: dict) -> list[int]:
    """The gold facts whose head and tail the two names name, either way round."""
    def names(a: str, names_: list[str]) -> bool:
        return any(same_name(a, n) for n in names_)
    return [k for k, (heads, tails) in enumerate(gold_pairs(g))
            if (names(subject, heads) and names(obj, tails)) or (names(obj, heads) and names(subject, tails))]


def extracted(out: Path) -> dict[str, list[dict]]:
    """Each finished document's kept triples, from the run's work records."""
    found = {}
    for path in (out.with_name(out.name + ".work")).glob("*.json"):
        record = json.loads(path.read_text(encoding="utf-8"))
        if "chunks" in record and not record["failed"]:
            found[record["id"]] = [t for c in record["chunks"] for t in c["triples"]]
    return found


def score(out: Path, gold: dict, loaded: dict[str, bool]) -> dict:
    triples = extracted(out)
    result: dict = {}
    for source in ("redocred", "webnlg"):
        docs = [d for d, g in gold.items() if g["source"] == source and g["lang"] == "en" and d in triples]
        pairs = {d: list({(t["subject"], t["object"]) for t in triples[d]}) for d in docs}
        right = sum(1 for d in docs for s, o in pairs[d] if matching(s, o, gold[d]))
        recalled = sum(len({k for s, o in pairs[d] for k in matching(s, o, gold[d])}) for d in docs)
        total = sum(len(gold_pairs(gold[d])) for d in docs)
        result[source] = {"documents": len(docs), "extracted": sum(map(len, pairs.values())), "right": right, "gold": total, "recalled": recalled}
    result["ru_kept"] = sum(len(triples[d]) for d, g in gold.items() if g["lang"] == "ru" and d in triples)
    result["resolution"] = _resolution(out, gold, triples)
    result["wikidata"] = _wikidata(out, gold, loaded)
    return result


def _resolution(out: Path, gold: dict, triples: dict[str, list[dict]]) -> dict:
    into = {}
    for line in out.with_name(out.name + ".decisions.jsonl").read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        if d["decision"].startswith("merged into "):
            into[fold(d["name"])] = fold(d["decision"][len("merged into "):].strip("'\""))
    counts = Counter(merges=len(into))
    for doc_id, g in gold.items():
        if g["source"] != "redocred" or doc_id not in triples:
            continue
        names = {fold(t["subject"]) for t in triples[doc_id]} | {fold(t["object"]) for t in triples[doc_id] if t["object_kind"] == "entity"}
        cluster = {}
        for name in names:
            best = max(range(len(g["clusters"])), key=lambda c: max(fuzz.ratio(name, fold(m)) for m in g["clusters"][c]))
            if any(same_name(name, m) for m in g["clusters"][best]):
                cluster[name] = best
        mapped = sorted(cluster)
        for i, a in enumerate(mapped):
            for b in mapped[i + 1:]:
                one, merged = cluster[a] == cluster[b], into.get(a, a) == into.get(b, b)
                counts["right"] += one and merged
                counts["wrong"] += merged and not one
                counts["missed"] += one and not merged
    return dict(counts)


def _wikidata(out: Path, gold: dict, loaded: dict[str, bool]) -> dict:
    labels = {"loaded": Counter(), "not_loaded": Counter(), "no_gold_fact": Counter()}
    path = out.with_name(out.name + ".wikidata.jsonl")
    for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()):
        doc = next((d for d in row["documents"] if gold.get(d, {}).get("source") == "redocred"), None)
        if doc is None:
            continue
        facts = matching(row["subject"], row["object"], gold[doc])
        half = "no_gold_fact" if not facts else "loaded" if any(loaded[f"{doc}:{k}"] for k in facts) else "not_loaded"
        labels[half][row["label"]] += 1
    return {half: dict(c) for half, c in labels.items()}


def redocred_mentions(seed: int, documents: int) -> dict:
    """Re-DocRED's own mentions of ``documents`` documents drawn by ``seed``, as ``sample`` keeps them."""
    redocred = json.load(gzip.open(EXTERNAL / "redocred" / "dev_revised.json.gz"))
    gold = {}
    for i in sorted(random.Random(seed).sample(range(len(redocred)), documents)):
        d = redocred[i]
        sentences = [_detokenised([s]) for s in d["sents"]]
        gold[f"redocred-{i}"] = {"source": "redocred", "types": [v[0]["type"] for v in d["vertexSet"]],
                                 "mentions": [[(m["name"], sentences[m["sent_id"]]) for m in v] for v in d["vertexSet"]]}
    return gold


def resolution_on_gold_mentions(gold: dict, base_url: str, cache: Path) -> dict:
    """Entity resolution on Re-DocRED's own mentions (name, type, sentence) of its documents
    in ``gold``, scored on pairs of distinct names within a document against its clusters:
    the model-judged resolution against exact names only (what a user would otherwise do)."""
    from kgsynth.ingest.config import IngestConfig
    from kgsynth.ingest.resolution import Mention, model_judge, resolve
    from kgsynth.llm import LLMGateway, ResponseCache
    from kgsynth.llm.embeddings import embedder, packaged_model_path

    mentions, cluster = [], []
    for doc_id, g in gold.items():
        if g["source"] != "redocred":
            continue
        for c, said in enumerate(g["mentions"]):
            for name, sentence in said:
                mentions.append(Mention(name=name, kind=g["types"][c].lower(), document=doc_id, lang="en", subject=True, context=sentence))
                cluster.append((doc_id, c))
    config = IngestConfig.model_validate({"extraction": {"base_url": base_url, "timeout_s": 600}})
    gateway = LLMGateway(config.extraction.model_config_for(0), ResponseCache(cache), raise_unreachable=True)
    started = time.perf_counter()
    asked = []

    def judge(questions):
        asked.extend(questions)
        return model_judge(gateway)(questions)

    judged = resolve(mentions, judge=judge, embed=embedder(packaged_model_path("the benchmark")).encode)[1]
    seconds = time.perf_counter() - started
    exact = resolve(mentions)[1]
    result = {"mentions": len(mentions), "questions": len(asked), "seconds": round(seconds)}
    pairs: dict[str, dict[str, list[str]]] = {}
    for name, assignment in (("model", judged), ("exact_names", exact)):
        counts = Counter()
        seen = {}
        for i, m in enumerate(mentions):
            seen.setdefault((m.document, fold(m.name)), i)
        firsts = sorted(seen.values())
        for a, i in enumerate(firsts):
            for j in firsts[a + 1:]:
                if mentions[i].document != mentions[j].document:
                    continue
                one, merged = cluster[i] == cluster[j], assignment[i] == assignment[j]
                counts["right"] += one and merged
                counts["wrong"] += merged and not one
                counts["missed"] += one and not merged
                if one or merged:
                    shown = f"{mentions[i].name} / {mentions[j].name}"
                    kind = "right" if one and merged else "wrong" if merged else "missed"
                    pairs.setdefault(name, {}).setdefault(f"{kind}_pairs", []).append(shown)
        result[name] = dict(counts) | pairs.get(name, {}) | {"precision": round(counts["right"] / max(1, counts["right"] + counts["wrong"]), 2),
                                       "recall": round(counts["right"] / max(1, counts["right"] + counts["missed"]), 2)}
    return result


# ----------------------------------------------------------------------------- the run
@contextlib.contextmanager
def oxigraph(turtle: str):
    binary = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    port = free_port()
    process = subprocess.Popen([binary, "serve", "--bind", f"127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                request = urllib.request.Request(f"http://127.0.0.1:{port}/store?default", data=turtle.encode(),
                                                 headers={"Content-Type": "text/turtle"}, method="POST")
                urllib.request.urlopen(request, timeout=10).read()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/query"
    finally:
        process.terminate()
        process.wait()


def kgsynth(*args: str) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "kgsynth", *args], capture_output=True, text=True)
    print(f"$ kgsynth {' '.join(args)}   # exit {result.returncode}, {time.perf_counter() - started:.0f} s")
    print("\n".join("  " + line for line in result.stderr.strip().splitlines()[-8:]))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="a running OpenAI-compatible server (default: start Qwen2.5-Coder-0.5B)")
    parser.add_argument("--work", type=Path, default=None, help="where the run's files go (default: a temporary folder)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--n", type=int, default=36, help="items per synth and release run")
    parser.add_argument("--resolution-documents", type=int, default=40, help="Re-DocRED documents whose own mentions are resolved")
    args = parser.parse_args()
    if not (EXTERNAL / "redocred").is_dir():
        sys.exit(f"{EXTERNAL} holds no redocred/: this benchmark needs ../shared/external")
    work = args.work or Path(tempfile.mkdtemp(prefix="kgsynth-ingest-"))
    work.mkdir(parents=True, exist_ok=True)
    batches, gold = sample(args.seed)
    for k, batch in enumerate([batches[0], batches[0] + batches[1]], 1):
        (work / f"docs{k}.jsonl").write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in batch), encoding="utf-8")
    turtle, loaded = wikidata_shaped(gold)
    print(f"{sum(len(b) for b in batches)} documents; {sum(loaded.values())} of {len(loaded)} Re-DocRED facts loaded into the Wikidata-shaped server")
    with contextlib.ExitStack() as stack:
        base_url = args.base_url
        if base_url is None:
            model = qwen05_path(Path.home() / ".cache" / "kgsynth" / "models")
            if model is None:
                sys.exit("the Qwen2.5-Coder-0.5B packages are not installed: make llm-local")
            verify(model, QWEN05_SHA256)
            base_url = stack.enter_context(llama_server(model, n_ctx=4096))
        endpoint = stack.enter_context(oxigraph(turtle))
        config = work / "ingest.toml"
        config.write_text(f'[extraction]\nbase_url = "{base_url}"\ncache = "{work / "llm-cache.sqlite"}"\ntimeout_s = 600\n'
                          f'[wikidata]\ncheck = true\nendpoint = "{endpoint}"\nuser_agent = "kgsynth-bench/1 (bench/ingest_quality.py)"\n')
        for k in (1, 2):
            kgsynth("ingest", str(work / f"docs{k}.jsonl"), "--out", str(work / f"g{k}.trig"), "--config", str(config))
        resolution = resolution_on_gold_mentions(redocred_mentions(args.seed, args.resolution_documents), base_url,
                                                 work / "llm-cache.sqlite")
    result = score(work / "g2.trig", gold, loaded)
    report = json.loads((work / "g2.trig.report.json").read_text(encoding="utf-8"))
    print(json.dumps({"scores": result, "resolution_on_gold_mentions": resolution,
                      "report": {k: v for k, v in report.items() if k != "per_document"}}, indent=1, ensure_ascii=False))
    # a few dozen facts fill a few items per cell: n is kept small enough for every cell to fill
    shapes = ["--config", str(ROOT / "configs" / "from_documents.toml"), "--n", str(args.n)]
    kgsynth("synth", "--graph", str(work / "g2.trig"), *shapes, "--out", str(work / "items"))
    kgsynth("release", "--graph", str(work / "g1.trig"), *shapes, "--out", str(work / "r1"))
    kgsynth("release", "--graph", str(work / "g2.trig"), *shapes, "--out", str(work / "r2"), "--previous", str(work / "r1"))
    _check_releases(work / "r1", work / "r2")
    print(f"files in {work}")


def _check_releases(first: Path, second: Path) -> None:
    import datasets

    def rows(folder: Path) -> list[dict]:
        return [json.loads(line) for line in (folder / "private" / "mapping.jsonl").read_text(encoding="utf-8").splitlines()]

    def questions(folder: Path) -> set[str]:
        return {fold(r["question"]) for r in map(json.loads, (folder / "public" / "questions.jsonl").read_text(encoding="utf-8").splitlines())}

    shared_subgraphs = {r["subgraph_id"] for r in rows(first)} & {r["subgraph_id"] for r in rows(second)}
    loaded = [len(datasets.load_dataset(str(folder), "questions", split="test", cache_dir=str(folder.parent / "hf-cache")))
              for folder in (first, second)]  # a cache of its own: datasets would reuse an earlier run's build of the same path
    versions = [json.loads((f / "manifest.json").read_text())["release"]["version"] for f in (first, second)]
    print(f"releases {versions}: questions loaded by datasets {loaded}; subgraphs in both {len(shared_subgraphs)}, "
          f"questions in both {len(questions(first) & questions(second))}")


if __name__ == "__main__":
    main()
