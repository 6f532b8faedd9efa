"""Imports every ruleset module so their deciders and evolvers are registered."""

from mortecouille.core import rulings as rulings  # noqa: F401
from mortecouille.core.blockade import commands as blockade_commands  # noqa: F401
from mortecouille.core.board import ships as ships  # noqa: F401
from mortecouille.core.fleet import commands as fleet_commands  # noqa: F401
from mortecouille.core.mortecouille import common as mortecouille_common  # noqa: F401
from mortecouille.core.mortecouille import movement as mortecouille_movement  # noqa: F401
from mortecouille.core.mortecouille import turn as mortecouille_turn  # noqa: F401
