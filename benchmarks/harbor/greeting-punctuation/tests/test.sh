#!/bin/bash
# The reward: 1 when greet.py prints exactly "Hello, world!", else 0.
out=$(cd /app && python3 greet.py 2>/dev/null)
if [ "$out" = "Hello, world!" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
