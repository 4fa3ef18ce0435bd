#!/usr/bin/env bash
# Local single-node Elasticsearch for development, built from the Maven Central jars (no Docker, no download
# of a distribution). See README.md next to this script.
#
#   es.sh build    compile the launcher + copy the runtime classpath (only if missing or sources/pom changed)
#   es.sh start    build if needed, start the node in the background and wait until it is yellow/green
#                  (reuses a node that already answers on $ES_PORT)
#   es.sh stop     SIGTERM, wait up to 30 s, then SIGKILL; fine if it is not running
#   es.sh status   "elasticsearch: running on 127.0.0.1:PORT (status COLOR)" (exit 0) or "elasticsearch: stopped" (exit 1)
#   es.sh restart  stop + start
#
# Environment:
#   STACK_DIR          default <repo root>/.stack  (build in $STACK_DIR/elasticsearch, pid in run/, log in logs/)
#   ES_PORT            HTTP port, default 9200
#   ES_TRANSPORT_PORT  transport port, default 9300
#   JAVA_HOME          JDK to run/build with, default /usr/lib/jvm/temurin-25-jdk-amd64 (must be Java 21+)
#   ES_JAVA_OPTS       extra JVM flags, appended after the defaults (-Xms512m -Xmx1g), so e.g. -Xmx2g wins
#   ES_START_TIMEOUT   seconds to wait for yellow/green on start, default 120
#   ES_NODE_DIR        run another node from the same build, its home/data/pid/log under this folder
#                      (tests start one on their own ports to stop and restart it)
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
REPO_ROOT="$(cd "$SCRIPT_DIR/../.." && pwd -P)"
STACK_DIR="${STACK_DIR:-$REPO_ROOT/.stack}"
ES_PORT="${ES_PORT:-9200}"
ES_TRANSPORT_PORT="${ES_TRANSPORT_PORT:-9300}"
ES_START_TIMEOUT="${ES_START_TIMEOUT:-120}"
ES_STOP_TIMEOUT=30
DEFAULT_JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64
JAVA_HOME="${JAVA_HOME:-$DEFAULT_JAVA_HOME}"

ES_DIR="$STACK_DIR/elasticsearch"
LIB_DIR="$ES_DIR/lib"
CLASSES_DIR="$ES_DIR/classes"
HASH_FILE="$ES_DIR/.build-hash"
# ES_NODE_DIR: a second, separate node (home, data, pid, log under it) that reuses this build.
NODE_DIR="${ES_NODE_DIR:-}"
HOME_DIR="${NODE_DIR:-$ES_DIR}/home"
DATA_DIR="${NODE_DIR:-$ES_DIR}/data"
TMP_DIR="${NODE_DIR:-$ES_DIR}/tmp"
RUN_DIR="${NODE_DIR:-$STACK_DIR}/run"
LOG_DIR="${NODE_DIR:-$STACK_DIR}/logs"
PID_FILE="$RUN_DIR/elasticsearch.pid"
LOG_FILE="$LOG_DIR/elasticsearch.log"
LOCK_FILE="$RUN_DIR/elasticsearch.lock"
MAIN_CLASS=dev.leadjobs.es.Launcher
HEALTH_URL="http://127.0.0.1:$ES_PORT/_cluster/health"

die() {
  echo "elasticsearch: $*" >&2
  exit 1
}

java_feature_version() { # prints e.g. 25 for the java in $1/bin/java, nothing if unusable
  "$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = \([0-9]*\).*/\1/p' | head -n1
}

check_java() {
  command -v curl >/dev/null 2>&1 || die "curl is required"
  if [[ ! -x "$JAVA_HOME/bin/java" ]]; then
    if [[ "$JAVA_HOME" == "$DEFAULT_JAVA_HOME" ]]; then
      die "Temurin 25 JDK not found at $DEFAULT_JAVA_HOME (install it, e.g. apt-get install temurin-25-jdk, or set JAVA_HOME to a JDK 21+)"
    fi
    die "JAVA_HOME=$JAVA_HOME has no bin/java (expected the Temurin 25 JDK at $DEFAULT_JAVA_HOME)"
  fi
  JAVA_VERSION="$(java_feature_version "$JAVA_HOME")"
  if [[ -z "$JAVA_VERSION" || "$JAVA_VERSION" -lt 21 ]]; then
    if [[ "$JAVA_HOME" != "$DEFAULT_JAVA_HOME" && -x "$DEFAULT_JAVA_HOME/bin/java" ]]; then
      echo "elasticsearch: JAVA_HOME=$JAVA_HOME is Java ${JAVA_VERSION:-?} (< 21), using $DEFAULT_JAVA_HOME instead" >&2
      JAVA_HOME="$DEFAULT_JAVA_HOME"
      JAVA_VERSION="$(java_feature_version "$JAVA_HOME")"
    else
      die "Elasticsearch 9 needs Java 21+, JAVA_HOME=$JAVA_HOME is Java ${JAVA_VERSION:-?} (expected the Temurin 25 JDK at $DEFAULT_JAVA_HOME)"
    fi
  fi
  export JAVA_HOME
}

