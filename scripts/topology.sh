#!/usr/bin/env bash
# The production shape on this one machine, from Debian packages, then the checks against it.
#
#   haproxy (round robin, health checks on /healthz at each instance's HEALTH_PORT)
#     ├─ gunicorn web1 (2 workers, its own control socket)  ─┐
#     └─ gunicorn web2 (2 workers, its own control socket)  ─┤── pgbouncer (transaction) ── primary
#   celery worker1, worker2 (queues celery,ingest), beat ────┘        reads: replica ───────┘
#   redis (appendonly), a local arXiv stand-in served by the checks      (pg_basebackup -R, 1 s delay)
#
# Everything runs under one temporary directory on private ports, so the machine's own
# PostgreSQL (5432) and Redis (6379) are never touched, and everything is torn down on any
# exit (trap). PostgreSQL and pgbouncer refuse to run as root, so they run as `postgres`.
#
#   bash scripts/topology.sh               build, run every check, tear down (exit 1 if one failed)
#   bash scripts/topology.sh up            build and stay up until Ctrl-C (to look around)
#   bash scripts/topology.sh checks NAME…  build, run only the named checks, tear down
#   TOPOLOGY_DIR=… bash scripts/topology.sh ctl stop|start|kill SERVICE
#                                          what the checks call to take a service away
#
# TOPOLOGY_HEALTH_URI (default /healthz) is the path haproxy checks; TOPOLOGY_KEEP=1 keeps the
# directory (logs) after the teardown.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${TOPOLOGY_PYTHON_BIN:-$ROOT/.venv/bin}
PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}

# Hand a path to the postgres user (only root can, and only root needs to).
own_by_postgres() { if [ "$(id -u)" = 0 ]; then chown -R postgres: "$@"; fi; }

