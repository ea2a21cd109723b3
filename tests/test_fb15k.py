"""The real FB15k-237 graph (third-party; ../shared/external), skipped when absent."""

from __future__ import annotations

import pytest
from conftest import FB15K, ROOT

from kgsynth.kg import KnowledgeGraph
from kgsynth.queries import sample_subgraphs

pytestmark = pytest.mark.skipif(not FB15K.exists(), reason="../shared/external/fb15k237 is not present")
RULES = ROOT / "data" / "rules" / "fb15k237_rules.ttl"


@pytest.fixture(scope="module")
def fb15k() -> KnowledgeGraph:
    return KnowledgeGraph.load(FB15K, RULES)


@pytest.mark.parametrize(("shape", "kwargs"), [("simple", {}), ("set", {}), ("conditional", {}), ("multihop", {"hops": 2}),
                                               ("multihop", {"hops": 3}), ("comparison", {}), ("rule_application", {})])
def test_every_shape_on_fb15k(fb15k, shape, kwargs):
    found = list(sample_subgraphs(fb15k, shape, limit=200, seed=0, **kwargs))
    assert len(found) == 200


def test_washington_county_is_never_named(fb15k):
    # FB15k-237 has seven entities labelled "Washington County": a question naming one is ambiguous.
    assert len(fb15k.find("Washington County", lang="en")) >= 2
    for shape in ("simple", "set", "conditional", "multihop"):
        for sg in sample_subgraphs(fb15k, shape, limit=2000, seed=2):
            assert "Washington County" not in {n.label for n in sg.mention}
