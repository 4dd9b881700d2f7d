#!/bin/bash
# Usage: count_md_files.sh DIR
# Prints how many Markdown files are under DIR (subfolders included).
set -e
dir=${1:-.}
find "$dir" -type f -name '*.md' | wc -l
