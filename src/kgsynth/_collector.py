"""Pausing CPython's cyclic garbage collector around bulk work.

Building ~10^5 long-lived objects that hold no garbage cycles (scenarios, answer records)
sets off full collections that re-scan every one of them: that doubled the scenario phase at
1M triples and compute_metrics on 100,000 rows (both measured).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def full_collections_rarer(factor: int = 20) -> Iterator[None]:
    """Full collections ``factor`` times rarer, young ones as usual: for a long phase that
    keeps adding long-lived objects without cycles (the wording phase: the duplicate
    filters' memory, the scenarios' derived values), which every full collection re-scans.
    At 1M triples the wording phase's eleven full collections found nothing and cost 1.9 s."""
    young, middle, old = gc.get_threshold()
    gc.set_threshold(young, middle, old * factor)
    try:
        yield
    finally:
        gc.set_threshold(young, middle, old)
