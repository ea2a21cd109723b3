"""What earlier releases published: the subgraphs and questions a new run must not use again
(``kgsynth release`` reads them from the previous release's history)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from kgsynth.synth.scenarios.scenario import Scenario, question_digest


@dataclass(frozen=True)
class Published:
    """Subgraph ids (``Subgraph.id``, a hash of the facts) and questions (``question_digest``)
    that earlier releases published."""

    subgraph_ids: frozenset[str] = frozenset()
    questions: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.subgraph_ids or self.questions)

    def excludes(self, scenario: Scenario) -> bool:
        """Whether the scenario's subgraph, or its template question in any language, was published."""
        return scenario.subgraph_id in self.subgraph_ids or any(self.asked(q) for q in scenario.question.values())

    def asked(self, question: str) -> bool:
        return question_digest(question) in self.questions

    @property
    def key(self) -> str:
        """A digest of both sets: part of a run's key, so a resumed run excludes what the stopped one did."""
        digest = hashlib.sha256()
        for name in (*sorted(self.subgraph_ids), "\x1e", *sorted(self.questions)):
            digest.update(name.encode() + b"\x1f")
        return digest.hexdigest()[:16]
