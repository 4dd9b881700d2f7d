#!/bin/bash
# The reward: half for total.txt holding 100, half for count.txt holding 4.
reward=0
[ "$(tr -d ' \n' < /app/total.txt 2>/dev/null)" = 100 ] && reward=$((reward + 1))
[ "$(tr -d ' \n' < /app/count.txt 2>/dev/null)" = 4 ] && reward=$((reward + 1))
python3 -c "print($reward / 2)" > /logs/verifier/reward.txt
