"""One topology vocabulary: the label every page prints for a setup (how many cards, split how).

A measurement states its setup in its ``config`` (``cards``, ``tp``, ``pp``, ``dp``, ``ep``), its packet in ``cards``;
the lab's records spell one setup three ways (``cards: 1``, ``cards: 1, tp: 1``, ``tp: 1``), and a reader sees one
label for all three: ``1 card``. The cards are the config's, else the packet's, else the product of the parallel
degrees the config states (TP4 x PP2 is eight cards); then only the degrees above one (``2 cards · TP2``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

DEGREES = (("tp", "TP"), ("pp", "PP"), ("dp", "DP"), ("ep", "EP"))
"""The parallel degrees a label names, in its order: tensor, pipeline, data and expert parallel."""
NOT_RECORDED = "not recorded"


def _count(value: Any) -> int | None:
    """A stated whole count (at least one), or None (a boolean is no count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def cards(config: Mapping[str, Any] | None, packet_cards: Any = None) -> int | None:
    """The cards of a setup: the config's ``cards``, else the packet's, else the product of the tensor, pipeline and
    data parallel degrees the config states; None when nothing says."""
    config = config if isinstance(config, Mapping) else {}
    stated = _count(config.get("cards")) or _count(packet_cards)
    if stated is not None:
        return stated
    degrees = [d for key in ("tp", "pp", "dp") if (d := _count(config.get(key))) is not None]
    if not degrees:
        return None
    product = 1
    for d in degrees:
        product *= d
    return product


def label(config: Mapping[str, Any] | None, packet_cards: Any = None) -> str:
    """The one label of a setup: ``1 card`` or ``N cards``, then each parallel degree above one (``2 cards · TP2``;
    an expert parallel stated only as on, ``EP``); ``not recorded`` when nothing is stated."""
    config = config if isinstance(config, Mapping) else {}
    n = cards(config, packet_cards)
    parts = [f"{n} card{'' if n == 1 else 's'}"] if n is not None else []
    for key, name in DEGREES:
        value = config.get(key)
        if value is True:
            parts.append(name)
        elif (d := _count(value)) is not None and d > 1:
            parts.append(f"{name}{d}")
    return " · ".join(parts) or NOT_RECORDED


def of(measurement: Mapping[str, Any] | None, packet: Mapping[str, Any] | None = None) -> str:
    """The label of a measurement's setup (its ``config``), with its packet's ``cards`` when the config states none."""
    config = (measurement or {}).get("config")
    return label(config if isinstance(config, Mapping) else None, (packet or {}).get("cards"))
