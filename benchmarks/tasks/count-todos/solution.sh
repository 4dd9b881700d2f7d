#!/bin/bash
set -e
find src -name '*.py' -exec cat {} + | grep -c 'TODO' > todo_count.txt
cat todo_count.txt
