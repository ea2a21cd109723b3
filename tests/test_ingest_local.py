"""kgsynth ingest against a real model: Qwen2.5-Coder-0.5B behind llama-cpp-python's server
(tests/local_llm.py), on two short English and Russian texts. The model is small, so what it
extracts is not asserted; what the code guarantees is: every kept fact's evidence is in its
document as written, every rejection says why, the counts add up, the
graph loads, and a rerun asks the model nothing."""

from __future__ import annotations

import json

import pytest
from local_llm import missing, qwen05_server

from kgsynth.ingest import IngestConfig, ingest
from kgsynth.kg import KnowledgeGraph

pytestmark = [pytest.mark.local_llm, pytest.mark.slow, pytest.mark.skipif(missing() is not None, reason=missing() or "")]

TEXTS = {
    "en": "Zarechye Bank was founded in Kazan in 1994. Its chief executive is Pavel Orlov. In 2023 the bank earned $15.6 million.",
    "ru": "Банк «Заречье» основан в Казани в 1994 году. Председатель правления банка — Павел Орлов.",
}


@pytest.fixture(scope="module")
def base_url():
    with qwen05_server(n_ctx=4096) as url:
        yield url


def test_ingest_with_a_real_model_keeps_only_checked_facts_and_a_rerun_asks_nothing(base_url, tmp_path):
    docs = tmp_path / "docs.jsonl"
    docs.write_text("".join(json.dumps({"id": lang, "lang": lang, "text": text}, ensure_ascii=False) + "\n"
                            for lang, text in TEXTS.items()), encoding="utf-8")
    config = IngestConfig.model_validate({"extraction": {"base_url": base_url, "cache": str(tmp_path / "cache.sqlite"), "timeout_s": 600}})
    out = tmp_path / "g.trig"
    report = ingest(docs, out, config)
    assert report.problems == 0 and report.calls >= 2 and report.prompt_tokens > 0
    kg = KnowledgeGraph.load(out)
    rows = list(kg.select("""PREFIX kgs: <https://w3id.org/kgsynth/vocab#>
        SELECT ?id ?evidence WHERE { ?f kgs:statedIn ?g ; kgs:evidence ?evidence . ?g kgs:sourceId ?id }"""))
    assert len(rows) == report.statements
    for doc_id, evidence in rows:
        assert evidence.value in TEXTS[doc_id.value]
    rejections = [json.loads(line) for line in out.with_name("g.trig.rejections.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(r["reason"] and r["check"] for r in rejections)
    assert sum(report.rejected.values()) == len(rejections)
    assert report.statements + len(rejections) <= report.proposed  # the rest: a fact proposed twice
    # a rerun finds every document finished: it needs no model (here: none listening)
    unreachable = config.model_copy(update={"extraction": config.extraction.model_copy(update={"base_url": "http://127.0.0.1:9/v1"})})
    again = ingest(docs, out, unreachable)
    assert again.finished == 2 and again.kept == report.kept and again.calls == report.calls


def test_the_model_answers_whether_two_names_are_one_entity_in_a_form_the_code_reads(base_url, tmp_path):
    from kgsynth.ingest.resolution import Mention, model_judge, resolve
    from kgsynth.llm import LLMGateway, ResponseCache

    config = IngestConfig.model_validate({"extraction": {"base_url": base_url, "timeout_s": 600}})
    gateway = LLMGateway(config.extraction.model_config_for(0), ResponseCache(tmp_path / "cache.sqlite"), raise_unreachable=True)
    said = [("Мария Лопес", "d1", "Мария Лопес основала пекарню в Казани."), ("Марии Лопес", "d2", "Пекарня Марии Лопес открылась в 2011 году."),
            ("Lopez Bakery", "d1", "Lopez Bakery opened in Austin."), ("Lopez Bakery Inc.", "d2", "Lopez Bakery Inc. reported revenue of $2 million.")]
    mentions = [Mention(name=name, kind="", document=doc, lang="ru" if name[0] > "z" else "en", subject=True, context=context)
                for name, doc, context in said]
    entities, assignment, decisions = resolve(mentions, judge=model_judge(gateway))
    assert gateway.usage["resolve"].calls >= 2  # one question per name with a candidate
    asked = [d for d in decisions if d.decision.startswith("merged into") or "the model" in d.reason]
    assert asked and not any("could not be used" in d.reason for d in asked), [d.reason for d in asked]
    assert len(entities) == len(set(assignment)) <= 4
