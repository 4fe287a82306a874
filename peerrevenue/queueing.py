"""Handing work to the Celery worker from a web request, without the request depending on the
broker.

Redis is the broker as well as the cache. A request that queues work (a curator's backfill)
must neither wait long nor fail when Redis is gone: the send is tried briefly, and if the
broker cannot be reached the caller is told (``False``) and the reason logged, so that it can
say what happens instead. Beat and the worker send their own tasks with Celery's default,
more patient, retries: nobody waits on those.
"""

from __future__ import annotations

import logging

from celery import Task
from kombu.exceptions import OperationalError as BrokerUnavailable
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

UNAVAILABLE = (BrokerUnavailable, RedisConnectionError, RedisTimeoutError)

# One quick retry (a pooled connection may just have gone stale), then give up: about a
# fifth of a second with the broker refusing connections, CELERY_BROKER_TRANSPORT_OPTIONS'
# socket timeouts when it hangs.
WEB_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.2,
}


def send_from_request(task: Task, *, args: tuple = (), what: str) -> bool:
    """Queue ``task(*args)``; False (and a warning naming ``what``) if the broker is unreachable.

    The result is not kept: a request never waits for one, and keeping it would subscribe to
    the result store (Redis again), which retries for twenty seconds when it is gone.
    """
    try:
        task.apply_async(args=args, ignore_result=True, retry_policy=WEB_RETRY_POLICY)
    except UNAVAILABLE as exc:
        logger.warning(
            "Could not queue %s: the task broker is unreachable (%s: %s)",
            what,
            type(exc).__name__,
            exc,
        )
        return False
    return True
