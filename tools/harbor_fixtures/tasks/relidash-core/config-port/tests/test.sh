#!/bin/bash
# Reward 1 when the agent wrote exactly the asked content to /app/server.conf, else 0.
expected='port=8080'
if [ -f /app/server.conf ] && [ "$(cat /app/server.conf)" = "$expected" ]; then
  echo "PASS: /app/server.conf holds the expected content"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/server.conf holds '$(cat /app/server.conf 2>/dev/null)', expected '$expected'"
  echo 0 > /logs/verifier/reward.txt
fi
