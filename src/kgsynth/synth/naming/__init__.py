"""How the graph is said, in English and Russian: the noun forms of relations and the names
of entities (``lexicon``), and the target questions built from them (``questions``). The
scenarios stand on it: each scenario keeps its question and wording per language."""
