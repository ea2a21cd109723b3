"""``python -m kgsynth``: the same as the ``kgsynth`` command."""

from kgsynth.cli import main

main()
