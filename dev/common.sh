# Shared by dev/start and dev/test: dependencies, the stack, and its environment.
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STACK_DIR="${STACK_DIR:-$REPO/.stack}"
cd "$REPO"

ensure_node_modules() {
  # Installs the locked versions when node_modules is missing or older than the lock file. Not
  # `npm ci`: registries that serve only this platform's optional native packages (the case here)
  # make npm ci reject the lock, while npm install skips the unreachable optional ones.
  if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
    echo "npm: installing dependencies"
    npm install --no-audit --no-fund --loglevel=error
  fi
}

# Exports every variable of .stack/env that the caller has not set already.
load_stack_env() {
  local line key
  while IFS= read -r line || [ -n "$line" ]; do
    [[ -z "$line" || "$line" == \#* ]] && continue
    key="${line%%=*}"
    if [ -z "${!key:-}" ]; then export "$line"; fi
  done <"$STACK_DIR/env"
}
