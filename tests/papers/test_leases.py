"""Leases (papers.leases): one owner at a time, taken over only once expired, released only by
their owner. Concurrency is checked with real processes, each on its own connection."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from papers import leases
from papers.models import Lease

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def test_a_held_lease_is_not_taken_and_an_expired_one_is():
    mine = leases.take(name="job", seconds=60)
    assert mine is not None
    assert leases.take(name="job", seconds=60) is None
    assert 58 < (leases.expires_in("job") or 0) <= 60

    Lease.objects.filter(name="job").update(expires_at=Lease.objects.get().taken_at)
    theirs = leases.take(name="job", seconds=60)
    assert theirs is not None and theirs.owner != mine.owner
    # The first owner lost it: it can neither renew it nor release the new owner's lease.
    assert not leases.renew(mine)
    leases.release(mine)
    assert Lease.objects.get(name="job").owner == theirs.owner
    leases.release(theirs)
    assert leases.expires_in("job") is None


def test_an_owner_may_take_its_own_lease_again():
    """A redelivered task (same task id) may claim what its dead first delivery claimed."""
    assert leases.take(name="slot", seconds=60, owner="run_daily:abc") is not None
    assert leases.take(name="slot", seconds=60, owner="run_daily:abc") is not None
    assert leases.take(name="slot", seconds=60, owner="run_daily:xyz") is None


def test_a_long_job_keeps_its_lease(settings):
    """Renewed every third of its length: held well past one length, expired one length after
    its holder stops renewing (a worker killed)."""
    import time

    with leases.held(name="long", seconds=1.5) as lease:
        assert lease is not None
        time.sleep(3)
        assert leases.take(name="long", seconds=1.5) is None
        assert (leases.expires_in("long") or 0) > 0.5
    assert leases.expires_in("long") is None


TAKE_AT_ONCE = """
import os, sys, time
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "peerrevenue.settings")
django.setup()
from papers import leases
start = float(sys.argv[1])
time.sleep(max(0, start - time.time()))
print("taken" if leases.take(name="race", seconds=60) else "refused")
"""


def test_of_many_processes_asking_at_once_exactly_one_gets_it():
    import time

    db = connection.settings_dict
    env = os.environ | {
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
    }
    start = str(time.time() + 3)  # every process connected and waiting by then
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", TAKE_AT_ONCE, start],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(8)
    ]
    answers = sorted(process.communicate(timeout=60)[0].strip() for process in processes)
    assert answers == ["refused"] * 7 + ["taken"]
