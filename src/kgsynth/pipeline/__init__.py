"""``kgsynth synth``, the run above every stage: graph -> subgraphs -> scenarios -> items ->
filters -> dataset files (``run``), configured by one pydantic tree read from TOML or YAML
(``config``)."""

from kgsynth.pipeline.config import SynthConfig, load_config
from kgsynth.pipeline.run import Progress, SynthResult, synthesize

__all__ = ["Progress", "SynthConfig", "SynthResult", "load_config", "synthesize"]
