"""The game's REST API: auth, tables, rounds, preferences and recall (mounted under /api/)."""
