#!/bin/bash
# Reward 1 when the agent wrote exactly the asked content to /app/reversed.txt, else 0.
expected='ratsbob'
if [ -f /app/reversed.txt ] && [ "$(cat /app/reversed.txt)" = "$expected" ]; then
  echo "PASS: /app/reversed.txt holds the expected content"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/reversed.txt holds '$(cat /app/reversed.txt 2>/dev/null)', expected '$expected'"
  echo 0 > /logs/verifier/reward.txt
fi
