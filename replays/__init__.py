"""Reading logs: replay, explain, verify, pictures, scenarios, archive and analytics."""
