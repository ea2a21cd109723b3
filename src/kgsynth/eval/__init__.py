"""Evaluation: run a model on a dataset's items (``runner``: conditions and sweeps from
``render``, prompts from ``prompts``, the key-value retrieval probe from ``kv``), score
each answer strictly and find each error's source (``scoring``), aggregate with bootstrap
intervals (``metrics``), test hypotheses H1-H4 (``hypotheses``) and write the report
(``plots``, ``report``). ``inspect_task`` exposes a dataset to inspect_ai (extra
``kgsynth[inspect]``)."""
