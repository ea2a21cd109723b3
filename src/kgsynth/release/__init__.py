"""Releases: version N of a benchmark from a graph and, when given, the previous release's folder.

In: a graph (files), a ``ReleaseConfig`` (a synth config with a ``[release]`` section: the
card's name and license), the previous release's folder. Out: a dataset folder as
``kgsynth synth`` writes it (so ``kgsynth eval --dataset`` reads it), whose items repeat no
subgraph and no question of any earlier release, plus ``README.md`` (a dataset card whose
YAML ``configs`` make ``datasets.load_dataset(folder, "questions")`` work),
``private/history.jsonl`` (what every release so far published), ``private/facts.txt`` and
``private/entities.txt`` (the graph, for the next release's diff), ``private/changes.jsonl``
(the entities and facts new since the previous release) and a ``release`` section in
``manifest.json`` (version, previous version, date, counts of what is new).
"""

from kgsynth.release._facts import GraphRecord, fact_digest
from kgsynth.release._release import (
    CARD,
    CHANGES,
    ENTITIES,
    FACTS,
    HISTORY,
    Previous,
    ReleaseConfig,
    ReleaseResult,
    ReleaseSettings,
    read_previous,
    release,
    release_version,
)
from kgsynth.release._version import next_version, version_key

__all__ = [
    "CARD", "CHANGES", "ENTITIES", "FACTS", "HISTORY", "GraphRecord", "Previous", "ReleaseConfig", "ReleaseResult",
    "ReleaseSettings", "fact_digest", "next_version", "read_previous", "release", "release_version",
    "version_key",
]
