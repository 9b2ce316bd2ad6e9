"""One topology vocabulary (``evreg.claims.topology``): one label per setup, however the records spell it."""

from __future__ import annotations

from typing import Any

import pytest

from evreg.claims import topology


@pytest.mark.parametrize(
    ("config", "packet_cards"),
    [
        ({"cards": 1}, None),  # the lab's three spellings of one card (the comparison pages printed "1 card",
        ({"cards": 1, "tp": 1}, 1),  # "1 card · TP1" and "TP1" for them)
        ({"tp": 1}, None),
        ({}, 1),  # only the packet says
        (None, 1),
    ],
)
def test_one_setup_spelled_three_ways_has_one_label(config: dict[str, Any] | None, packet_cards: int | None) -> None:
    assert topology.label(config, packet_cards) == "1 card"


@pytest.mark.parametrize(
    ("config", "packet_cards", "label"),
    [
        ({"tp": 2}, None, "2 cards · TP2"),  # the cards from the parallel layout
        ({"tp": 2}, 2, "2 cards · TP2"),
        ({"tp": 4, "pp": 2}, None, "8 cards · TP4 · PP2"),
        ({"tp": 2, "dp": 2, "pp": 1}, None, "4 cards · TP2 · DP2"),  # a degree of one is not named
        ({"cards": 4, "tp": 4, "ep": 4}, 8, "4 cards · TP4 · EP4"),  # the config's cards before the packet's
        ({"tp": 4, "ep": True}, None, "4 cards · TP4 · EP"),  # expert parallel stated only as on
        ({"cards": 2, "tp": 1}, None, "2 cards"),  # a layer split over two cards
        ({}, None, "not recorded"),
        ({"tp": False, "cards": 0}, None, "not recorded"),  # neither a boolean nor zero is a count
    ],
)
def test_a_label_names_the_cards_then_the_degrees_above_one(
    config: dict[str, Any], packet_cards: int | None, label: str
) -> None:
    assert topology.label(config, packet_cards) == label


def test_a_measurements_label_takes_its_packets_cards_when_its_config_states_none() -> None:
    assert topology.of({"config": {"mtp": 3}}, {"cards": 2}) == "2 cards"
    assert topology.of({"config": "not an object"}, None) == "not recorded"
    assert topology.cards({"tp": 2, "pp": 2}) == 4 and topology.cards({}) is None
