#!/bin/bash
# Terminal-Bench ran this in the task's container with tests/ at $TEST_DIR and parsed pytest's -rA summary.
cd /app
python3 -m pytest -p no:cacheprovider "$TEST_DIR/test_outputs.py" -rA
