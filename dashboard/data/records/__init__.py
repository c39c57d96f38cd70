"""What relidash must keep, which is data, not cache: sign-offs (signoffs.py, each checked
by schema.py), their chained ledger (ledger.py) and SSH signatures (sshsig.py). Written
only to relidash's own data directory, atomically."""