with_lock() { # serialize build/start/stop between concurrent callers
  mkdir -p "$RUN_DIR"
  exec 9>"$LOCK_FILE"
  flock -w 600 9 || die "could not lock $LOCK_FILE"
}

source_hash() {
  (
    cd "$SCRIPT_DIR"
    {
      echo "java=$JAVA_VERSION"
      sha256sum pom.xml
      find src -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
    } | sha256sum | cut -d' ' -f1
  )
}

build_is_current() {
  [[ -f "$HASH_FILE" && -f "$CLASSES_DIR/${MAIN_CLASS//.//}.class" ]] || return 1
  compgen -G "$LIB_DIR/elasticsearch-*.jar" >/dev/null || return 1
  [[ "$(cat "$HASH_FILE")" == "$(source_hash)" ]]
}

do_build() {
  if build_is_current; then
    return 0
  fi
  command -v mvn >/dev/null 2>&1 || die "mvn (Maven) is required to build the launcher"
  local staging="$ES_DIR/.staging" started=$SECONDS
  echo "elasticsearch: building launcher (mvn) into $ES_DIR ..."
  rm -rf "$staging"
  mkdir -p "$staging"
  local maven_opts="${MAVEN_OPTS:-}"
  if [[ "$JAVA_VERSION" -ge 24 ]]; then
    # Maven 3.8's bundled guava uses sun.misc.Unsafe; keep JDK 24+ from warning about it on every build
    maven_opts="$maven_opts --sun-misc-unsafe-memory-access=allow"
  fi
  if ! MAVEN_OPTS="$maven_opts" mvn -B -q -f "$SCRIPT_DIR/pom.xml" -Des.out="$staging" compile >"$staging/mvn.log" 2>&1; then
    grep -v '^WARNING: ' "$staging/mvn.log" | tail -n 40 >&2 || true
    die "build failed (full output: $staging/mvn.log)"
  fi
  rm -rf "$LIB_DIR" "$CLASSES_DIR"
  mv "$staging/lib" "$LIB_DIR"
  mv "$staging/classes" "$CLASSES_DIR"
  rm -rf "$staging"
  source_hash >"$HASH_FILE"
  echo "elasticsearch: build done in $((SECONDS - started))s ($(du -sh "$LIB_DIR" | cut -f1) of jars in $LIB_DIR)"
}

health_status() { # prints green/yellow/red if something answers the health endpoint, fails otherwise
  local body
  body="$(curl -s -m 3 "$HEALTH_URL" 2>/dev/null)" || return 1
  local status
  status="$(printf '%s' "$body" | sed -n 's/.*"status"[[:space:]]*:[[:space:]]*"\([a-z]*\)".*/\1/p')"
  [[ -n "$status" ]] || return 1
  printf '%s\n' "$status"
}

our_pid() { # prints the pid from the pid file if that process is alive and is our launcher
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE" 2>/dev/null)"
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "$MAIN_CLASS" || return 1
  printf '%s\n' "$pid"
}

fail_start() {
  echo "elasticsearch: failed to start (see $LOG_FILE)" >&2
  if [[ -f "$LOG_FILE" ]]; then
    tail -n 30 "$LOG_FILE" >&2
  fi
  exit 1
}

wait_healthy() { # $1 = pid
  local pid="$1" deadline=$((SECONDS + ES_START_TIMEOUT)) status
  while ((SECONDS < deadline)); do
    if status="$(health_status)" && [[ "$status" == green || "$status" == yellow ]]; then
      echo "elasticsearch: running on 127.0.0.1:$ES_PORT (status $status, pid $pid, ready after $((SECONDS - START_T0))s)"
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$PID_FILE"
      echo "elasticsearch: process $pid exited during startup" >&2
      fail_start
    fi
    sleep 1
  done
  echo "elasticsearch: not yellow/green after ${ES_START_TIMEOUT}s, stopping pid $pid" >&2
  kill_pid "$pid"
  rm -f "$PID_FILE"
  fail_start
}

