"""apt-get for the tests that need a real daemon (Slurm, Prometheus): install Debian's packages
when they are missing, or say why not (the tests are then skipped with that reason)."""

from __future__ import annotations

import os
import shutil
import subprocess


def apt_install(packages: list[str]) -> str | None:
    """`apt-get update` then `apt-get install` of `packages`; None on success, else why not."""
    if os.geteuid() != 0:
        return f"{', '.join(packages)} not installed, and installing needs root"
    if not shutil.which("apt-get"):
        return f"{', '.join(packages)} not installed, and there is no apt-get to install them"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"}
    lock = ["-o", "DPkg::Lock::Timeout=60"]
    for argv, limit in ((["apt-get", *lock, "update", "-q"], 120), (["apt-get", *lock, "install", "-y", "-q", "--no-install-recommends", *packages], 240)):
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=limit, check=False)
        except subprocess.TimeoutExpired:
            return f"`{' '.join(argv)}` took more than {limit} s"
        if done.returncode != 0:
            return f"`{' '.join(argv)}` failed: {(done.stderr or done.stdout).strip()[-500:]}"
    return None
