# Two commands on a fresh machine: `make demo` and `make test` (each creates .venv first).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SHAPES := simple set conditional multihop comparison rule_application

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kgsynth graph stats data/demo
	@for shape in $(SHAPES); do \
		$(BIN)/kgsynth graph subgraphs data/demo --shape $$shape --limit 50 --seed 0 --out out/subgraphs/$$shape.jsonl || exit 1; \
	done
	@echo "one subgraph of each shape:"
	@for shape in $(SHAPES); do head -n 1 out/subgraphs/$$shape.jsonl | $(BIN)/python -c \
		"import sys; from kgsynth.queries import Subgraph; print(' ', Subgraph.model_validate_json(sys.stdin.read()))"; done

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/extract.py --triples 100000 --repeat 3
	$(BIN)/python bench/extract.py --triples 1000000 --repeat 3

clean:
	rm -rf $(VENV) out
