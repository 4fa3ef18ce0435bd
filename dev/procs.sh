# Process helpers shared by dev/stack and dev/cluster. The caller sets SCRIPT (its name, for
# messages), BIN, RUN (pid files) and LOGS before sourcing this file, and PG_BIN (and PG_PORT,
# 5432 when unset) before calling pg_sql.
say() { printf '%s\n' "$*"; }
fail() { printf '%s: %s\n' "$SCRIPT" "$*" >&2; exit 1; }

# --- helpers -----------------------------------------------------------------------------------

apt_updated=""
apt_install() {
  command -v apt-get >/dev/null || fail "$1: apt-get not found; install ${*:2} by hand"
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  if [ -z "$apt_updated" ]; then $sudo apt-get update -q >/dev/null || fail "$1: apt-get update failed"; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${@:2}" >"$LOGS/apt-$1.log" 2>&1 \
    || fail "$1: apt-get install ${*:2} failed (see $LOGS/apt-$1.log)"
}

go_install() { # component module [gobin] : builds into BIN, or into gobin when given
  command -v go >/dev/null || fail "$1: Go >= 1.25 is needed to build it (go install $2)"
  say "$1: building $2 with go install (first time only; takes a few minutes)"
  local start=$SECONDS
  GOBIN="${3:-$BIN}" CGO_ENABLED=0 GOFLAGS=-buildvcs=false go install "$2" >"$LOGS/build-$1.log" 2>&1 \
    || fail "$1: go install $2 failed (see $LOGS/build-$1.log)"
  say "$1: built in $((SECONDS - start)) s"
}

pid_alive() { local f="$RUN/$1.pid"; [ -f "$f" ] && kill -0 "$(cat "$f")" 2>/dev/null; }

wait_for() { # component seconds command...
  local name=$1 limit=$2; shift 2
  local deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      printf '%s: %s did not become ready within %ss; last log lines:\n' "$SCRIPT" "$name" "$limit" >&2
      tail -n 30 "$LOGS/$name.log" >&2 2>/dev/null || true
      exit 1
    fi
    if [ -f "$RUN/$name.pid" ] && ! pid_alive "$name"; then
      printf '%s: %s exited during start; last log lines:\n' "$SCRIPT" "$name" >&2
      tail -n 30 "$LOGS/$name.log" >&2 2>/dev/null || true
      exit 1
    fi
    sleep 0.5
  done
}

http_ok() { curl -fs -o /dev/null --max-time 2 "$1"; }

# One statement as the postgres superuser on the stack's server; prints its rows unaligned.
pg_sql() { "$PG_BIN/psql" -h 127.0.0.1 -p "${PG_PORT:-5432}" -U postgres -d postgres -XtAq -v ON_ERROR_STOP=1 -c "$1"; }

spawn() { # component command... : run detached, log to .stack/logs, remember the pid
  local name=$1; shift
  setsid nohup "$@" >>"$LOGS/$name.log" 2>&1 < /dev/null &
  echo $! >"$RUN/$name.pid"
}

stop_pid() { # component
  local f="$RUN/$1.pid"
  [ -f "$f" ] || return 0
  local pid; pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
  say "$1: stopped"
}

