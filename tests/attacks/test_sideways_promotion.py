"""One scope on every promotion path: a run filed in a packet's folder, a family's hero, a coverage cell and a
packet's own prose speak for a packet only with runs of its scope -- every scope key attacked one at a time, by
changing it and by deleting it (the keys come from ``evreg.claims.scope.SCOPE_KEYS``, so a new key is attacked
automatically) -- beside the honest variant that passes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evreg.claims import scope
from evreg.claims.runtimes import runtime_matches
from evreg.claims.scope import same_hardware
from evreg.core.findings import Finding
from helpers import (
    Q35_PACKET,
    Q35_PACKET_DIR,
    Q35_STRICT,
    REPO,
    F,
    Reg,
    blocking,
    copy_run,
    edit_json,
    evreg,
    has,
    only,
)

RUN = f"{F}/pkt/measurements/run-1.json"
PKT = f"{F}/pkt/packet.json"


OTHER: dict[str, Callable[[dict[str, Any]], None]] = {
    "revision": lambda d: d.update(revision="rev-b.2", artifact_id="art-b"),
    "artifact_id": lambda d: d.update(artifact_id="art-b"),
    "quantization": lambda d: d.update(quantization="FP8"),
    "runtime": lambda d: d.update(runtime="vLLM 0.10"),
    "hardware": lambda d: d.update(hardware="NVIDIA GeForce RTX 4090"),
    "topology": lambda d: d["config"].update(tp=2),
}
"""For each scope key, an edit that moves the fixture run to another scope on that key alone."""


def test_every_scope_key_is_attacked() -> None:
    assert set(OTHER) == set(scope.SCOPE_KEYS)


@pytest.mark.parametrize("key", scope.SCOPE_KEYS)
def test_a_run_of_another_scope_filed_in_a_packet_folder_is_a_sideways_promotion(reg: Reg, key: str) -> None:
    """Moving an FP8 run into an NVFP4 packet's folder shows it as that packet's: every scope key, one at a time."""
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090"))
    reg.edit(RUN, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090"))
    assert not [f for f in reg.findings() if f.file == RUN], "the honest run is in scope"
    reg.edit(RUN, OTHER[key])
    placed = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert placed and all("filed in packet 'pkt'" in f.message for f in placed), key
    assert any(key.split("_")[0] in f.message for f in placed)


@pytest.mark.parametrize("side", ["run", "packet"])
def test_a_scope_key_stated_on_one_side_only_is_a_mismatch(reg: Reg, side: str) -> None:
    """A run that states hardware the packet does not, and a run that leaves unstated the hardware its packet
    states: neither is shown as the packet's."""
    reg.edit(PKT if side == "packet" else RUN, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3"))
    [f] = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert f.pointer == "/hardware" and "hardware" in f.message and f.severity == "error"


@pytest.mark.parametrize("key", [k for k in scope.SCOPE_KEYS if k != "revision"])
def test_a_run_stripped_of_a_scope_key_is_not_the_packets(reg: Reg, key: str) -> None:
    """The laundering variant of a sideways placement: delete the key that would differ instead of changing it. Every
    optional scope key the packet states, one at a time (the revision is required of every run by its schema)."""
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090", artifact_id="art-a"))
    reg.edit(RUN, lambda d: d.update(hardware="NVIDIA GeForce RTX 5090", artifact_id="art-a"))
    assert not [f for f in reg.findings() if f.file == RUN], "the honest run is in scope"
    packet = reg.read(PKT)
    assert (scope.topology(packet) if key == "topology" else packet.get(key)) is not None, key

    def strip(d: dict[str, Any]) -> None:
        if key == "topology":
            for where in (d, d.get("config") or {}):
                for k in ("tp", "cards", "topologies"):
                    where.pop(k, None)
        else:
            d.pop(key)

    reg.edit(RUN, strip)
    placed = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert placed and all("filed in packet 'pkt'" in f.message for f in placed), key


@pytest.mark.parametrize(
    ("packet_runtime", "run_runtime", "same"),
    [
        ("llama.cpp SYCL 9976 (e3546c794)", "llama.cpp SYCL e3546c794", True),
        ("vLLM 0.28.0", "vLLM 0.28.0 + unmerged fork", False),
        ("vLLM 0.9", "vLLM 0.9", True),
    ],
)
def test_runtime_is_compared_as_a_parsed_identity(reg: Reg, packet_runtime: str, run_runtime: str, same: bool) -> None:
    reg.edit(PKT, lambda d: d.update(runtime=packet_runtime))
    reg.edit(RUN, lambda d: d.update(runtime=run_runtime))
    placed = [f for f in only(reg.findings(), "sideways-promotion") if f.file == RUN]
    assert (not placed) is same


def test_a_control_run_lives_at_family_level(reg: Reg) -> None:
    """The honest way to keep a run of another scope beside a packet: the family's measurements/ folder."""
    reg.edit(RUN, OTHER["quantization"])
    run = reg.read(RUN)
    (reg.root / RUN).unlink()
    reg.put(f"{F}/measurements/run-1.json", run)
    assert not [f for f in reg.findings() if "filed in packet" in f.message]


def test_a_family_hero_speaks_for_the_primary_packet_or_its_own_packet(reg: Reg) -> None:
    # a hero at family level of another runtime than the primary packet: sideways
    run = reg.read(RUN) | {"runtime": "llama.cpp b5163 (8cf427ff)"}
    (reg.root / RUN).unlink()
    reg.put(f"{F}/measurements/run-1.json", run)
    hero = [f for f in only(reg.findings(), "sideways-promotion") if f.file == f"{F}/family.json"]
    assert hero and "runtime" in hero[0].message and hero[0].pointer == "/featured_results/0/measurement_id"
    # the same run in the folder of a packet of its own scope: the hero speaks for that packet
    reg.put(
        f"{F}/llama/packet.json",
        {k: v for k, v in reg.read(PKT).items() if k != "manifest"}
        | {"id": "llama", "runtime": "llama.cpp b5163 (8cf427ff)"},
    )
    (reg.root / f"{F}/measurements/run-1.json").unlink()
    reg.put(f"{F}/llama/measurements/run-1.json", run)
    assert not [f for f in reg.findings() if f.file == f"{F}/family.json" and f.code == "sideways-promotion"]


def test_a_cell_cites_a_run_of_the_scope_of_the_packet_it_links(reg: Reg) -> None:
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3"))
    codes = {(f.file, f.pointer) for f in only(reg.findings(), "sideways-promotion")}
    assert (f"{F}/coverage/matrix.json", "/cells/0:1/evidence_id") in codes


def test_a_packets_prose_cites_another_scope_only_as_a_comparison(reg: Reg) -> None:
    reg.put(f"{F}/measurements/other.json", reg.read(RUN) | {"id": "other", "runtime": "SGLang 0.5"})
    reg.edit(PKT, lambda d: d.update(label="Beats {{ m:other.decode_tok_s[0] }} elsewhere"))
    [f] = [f for f in only(reg.findings(), "sideways-promotion") if f.file == PKT]
    assert f.pointer == "/label" and "'other'" in f.message
    reg.edit(PKT, lambda d: d.update(label="Beats {{ m:other.decode_tok_s[0] | compare }} elsewhere"))
    assert not [f for f in reg.findings() if f.file == PKT]


def test_stated_hardware_must_be_the_packets(reg: Reg, tmp_path: Path) -> None:
    """``--hardware`` states what a tool's file does not say; it is compared with the packet like the file's own."""
    reg.edit(PKT, lambda d: d.update(hardware="NVIDIA H100 80GB HBM3", runtime="vLLM 0.11.0"))
    reg.commit()
    file = str(REPO / "tests/data/tools/vllm-bench-serve.json")
    args = ("import", "vllm-bench", file, "--packet", "fam/pkt", "--cards", "1", "--runtime", "vLLM 0.11.0")
    wrong = evreg(*args, "--hardware", "RTX 4090", cwd=reg.root)
    assert wrong.returncode == 1 and "the stated hardware 'RTX 4090' is not the packet's" in wrong.stdout


# -- on a copy of the real records -------------------------------------------------------------------------------------


def _in_packet(root: Path, fn: Callable[[Any], Any], new_id: str = "x-run") -> list[Finding]:
    path = copy_run(root, Q35_STRICT, f"{Q35_PACKET_DIR}/measurements", new_id, fn)
    return [f for f in blocking(root) if f.file == path]


@pytest.mark.slow
def test_an_addition_is_not_the_packets_runtime(real: Path) -> None:
    fork = "vLLM XPU 2026-06 strict program + unmerged fork"
    assert not runtime_matches("vLLM XPU 2026-06 strict program", {"runtime": fork})
    assert _in_packet(real, lambda d: d.update(runtime=fork))


@pytest.mark.slow
def test_a_mixed_rig_is_not_the_packets_hardware(real: Path) -> None:
    mixed = "Intel Arc Pro B70 + NVIDIA RTX 4090"
    assert not same_hardware("Intel Arc Pro B70", mixed)
    assert _in_packet(real, lambda d: d.update(hardware=mixed))


@pytest.mark.slow
def test_a_derived_figure_in_packet_prose_is_held_to_scope(real: Path) -> None:
    screen = "m:qwen35-quark-tp2-screen.decode_tok_s[0]"
    strict = "m:qwen35-quark-tp4-strict-current.decode_tok_s[0]"
    edit_json(real, Q35_PACKET, lambda d: d.update(label=f"{{{{ change:{screen} from {strict} }}}} at TP2"))
    assert has(blocking(real), "sideways-promotion", Q35_PACKET)
