"""The checks of issue 24 against the topology that scripts/topology.sh builds and then runs
this in: HTTP through haproxy (or one instance, where a check is about instances), the
database's own statistics, and services taken away with ``topology.sh ctl``.

Each check is a function that returns a ``Result``: PASS or FAIL with the figures it measured.
A check that fails does not stop the others (each runs on whatever the one before left, so a
check that takes a service away always brings it back). The last line of the output is
``TOPOLOGY-RESULTS {json}`` for tests/test_topology.py; the exit status is 1 if any failed.

    python scripts/topology [NAME …]   (only the named checks; the default is all)

Its own queries go straight to the primary (topology.sh sets DATABASE_URL so); tasks are sent
to the topology's Redis. Ingest reads the local arXiv stand-in started here, on the port the
workers were told; feeds are the bundled sample days with new dates and identifiers.

One module per group of checks: ``readers`` (cold readers, the replica, reading one's own
writes), ``health`` (/healthz, on the site's port and the health port, idle and busy),
``workers`` (beats and the ingest lease), ``outages`` (the primary, the pooler, a web instance
taken away); ``common`` holds what they share and ``run`` the list and the runner.
"""
