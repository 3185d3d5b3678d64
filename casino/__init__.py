"""The casino project: settings, ASGI/Celery entry points and the game app.

The Celery app lives in `casino.celery` and is loaded by `CasinoConfig.ready()`, not here:
importing `casino.engine` (the pure rule engine) must not pull in Celery or Django.
"""
