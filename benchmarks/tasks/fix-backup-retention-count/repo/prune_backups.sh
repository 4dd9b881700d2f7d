#!/bin/bash
# Usage: prune_backups.sh DIR KEEP
#
# Deletes old backups from DIR so that only the KEEP newest ones are left.
# Backups are named backup-YYYY-MM-DD.tar.gz, so sorting by name sorts by date.
# Other files in DIR are never touched.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 DIR KEEP" >&2
    exit 2
fi
dir=$1
keep=$2

find "$dir" -maxdepth 1 -type f -name 'backup-*.tar.gz' | sort -r | tail -n +"$keep" | while read -r old; do
    echo "removing $old"
    rm -f -- "$old"
done
