"""The one way ``evreg`` runs the git command line, where GitPython's object model is not the tool:
listings (``status``, ``ls-files``), searches (``grep``) and batch reads (``cat-file --batch``).

Output is bytes (paths are read with ``-z``), standard error is dropped, and a git that cannot be
started is an answer (``None``), never an exception: callers treat "git cannot say" as "read it all"."""

from __future__ import annotations

import subprocess
from pathlib import Path

TRUSTED_AGE_NS = 2_000_000_000
"""A file or folder time vouches for what it stands for only once it is this much older than the listing
that reads it: file system clocks are coarse, so a change in the same tick would leave it unchanged."""


def spawn(cwd: Path, *args: str) -> subprocess.Popen[bytes] | None:
    """Start ``git ARGS`` in ``cwd`` (so several listings run at once); ``output`` collects it."""
    try:
        return subprocess.Popen(["git", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None


def output(proc: subprocess.Popen[bytes] | None) -> bytes | None:
    """What a spawned git printed, or None when it could not start or failed."""
    if proc is None:
        return None
    out = proc.communicate()[0]
    return out if proc.returncode == 0 else None


def run(cwd: Path | None, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes] | None:
    """Run ``git ARGS`` to the end (``stdin`` written to it); None when git cannot be started."""
    try:
        return subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False)
    except OSError:
        return None
