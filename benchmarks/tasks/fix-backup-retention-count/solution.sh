#!/bin/bash
set -e
sed -i 's/tail -n +"$keep"/tail -n +"$((keep + 1))"/' prune_backups.sh
grep -n 'tail' prune_backups.sh
