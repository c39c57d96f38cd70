#!/bin/bash
# Reward 1 when the agent wrote exactly the asked content to /app/header.csv, else 0.
expected='id,name,score'
if [ -f /app/header.csv ] && [ "$(cat /app/header.csv)" = "$expected" ]; then
  echo "PASS: /app/header.csv holds the expected content"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/header.csv holds '$(cat /app/header.csv 2>/dev/null)', expected '$expected'"
  echo 0 > /logs/verifier/reward.txt
fi
