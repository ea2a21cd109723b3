"""Documents to graph: facts extracted by a model with verbatim evidence, each checked by
code against its document, entities resolved across documents, and every fact written with
its provenance (one named graph per document). Reaches down to ``kg`` and ``llm`` only."""

from kgsynth.ingest.config import IngestConfig, load_ingest_config
from kgsynth.ingest.documents import Document, Problem, read_documents
from kgsynth.ingest.extraction import Extraction, ObjectKind, ProposedTriple, Triple
from kgsynth.ingest.run import DocumentReport, IngestReport, ingest

__all__ = [
    "Document",
    "DocumentReport",
    "Extraction",
    "IngestConfig",
    "IngestReport",
    "ObjectKind",
    "Problem",
    "ProposedTriple",
    "Triple",
    "ingest",
    "load_ingest_config",
    "read_documents",
]
