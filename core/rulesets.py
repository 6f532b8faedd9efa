"""Imports every ruleset module so their deciders and evolvers are registered."""

from core import blockade_game as blockade_game  # noqa: F401
from core import fleet_game as fleet_game  # noqa: F401
from core import mortecouille_common as mortecouille_common  # noqa: F401
from core import mortecouille_movement as mortecouille_movement  # noqa: F401
from core import mortecouille_turn as mortecouille_turn  # noqa: F401
from core import rulings as rulings  # noqa: F401
from core import ships as ships  # noqa: F401
