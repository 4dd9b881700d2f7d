#!/bin/bash
set -e
cat > tools/count_py_lines.sh <<'SH'
#!/bin/bash
# Usage: count_py_lines.sh DIR
# Prints the total number of lines of the .py files under DIR (subfolders included).
set -e
dir=${1:-.}
find "$dir" -type f -name '*.py' -print0 | xargs -0 cat -- /dev/null | wc -l
SH
chmod +x tools/count_py_lines.sh
bash tools/count_py_lines.sh .
