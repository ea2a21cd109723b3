"""Answer formats and the strict answer checker (``answers``), over what they stand on:
numbers, money and dates written in English and Russian (``locale``) and Russian
morphology (``morph``). Synthesis, the filters, evaluation and pressure runs share them;
they import nothing else of kgsynth."""
