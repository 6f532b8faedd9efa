"""Event types, the log line format and the append-only store.

Importing this package registers every event type in the log's tagged union.
"""

from mortecouille.events import blockade as blockade  # noqa: F401
from mortecouille.events import combat as combat  # noqa: F401
from mortecouille.events import fleet as fleet  # noqa: F401
from mortecouille.events import game as game  # noqa: F401
from mortecouille.events import mortecouille as mortecouille  # noqa: F401
from mortecouille.events import mortecouille_movement as mortecouille_movement  # noqa: F401
from mortecouille.events import movement as movement  # noqa: F401
from mortecouille.events import orders as orders  # noqa: F401
from mortecouille.events import rulings as rulings  # noqa: F401
