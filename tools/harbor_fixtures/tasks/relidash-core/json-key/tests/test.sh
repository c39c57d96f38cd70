#!/bin/bash
# Reward 1 when the agent wrote exactly the asked content to /app/status.json, else 0.
expected='{"ok": true}'
if [ -f /app/status.json ] && [ "$(cat /app/status.json)" = "$expected" ]; then
  echo "PASS: /app/status.json holds the expected content"
  echo 1 > /logs/verifier/reward.txt
else
  echo "FAIL: /app/status.json holds '$(cat /app/status.json 2>/dev/null)', expected '$expected'"
  echo 0 > /logs/verifier/reward.txt
fi
