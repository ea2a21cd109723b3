"""Manipulation robustness (issue 18): false claims computed from the graph (``claims``),
pushed at a model through argument and pressure operations (``operations``), and a learned
policy that finds the shortest sequences that make it give in (``policy``: a ``gymnasium``
environment and a seeded Q-learner, with the baselines). Sits above ``synth`` and ``eval``;
these parts reach down to ``kg`` and ``queries`` only; the episodes against a real model
come next."""

from kgsynth.pressure.claims import Confusability, FalseClaim, false_claims
from kgsynth.pressure.operations import Operation, render
from kgsynth.pressure.policy import ACTIONS, Outcome, PressureEnv, QLearner, rollout

__all__ = ["ACTIONS", "Confusability", "FalseClaim", "Operation", "Outcome", "PressureEnv", "QLearner", "false_claims", "render",
           "rollout"]
