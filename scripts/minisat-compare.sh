#!/usr/bin/env bash
# Compare `streamcheck sat` with minisat on DIMACS files of your own (for
# example SATLIB's uf250/uuf250 sets), one file after the other.
#
#   scripts/minisat-compare.sh [-t SECONDS] FILE.cnf...
#
# Prints, per file, both answers and both wall times in milliseconds, then
# the median ratio streamcheck/minisat over files both decided. Exits 1 if
# any two decided answers differ. Files with the edge extension (n/b/e/e2
# lines) are for streamcheck only; minisat rejects them.
#
# streamcheck sat is the satcmd test binary, which runs as the command when
# named streamcheck-sat (see internal/satcmd/satcmd_test.go), so this works
# whether or not cmd/streamcheck is built. Models are not checked here; the
# Go tests (go test ./internal/satcmd) do that.
set -euo pipefail
timeout=60
if [ "${1:-}" = "-t" ]; then timeout=$2; shift 2; fi
[ $# -gt 0 ] || { sed -n '2,16p' "$0" >&2; exit 2; }
command -v minisat >/dev/null || { echo "minisat not found (apt-get install minisat)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$root" && go test -c -o "$tmp/streamcheck-sat" ./internal/satcmd)

answer() { # exit code -> word
  case $1 in 10) echo SAT ;; 20) echo UNSAT ;; 0) echo UNKNOWN ;; *) echo "ERROR($1)" ;; esac
}
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

bad=0
ratios=()
printf '%-40s %-8s %-8s %10s %10s\n' file ours minisat ours-ms minisat-ms
for f in "$@"; do
  t0=$(now_ms)
  set +e
  "$tmp/streamcheck-sat" --timeout "${timeout}s" "$f" >/dev/null
  oc=$?
  t1=$(now_ms)
  minisat -verb=0 -cpu-lim="$timeout" "$f" "$tmp/out" >/dev/null 2>&1
  mc=$?
  t2=$(now_ms)
  set -e
  o=$(answer $oc)
  m=$(answer $mc)
  [ "$m" = "ERROR(1)" ] && m=UNKNOWN # minisat interrupted by its CPU limit
  printf '%-40s %-8s %-8s %10d %10d\n' "$(basename "$f")" "$o" "$m" $((t1 - t0)) $((t2 - t1))
  if [[ $o == SAT || $o == UNSAT ]] && [[ $m == SAT || $m == UNSAT ]]; then
    if [ "$o" != "$m" ]; then echo "DISAGREE: $f" >&2; bad=1; fi
    ratios+=("$(awk -v a=$((t1 - t0)) -v b=$((t2 - t1)) 'BEGIN { if (b < 1) b = 1; printf "%.4f", a / b }')")
  fi
done
if [ ${#ratios[@]} -gt 0 ]; then
  printf '%s\n' "${ratios[@]}" | sort -g | awk '{ r[NR] = $1 } END {
    m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
    printf "median wall ratio streamcheck/minisat over %d decided files: %.2f\n", NR, m }'
fi
exit $bad
