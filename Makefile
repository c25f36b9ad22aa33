# humanoid_balance — bare-machine entry points. Every target sets up .venv on first use and is
# idempotent afterwards: the environment is rebuilt only when a requirements file or setup.py changes.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# ROS 2's launch system as wheels (launch, launch_ros, launch_testing, ros2launch): installed when the folder exists,
# so that the launch tests run; without it they skip, saying so.
ROS2_LAUNCH ?= ../shared/ros2-launch
# The machine's pip configuration may list local mirrors that do not exist; hide those warnings only
# (grep's "no line left" status 1 is fine; pip's own failure still fails the pipeline).
QUIET_PIP := { grep -v "is ignored: it is neither a file nor a directory" || test $$? -eq 1; }

.PHONY: all venv demo test bench check clean
all: test

$(STAMP): requirements.txt requirements-test.txt setup.py setup.cfg pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -r requirements-test.txt 2>&1 | $(QUIET_PIP)
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e . 2>&1 | $(QUIET_PIP)
	if [ -x $(ROS2_LAUNCH)/install.sh ]; then $(ROS2_LAUNCH)/install.sh $(VENV) 2>&1 | $(QUIET_PIP); \
	else echo "no $(ROS2_LAUNCH): the launch tests will skip"; fi
	$(BIN)/python -c "import rclpy, pinocchio, osqp, daqp, mujoco, scipy, yaml, rosbags, humanoid_balance"
	test -x $(BIN)/humanoid-balance
	touch $(STAMP)

venv: $(STAMP)

demo: venv
	$(BIN)/humanoid-balance demo

# The computing tiers (unit, sim) on both cores; then the tiers that run nodes in processes of their own alone, since
# the free-running chains' tests judge what a quiet 2-core machine sustains. Both always run; either failing fails.
test: venv
	status=0; \
	$(BIN)/python -m pytest -n 2 -m "unit or sim" || status=$$?; \
	$(BIN)/python -m pytest -m "not (unit or sim)" || status=$$?; \
	exit $$status

bench: venv
	$(BIN)/humanoid-balance bench --output BENCHMARKS.md
	for bench in benchmarks/bench_*.py; do $(BIN)/python $$bench; done

clean:
	rm -rf $(VENV) build install log .pytest_cache .hypothesis *.egg-info
