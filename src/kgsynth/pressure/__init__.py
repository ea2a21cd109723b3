"""Manipulation robustness (issue 18): false claims computed from the graph, pushed at a model
through argument and pressure operations. Sits above ``synth`` and ``eval``; this first part
builds the claims and reaches down to ``kg`` and ``queries`` only."""

from kgsynth.pressure.claims import Confusability, FalseClaim, false_claims

__all__ = ["Confusability", "FalseClaim", "false_claims"]