do_start() {
  local status pid
  if status="$(health_status)"; then
    echo "elasticsearch: reusing node already answering on 127.0.0.1:$ES_PORT (status $status)"
    return 0
  fi
  do_build
  START_T0=$SECONDS
  if pid="$(our_pid)"; then
    echo "elasticsearch: pid $pid is already starting, waiting for it"
    wait_healthy "$pid"
    return 0
  fi
  mkdir -p "$HOME_DIR" "$DATA_DIR" "$LOG_DIR" "$RUN_DIR" "$TMP_DIR"
  if [[ -f "$LOG_FILE" ]]; then
    mv -f "$LOG_FILE" "$LOG_FILE.1"
  fi
  local -a jvm_opts=(
    -Xms512m -Xmx1g -Xss1m
    -XX:+UseG1GC
    -XX:-OmitStackTraceInFastThrow
    -Dfile.encoding=UTF-8
    -Djava.locale.providers=CLDR
    -Djava.io.tmpdir="$TMP_DIR"
    -Dlog4j.shutdownHookEnabled=false
    -Dlog4j2.disable.jmx=true
    -Dlog4j2.formatMsgNoLookups=true
    -Dio.netty.noUnsafe=true
    -Dio.netty.noKeySetOptimization=true
    -Dio.netty.recycler.maxCapacityPerThread=0
    --enable-native-access=ALL-UNNAMED
    --add-modules=jdk.incubator.vector
  )
  if [[ "$JAVA_VERSION" -ge 24 ]]; then
    jvm_opts+=(--sun-misc-unsafe-memory-access=allow)
  fi
  # shellcheck disable=SC2206 # word splitting of ES_JAVA_OPTS is intended
  local -a extra_opts=(${ES_JAVA_OPTS:-})
  jvm_opts+=("${extra_opts[@]}")
  jvm_opts+=(
    -Des.home="$HOME_DIR"
    -Des.data="$DATA_DIR"
    -Des.http.port="$ES_PORT"
    -Des.transport.port="$ES_TRANSPORT_PORT"
  )
  {
    echo "=== $(date -Is) starting elasticsearch: $JAVA_HOME/bin/java ${jvm_opts[*]} $MAIN_CLASS"
  } >"$LOG_FILE"
  # setsid: own session, so the node survives the caller's terminal/process group going away
  cd "$ES_DIR"
  setsid nohup "$JAVA_HOME/bin/java" "${jvm_opts[@]}" -cp "$CLASSES_DIR:$LIB_DIR/*" "$MAIN_CLASS" \
    >>"$LOG_FILE" 2>&1 </dev/null 9>&- &
  pid=$!
  echo "$pid" >"$PID_FILE"
  echo "elasticsearch: starting (pid $pid, log $LOG_FILE, data $DATA_DIR)"
  wait_healthy "$pid"
}

kill_pid() { # SIGTERM, wait, SIGKILL
  local pid="$1" waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if ((waited >= ES_STOP_TIMEOUT)); then
      echo "elasticsearch: pid $pid still alive after ${ES_STOP_TIMEOUT}s, sending SIGKILL" >&2
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
}

do_stop() {
  local pid
  if pid="$(our_pid)"; then
    echo "elasticsearch: stopping pid $pid"
    kill_pid "$pid"
    rm -f "$PID_FILE"
    echo "elasticsearch: stopped"
  else
    rm -f "$PID_FILE"
    if health_status >/dev/null; then
      echo "elasticsearch: not started by es.sh (no live pid in $PID_FILE), but something answers on 127.0.0.1:$ES_PORT; left alone"
    else
      echo "elasticsearch: not running"
    fi
  fi
}

do_status() {
  local status pid
  if status="$(health_status)"; then
    echo "elasticsearch: running on 127.0.0.1:$ES_PORT (status $status)"
    return 0
  fi
  if pid="$(our_pid)"; then
    echo "elasticsearch: not ready (pid $pid alive, no answer on 127.0.0.1:$ES_PORT yet; log $LOG_FILE)"
    return 1
  fi
  echo "elasticsearch: stopped"
  return 1
}

usage() {
  sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

cmd="${1:-}"
case "$cmd" in
  build)
    check_java
    with_lock
    do_build
    ;;
  start)
    check_java
    with_lock
    do_start
    ;;
  stop)
    with_lock
    do_stop
    ;;
  restart)
    check_java
    with_lock
    do_stop
    do_start
    ;;
  status)
    do_status
    ;;
  -h | --help | help)
    usage
    ;;
  *)
    usage >&2
    exit 2
    ;;
esac
