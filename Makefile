# Two commands on a fresh machine: `make demo` and `make test` (each creates .venv first).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SHAPES := simple set conditional multihop comparison rule_application

.PHONY: demo subgraphs test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kgsynth synth --graph data/demo --n 600 --seed 0 --out out/dataset
	@head -n 1 out/dataset/items.jsonl | $(BIN)/python -c \
		"import sys, json; from kgsynth.synth.export import item_from_row; i = item_from_row(json.loads(sys.stdin.read())); \
		print(i.transcript); print('Q:', i.question, i.format_instruction); print('gold:', i.gold)"

subgraphs: $(STAMP)
	@for shape in $(SHAPES); do \
		$(BIN)/kgsynth graph subgraphs data/demo --shape $$shape --limit 50 --seed 0 --out out/subgraphs/$$shape.jsonl || exit 1; \
	done

test: $(STAMP)
	$(BIN)/python -m pytest -q

bench: $(STAMP)
	$(BIN)/python bench/extract.py --triples 100000 --repeat 3
	$(BIN)/python bench/extract.py --triples 1000000 --repeat 3
	$(BIN)/python bench/synth.py
	$(BIN)/python bench/synth.py --powerlaw 1000000 --n 100000

clean:
	rm -rf $(VENV) out
