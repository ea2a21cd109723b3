"""A kgsynth dataset as an inspect_ai task (the optional extra: ``pip install kgsynth[inspect]``).

Each item becomes one ``Sample`` whose input is exactly what ``kgsynth eval`` sends for
the main condition (``prompts.answer_messages`` on ``render.main``), and the scorer is
kgsynth's one checker (``scoring.score``: in the asked format AND the right value), so
an inspect run and a kgsynth run score the same answers the same way. Baselines, sweeps
and error sources stay with ``kgsynth eval``.

From the command line (``-T`` sets the task's arguments)::

    LOCAL_BASE_URL=http://127.0.0.1:8080/v1 LOCAL_API_KEY=none \\
    inspect eval src/kgsynth/eval/inspect_task.py@kgsynth -T dataset=out/demo -T rendering=chat \\
        -T rules=given -T limit=100 --model openai-api/local/local

From Python::

    import inspect_ai
    from kgsynth.eval.inspect_task import kgsynth_task
    inspect_ai.eval(kgsynth_task("out/demo", rendering="chat"), model="openai-api/local/local")

Neither ``import kgsynth`` nor ``import kgsynth.eval`` imports inspect_ai; importing this
module without it raises ``KgsynthError`` saying how to install it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from kgsynth.errors import KgsynthError

try:
    import inspect_ai  # noqa: F401  (first, so a blocked or missing package fails here)
    from inspect_ai import Task, task
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser, GenerateConfig
    from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, grouped, scorer, stderr
    from inspect_ai.solver import TaskState, generate
except ImportError as error:  # pragma: no cover - exercised in a subprocess by the tests
    raise KgsynthError(f"kgsynth.eval.inspect_task needs inspect_ai ({error}): pip install kgsynth[inspect]") from None

from kgsynth.dataset.splits import SET_SEPARATOR
from kgsynth.eval import prompts, render, runner, scoring
from kgsynth.eval.config import EvalModel, Rendering
from kgsynth.synth.dialogues.item import Item

_MESSAGE = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}
_DEFAULTS = EvalModel()  # the same generation settings as kgsynth eval's model section


@task(name="kgsynth")
def kgsynth_task(
    dataset: str | Path,
    rendering: Literal["transcript", "chat"] = "transcript",
    rules: Literal["none", "given", "invented"] = "none",
    limit: int | None = None,
) -> Task:
    """The items of a kgsynth dataset folder as an inspect task, as ``kgsynth eval`` asks them.

    ``rendering``: the dialogue as one transcript message or as chat turns. ``rules``:
    "none" keeps the benchmark's premise (the model must know the rule); "given" puts each
    item's rule statement (from the dataset's ``private/rules.jsonl``) into the system
    prompt; "invented" does so for the graph's own rules only, not for library rules. ``limit``: only the first N items. The same three settings as ``kgsynth eval``'s.
    """
    if rendering not in ("transcript", "chat"):
        raise KgsynthError(f"rendering must be 'transcript' or 'chat', not {rendering!r}")
    if rules not in ("none", "given", "invented"):
        raise KgsynthError(f"rules must be 'none', 'given' or 'invented', not {rules!r}")
    if limit is not None and int(limit) < 1:
        raise KgsynthError(f"limit must be at least 1, not {limit}")
    path = Path(dataset)
    items = runner.load_items(path, int(limit) if limit is not None else None)
    statements = runner.load_rules(path, invented_only=rules == "invented") if rules != "none" else {}  # the runner's own choice of statement, too
    samples = [item_sample(item, rendering, runner.rule_statement(item, statements)) for item in items]
    return Task(
        dataset=MemoryDataset(samples, name=path.name, location=str(path)),
        solver=generate(),
        scorer=kgsynth_scorer(),
        config=GenerateConfig(temperature=_DEFAULTS.temperature, max_tokens=_DEFAULTS.max_tokens, seed=0),
        metadata={"rendering": rendering, "rules": rules},
    )


def item_sample(item: Item, rendering: Rendering, rule: str | None = None) -> Sample:
    """One item as a sample: its main-condition messages, the gold as target (a set's members
    joined by "; ", as in the dataset files), its metadata, and the item itself for the scorer."""
    messages = prompts.answer_messages(render.main(item), rendering, rule)
    gold = item.gold if isinstance(item.gold, str) else SET_SEPARATOR.join(item.gold)
    metadata = item.metadata.model_dump(mode="json") | {
        "item_id": item.id,
        "rendering": rendering,
        "rule_given": rule is not None,
        "item": item.model_dump(mode="json"),  # what the scorer re-checks against (also on `inspect score`)
    }
    return Sample(id=item.id, input=chat_messages(messages), target=gold, metadata=metadata)


def chat_messages(messages: list[dict[str, str]]) -> list[ChatMessage]:
    """OpenAI-style ``{"role", "content"}`` dicts as inspect chat messages."""
    return [_MESSAGE[m["role"]](content=m["content"]) for m in messages]


@scorer(metrics=[accuracy(), stderr(), grouped(accuracy(), "difficulty", all=False)])
def kgsynth_scorer() -> Scorer:
    """kgsynth's strict check of the completion: CORRECT only when it is in the asked format
    and its value matches the gold; the parsed value is the answer, the reason the explanation."""

    async def score(state: TaskState, target: Target) -> Score:
        item = Item.model_validate(state.metadata["item"])
        check = scoring.score(item, state.output.completion)
        return Score(
            value=CORRECT if check.correct else INCORRECT,
            answer=check.value,
            explanation=check.reason,
            metadata={"syntactic_ok": check.syntactic_ok, "value_matches": check.value_matches, "error": check.reason},
        )

    return score

