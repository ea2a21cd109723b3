"""The pressure policy against SIMULATED models whose best sequence is known by construction
(no model is called): the gymnasium environment passes gymnasium's own checker, the Q-learner
finds the known shortest sequence, beats the baselines, and the same seed trains the same way.
A Thompson-sampling bandit finds the operation that flips a noisy model most often within
a budget a real model allows. The operations render in both languages."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from kgsynth.pressure import ACTIONS, Operation, Outcome, PressureEnv, QLearner, render, rollout
from kgsynth.pressure.operations import INTENSITIES, OPERATIONS, PRESSURE
from kgsynth.pressure.policy import ARE_YOU_SURE, FARM_LIKE, ThompsonLearner, fixed_sequence, random_policy

BEST = ((Operation.evidence, 2), (Operation.authority, 3))


def simulated_model(best=BEST):
    """Gives in only right after ``best`` was played in order; any other step is maintained."""
    def target(steps):
        return Outcome.capitulated if tuple(steps[-len(best):]) == best else Outcome.maintained
    return target


def test_the_environment_follows_the_gymnasium_interface():
    check_env(PressureEnv([simulated_model()]), skip_render_check=True)


def test_q_learning_finds_the_known_shortest_sequence_and_beats_the_baselines():
    env = PressureEnv([simulated_model()], max_steps=4)
    learner = QLearner(env, seed=0)
    learner.train(1500)
    steps, outcome = rollout(env, learner.act, seed=99)
    assert (tuple(steps), outcome) == (BEST, Outcome.capitulated)
    flips = {name: sum(rollout(env, policy, seed=s)[1] is Outcome.capitulated for s in range(50))
             for name, policy in (("random", random_policy(1)), ("farm", fixed_sequence(FARM_LIKE)),
                                  ("are_you_sure", fixed_sequence(ARE_YOU_SURE)))}
    assert flips["farm"] == flips["are_you_sure"] == 0 and flips["random"] < 50


def test_the_same_seed_trains_the_same_q_table():
    first, second = (QLearner(PressureEnv([simulated_model()], max_steps=4), seed=5) for _ in range(2))
    assert first.train(200) == second.train(200)
    assert {k: v.tolist() for k, v in first.q.items()} == {k: v.tolist() for k, v in second.q.items()}


@pytest.mark.parametrize("lang", ["en", "ru"])
def test_every_operation_renders_at_every_intensity(lang):
    rng = random.Random(0)
    claim = {"en": "the owner of the car is Pavel Gerasimov", "ru": "владелец машины — Павел Герасимов"}[lang]
    for operation in Operation:
        for intensity in INTENSITIES:
            text = render(operation, intensity, claim, "Pavel Gerasimov" if lang == "en" else "Павел Герасимов", lang, rng)
            assert "{" not in text and ("Gerasimov" in text or "Герасимов" in text) and text[-1] in ".!?"
    assert set(OPERATIONS[lang]) == set(Operation) and set(PRESSURE[lang]) == set(INTENSITIES)
    assert len(ACTIONS) == len(Operation) * len(INTENSITIES)


def leaky_model(best=(Operation.accusation, 3), p_best=0.6, p_other=0.05, seed=0):
    """Gives in at random, more often to ``best``: a model a bandit must read through noise."""
    rng = random.Random(seed)

    def target(steps):
        return Outcome.capitulated if rng.random() < (p_best if steps[-1] == best else p_other) else Outcome.maintained
    return target


def test_thompson_sampling_finds_the_operation_that_flips_most_within_a_small_budget():
    found = 0
    for seed in range(20):
        env = PressureEnv([leaky_model(seed=seed)], max_steps=3)
        learner = ThompsonLearner(env, seed=seed)
        learner.train(150)
        found += ACTIONS[learner.act(env.reset(seed=0)[0])] == (Operation.accusation, 3)
    assert found == 20


def test_a_learner_restored_from_its_state_acts_the_same():
    env = PressureEnv([leaky_model()], max_steps=3)
    for learner_class in (ThompsonLearner, QLearner):
        learner = learner_class(env, seed=1)
        learner.train(100)
        restored = learner_class(env, seed=7)
        restored.restore(json.loads(json.dumps(learner.state())))
        # the states training reached: their actions differ, so a lost table would show
        visited = [np.array(k) for k in learner.q] if learner_class is QLearner else [np.array([step, 0, 0, 0]) for step in range(3)]
        assert len({learner.act(o) for o in visited}) > 1
        assert [restored.act(o) for o in visited] == [learner.act(o) for o in visited]


def test_a_claim_ending_in_an_abbreviation_gets_one_full_stop():
    claim = "дата возвращения из поездки TR-0015 — 17 августа 2026 г."
    for seed in range(10):
        text = render(Operation.evidence, 1, claim, "17 августа 2026 г.", "ru", random.Random(seed))
        assert text.endswith("2026 г.") and ".." not in text
