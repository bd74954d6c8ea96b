#!/usr/bin/env bash
# PgBouncer (Debian's pgbouncer) in transaction mode on a loopback port, in front of a
# PostgreSQL server's Unix socket, for the tests and benches (t1560, bench/pool_bench.sh).
#   tests/pg/pgbouncer.sh start DIR SOCKDIR DB [POOL_SIZE]   prints the port
#   tests/pg/pgbouncer.sh stop DIR
# Role vidtheque, no password (the test clusters trust it); POOL_SIZE server sessions for
# DB (default 2). As root it runs as nobody (it refuses root), and DIR is handed to it.
# Exit 77 when pgbouncer is not installed.
set -euo pipefail
cmd=${1:?usage: pgbouncer.sh start DIR SOCKDIR DB [POOL_SIZE] | stop DIR}
dir=${2:?usage: pgbouncer.sh start DIR SOCKDIR DB [POOL_SIZE] | stop DIR}
pgb=$(command -v pgbouncer || ls /usr/sbin/pgbouncer 2> /dev/null || true)
case $cmd in
start)
  sock=${3:?SOCKDIR}
  db=${4:?DB}
  pool=${5:-2}
  [[ -n $pgb ]] || { echo "pgbouncer.sh: no pgbouncer here (apt-get install pgbouncer)" >&2; exit 77; }
  mkdir -p "$dir"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  echo '"vidtheque" ""' > "$dir/users.txt"
  cat > "$dir/pgbouncer.ini" << INI
[databases]
$db = host=$sock dbname=$db user=vidtheque pool_size=$pool
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/users.txt
pool_mode = transaction
max_client_conn = 2000
default_pool_size = $pool
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  if [[ $(id -u) == 0 ]]; then
    chown -R nobody "$dir"
    "$pgb" -d -u nobody "$dir/pgbouncer.ini" 2> "$dir/stderr" || { cat "$dir/stderr" >&2; exit 1; }
  else
    "$pgb" -d "$dir/pgbouncer.ini" 2> "$dir/stderr" || { cat "$dir/stderr" >&2; exit 1; }
  fi
  for _ in $(seq 100); do
    if python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$port" 2> /dev/null; then
      echo "$port"
      exit 0
    fi
    sleep 0.1
  done
  echo "pgbouncer.sh: pgbouncer did not start: $(tail -3 "$dir/pgbouncer.log" 2> /dev/null)" >&2
  exit 1
  ;;
stop)
  if [[ -s $dir/pgbouncer.pid ]]; then
    pid=$(cat "$dir/pgbouncer.pid")
    kill "$pid" 2> /dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
  fi
  ;;
*) echo "pgbouncer.sh: unknown command '$cmd'" >&2; exit 2 ;;
esac
