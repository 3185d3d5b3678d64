"""The player site: `/play/` (sign in, wallet, lobby), the table pages, history and rules.

Django templates plus static ES modules, both kept under this package and served by its own
views (no CDN, no Node, nothing to build): every page is driven by the REST API and the
table WebSocket, and shows the round view the server computes for its viewer.
"""
