"""SSH signatures over a record's exact bytes, made and checked by OpenSSH's `ssh-keygen -Y`.

The format is the one Git uses for signed commits (OpenSSH's PROTOCOL.sshsig): an armored
`-----BEGIN SSH SIGNATURE-----` block over the bytes, bound to a namespace so a signature
made for one purpose cannot be replayed for another. Using the system's ssh-keygen rather
than a library keeps the check reproducible with no relidash installed:

    ssh-keygen -Y verify -n relidash-signoff -f allowed_signers -I WHO -s RECORD.json.sig < RECORD.json

An allowed-signers file (ssh-keygen(1), ALLOWED SIGNERS) names who may sign: one line per
principal and public key.

Must not: write files (the caller stores the signature beside its record), hold a key in
memory, or decide whether an unsigned record is acceptable.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SIGNOFF_NAMESPACE: Final = "relidash-signoff"
SIGNATURE_SUFFIX: Final = ".sig"
# what a record's signature is, as the pages, `reviews`, packets and `verify` say it
VERIFIED: Final = "verified"
NOT_VERIFIED: Final = "does not verify"
UNSIGNED: Final = "unsigned"
SIGNER_UNCHECKED: Final = "signer not checked"  # signed, and no allowed signers given
CANNOT_CHECK: Final = "cannot be checked"  # signed, and ssh-keygen cannot be run here
_TIMEOUT = 30
_MAX_SIGNATURE_BYTES = 64 << 10  # an ed25519 or RSA-4096 signature is under 2 KiB


class SigningError(Exception):
    """A record cannot be signed (no ssh-keygen, an unusable key); one sentence to show."""


@dataclass(frozen=True)
class SignatureCheck:
    status: str  # VERIFIED | NOT_VERIFIED | UNSIGNED | SIGNER_UNCHECKED | CANNOT_CHECK
    signer: str = ""  # the principal the allowed-signers file names, when verified
    reason: str = ""  # why it does not verify

    def describe(self) -> str:
        """ "signed by alice@example.com, verified", "signature does not verify (...)", ..."""
        if self.status == VERIFIED:
            return f"signed by {self.signer}, verified"
        if self.status == NOT_VERIFIED:
            return "signature does not verify" + (f" ({self.reason})" if self.reason else "")
        if self.status == SIGNER_UNCHECKED:
            return "signed; signer not checked (no allowed signers given)"
        if self.status == CANNOT_CHECK:
            return f"signature cannot be checked ({self.reason})"
        return "unsigned"


def ssh_keygen() -> str:
    """The ssh-keygen on PATH (OpenSSH 8.2 or later signs with -Y); SigningError if none."""
    found = shutil.which("ssh-keygen")
    if found is None:
        raise SigningError(
            "ssh-keygen (OpenSSH 8.2 or later) is not installed, and relidash signs and checks "
            "sign-offs with it (Debian: apt-get install openssh-client)"
        )
    return found


def sign_bytes(data: bytes, key: Path, namespace: str = SIGNOFF_NAMESPACE) -> bytes:
    """The armored SSH signature of `data` made with the private key file `key`."""
    if not key.is_file():
        raise SigningError(f"{key}: no such signing key")
    done = _run([ssh_keygen(), "-Y", "sign", "-f", str(key), "-n", namespace], data)
    if done.returncode != 0 or b"BEGIN SSH SIGNATURE" not in done.stdout:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise SigningError(
            f"{key}: ssh-keygen could not sign with it ({said[-1] if said else 'no reason given'})"
        )
    return done.stdout


def check_signature(
    data: bytes,
    signature: bytes | None,
    allowed_signers: Path | None,
    namespace: str = SIGNOFF_NAMESPACE,
) -> SignatureCheck:
    """Whether `signature` is a good signature of `data` by a principal of `allowed_signers`.

    Without an allowed-signers file only the signature's own consistency is checked
    (ssh-keygen -Y check-novalidate): it proves the bytes are unchanged since some key
    signed them, not whose key that was.
    """
    if signature is None:
        return SignatureCheck(UNSIGNED)
    if len(signature) > _MAX_SIGNATURE_BYTES or b"BEGIN SSH SIGNATURE" not in signature:
        return SignatureCheck(NOT_VERIFIED, reason="the .sig file is not an SSH signature")
    try:
        return _check(data, signature, allowed_signers, namespace)
    except SigningError as exc:
        return SignatureCheck(CANNOT_CHECK, reason=str(exc))


def _check(
    data: bytes, signature: bytes, allowed_signers: Path | None, namespace: str
) -> SignatureCheck:
    keygen = ssh_keygen()
    with tempfile.TemporaryDirectory(prefix="relidash-sig-") as scratch:
        sig = Path(scratch) / "record.sig"
        sig.write_bytes(signature)
        if allowed_signers is None:
            done = _run([keygen, "-Y", "check-novalidate", "-n", namespace, "-s", str(sig)], data)
            if done.returncode == 0:
                return SignatureCheck(SIGNER_UNCHECKED)
            return SignatureCheck(NOT_VERIFIED, reason="the bytes are not the ones signed")
        found = _run(
            [keygen, "-Y", "find-principals", "-s", str(sig), "-f", str(allowed_signers)], b""
        )
        principals = found.stdout.decode("utf-8", "replace").split()
        if found.returncode != 0 or not principals:
            return SignatureCheck(NOT_VERIFIED, reason="its key is not among the allowed signers")
        for principal in principals:
            done = _run(
                [keygen, "-Y", "verify", "-f", str(allowed_signers), "-I", principal,
                 "-n", namespace, "-s", str(sig)],
                data,
            )  # fmt: skip
            if done.returncode == 0:
                return SignatureCheck(VERIFIED, signer=principal)
    return SignatureCheck(NOT_VERIFIED, reason="the bytes are not the ones signed")


def configured_signers(config: Path | None) -> Path | None:
    """`[review] allowed_signers` of relidash.toml (`config`; a relative path is relative to
    it), or None when it names none. ValueError, one sentence, for an unusable setting."""
    if config is None or not config.is_file():
        return None
    try:
        document = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{config}: cannot be read for [review] allowed_signers ({exc})") from exc
    review = document.get("review")
    named = review.get("allowed_signers") if isinstance(review, dict) else None
    if named is None:
        return None
    if not isinstance(named, str) or not named:
        raise ValueError(f"{config}: [review] allowed_signers must be a file path")
    path = Path(named).expanduser()
    path = path if path.is_absolute() else config.parent / path
    if not path.is_file():
        raise ValueError(f"{config}: [review] allowed_signers names {path}, which does not exist")
    return path


def _run(argv: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(argv, input=data, capture_output=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SigningError(f"ssh-keygen could not be run ({exc})") from exc
