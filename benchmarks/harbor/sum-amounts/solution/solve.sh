#!/bin/bash
cd /app && awk -F, 'NR > 1 { s += $3; n++ } END { print s > "total.txt"; print n > "count.txt" }' sales.csv
