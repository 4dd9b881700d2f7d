#!/bin/bash
set -e
git rm --cached -q debug.log
echo "debug.log" >> .gitignore
git add .gitignore
git commit -q -m "Stop tracking debug.log"
git status --short
