"""The commits the families of a registry pin for one external source, one per line: what a CI job fetches of the
source's repository before it validates with ``--source NAME=DIR`` (``python -m evreg.devtools.pins NAME``)."""

from __future__ import annotations

import sys
from pathlib import Path

from evreg.store import load


def pinned(root: Path, source: str) -> list[str]:
    """The distinct commits the valid family records under ``root`` pin for ``source``."""
    commits = set()
    for doc in load(root).records():
        spec = (doc.data.get("sources") or {}).get(source) if doc.kind == "family" else None
        if isinstance(spec, dict) and isinstance(spec.get("commit"), str):
            commits.add(spec["commit"])
    return sorted(commits)


if __name__ == "__main__":
    print("\n".join(pinned(Path.cwd(), sys.argv[1])))
