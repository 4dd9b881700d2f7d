#!/bin/bash
set -e
grep -rl --include='*.py' 'calc_total' . | xargs sed -i 's/\bcalc_total\b/compute_total/g'
python3 -m pytest -q tests
