#!/bin/bash
set -e
cat > backup.sh <<'SH'
#!/bin/bash
# Usage: backup.sh SOURCE_DIR DEST_DIR
# Copies every .txt file of SOURCE_DIR into DEST_DIR with a .bak suffix.
set -e

src=$1
dest=$2

if [ -z "$src" ] || [ -z "$dest" ]; then
    echo "usage: backup.sh SOURCE_DIR DEST_DIR" >&2
    exit 2
fi

mkdir -p "$dest"
for f in "$src"/*.txt; do
    [ -e "$f" ] || continue
    name=$(basename "$f")
    cp "$f" "$dest/$name.bak"
done
echo "backed up $(ls "$dest" | wc -l) files"
SH
bash backup.sh "my docs" "$(mktemp -d)/my backup"
