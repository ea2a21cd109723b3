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
