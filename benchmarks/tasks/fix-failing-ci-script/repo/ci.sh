#!/bin/bash
# What CI runs on every push: style checks, then the unit tests.
set -euo pipefail

echo "== lint"
python3 tools/lint.py .

echo "== unit tests"
python3 -m unittest -q

echo "CI passed"
