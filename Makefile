# Two commands on a fresh machine:  make demo   (the main job)   make test   (the suite)
VENV    ?= .venv
PYTHON  ?= python3
PY       = $(VENV)/bin/python
RUNTIME  = $(VENV)/.flowmesh-runtime
DEV      = $(VENV)/.flowmesh-dev

.PHONY: demo demo-sync test lint clean bytecode

# torch==2.13.0 (CPU) first, so no dependency ever pulls CUDA wheels.
$(RUNTIME): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e .
	touch $(RUNTIME)

# Test tools and the TensorFlow oracle (a test-time peer, never a runtime dependency).
# Java for the Spark tests (pyspark comes with the dev extra), sshd for the `flowmesh run -H`
# test on the multi-host bed; without them those tests skip.
$(DEV): $(RUNTIME)
	$(PY) -m pip install -q -e ".[dev]"
	command -v java >/dev/null || (apt-get update -qq && apt-get install -y -qq openjdk-17-jre-headless) \
		|| echo "no Java: the flowmesh.spark tests will be skipped"
	test -x /usr/sbin/sshd || (apt-get update -qq && apt-get install -y -qq openssh-server) \
		|| echo "no sshd: the multi-host flowmesh run -H test will be skipped"
	touch $(DEV)

# Every task and test process imports ~700 flowmesh modules: compiled once here, not in
# each process (an environment with PYTHONDONTWRITEBYTECODE=1 would otherwise compile
# them again in every process, ~2 s of CPU each). compileall writes only what changed.
bytecode: $(RUNTIME)
	$(PY) -m compileall -q -j 0 flowmesh examples tests benchmarks

demo: $(RUNTIME) bytecode
	$(VENV)/bin/flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py

demo-sync: $(RUNTIME) bytecode
	$(VENV)/bin/flowmesh launch --ps 2 --workers 3 examples/distributed_mnist.py --sync

# Four pytest workers on any machine: many tests wait on processes, sockets and timeouts,
# so four overlap well even on two cores. The multi-host and fault-tolerance tests time
# heartbeats, deadlines and partitions between real processes: they run afterwards, one at
# a time, as they would on a machine of their own. `pytest -n 0 tests/...` runs a file serially.
SERIAL_TESTS = tests/multihost tests/fault_tolerance
test: $(DEV) bytecode
	$(VENV)/bin/ruff check flowmesh tests examples benchmarks
	status=0; \
	$(PY) -m pytest -q -n 4 --dist worksteal tests $(SERIAL_TESTS:%=--ignore=%) || status=1; \
	$(PY) -m pytest -q $(SERIAL_TESTS) || status=1; \
	exit $$status

lint: $(DEV)
	$(VENV)/bin/ruff check flowmesh tests examples benchmarks

clean:
	rm -rf $(VENV) .pytest_cache
	find flowmesh examples tests benchmarks -name __pycache__ -type d -prune -exec rm -rf {} +
