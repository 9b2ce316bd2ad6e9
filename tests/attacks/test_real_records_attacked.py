"""The real records attacked: a copy validates clean (its reviewed baseline aside), then every class of claim
attack -- scope, settings, quotes, cells, table headers -- is planted at once and each must be found where it was
planted, and nothing else."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import pytest

from evreg.check import pipeline
from evreg.core.findings import Finding
from helpers import REPO, blocking

pytestmark = pytest.mark.slow  # each test validates a copy of the real records


def test_the_copy_is_clean(real: Path) -> None:
    assert blocking(real) == []


Q38 = "packets/qwen3-8-27b"
FP8_RUN = f"{Q38}/rtx5090-qwen-qwen3-8-27b-fp8/measurements/qwen38-fp8-official.json"
MOVED = f"{Q38}/rtx5090-inferact-qwen3-8-27b-nvfp4/measurements/qwen38-fp8-official.json"
JITTER = f"{Q38}/rtx5090-qwen-qwen3-8-27b-fp8/measurements/jitter-qwen3-8-27b-official-fp8-bf16-kv.json"
STRIPPED = f"{Q38}/rtx5090-inferact-qwen3-8-27b-nvfp4/measurements/jitter-qwen3-8-27b-official-fp8-bf16-kv.json"
OOM = f"{Q38}/closures/qwen38-fp8-8k.json"
LFM = "packets/lfm-2-5/family.json"
LAGUNA = "packets/laguna-s/coverage/laguna-context-by-tp.json"
Q35 = "packets/qwen-35b/coverage/qwen35-current-mtp-by-tp.json"
RTX_PACKET = f"{Q38}/rtx5090-inferact-qwen3-8-27b-nvfp4/packet.json"
PAGE = "site/attack.md"


def _findings(root: Path) -> list[Finding]:
    """What validation reports beyond the reviewed baseline."""
    return pipeline.validate(root, use_cache=False)[1].blocking


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("real") / "registry"
    for part in ("packets", "schema"):
        shutil.copytree(REPO / part, root / part)
    (root / "site").mkdir()
    git.Repo.init(root)
    return root


def _edit(root: Path, path: str, fn: Callable[[Any], Any]) -> None:
    data = json.loads((root / path).read_text("utf-8"))
    fn(data)
    (root / path).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")


def _sub(root: Path, path: str, old: str, new: str) -> None:
    text = (root / path).read_text("utf-8")
    assert old in text, (path, old)
    (root / path).write_text(text.replace(old, new, 1), "utf-8")


def test_every_class_is_found_on_a_copy_of_the_real_records(copy: Path) -> None:
    assert _findings(copy) == []
    # scope: an FP8 run moved into the NVFP4 packet's folder
    (copy / MOVED).write_bytes((copy / FP8_RUN).read_bytes())
    (copy / FP8_RUN).unlink()
    # scope: another FP8 run moved there with the keys that would differ deleted rather than changed
    _edit(copy, JITTER, lambda d: [d.pop(k) for k in ("artifact_id", "quantization", "hardware")])
    (copy / STRIPPED).write_bytes((copy / JITTER).read_bytes())
    (copy / JITTER).unlink()
    # scope: a packet's own label citing another packet's run as its own
    _edit(copy, RTX_PACKET, lambda d: d.update(label="faster than {{ m:qwen38-fp8-official.decode_tok_s[0] }}"))
    # a setting laundering a measured rate
    _sub(copy, LFM, "{{ set:32 GiB }}", "{{ set:52.3 tok/s }}")
    # a quote of the run log that the log does not say
    _sub(copy, OOM, "{{ e:/failures/1/reason = 31.39 GiB }}", "{{ e:/failures/1/reason = 21.39 GiB }}")
    # typed figures in cells, where the importer wrote citations: a percentage and a bare decimal
    laguna = (copy / LAGUNA).read_text("utf-8")
    cite = re.search(r"\{\{ m:[^}]*@1024 \| 2 \| nounit \| pct \}\}", laguna)
    assert cite
    _sub(copy, LAGUNA, cite.group(), "23.56")
    _sub(copy, Q35, "{{ m:qwen35-quark-tp4-strict-current.decode_tok_s[0] | 3 | nounit }} strict", "93.551 strict")
    # a unit in a hand-written table's header
    (copy / PAGE).write_text("# Attack\n\n| Model | Decode (tok/s) |\n|---|---|\n| Qwen | 99.9 |\n", "utf-8")

    found = {(f.code, f.file) for f in _findings(copy)}
    assert found == {
        ("sideways-promotion", MOVED),
        ("sideways-promotion", STRIPPED),
        ("artifact-mismatch", STRIPPED),  # its artifact deleted: the revision's artifacts no longer pin it
        ("sideways-promotion", RTX_PACKET),
        ("orphan-number", LFM),
        ("evidence-value-mismatch", OOM),
        ("orphan-number", LAGUNA),
        ("orphan-number", Q35),
        ("orphan-number", PAGE),
    }, sorted(found)
