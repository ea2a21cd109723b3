"""The ingest configuration: one pydantic tree, unknown keys rejected, TOML or YAML."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field, field_validator, model_validator

from kgsynth import __version__
from kgsynth._config import Strict, check_http_url, http_url_or_none, load_config_file
from kgsynth.errors import KgsynthError
from kgsynth.llm import FailuresInARow, ModelConfig
from kgsynth.llm.cache import default_cache_path


class DocumentSettings(Strict):
    languages: tuple[str, ...] = Field(("en", "ru"), description="languages read; a document in another is reported and skipped")
    max_mb: float = Field(2.0, gt=0, description="a larger document is reported and skipped (split it, or raise this)")
    chunk_chars: int = Field(1500, ge=200, description="a chunk's size, cut at a sentence end where one is near")
    overlap_chars: int = Field(200, ge=0, description="text two neighbouring chunks share, so no sentence is cut off from its fact")

    @model_validator(mode="after")
    def _overlap_smaller(self) -> DocumentSettings:
        if self.overlap_chars >= self.chunk_chars // 2:
            raise ValueError(f"overlap_chars ({self.overlap_chars}) must be under half of chunk_chars ({self.chunk_chars})")
        return self


class ExtractionSettings(Strict):
    base_url: str | None = Field(None, description="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8001/v1 (or --llm-base-url)")
    model: str = Field("local", min_length=1)
    api_key_env: str = "OPENAI_API_KEY"
    max_tokens: int = Field(1024, ge=16, description="the most a reply to one chunk may hold")
    timeout_s: float = Field(300.0, gt=0)
    max_retries: int = Field(2, ge=0)
    concurrency: int = Field(2, ge=1)
    max_failures_in_a_row: FailuresInARow = 20
    cache: str | None = Field(None, description="response cache file (default: ~/.cache/kgsynth/llm-cache.sqlite)")
    evidence_score: float = Field(
        90.0, ge=50, le=100, description="how closely (rapidfuzz partial ratio, 0-100) a triple's evidence must match the document"
    )
    mention_score: float = Field(
        80.0, ge=50, le=100, description="how closely a triple's subject and object must occur in its evidence (an inflected "
        "Russian name scores about 83)"
    )

    _url = field_validator("base_url")(http_url_or_none)

    def model_config_for(self, seed: int) -> ModelConfig:
        if not self.base_url:
            raise KgsynthError("ingest needs a model: set extraction.base_url in the config or pass --llm-base-url")
        return ModelConfig(base_url=self.base_url, model=self.model, api_key_env=self.api_key_env, temperature=0.0,
                           max_tokens=self.max_tokens, seed=seed, timeout_s=self.timeout_s, max_retries=self.max_retries,
                           concurrency=self.concurrency, max_failures_in_a_row=self.max_failures_in_a_row)

    def cache_path(self) -> Path:
        return Path(self.cache).expanduser() if self.cache else default_cache_path()


class ResolutionSettings(Strict):
    relations: tuple[str, ...] = Field((), description="a relation vocabulary: extracted relations that read alike are written "
                                       "under its names (none: the corpus's most frequent names)")
    relation_score: float = Field(90.0, ge=50, le=100, description="rapidfuzz ratio of two relation names that are one relation")
    ask_model: bool = Field(True, description="entities with different names that may be one go to the model, which picks the "
                            "same one or none (false: only the same name merges)")
    spelling_score: float = Field(88.0, ge=50, le=100, description="rapidfuzz WRatio at which a name of the same kind is a candidate")
    meaning_score: float = Field(0.85, ge=0, le=1, description="cosine of MiniLM embeddings at which a name of the same kind is a "
                                 "candidate (when kgsynth[llm] is installed)")


WIKIDATA_SPARQL = "https://query.wikidata.org/sparql"
_PROPERTY = re.compile(r"\^?P[1-9]\d*")
_LANGUAGE = re.compile(r"[a-z]{2,3}(-[A-Za-z0-9]{1,8})*")


class WikidataSettings(Strict):
    """The contamination check: each fact looked up in Wikidata (see ``kgsynth.ingest.wikidata``)."""

    check: bool = Field(False, description="look every fact up (--wikidata URL turns it on at that endpoint)")
    endpoint: str = Field(WIKIDATA_SPARQL, description="a SPARQL endpoint holding Wikidata: the public query service or a mirror")
    keep_known: bool = Field(False, description="keep the facts Wikidata already states (labelled known) instead of dropping them")
    languages: tuple[str, ...] = Field(("en", "ru", "mul"), min_length=1, description="languages of the labels and aliases "
                                       "names are looked up in (mul: Wikidata's label for every language)")
    properties: dict[str, str] = Field(default_factory=dict, description='relation name -> Wikidata property, "^P112" read backwards; '
                                       "a relation not given here is mapped by the property's label or alias")
    date_tolerance_days: int = Field(1, ge=0, description="how far a stated date may lie from Wikidata's and still be the same")
    quantity_tolerance: float = Field(0.01, ge=0, lt=1, description="how far (relative) a stated number may lie from Wikidata's")
    timeout_s: float = Field(60.0, gt=0, description="the deadline of one query's attempt")
    retries: int = Field(3, ge=0, description="more attempts after HTTP 429 (its Retry-After honoured), 5xx or a timeout")
    user_agent: str = Field(f"kgsynth/{__version__} (contamination check; set wikidata.user_agent to name yourself)",
                            min_length=1, description="Wikidata's policy asks for one that says who is asking and how to reach them")

    _url = field_validator("endpoint")(check_http_url)

    @field_validator("languages")
    @classmethod
    def _language_tags(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        wrong = [tag for tag in value if not _LANGUAGE.fullmatch(tag)]
        if wrong:
            raise ValueError(f"not a language tag (en, ru, mul, pt-br): {', '.join(map(repr, wrong))}")
        return value

    @field_validator("properties")
    @classmethod
    def _property_ids(cls, value: dict[str, str]) -> dict[str, str]:
        wrong = [f"{name!r} = {prop!r}" for name, prop in value.items() if not _PROPERTY.fullmatch(prop)]
        if wrong:
            raise ValueError(f"not a property id (P112, or ^P112 read backwards): {', '.join(wrong)}")
        return value


class IngestConfig(Strict):
    """Everything ``kgsynth ingest`` needs besides the documents and a model's address."""

    namespace: str = Field("https://example.org/kg/", description="IRIs of the entities, relations and documents minted")
    seed: int = 0
    documents: DocumentSettings = DocumentSettings()
    extraction: ExtractionSettings = ExtractionSettings()
    resolution: ResolutionSettings = ResolutionSettings()
    wikidata: WikidataSettings = WikidataSettings()

    @field_validator("namespace")
    @classmethod
    def _namespace_ends_a_path(cls, value: str) -> str:
        if not value.startswith(("http://", "https://", "urn:")) or value[-1] not in "/#:":
            raise ValueError(f"{value!r} is no IRI namespace: give one ending in / or #, e.g. https://example.org/kg/")
        return value


def load_ingest_config(path: str | Path) -> IngestConfig:
    return load_config_file(path, IngestConfig)
