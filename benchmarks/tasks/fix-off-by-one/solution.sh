#!/bin/bash
set -e
sed -i 's/start = page \* per_page/start = (page - 1) * per_page/' pager.py
python3 -m pytest -q test_pager.py
