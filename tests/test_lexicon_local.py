"""``kgsynth lexicon suggest`` against a real local model (Qwen2.5-Coder-0.5B through
llama-cpp-python's OpenAI-compatible server, tests/local_llm.py): the relations the rules
cannot word are asked once each; every form the model gives is either kept, passing the
same checks as the rules' forms, or refused with the reason; a second run asks nothing."""

from __future__ import annotations


import pytest
from local_llm import missing, qwen05_server

from kgsynth.kg import KnowledgeGraph
from kgsynth.lexicon import suggest_words
from kgsynth.lexicon._checks import refusal
from kgsynth.llm import LLMGateway, ModelConfig, ResponseCache

pytestmark = [pytest.mark.local_llm, pytest.mark.slow, pytest.mark.skipif(missing() is not None, reason=missing() or "")]

# relations named by words the glossary has no Russian for: only the model can word them in Russian
GRAPH = """@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:tolstoy rdfs:label "Leo Tolstoy"@en . ex:war rdfs:label "War and Peace"@en .
ex:chekhov rdfs:label "Anton Chekhov"@en . ex:seagull rdfs:label "The Seagull"@en .
ex:wrote rdfs:label "wrote"@en . ex:favouriteQuill rdfs:label "favourite quill"@en .
ex:tolstoy ex:wrote ex:war . ex:chekhov ex:wrote ex:seagull .
ex:tolstoy ex:favouriteQuill ex:goose . ex:goose rdfs:label "Goose feather"@en .
"""


@pytest.fixture(scope="module")
def base_url():
    with qwen05_server(n_ctx=2048) as url:
        yield url


def test_the_model_words_what_the_rules_cannot_and_each_form_is_checked(base_url, tmp_path):
    path = tmp_path / "g.ttl"
    path.write_text(GRAPH, encoding="utf-8")
    kg = KnowledgeGraph.load(path)
    without = suggest_words(kg)
    asked = {t.iri for t in without.unworded}
    assert asked  # the glossary has no Russian for these
    cache = ResponseCache(tmp_path / "cache.sqlite")
    gateway = LLMGateway(ModelConfig(base_url=base_url, model="local", timeout_s=300), cache)
    with_model = suggest_words(kg, gateway)
    assert gateway.usage["lexicon"].calls >= len(asked)
    for term in with_model.terms:
        for (form, lang), said in term.forms.items():
            assert refusal(said.text, lang, form) is None, (term.iri, form, lang, said)
        for why in term.missing.values():
            assert "the model" in why  # asked, and refused or unanswered, with the reason
    # the same graph again: every answer from the cache
    again = LLMGateway(ModelConfig(base_url=base_url, model="local", timeout_s=300), cache)
    assert suggest_words(kg, again).terms == with_model.terms
    assert again.usage["lexicon"].calls == 0
