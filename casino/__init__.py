"""The casino project: settings, ASGI/Celery entry points and the game app."""

from casino.celery import app as celery_app

__all__ = ["celery_app"]
