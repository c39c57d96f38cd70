#!/bin/bash
# Reward 1 when the agent wrote exactly the asked content to /app/hello.txt, else 0.
expected='hello'
if [ -f /app/hello.txt ] && [ "$(cat /app/hello.txt)" = "$expected" ]; then
  echo "PASS: /app/hello.txt holds the expected content"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/hello.txt holds '$(cat /app/hello.txt 2>/dev/null)', expected '$expected'"
  echo 0 > /logs/verifier/reward.txt
fi
