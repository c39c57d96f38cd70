"""A Harbor environment that runs each command as a local process, no docker.

Harbor's tasks, verifiers and the oracle agent address the sandbox by absolute
container paths (``/app``, ``/logs/verifier``, ``/tests``, ``/solution``). So that
every script runs unmodified, each trial gets a scratch directory laid out as a
tiny root filesystem: its own ``app``, ``logs``, ``tests``, ``solution`` and
``tmp``, plus the host's ``/usr``, ``/etc``, ``/dev`` and ``/proc`` bound in.
Each ``exec`` runs ``unshare --mount`` (a private mount namespace, so the bind
mounts vanish with the process) and ``chroot`` into that directory. File upload
and download are plain copies between the host and the scratch directory.

Needs root and ``unshare`` (util-linux). Used only to write relidash's test
fixtures; Harbor is never a runtime dependency of relidash.

Use it with ``environment.import_path = "local_env:LocalEnvironment"`` in a
Harbor job config (this directory on ``PYTHONPATH``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import tempfile
from pathlib import Path

from harbor.environments.base import BaseEnvironment, ExecResult
from harbor.environments.capabilities import EnvironmentCapabilities

# Host directories bound read-only into every scratch root so that bash,
# coreutils and python run there as they do on the host.
_HOST_DIRS = ("usr", "etc", "opt")
# On usr-merged systems these are symlinks into /usr; elsewhere real directories.
_HOST_LINKS_OR_DIRS = ("bin", "sbin", "lib", "lib64", "lib32", "libx32")
# The sandbox's own writable directories (Harbor's EnvironmentPaths and a workdir).
_SANDBOX_DIRS = (
    "app",
    "logs/agent",
    "logs/verifier",
    "logs/artifacts",
    "tests",
    "solution",
    "tmp",
    "root",
    "installed-agent",
)
_SCRATCH_PARENT_ENV = "HARBOR_LOCAL_ENV_SCRATCH"


class LocalEnvironment(BaseEnvironment):
    """One trial's sandbox: a scratch root entered with unshare + chroot per command."""

    @staticmethod
    def type() -> str:
        return "local-chroot"

    @property
    def capabilities(self) -> EnvironmentCapabilities:
        return EnvironmentCapabilities()

    def _validate_definition(self):
        # Tasks for this environment carry no Dockerfile: the host's userland is the image.
        return None

    def __init__(self, *args, **kwargs):
        self._scratch: Path | None = None
        super().__init__(*args, **kwargs)

    @property
    def root(self) -> Path:
        if self._scratch is None:
            raise RuntimeError("LocalEnvironment used before start()")
        return self._scratch

    def _host_path(self, sandbox_path: str | os.PathLike) -> Path:
        """The host file behind an absolute sandbox path (relative ones are under the workdir)."""
        path = str(sandbox_path)
        if not path.startswith("/"):
            path = f"{self._workdir()}/{path}"
        resolved = Path(os.path.normpath(path))
        return self.root / resolved.relative_to("/")

    def _workdir(self) -> str:
        return self.task_env_config.workdir or "/app"

    async def start(self, force_build: bool) -> None:
        parent = os.environ.get(_SCRATCH_PARENT_ENV) or tempfile.gettempdir()
        Path(parent).mkdir(parents=True, exist_ok=True)
        self._scratch = Path(tempfile.mkdtemp(prefix=f"{self.session_id}.", dir=parent))
        for name in _SANDBOX_DIRS:
            (self.root / name).mkdir(parents=True, exist_ok=True)
        (self.root / self._workdir().lstrip("/")).mkdir(parents=True, exist_ok=True)
        for name in ("dev", "proc", *_HOST_DIRS):
            if Path("/", name).exists():
                (self.root / name).mkdir(exist_ok=True)
        for name in _HOST_LINKS_OR_DIRS:
            host = Path("/", name)
            if host.is_symlink():
                (self.root / name).symlink_to(os.readlink(host))
            elif host.is_dir():
                (self.root / name).mkdir(exist_ok=True)
        await self._upload_environment_dir_after_start()

    async def stop(self, delete: bool):
        if self._scratch is not None and delete:
            shutil.rmtree(self._scratch, ignore_errors=True)

    async def upload_file(self, source_path: Path | str, target_path: str):
        target = self._host_path(target_path)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source_path, target)

    async def upload_dir(self, source_dir: Path | str, target_dir: str):
        shutil.copytree(source_dir, self._host_path(target_dir), dirs_exist_ok=True)

    async def download_file(self, source_path: str, target_path: Path | str):
        Path(target_path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(self._host_path(source_path), target_path)

    async def download_dir(self, source_dir: str, target_dir: Path | str):
        shutil.copytree(self._host_path(source_dir), target_dir, dirs_exist_ok=True)

    def _mount_script(self) -> str:
        """Shell lines run inside the private mount namespace before chroot."""
        root = shlex.quote(str(self.root))
        lines = ["set -e"]
        for name in ("dev", "proc"):
            lines.append(f"mount --rbind /{name} {root}/{name}")
        for name in (*_HOST_DIRS, *_HOST_LINKS_OR_DIRS):
            host = Path("/", name)
            if host.is_dir() and not host.is_symlink():
                lines.append(f"mount --rbind -o ro /{name} {root}/{name}")
        return "\n".join(lines)

    async def exec(
        self,
        command: str,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout_sec: int | None = None,
        user: str | int | None = None,
    ) -> ExecResult:
        merged = self._merge_env(env) or {}
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in {"HOME": "/root", **merged}.items())
        inner = f"cd {shlex.quote(cwd or self._workdir())} && {command}"
        outer = (
            f"{self._mount_script()}\n"
            f"exec chroot {shlex.quote(str(self.root))} "
            f"/usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin {exports} "
            f"/bin/bash -c {shlex.quote(inner)}"
        )
        process = await asyncio.create_subprocess_exec(
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            outer,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(), timeout=timeout_sec or None
            )
        except TimeoutError:
            # The contract of Harbor's docker environment: kill, then RuntimeError.
            await _kill(process)
            raise RuntimeError(f"Command timed out after {timeout_sec} seconds") from None
        except asyncio.CancelledError:
            # An agent timeout cancels the agent's command: it must not outlive the trial.
            await _kill(process)
            raise
        return ExecResult(
            stdout=stdout.decode(errors="replace") or None,
            stderr=stderr.decode(errors="replace") or None,
            return_code=process.returncode or 0,
        )


async def _kill(process: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    await process.wait()
