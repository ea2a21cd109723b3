"""Synthesis, one stage per sub-package, each importing only the stages before it:

- ``naming``: how the graph's entities, relations and questions are said, in English and
  Russian (the lexicon, the target questions);
- ``scenarios``: a subgraph -> a scenario with its gold answer computed by code (the rule
  engine), its question and answer format, and no dialogue words;
- ``dialogues``: a scenario -> a dialogue (template or LLM verbaliser, padded with a
  haystack) -> an item in one language.

The filters, the dataset files and the run that drives every stage live above:
``kgsynth.filters``, ``kgsynth.dataset``, ``kgsynth.pipeline``.
"""
