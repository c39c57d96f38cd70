#!/bin/bash
# Reward 1 when the agent wrote exactly the asked content to /app/answer.txt, else 0.
expected='42'
if [ -f /app/answer.txt ] && [ "$(cat /app/answer.txt)" = "$expected" ]; then
  echo "PASS: /app/answer.txt holds the expected content"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/answer.txt holds '$(cat /app/answer.txt 2>/dev/null)', expected '$expected'"
  echo 0 > /logs/verifier/reward.txt
fi
