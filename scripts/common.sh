# shellcheck shell=bash
# Shared by the scripts: repository root, build dir, GPU name slug, list of day programs.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export PATH="/usr/local/cuda/bin:$PATH"

gpu_slug() {
  local name
  name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1) || true
  [ -n "$name" ] || { echo "no GPU found (nvidia-smi)" >&2; return 1; }
  echo "$name" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//'
}

# day folders given as arguments (day001 or 1), or all of them
list_days() {
  if [ $# -gt 0 ]; then
    for d in "$@"; do
      case "$d" in day*) echo "$d" ;; *) printf 'day%03d\n' "$((10#$d))" ;; esac
    done
  else
    (cd "$ROOT" && ls -d day[0-9][0-9][0-9] 2>/dev/null)
  fi
}

# The default preset's settings (CMakePresets.json), in $BUILD.
configure_and_build() {
  cmake --preset default -S "$ROOT" -B "$BUILD" "$@" >/dev/null
  cmake --build "$BUILD"
}
