"""Manipulation robustness (issue 18): false claims computed from the graph (``claims``),
pushed at a model through argument and pressure operations (``operations``), and a learned
policy that finds the shortest sequences that make it give in (``policy``: a ``gymnasium``
environment, a Thompson-sampling bandit and a Q-learner, with the baselines), the cases
and their episodes against a model scored in code (``cases``, ``episode``), training,
runs and the static benchmark (``run``), metrics and the report. Sits above ``synth``,
``formats`` and ``eval``; see docs/pressure.md."""

from kgsynth.pressure.claims import Confusability, FalseClaim, false_claims
from kgsynth.pressure.operations import Operation, render
from kgsynth.pressure.policy import ACTIONS, Outcome, PressureEnv, QLearner, rollout

__all__ = ["ACTIONS", "Confusability", "FalseClaim", "Operation", "Outcome", "PressureEnv", "QLearner", "false_claims", "render",
           "rollout"]
