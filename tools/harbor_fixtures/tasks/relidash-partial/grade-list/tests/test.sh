#!/bin/bash
# reward.json with two keys: reward (exact content) and partial (0.5 for a wrong
# content in the right file, 0 for no file).
expected='a,b,c'
if [ -f /app/list.txt ] && [ "$(cat /app/list.txt)" = "$expected" ]; then
  echo "PASS: exact content"
  echo '{"reward": 1, "partial": 1.0}' > /logs/verifier/reward.json
elif [ -f /app/list.txt ]; then
  echo "PARTIAL: file present, content differs"
  echo '{"reward": 0, "partial": 0.5}' > /logs/verifier/reward.json
else
  echo "FAIL: no /app/list.txt"
  echo '{"reward": 0, "partial": 0.0}' > /logs/verifier/reward.json
fi
