"""Django settings. All configuration comes from the environment (see README and .env.example).

Nothing set: the embedded default (SQLite file, in-memory channel layer, Celery tasks
run in-process). DATABASE_URL switches to PostgreSQL through Django's psycopg pool;
REDIS_URL switches to channels-redis and a real Celery broker.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

from casino.platform.secrets import load_secrets

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

DEBUG: bool = env.bool("DEBUG", default=True)

# The public randomness a shared table (duel, duel_classic: two or more seats) mixes into its
# shoe (fairness/beaconsource.py): drand's quicknet over its relays, the operator-run local
# beacon (not independent; no network), or none (the round deals at once; DEBUG only).
BEACONS = ("quicknet", "local", "off")
BEACON: str = (env.str("BEACON", default="") or ("local" if DEBUG else "quicknet")).strip().lower()
if BEACON not in BEACONS:
    raise ImproperlyConfigured(
        f"BEACON is {BEACON!r}: set it to quicknet (drand, for production), local (a beacon the "
        "operator runs) or off (no beacon; DEBUG only)."
    )
# With DEBUG off the local beacon needs this too: its rounds are signed by the operator.
ALLOW_LOCAL_BEACON: bool = env.bool("ALLOW_LOCAL_BEACON", default=False)
if not DEBUG and BEACON == "off":
    raise ImproperlyConfigured(
        "DEBUG is off but BEACON=off: a shared table must not deal without a beacon. Set "
        "BEACON=quicknet (or BEACON=local with ALLOW_LOCAL_BEACON=true)."
    )
if not DEBUG and BEACON == "local" and not ALLOW_LOCAL_BEACON:
    raise ImproperlyConfigured(
        "DEBUG is off but BEACON=local: the local beacon is run by the operator, so it is not "
        "independent. Set BEACON=quicknet, or ALLOW_LOCAL_BEACON=true to serve with it anyway."
    )
# drand's HTTP relays, tried in order (a failing or lying relay is skipped), and each
# request's timeout; a round is read when its time comes, and the round waits for beacon
# round R, the first after lock + BEACON_MARGIN_S, for up to BEACON_WAIT_S past R's time.
BEACON_RELAYS: list[str] = [
    relay.strip().rstrip("/")
    for relay in env.list(
        "BEACON_RELAYS",
        default=[
            "https://api.drand.sh",
            "https://api2.drand.sh",
            "https://api3.drand.sh",
            "https://drand.cloudflare.com",
        ],
    )
    if relay.strip()
]
if BEACON == "quicknet" and not BEACON_RELAYS:
    raise ImproperlyConfigured("BEACON=quicknet needs at least one relay in BEACON_RELAYS.")
if not all(relay.startswith(("https://", "http://")) for relay in BEACON_RELAYS):
    raise ImproperlyConfigured(
        f"BEACON_RELAYS must be http(s) URLs (https://api.drand.sh,...), not {BEACON_RELAYS!r}."
    )
BEACON_MARGIN_S: int = env.int("BEACON_MARGIN_S", default=3)
BEACON_WAIT_S: int = env.int("BEACON_WAIT_S", default=30)
BEACON_HTTP_TIMEOUT_S: float = env.float("BEACON_HTTP_TIMEOUT_S", default=2.0)
if BEACON_MARGIN_S < 0 or BEACON_WAIT_S < 1 or not BEACON_HTTP_TIMEOUT_S > 0:
    raise ImproperlyConfigured(
        "BEACON_MARGIN_S must be >= 0, BEACON_WAIT_S >= 1 and BEACON_HTTP_TIMEOUT_S > 0 (seconds)."
    )

_secrets = load_secrets(
    base_dir=BASE_DIR,
    debug=DEBUG,
    using=frozenset({"LOCAL_BEACON_SEED"} if BEACON == "local" else ()),
)
SECRET_KEY = _secrets["SECRET_KEY"]
# Fernet keys, comma separated, newest first: the first encrypts, all decrypt (rotation).
SEED_ENCRYPTION_KEYS: list[str] = [k.strip() for k in _secrets["SEED_ENCRYPTION_KEYS"].split(",")]
# Ed25519 private key (64 hex chars) that signs round receipts.
RECEIPT_SIGNING_KEY: str = _secrets["RECEIPT_SIGNING_KEY"]
# The transparency log (fairness/transparency.py): its checkpoints' signing key (not the
# receipt key), the origin line its checkpoints name, and the maximum merge delay: a queued
# leaf is in a signed checkpoint within this many seconds, or /healthz answers 503.
LOG_SIGNING_KEY: str = _secrets["LOG_SIGNING_KEY"]
LOG_ORIGIN: str = env.str("LOG_ORIGIN", default="blackjack.local/log")
LOG_MAX_MERGE_DELAY_S: float = env.float("LOG_MAX_MERGE_DELAY_S", default=10.0)
# The local beacon's key seed (fairness.beacon.local_secret_key): None with DEBUG off unless
# BEACON=local (or the environment sets it).
LOCAL_BEACON_SEED: str | None = _secrets.get("LOCAL_BEACON_SEED")

ALLOWED_HOSTS: list[str] = env.list(
    "ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"]
)
CSRF_TRUSTED_ORIGINS: list[str] = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "casino",
    "casino.eventstore",
    "fairness",
    "ledger",
    "casino.dashboard",
]

MIDDLEWARE = [
    # Outermost: every error under /api/ in the one JSON shape (casino/api/plumbing.py).
    "casino.api.plumbing.ApiErrorMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "casino.urls"
ASGI_APPLICATION = "casino.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


def database_config(url: str | None) -> dict[str, Any]:
    """The default database: SQLite file when no URL, PostgreSQL with Django's pool otherwise.

    `sqlite:////abs/path.sqlite3` selects another SQLite file with the same options.
    """
    if not url or url.startswith("sqlite:"):
        name = environ.Env.db_url_config(url)["NAME"] if url else str(BASE_DIR / "db.sqlite3")
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name,
            "OPTIONS": {
                "timeout": 20,
                # Writers serialize at BEGIN (no upgrade deadlocks); the event store relies on it.
                "transaction_mode": "IMMEDIATE",
                # WAL + synchronous=NORMAL: a commit is not an fsync (it was 33 ms here). Crash-safe
                # for the process; a power cut may lose the last commits of the embedded demo.
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    config: dict[str, Any] = environ.Env.db_url_config(url)
    if config["ENGINE"] in (
        "django.db.backends.postgresql",
        "django.db.backends.postgresql_psycopg2",
    ):
        config["ENGINE"] = "django.db.backends.postgresql"
        # Persistent connections leak under ASGI; the pool keeps reuse without the leak.
        config["CONN_MAX_AGE"] = 0
        options = config.setdefault("OPTIONS", {})
        options["pool"] = {
            "min_size": env.int("DB_POOL_MIN", default=2),
            "max_size": env.int("DB_POOL_MAX", default=20),
            "timeout": env.float("DB_POOL_TIMEOUT", default=10.0),
        }
        # The server binds parameters and psycopg prepares a statement from its fifth run on
        # a connection: the pool keeps connections, so the hot path is planned once per
        # connection (docs/architecture.md). Off behind a transaction-mode PgBouncer < 1.21.
        if env.bool("DB_SERVER_BINDING", default=True):
            options["server_side_binding"] = True
            options["prepare_threshold"] = env.int("DB_PREPARE_THRESHOLD", default=5)
    return config


DATABASE_URL: str | None = env.str("DATABASE_URL", default=None) or None
DATABASES = {"default": database_config(DATABASE_URL)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL: str | None = env.str("REDIS_URL", default=None) or None


def channel_layers_config(redis_url: str | None) -> dict[str, Any]:
    """In-memory layer by default; channels-redis when REDIS_URL is set."""
    if not redis_url:
        return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py 8: its 5 s socket_timeout equals channels-redis's blocking read
                # (clients dropped with 1011) and its pool raises past 100 connections.
                "hosts": [{"address": redis_url, "socket_timeout": None, "max_connections": 1000}],
                "capacity": 1000,
                "expiry": 60,
            },
        }
    }


CHANNEL_LAYERS = channel_layers_config(REDIS_URL)

# Celery: a real broker with REDIS_URL; otherwise tasks run in-process (eager).
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_ALWAYS_EAGER = REDIS_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE: dict[str, Any] = {
    # Lost or late timer nudges are caught here: every open round past its deadline is nudged.
    "sweep-deadlines": {"task": "casino.sweep_deadlines", "schedule": 5.0},
    # Seed chains are prepared before a table's active chain runs out (fairness/tasks.py).
    "fairness-chains-refill": {"task": "fairness.chains_refill", "schedule": 300.0},
    # Duel lobbies whose timer ended (a lost lobby nudge is caught here; casino/tables/timers.py).
    "sweep-lobbies": {"task": "casino.sweep_lobbies", "schedule": 5.0},
    # The transparency log's sequencer: queued leaves get indices and a signed checkpoint.
    "log-sequence": {"task": "fairness.log_sequence", "schedule": 1.0},
    # Shared tables whose beacon round is due and not recorded (a lost beacon nudge; the
    # nudge itself is sent for the round's time: casino/rounds/publish.py).
    "sweep-beacons": {"task": "casino.sweep_beacons", "schedule": 1.0},
}
# With a broker: how long a round's timer nudge waits in its process before it is sent (a
# later command replaces it, a finished round drops it; casino/rounds/publish.py). 0: at once.
NUDGE_COALESCE_S: float = env.float("NUDGE_COALESCE_S", default=3.0)
# PostgreSQL: the event store's append INSERT is a prepared statement per connection
# (casino/eventstore/store.py). Off behind a transaction-mode PgBouncer older than 1.21.
EVENTSTORE_PREPARED_APPEND: bool = env.bool("EVENTSTORE_PREPARED_APPEND", default=True)
# Without a broker the ASGI process runs the timers itself (casino/tables/timers.py).
IN_PROCESS_TIMERS: bool = env.bool("IN_PROCESS_TIMERS", default=CELERY_TASK_ALWAYS_EAGER)
# /healthz answers 503 when no deadline sweep finished for this long (casino/platform/health.py).
TIMERS_STALE_S: float = env.float("TIMERS_STALE_S", default=30.0)
# Duel lobby: how long at least 2 READY players wait for more before the duel starts.
DUEL_LOBBY_MS: int = env.int("DUEL_LOBBY_MS", default=15_000)
# bench/api.py anchor endpoints (/api/bench/*, /ws/bench/): never on in production.
BENCH_ENDPOINTS: bool = env.bool("BENCH_ENDPOINTS", default=False)

CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if not DEBUG
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    # Token first: a missing or wrong credential is a 401 (with WWW-Authenticate), as in the
    # game views; with session auth first DRF would turn it into a 403.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "casino.api.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's parsers, JSON read by orjson where it gives the same values (casino/api/plumbing.py).
    "DEFAULT_PARSER_CLASSES": [
        "casino.api.plumbing.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "casino.platform.schema.AutoSchema",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "casino.api.negotiation.ContentNegotiation",
    "EXCEPTION_HANDLER": "casino.platform.errors.exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["casino.platform.throttles.ScopedThrottle"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Provably fair blackjack API",
    "DESCRIPTION": "Event-sourced blackjack: tables, rounds, wallet, fairness proofs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI assets are served from the sidecar package: the machines have no internet.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# Rate limits per scope (casino/platform/throttles.py): logins per client address, money-moving
# requests (bets, actions, deposits, withdrawals) per player.
THROTTLE_RATES: dict[str, str] = {
    "login": env.str("THROTTLE_LOGIN", default="30/min"),
    "money": env.str("THROTTLE_MONEY", default="600/min"),
}

# Money: the largest amount accepted at the API edge, in micro-USDC (default 1,000,000 USDC).
MAX_AMOUNT_MICRO: int = env.int("MAX_AMOUNT_MICRO", default=1_000_000_000_000)
# Demo faucet (deposit to self) only in demo mode.
DEMO_MODE: bool = env.bool("DEMO_MODE", default=DEBUG)
# Ledger: account types allowed below zero (the database allows at most external, house and
# receivable types); the demo faucet's cap per request; how long idempotent responses are kept.
LEDGER_NEGATIVE_BALANCE_TYPES: list[str] = env.list(
    "LEDGER_NEGATIVE_BALANCE_TYPES", default=["external", "house_bankroll", "receivable"]
)
LEDGER_FAUCET_MAX_MICRO: int = env.int("LEDGER_FAUCET_MAX_MICRO", default=1_000_000_000)
IDEMPOTENCY_RETENTION_DAYS: int = env.int("IDEMPOTENCY_RETENTION_DAYS", default=30)
# API tokens: every login makes its own (casino.models.LoginToken); a player keeps at most
# this many, the oldest revoked first.
AUTH_TOKENS_PER_USER: int = env.int("AUTH_TOKENS_PER_USER", default=50)
# Staff dashboard: a player's net win above this (micro-USDC) flags the round for review.
REVIEW_WIN_THRESHOLD_MICRO: int = env.int("REVIEW_WIN_THRESHOLD_MICRO", default=500_000_000)
# How far back the periodic audit looks (minutes), and how many rounds it takes per run.
REVIEW_AUDIT_WINDOW_MINUTES: int = env.int("REVIEW_AUDIT_WINDOW_MINUTES", default=30)

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
if not DEBUG:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