log() { printf '[topology %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

# --------------------------------------------------------------------------------------------
# Running as the postgres user: initdb, pg_ctl and pgbouncer will not run as root.
# setpriv execs in place (no extra process), so a recorded pid is the server's own.
# --------------------------------------------------------------------------------------------
as_postgres() {
  if [ "$(id -u)" = 0 ]; then
    setpriv --reuid=postgres --regid=postgres --init-groups --reset-env -- env PATH="$PGBIN:/usr/sbin:/usr/bin:/bin" "$@"
  else
    env PATH="$PGBIN:$PATH" "$@"
  fi
}

install_packages() {
  local missing=()
  command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
  command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null
  fi
  [ -x "$PGBIN/initdb" ] || { echo "no PostgreSQL server binaries (postgresql package)" >&2; exit 1; }
}

# --------------------------------------------------------------------------------------------
# State: every port, URL and path lives in $TOPOLOGY_DIR/topology.env, so that `ctl` (run by
# the checks in another process) and the teardown find the same services.
# --------------------------------------------------------------------------------------------
free_ports() {
  # Bound all at once and released together, so no two services get the same port.
  "$BIN/python" - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

write_state() {
  TOPOLOGY_DIR=$(mktemp -d /tmp/peerrevenue-topology.XXXXXX)
  chmod 755 "$TOPOLOGY_DIR"  # the postgres user must reach its directories under it
  mkdir -p "$TOPOLOGY_DIR"/{run,log,sockets,redis,beat}
  own_by_postgres "$TOPOLOGY_DIR"/{sockets,log}
  chmod 777 "$TOPOLOGY_DIR/log" "$TOPOLOGY_DIR/run"
  read -r PRIMARY_PORT REPLICA_PORT PGBOUNCER_PORT REDIS_PORT WEB1_PORT WEB2_PORT PROXY_PORT ARXIV_PORT \
    WEB1_HEALTH_PORT WEB2_HEALTH_PORT < <(free_ports 10)
  local secret="topology-only-secret-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')"
  cat >"$TOPOLOGY_DIR/topology.env" <<EOF
TOPOLOGY_DIR=$TOPOLOGY_DIR
PRIMARY_PORT=$PRIMARY_PORT
REPLICA_PORT=$REPLICA_PORT
PGBOUNCER_PORT=$PGBOUNCER_PORT
REDIS_PORT=$REDIS_PORT
WEB1_PORT=$WEB1_PORT
WEB2_PORT=$WEB2_PORT
WEB1_HEALTH_PORT=$WEB1_HEALTH_PORT
WEB2_HEALTH_PORT=$WEB2_HEALTH_PORT
PROXY_PORT=$PROXY_PORT
ARXIV_PORT=$ARXIV_PORT
PRIMARY_URL=postgres://postgres@127.0.0.1:$PRIMARY_PORT/peerrevenue
REPLICA_URL=postgres://postgres@127.0.0.1:$REPLICA_PORT/peerrevenue
POOLED_URL=postgres://postgres@127.0.0.1:$PGBOUNCER_PORT/peerrevenue
REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
PROXY_URL=http://127.0.0.1:$PROXY_PORT
WEB1_URL=http://127.0.0.1:$WEB1_PORT
WEB2_URL=http://127.0.0.1:$WEB2_PORT
WEB1_HEALTH_URL=http://127.0.0.1:$WEB1_HEALTH_PORT
WEB2_HEALTH_URL=http://127.0.0.1:$WEB2_HEALTH_PORT
ARXIV_URL=http://127.0.0.1:$ARXIV_PORT
SECRET_KEY=$secret
EOF
}

load_state() {
  [ -n "${TOPOLOGY_DIR:-}" ] && [ -f "$TOPOLOGY_DIR/topology.env" ] || {
    echo "TOPOLOGY_DIR does not name a running topology" >&2; exit 2; }
  # shellcheck disable=SC1091
  set -a; . "$TOPOLOGY_DIR/topology.env"; set +a
  app_env_words
}

# What every app process (web, worker, beat, migrate) is given: the production settings of the
# README (DJANGO_DEBUG=0, a secret, the allowed host), through the pooler, with the replica. An
# array for `env`, so that spawn can run it under setsid; later NAME=value words override it.
app_env_words() {
  APP_ENV=(env -u DATABASE_URL -u REDIS_URL -u DJANGO_SECRET_KEY -u DJANGO_DEBUG -u DJANGO_ALLOWED_HOSTS
    DATABASE_URL="$POOLED_URL"
    DATABASE_POOLER=transaction
    DATABASE_PREPARE_THRESHOLD=
    DATABASE_REPLICA_URL="$REPLICA_URL"
    REDIS_URL="$REDIS_URL"
    DJANGO_DEBUG=0
    DJANGO_SECRET_KEY="$SECRET_KEY"
    DJANGO_ALLOWED_HOSTS=127.0.0.1,localhost
    # haproxy appends the client's address to X-Forwarded-For.
    RATELIMIT_TRUSTED_PROXIES=1
    # The checks trade and sign in flat out from one address.
    RATELIMIT_TRADES_PER_WINDOW=1000000
    RATELIMIT_LOGIN_PER_WINDOW=1000
    # Ingest reads the checks' local arXiv stand-in, never the internet.
    ARXIV_RSS_URL="$ARXIV_URL/rss/{category}"
    ARXIV_API_URL="$ARXIV_URL/api/query"
    ARXIV_ENRICH=0
    ARXIV_HTTP_RETRIES=0
    ARXIV_HTTP_TIMEOUT_SECONDS=60
    # A killed worker's ingest lease expires in 30 s here (120 s by default), so that the
    # killed-worker check sees the next run ingest within its minute.
    INGEST_LEASE_SECONDS=30
    ${TOPOLOGY_EXTRA_ENV:-})
}
app_env() { "${APP_ENV[@]}" "$@"; }

# Start a long-running process in a session of its own (its pid is its process group, so a
# kill reaches gunicorn's or celery's children too) and record the pid.
spawn() {
  local name=$1; shift
  (cd "$ROOT" && exec setsid "$@" >>"$TOPOLOGY_DIR/log/$name.log" 2>&1 </dev/null) &
  echo $! >"$TOPOLOGY_DIR/run/$name.pid"
  disown $!  # no "Killed" line from this shell when a check kills it on purpose
}

pid_of() { cat "$TOPOLOGY_DIR/run/$1.pid" 2>/dev/null || true; }

alive() { local pid; pid=$(pid_of "$1"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }

# Signal a process group, then wait for its leader to be gone.
signal_group() {
  local name=$1 sig=$2 pid
  pid=$(pid_of "$name")
  [ -n "$pid" ] || return 0
  kill -s "$sig" -- "-$pid" 2>/dev/null || kill -s "$sig" "$pid" 2>/dev/null || true
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL -- "-$pid" 2>/dev/null || true; fi
  rm -f "$TOPOLOGY_DIR/run/$name.pid"
}

wait_tcp() {
  local port=$1 what=$2
  for _ in $(seq 1 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "$what did not open port $port; its log:" >&2
  tail -n 40 "$TOPOLOGY_DIR/log/$what.log" >&2 2>/dev/null || true
  return 1
}

# --------------------------------------------------------------------------------------------
# PostgreSQL: a primary, and a streaming replica copied from it
# --------------------------------------------------------------------------------------------
init_primary() {
  local data=$TOPOLOGY_DIR/primary
  mkdir -p "$data" && own_by_postgres "$data" && chmod 700 "$data"
  as_postgres initdb -D "$data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  # Replication: initdb's pg_hba.conf already trusts replication connections from 127.0.0.1.
  # fsync off: a throwaway cluster; durability is not what these checks are about, and on a
  # shared machine fsyncs only slow them.
  cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $PRIMARY_PORT
unix_socket_directories = '$TOPOLOGY_DIR/sockets'
max_connections = 200
shared_buffers = 64MB
wal_level = replica
max_wal_senders = 4
wal_keep_size = 256MB
hot_standby = on
fsync = off
full_page_writes = off
EOF
}

start_primary() {
  as_postgres pg_ctl -D "$TOPOLOGY_DIR/primary" -l "$TOPOLOGY_DIR/log/primary.log" -w -t 60 start >/dev/null
}
stop_primary() {
  as_postgres pg_ctl -D "$TOPOLOGY_DIR/primary" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}

make_replica() {
  local data=$TOPOLOGY_DIR/replica
  mkdir -p "$data" && own_by_postgres "$data" && chmod 700 "$data"
  # -R writes standby.signal and primary_conninfo; -X stream copies the WAL written meanwhile.
  as_postgres pg_basebackup -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -D "$data" -R -X stream -c fast
  # A second's lag on purpose: reads from the replica must cope with it (read-your-writes).
  cat >>"$data/postgresql.conf" <<EOF
port = $REPLICA_PORT
recovery_min_apply_delay = 1s
hot_standby_feedback = on
EOF
}

start_replica() {
  as_postgres pg_ctl -D "$TOPOLOGY_DIR/replica" -l "$TOPOLOGY_DIR/log/replica.log" -w -t 60 start >/dev/null
}
stop_replica() {
  as_postgres pg_ctl -D "$TOPOLOGY_DIR/replica" -m fast -w -t 60 stop >/dev/null 2>&1 || true
}

# --------------------------------------------------------------------------------------------
# pgbouncer in transaction mode in front of the primary
# --------------------------------------------------------------------------------------------
configure_pgbouncer() {
  local dir=$TOPOLOGY_DIR/pgbouncer
  mkdir -p "$dir"
  # auth_type trust still wants the user in the auth file.
  echo '"postgres" ""' >"$dir/userlist.txt"
  cat >"$dir/pgbouncer.ini" <<EOF
[databases]
peerrevenue = host=127.0.0.1 port=$PRIMARY_PORT dbname=peerrevenue

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PGBOUNCER_PORT
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
admin_users = postgres
pool_mode = transaction
; Four gunicorn workers, two celery workers and their pools: far fewer server connections
; than clients is the point of a pooler.
default_pool_size = 20
max_client_conn = 500
server_connect_timeout = 2
server_login_retry = 1
; A query waiting for a server connection fails after 5 s instead of pgbouncer's 120: with the
; primary down, a request then answers 503 in seconds rather than hanging on.
query_wait_timeout = 5
ignore_startup_parameters = extra_float_digits
logfile = $TOPOLOGY_DIR/log/pgbouncer.log
pidfile = $TOPOLOGY_DIR/run/pgbouncer-daemon.pid
EOF
  own_by_postgres "$dir"
}

start_pgbouncer() {
  as_postgres pgbouncer -d "$TOPOLOGY_DIR/pgbouncer/pgbouncer.ini"
  wait_tcp "$PGBOUNCER_PORT" pgbouncer
}
stop_pgbouncer() {
  local pid
  pid=$(cat "$TOPOLOGY_DIR/run/pgbouncer-daemon.pid" 2>/dev/null || true)
  [ -n "$pid" ] || return 0
  # SIGTERM is pgbouncer's immediate shutdown (SIGINT would wait for its clients to leave).
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$TOPOLOGY_DIR/run/pgbouncer-daemon.pid"
}

# --------------------------------------------------------------------------------------------
# Redis, with persistence as in production: the broker holds the queued tasks and the chord's
# counters, which a restart must not lose.
# --------------------------------------------------------------------------------------------
start_redis() {
  spawn redis redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$TOPOLOGY_DIR/redis" \
    --appendonly yes --save "" --daemonize no
  wait_tcp "$REDIS_PORT" redis
}
stop_redis() { signal_group redis TERM; }

# --------------------------------------------------------------------------------------------
# The site: migrate once, the sample listing, two gunicorn instances, workers, beat
# --------------------------------------------------------------------------------------------
prepare_database() {
  as_postgres psql -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -q -c "CREATE DATABASE peerrevenue" postgres
  # migrate (and the one-off load) talk to the primary directly, not through the pooler: the
  # one-shot job of docker-compose.yml does the same.
  log "migrate"
  app_env DATABASE_URL="$PRIMARY_URL" "$BIN/python" "$ROOT/manage.py" migrate --no-input -v0
  log "load_sample"
  app_env DATABASE_URL="$PRIMARY_URL" "$BIN/python" "$ROOT/manage.py" load_sample >/dev/null
  log "collectstatic"
  app_env DATABASE_URL="$PRIMARY_URL" "$BIN/python" "$ROOT/manage.py" collectstatic --no-input -v0
}

# Two instances on one host: each needs its own control socket (gunicorn 23+), or the second
# overwrites the first's, and its own health port (where haproxy checks it).
start_web() {
  local n=$1 port_var="WEB$1_PORT" health_var="WEB$1_HEALTH_PORT"
  spawn "web$n" "${APP_ENV[@]}" HEALTH_PORT="${!health_var}" \
    "$BIN/gunicorn" -c python:peerrevenue.gunicorn_conf peerrevenue.wsgi \
    --bind "127.0.0.1:${!port_var}" --workers 2 --timeout 30 \
    --control-socket "$TOPOLOGY_DIR/run/gunicorn-web$n.ctl" \
    --access-logfile "$TOPOLOGY_DIR/log/web$n.access.log" \
    --access-logformat '%(t)s %(s)s %(M)sms "%(r)s"'
  wait_tcp "${!port_var}" "web$n"
}
stop_web() { signal_group "web$1" TERM; }
kill_web() { signal_group "web$1" KILL; }

start_worker() {
  spawn "worker$1" "${APP_ENV[@]}" "$BIN/celery" -A peerrevenue worker --queues celery,ingest \
    --concurrency 1 --hostname "worker$1@%h" --loglevel INFO
}
stop_worker() { signal_group "worker$1" TERM; }
kill_worker() { signal_group "worker$1" KILL; }

# The production beat: exactly one, with its schedule file under the topology directory.
start_beat() {
  spawn beat "${APP_ENV[@]}" "$BIN/celery" -A peerrevenue beat --loglevel INFO \
    --schedule "$TOPOLOGY_DIR/beat/schedule"
}
stop_beat() { signal_group beat TERM; }

# A second (and third) beat started on purpose, its pipeline due every few seconds
# (scripts/topology_beat.py): only the checks start these.
start_extra_beat() {
  spawn "beat-extra$1" "${APP_ENV[@]}" PYTHONPATH="$ROOT/scripts" \
    TOPOLOGY_BEAT_SECONDS="${TOPOLOGY_BEAT_SECONDS:-5}" \
    "$BIN/celery" -A topology_beat beat --loglevel INFO --schedule "$TOPOLOGY_DIR/beat/extra$1"
}
stop_extra_beat() { signal_group "beat-extra$1" TERM; }

configure_haproxy() {
  local health=${TOPOLOGY_HEALTH_URI:-/healthz}
  mkdir -p "$TOPOLOGY_DIR/haproxy"
  cat >"$TOPOLOGY_DIR/haproxy/haproxy.cfg" <<EOF
global
    maxconn 2000
    # The checks read each server's state here ("show stat").
    stats socket $TOPOLOGY_DIR/run/haproxy.sock mode 600 level admin

defaults
    mode http
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    # A request that could not reach an instance (refused: it just died) goes to the other.
    retries 2
    option redispatch
    option forwardfor

frontend site
    bind 127.0.0.1:$PROXY_PORT
    default_backend web

backend web
    balance roundrobin
    # Every second; two failures take an instance out, two successes bring it back.
    option httpchk
    http-check send meth GET uri $health ver HTTP/1.1 hdr Host 127.0.0.1
    http-check expect status 200
    default-server inter 1s fall 2 rise 2
    # A cold instance's first answer can take a second or two on this shared machine.
    timeout check 5s
    # Checked on each instance's health port: answered by gunicorn's master from its workers'
    # own checks, at once however busy the workers are (peerrevenue/health_port.py).
    server web1 127.0.0.1:$WEB1_PORT check port $WEB1_HEALTH_PORT
    server web2 127.0.0.1:$WEB2_PORT check port $WEB2_HEALTH_PORT
EOF
}

start_haproxy() {
  spawn haproxy haproxy -db -f "$TOPOLOGY_DIR/haproxy/haproxy.cfg"
  wait_tcp "$PROXY_PORT" haproxy
}
stop_haproxy() { signal_group haproxy TERM; }

# --------------------------------------------------------------------------------------------
# Up and down
# --------------------------------------------------------------------------------------------
up() {
  install_packages
  write_state
  load_state
  trap down EXIT
  trap 'exit 130' INT TERM
  log "directory $TOPOLOGY_DIR"
  log "primary on $PRIMARY_PORT"
  init_primary
  start_primary
  log "replica on $REPLICA_PORT (pg_basebackup -R, recovery_min_apply_delay 1s)"
  make_replica
  start_replica
  log "pgbouncer on $PGBOUNCER_PORT (transaction mode), redis on $REDIS_PORT"
  configure_pgbouncer
  start_pgbouncer
  start_redis
  prepare_database
  log "web1 on $WEB1_PORT, web2 on $WEB2_PORT, haproxy on $PROXY_PORT"
  start_web 1
  start_web 2
  configure_haproxy
  start_haproxy
  log "worker1, worker2, beat"
  start_worker 1
  start_worker 2
  start_beat
}

# Runs on any exit (trap): every process we started, by its recorded pid, then the clusters.
# The app processes get SIGTERM together and ten seconds before SIGKILL: a teardown need not
# wait for a worker's warm shutdown to finish its task.
down() {
  local status=$?
  set +e
  log "tearing down"
  local names=(haproxy beat beat-extra1 beat-extra2 worker1 worker2 web1 web2 redis) name pid
  for name in "${names[@]}"; do
    pid=$(pid_of "$name")
    [ -n "$pid" ] && kill -TERM -- "-$pid" 2>/dev/null
  done
  for _ in $(seq 1 50); do
    local running=0
    for name in "${names[@]}"; do alive "$name" && running=1; done
    [ $running = 0 ] && break
    sleep 0.2
  done
  for name in "${names[@]}"; do signal_group "$name" KILL; done
  stop_pgbouncer
  stop_replica
  stop_primary
  if [ "${TOPOLOGY_KEEP:-0}" = 1 ]; then
    log "kept $TOPOLOGY_DIR"
  else
    rm -rf "$TOPOLOGY_DIR"
  fi
  log "down"
  exit "$status"
}

# What the checks call to take a service away and bring it back.
ctl() {
  load_state
  local action=$1 service=$2
  case "$action:$service" in
    stop:primary) stop_primary ;;
    start:primary) start_primary ;;
    stop:pgbouncer) stop_pgbouncer ;;
    start:pgbouncer) start_pgbouncer ;;
    kill:web1 | kill:web2) kill_web "${service#web}" ;;
    start:web1 | start:web2) start_web "${service#web}" ;;
    kill:worker1 | kill:worker2) kill_worker "${service#worker}" ;;
    start:worker1 | start:worker2) start_worker "${service#worker}" ;;
    stop:beat) stop_beat ;;
    start:beat) start_beat ;;
    start:beat-extra1 | start:beat-extra2) start_extra_beat "${service#beat-extra}" ;;
    stop:beat-extra1 | stop:beat-extra2) stop_extra_beat "${service#beat-extra}" ;;
    *) echo "ctl: unknown $action $service" >&2; exit 2 ;;
  esac
}

main() {
  case "${1:-run}" in
    run | checks)
      [ $# -gt 0 ] && shift
      up
      log "checks"
      # The checks' own queries go to the primary directly (not the pooler, not the replica).
      app_env DATABASE_URL="$PRIMARY_URL" DATABASE_POOLER= DATABASE_REPLICA_URL= \
        TOPOLOGY_DIR="$TOPOLOGY_DIR" \
        TOPOLOGY_SCRIPT="$ROOT/scripts/topology.sh" \
        "$BIN/python" "$ROOT/scripts/topology" "$@"
      ;;
    up)
      up
      log "up; Ctrl-C tears it down. TOPOLOGY_DIR=$TOPOLOGY_DIR"
      cat "$TOPOLOGY_DIR/topology.env"
      # In the background and waited for, so that Ctrl-C runs the teardown at once.
      sleep infinity &
      wait $!
      ;;
    ctl)
      shift
      ctl "$@"
      ;;
    *) echo "usage: $0 [run|up|checks NAME…|ctl ACTION SERVICE]" >&2; exit 2 ;;
  esac
}

main "$@"
