#!/bin/bash
set -e
grep 'ERROR' logs/export.log | grep 'No space left on device' > root_cause.txt
cat root_cause.txt
