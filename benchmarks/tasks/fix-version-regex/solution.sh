#!/bin/bash
set -e
sed -i 's/(\\d)\\.(\\d)\\.(\\d)/(\\d+)\\.(\\d+)\\.(\\d+)/' changelog.py
grep -n 'HEADING = ' changelog.py
python3 changelog.py CHANGELOG.md
