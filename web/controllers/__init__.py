"""The service's routes, one Litestar controller per concept (docs/service.md).

Each handler identifies the caller and calls one function of the application (``app/``); the
roles a route allows are declared once on it (:func:`~mortecouille.web.controllers.shared.roles`)
and checked by :func:`~mortecouille.web.controllers.shared.identify`. A new concept adds its
controller to :data:`CONTROLLERS`.
"""

from __future__ import annotations

from litestar import Controller

from mortecouille.web.controllers.actions import ActionsController
from mortecouille.web.controllers.fleet import FleetController
from mortecouille.web.controllers.games import GamesController
from mortecouille.web.controllers.orders import OrdersController
from mortecouille.web.controllers.pages import PagesController
from mortecouille.web.controllers.referee import RefereeController
from mortecouille.web.controllers.seats import SeatsController
from mortecouille.web.controllers.streams import StreamsController
from mortecouille.web.controllers.turn import TurnController

#: Every controller of the service, in the order the schema lists them.
CONTROLLERS: tuple[type[Controller], ...] = (
    GamesController,
    FleetController,
    OrdersController,
    ActionsController,
    TurnController,
    RefereeController,
    SeatsController,
    StreamsController,
    PagesController,
)
