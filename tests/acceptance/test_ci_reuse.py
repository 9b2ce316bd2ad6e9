"""A pull request's validation reuses the unit results its base's trusted run stored, as CI restores them.

The "main" run validates the base and keeps ``build/cache`` (as publish.yml saves it); a fresh clone of the
pull request gets that folder (as pull-request.yml restores it) and validates the change against its base.
Only the units the change touches and those that read them are checked again, with the reason said; an entry
that claims another content or comes from other code is never trusted, whatever findings it holds.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from evreg.check import rules
from evreg.check.pipeline import validate
from evreg.check.results import (
    CHANGED,
    DEPENDS,
    NO_ENTRY,
    OTHER_CONTENT,
    OTHER_VERSION,
    ResultCache,
    unit_name,
)
from evreg.core.layout import CACHE_DIR
from evreg.site import reuse
from helpers import REPO, F, Reg, evreg, family, run

PACK = rules.discover()
OTH = "packets/oth"
RUN_O = f"{OTH}/measurements/run-o.json"
PACKET = f"{F}/pkt/packet.json"
RUN_1 = f"{F}/pkt/measurements/run-1.json"


def three_families(reg: Reg) -> str:
    """A second family whose measurement the first family's packet cites, and a third on its own; committed:
    the base."""
    fam = family()
    fam.update(id="oth", name="Other family")
    fam.pop("featured_results")
    fam.pop("primary_packet_id")
    reg.put(f"{OTH}/family.json", fam)
    measurement = run()
    measurement["id"] = "run-o"
    reg.put(RUN_O, measurement)
    reg.edit(PACKET, lambda d: d.update(summary="Decode {{ m:run-o.decode_tok_s[0] }}."))
    fam.update(id="thr", name="Third family")
    reg.put("packets/thr/family.json", fam)
    return reg.commit("three families")


def main_run(reg: Reg, tmp: Path) -> Path:
    """The trusted run on main: a clone of the base validated (``--base HEAD``, as publish.yml runs it); the
    ``build/cache`` it leaves, as saved."""
    main = tmp / "main"
    subprocess.run(["git", "clone", "-q", str(reg.root), str(main)], check=True)
    done = evreg("validate", "--base", "HEAD", cwd=main)
    assert done.returncode == 0, done.stdout
    return main / "build" / "cache"


def pull_request(reg: Reg, tmp: Path, saved: Path, name: str = "pr") -> Path:
    """A fresh clone of the registry's HEAD (the pull request) with the base's results restored."""
    clone = tmp / name
    subprocess.run(["git", "clone", "-q", str(reg.root), str(clone)], check=True)
    shutil.copytree(saved, clone / "build" / "cache")
    return clone


def entry_path(root: Path, unit: str) -> Path:
    return ResultCache(root / CACHE_DIR, "")._file(unit)


def why(report: Any) -> dict[str, str]:
    return {u["unit"]: u["why"] for u in report.extra["units"]["checked_units"]}


def test_a_pull_request_checks_the_units_it_touches_and_their_dependents_only(reg: Reg, tmp_path: Path) -> None:
    base = three_families(reg)
    saved = main_run(reg, tmp_path)
    reg.edit(RUN_O, lambda d: d["metrics"].update(decode_tok_s=[], ttft_ms=[30.25]))  # the cited metric goes
    reg.commit("pull request")
    clone = pull_request(reg, tmp_path, saved)

    _registry, report = validate(clone, PACK, base=base)
    units = report.extra["units"]
    # oth changed; fam's files did not, but its packet cites run-o: checked again, and the citation dangles.
    assert why(report) == {unit_name("oth"): CHANGED, unit_name("fam"): DEPENDS}
    assert [u["because"] for u in units["checked_units"] if u["why"] == DEPENDS] == [RUN_O]
    assert units["reused"] == len(_registry.unit_paths) - 2 == 1  # the third family
    cited = [f for f in report.findings if f.file == PACKET and f.code == "citation-unresolved"]
    assert cited and all(f.introduced for f in cited)

    # What a cold clone finds, with nothing restored.
    cold = tmp_path / "cold"
    subprocess.run(["git", "clone", "-q", str(reg.root), str(cold)], check=True)
    _registry, fresh = validate(cold, PACK, base=base)
    assert set(why(fresh).values()) == {CHANGED, NO_ENTRY}
    assert [f.model_dump() for f in fresh.findings] == [f.model_dump() for f in report.findings]

    # The job summary says it, as the pull-request workflow writes it.
    done = evreg("validate", "--base", base, "--format", "summary", cwd=pull_request(reg, tmp_path, saved, "pr2"))
    assert "1 unit reused from the cache, 2 checked (1 changed, 1 depends on a changed unit)." in done.stdout
    assert f"| ` {unit_name('fam')} ` | ` {DEPENDS} ({RUN_O}) ` |" in done.stdout


def test_a_planted_entry_for_other_content_or_from_other_code_is_checked_again(reg: Reg, tmp_path: Path) -> None:
    """Entries that claim the unit has no findings: one stored for content the unit does not have (a digest
    that is not the unit's tree id), one for the unit's very content but stored by another evreg version or
    rule set. Both are checked again, and the real findings reported."""
    three_families(reg)
    saved = main_run(reg, tmp_path)
    reg.edit(RUN_1, lambda d: d["metrics"].update(decode_tok_s=["30.21"]))  # a number written as text: schema
    head = reg.commit("a broken measurement")
    clone = pull_request(reg, tmp_path, saved)
    fam_tree = "tree:" + reg.repo.git.rev_parse(f"{head}:{F}")

    # Planted: fam's entry, emptied of findings, still claiming the base's tree of fam.
    path = entry_path(clone, "fam")
    planted = json.loads(path.read_bytes())
    assert planted["digest"] != fam_tree
    planted.update(findings=[])
    path.write_text(json.dumps(planted))
    _registry, report = validate(clone, PACK)
    assert why(report) == {unit_name("fam"): OTHER_CONTENT}
    assert "schema" in {f.code for f in report.findings if f.file == RUN_1}

    # Planted: an entry for fam's very content (its tree id), clean, from other code.
    planted = json.loads(path.read_bytes())
    assert planted["digest"] == fam_tree and planted["findings"]  # the entry stored just now: the real one
    planted.update(findings=[], version="another evreg version")
    path.write_text(json.dumps(planted))
    registry, report = validate(clone, PACK)
    assert why(report) == {unit_name("fam"): OTHER_VERSION}
    assert "schema" in {f.code for f in report.findings if f.file == RUN_1}
    assert report.extra["units"]["reused"] == len(registry.unit_paths) - 1

    # An entry without the fields an entry has is no entry.
    planted = json.loads(path.read_bytes())
    del planted["deps"]
    path.write_text(json.dumps(planted))
    _registry, report = validate(clone, PACK)
    assert why(report) == {unit_name("fam"): NO_ENTRY}
    assert "schema" in {f.code for f in report.findings if f.file == RUN_1}

    # The command line says the same.
    done = evreg("validate", cwd=clone)
    assert done.returncode == 1 and "[schema]" in done.stdout
    assert "3 units reused from the cache, 0 checked" in done.stdout  # the entry stored by the last run


def test_only_main_saves_the_results_a_pull_request_restores() -> None:
    """publish.yml (push to main) saves ``build/cache`` keyed by its commit after validating it and building its site
    (the scans of its pages, ``evreg.site.reuse``, are kept there too); no step of the
    pull-request workflow can save a cache (``actions/cache`` itself saves at the end of a job); the judge restores
    its base's before the first check."""
    publish = yaml.safe_load((REPO / ".github/workflows/publish.yml").read_text())
    assert publish.get("on", publish.get(True)) == {"push": {"branches": ["main"]}}
    steps = publish["jobs"]["build"]["steps"]
    saves = [s for s in steps if s.get("uses", "").startswith("actions/cache/save@")]
    assert [s["with"] for s in saves] == [{"path": "build/cache", "key": "evreg-results-${{ github.sha }}"}]
    validated = next(i for i, s in enumerate(steps) if "evreg validate --base HEAD" in s.get("run", ""))
    assert validated < steps.index(saves[0])
    # the site is built before the save, so the scans of its pages travel with the results (under build/cache)
    built = next(i for i, s in enumerate(steps) if "evreg build" in s.get("run", ""))
    assert built < steps.index(saves[0]) and reuse.CHECKED_FILE.startswith("build/cache/")

    pr = yaml.safe_load((REPO / ".github/workflows/pull-request.yml").read_text())
    uses = [s.get("uses", "") for job in pr["jobs"].values() for s in job["steps"]]
    assert not [u for u in uses if u.startswith(("actions/cache@", "actions/cache/save@"))]
    judge = pr["jobs"]["judge"]["steps"]
    restore = next(i for i, s in enumerate(judge) if s.get("uses", "").startswith("actions/cache/restore@"))
    assert judge[restore]["with"] == {
        "path": "build/cache",
        "key": "evreg-results-${{ steps.base.outputs.sha }}",
        "restore-keys": "evreg-results-",
    }
    first_check = next(i for i, s in enumerate(judge) if '/judge/bin/evreg"' in s.get("run", ""))
    assert restore < first_check
