"""The price list (F1, F2) as data: every ship kind and option with its price and its French and
English names, as ``prices --json`` prints it and the game service's ``GET /api/prices`` sends it
(the player page's purchase form and order form name ships and options in both languages)."""

from __future__ import annotations

from typing import Any

from mortecouille.core.fleet.catalogue import Catalogue, catalogue_for


def price_list(catalogue: Catalogue | None = None) -> dict[str, Any]:
    """``{rules_version, ships: [...], options: [...]}`` of ``catalogue`` (default: the current
    rules' price list)."""
    catalogue = catalogue or catalogue_for()
    return {
        "rules_version": catalogue.version,
        "ships": [
            {
                "id": kind.id,
                "french_name": kind.french_name,
                "english_name": kind.english_name,
                "class": kind.ship_class,
                "price": kind.price,
            }
            for kind in catalogue.ships.values()
        ],
        "options": [
            {
                "id": option.id,
                "french_names": list(option.french_names),
                "english_name": option.english_name,
                "scope": option.scope,
                "classes": list(option.allowed_classes),
                "price": option.price,
                "pricing": option.pricing,
            }
            for option in catalogue.options.values()
        ],
    }
