#!/bin/bash
set -e
git checkout -b fix/readme-typo
sed -i 's/recieve/receive/g' README.md
git add README.md
git commit -m "Fix typo in README"
