#!/bin/bash
# reward.json with two keys: reward (exact content) and partial (0.5 for a wrong
# content in the right file, 0 for no file).
expected='thesis'
if [ -f /app/essay.txt ] && [ "$(cat /app/essay.txt)" = "$expected" ]; then
  echo "PASS: exact content"
  echo '{"reward": 1, "partial": 1.0}' > /logs/verifier/reward.json
elif [ -f /app/essay.txt ]; then
  echo "PARTIAL: file present, content differs"
  echo '{"reward": 0, "partial": 0.5}' > /logs/verifier/reward.json
else
  echo "FAIL: no /app/essay.txt"
  echo '{"reward": 0, "partial": 0.0}' > /logs/verifier/reward.json
fi
