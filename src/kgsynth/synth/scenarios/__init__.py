"""A subgraph -> a scenario: everything an item needs but its words. The rule engine
(``rules``) computes the gold; ``scenario`` builds the scenario (entity, facts in pieces,
rule, question, answer format and constraints, gold, reasoning steps and level);
``published`` holds what earlier releases asked, which a new run must not ask again."""
