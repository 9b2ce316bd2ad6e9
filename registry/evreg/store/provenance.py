"""Provenance from git: who added and changed each file under packets/, when,
in which commit, from one pass over the history (not one log per file)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from evreg.core.layout import PACKETS


@dataclass(frozen=True)
class Change:
    commit: str
    author: str
    date: str  # ISO 8601 with offset
    change: str  # A, M or D


def history(root: Path, rev: str = "HEAD") -> dict[str, list[Change]]:
    """Path -> its changes, oldest first. Empty when there is no git history."""
    import git

    try:
        with git.Repo(root) as repo:
            out = repo.git.log(
                rev, "--format=%x00%H%x09%an%x09%aI", "--name-status", "--no-renames", "--reverse", "--", PACKETS
            )
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, git.GitCommandError, ValueError):
        return {}
    changes: dict[str, list[Change]] = defaultdict(list)
    for block in out.split("\x00")[1:]:
        header, *lines = block.strip("\n").split("\n")
        sha, author, date = header.split("\t")
        for line in lines:
            if "\t" in line:
                status, path = line.split("\t", 1)
                changes[path].append(Change(sha, author, date, status[:1]))
    return dict(changes)


def head(root: Path) -> str | None:
    """The commit checked out at ``root``; None outside git or before the first commit."""
    import git

    try:
        with git.Repo(root) as repo:
            return repo.head.commit.hexsha
    except (git.InvalidGitRepositoryError, git.NoSuchPathError, ValueError):
        return None


def resolve(root: Path, rev: str) -> str:
    """A commit id for ``rev``: a revision name, or a date (the last commit before its end). ValueError when
    it names none (or ``root`` is no repository)."""
    import git

    try:
        repo = git.Repo(root)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
        raise ValueError(f"{root} is not a git repository ({type(exc).__name__})") from None
    with repo:
        try:
            return repo.commit(rev).hexsha
        except (git.BadName, ValueError):
            pass
        found = (
            repo.git.rev_list("-1", f"--before={rev} 23:59:59" if len(rev) == 10 else f"--before={rev}", "HEAD")
            if _looks_like_date(rev)
            else ""
        )
        if not found:
            raise ValueError(f"{rev!r} is neither a commit nor a date with commits before it")
        return found.strip()


def _looks_like_date(value: str) -> bool:
    return len(value) >= 10 and value[:4].isdigit() and value[4] == "-" and value[7] == "-"
