#!/bin/sh
# The streaming replica: on first start, copy the primary with pg_basebackup -R (which writes
# standby.signal and primary_conninfo), then run as a hot standby. Later starts reuse the copy.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  until pg_basebackup --host=postgres --username=replicator --pgdata="$PGDATA" \
      --write-recovery-conf --wal-method=stream --checkpoint=fast; do
    echo "waiting for the primary…"; rm -rf "${PGDATA:?}"/*; sleep 2
  done
  chmod 700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c hot_standby_feedback=on
