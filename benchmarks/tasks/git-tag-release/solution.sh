#!/bin/bash
set -e
git tag -a v0.3.0 -m "Release 0.3.0"
git show --no-patch v0.3.0
