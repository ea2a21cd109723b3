"""``kgsynth lexicon``: words for a graph's relations and classes, in English and Russian."""

from __future__ import annotations

from pathlib import Path

import typer

from kgsynth.cli._common import check_url, output_file
from kgsynth.cli._common import err as _err
from kgsynth.cli.graph import EndpointOpt, GraphUriOpt, LangOpt, PathsArg, RetriesOpt, TimeoutOpt, open_graph
from kgsynth.cli.rules import write_atomically
from kgsynth.lexicon import suggest_words
from kgsynth.llm import LLMGateway, ModelConfig, ResponseCache
from kgsynth.llm.cache import default_cache_path

app = typer.Typer(help="Propose words for a graph's relations and classes.", no_args_is_help=True)

_HEADER = """Words proposed by `kgsynth lexicon suggest` for the {graph}.
For each relation, what its value is to its subject (kgs:nounForm) and, for a relation
between entities, what the subject is to the value (kgs:inverseNounForm); for each class a
label; in English and Russian, with where each form came from. Review them (a rule may have
read a name wrongly) and load this file beside the graph:
    kgsynth synth --graph GRAPH --graph {out} ..."""


@app.command("suggest")
def suggest_command(
    paths: list[Path] | None = PathsArg,
    out: Path = typer.Option(..., "--out", help="Turtle file to write the proposed words to."),
    llm_base_url: str | None = typer.Option(None, "--llm-base-url", help="An OpenAI-compatible endpoint whose model words "
                                            "the relations the graph and the rules leave unworded."),
    llm_model: str = typer.Option("local", "--llm-model", help="The model name."),
    endpoint: str | None = EndpointOpt,
    lang: str = LangOpt,
    timeout: float = TimeoutOpt,
    graph_uri: str | None = GraphUriOpt,
    retries: int = RetriesOpt,
) -> None:
    """Propose a noun for every relation and a label for every class, in English and Russian."""
    output_file("--out", out, "lexicon.ttl")
    check_url("--llm-base-url", llm_base_url)
    kg = open_graph(paths, endpoint, lang, timeout, graph_uri=graph_uri, retries=retries)
    gateway = LLMGateway(ModelConfig(base_url=llm_base_url, model=llm_model), ResponseCache(default_cache_path()),
                         raise_unreachable=True) if llm_base_url else None
    suggestion = suggest_words(kg, gateway)
    write_atomically(out, suggestion.turtle(_HEADER.format(graph=kg.backend.description, out=out.name)))
    forms = sum(len(t.forms) for t in suggestion.terms)
    terms = len(suggestion.terms)
    _err.print(f"wrote {forms:,} form{'s' * (forms != 1)} for {terms:,} relation{'s' * (terms != 1)} or class"
               f"{'es' * (terms != 1)} to {out}"
               + (f" ({suggestion.given:,} more already worded in the graph)" if suggestion.given else ""))
    if suggestion.unworded:
        first = suggestion.unworded[0]
        (form, language), why = next(iter(first.missing.items()))
        _err.print(f"  forms missing for {len(suggestion.unworded):,} (each with why in {out}), e.g. <{first.iri}> {form} "
                   f"@{language}: {why}" + ("" if gateway else "; --llm-base-url asks a model for them"))
