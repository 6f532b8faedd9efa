"""Reading logs: replay, explain, verify, pictures, scenarios, archive and analytics.

Everything here folds logs, so every ruleset's evolvers and deciders must be registered
first, whichever module a caller imports.
"""

import mortecouille.core.rulesets  # noqa: F401
