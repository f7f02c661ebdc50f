#!/usr/bin/env bash
# The published DAPPLE profiles and the paper specs that read them:
#  1. scripts/fetch-profiles.sh against local stand-ins for the two repositories (a git
#     repository and a plain folder): a good fetch, an altered file, a missing file, a source
#     that cannot be cloned, --verify; a failed fetch leaves the folder as it was.
#  2. Without the profiles, every spec that names "{profiles}/..." exits 2 before writing
#     anything, each error line naming the fetch command.
#  3. Where ../shared/reference holds the profiles: the committed checksum list matches them
#     (fetched from stand-ins laid out like the real repositories), and every paper spec runs
#     on the fetched copy and leaves its figures.
source "$(dirname "$0")/common.sh"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
fetch="$repo/scripts/fetch-profiles.sh"
cd "$repo"

# -- 1. the fetch logic, on a three-file list ------------------------------------------------
mkdir -p "$SCRATCH/dapple/profiling_results" "$SCRATCH/hpgo/profiles/m"
printf 'node1 -- a -- forward_compute_time=1\n' > "$SCRATCH/dapple/profiling_results/m-pbs-2.txt"
printf 'node1 -- b -- forward_compute_time=2\n' > "$SCRATCH/hpgo/profiles/m/graph.txt"
printf 'node1 -- c -- forward_compute_time=3\n' > "$SCRATCH/hpgo/profiles/m/other.txt"
(cd "$SCRATCH/hpgo" && git init -q && git add -A &&
  git -c user.email=t@example.com -c user.name=test commit -qm profiles)
list="$SCRATCH/list.sha256"
{
  echo "# test list"
  echo "$(sha256sum < "$SCRATCH/dapple/profiling_results/m-pbs-2.txt" | cut -d' ' -f1)  m/m-pbs-2.txt  dapple:profiling_results/m-pbs-2.txt"
  echo "$(sha256sum < "$SCRATCH/hpgo/profiles/m/graph.txt" | cut -d' ' -f1)  m/graph.txt  hpgo:profiles/m/graph.txt"
  echo "$(sha256sum < "$SCRATCH/hpgo/profiles/m/other.txt" | cut -d' ' -f1)  m/other.txt  hpgo:profiles/m/other.txt"
} > "$list"
export HARNESS_PROFILE_LIST="$list" HARNESS_DAPPLE_REPO="$SCRATCH/dapple" HARNESS_HPGO_REPO="$SCRATCH/hpgo"

expect_fetch_error() {  # $1: expected stderr; rest: arguments
  local expected=$1; shift
  set +e
  "$fetch" "$@" >/dev/null 2>"$SCRATCH/err"
  local code=$?
  set -e
  [[ $code == 2 ]] || fail "fetch $*: exit $code (want 2); stderr: $(cat "$SCRATCH/err")"
  [[ "$(cat "$SCRATCH/err")" == "$expected" ]] || fail "fetch $*: stderr '$(cat "$SCRATCH/err")', want '$expected'"
}

out="$SCRATCH/fetched"
"$fetch" "$out" > "$SCRATCH/log"
expect_contains "$(cat "$SCRATCH/log")" "$out: 3 profiles fetched and verified against list.sha256"
cmp "$out/m/graph.txt" "$SCRATCH/hpgo/profiles/m/graph.txt" || fail "fetched file differs"
cmp "$out/m/m-pbs-2.txt" "$SCRATCH/dapple/profiling_results/m-pbs-2.txt" || fail "fetched file differs"
expect_contains "$("$fetch" --verify "$out")" "$out: 3 profiles verified"
expect_contains "$("$fetch" "$out")" "$out: 3 profiles already fetched and verified"

# An altered file in the fetched folder: --verify names it; a fetch replaces the folder whole.
echo "# edited" >> "$out/m/other.txt"
want="$(sha256sum < "$SCRATCH/hpgo/profiles/m/other.txt" | cut -d' ' -f1)"
got="$(sha256sum < "$out/m/other.txt" | cut -d' ' -f1)"
expect_fetch_error "error: $out/m/other.txt: SHA-256 $got differs from the list's $want" --verify "$out"
"$fetch" "$out" > /dev/null
"$fetch" --verify "$out" > /dev/null

# A source whose file differs from the list: nothing written, the old (here: edited, so that a
# fetch is due) folder kept as it was.
echo "# edited" >> "$out/m/other.txt"
echo "tampered" >> "$SCRATCH/dapple/profiling_results/m-pbs-2.txt"
got="$(sha256sum < "$SCRATCH/dapple/profiling_results/m-pbs-2.txt" | cut -d' ' -f1)"
want="$(grep -F ' m/m-pbs-2.txt ' "$list" | cut -d' ' -f1)"
before="$(find "$out" -type f -exec sha256sum {} + | sort)"
expect_fetch_error "error: m/m-pbs-2.txt: SHA-256 $got differs from the list's $want (fetched from $SCRATCH/dapple and $SCRATCH/hpgo; nothing was written)" "$out"
[[ "$(find "$out" -type f -exec sha256sum {} + | sort)" == "$before" ]] || fail "a failed fetch changed $out"
expect_fetch_error "error: m/m-pbs-2.txt: SHA-256 $got differs from the list's $want (fetched from $SCRATCH/dapple and $SCRATCH/hpgo; nothing was written)" "$SCRATCH/new"
[[ ! -e "$SCRATCH/new" ]] || fail "a failed fetch created its folder"
sed -i '$d' "$SCRATCH/dapple/profiling_results/m-pbs-2.txt"

# A file the source does not have, a source that cannot be cloned, a folder never fetched.
rm "$SCRATCH/dapple/profiling_results/m-pbs-2.txt"
expect_fetch_error "error: m/m-pbs-2.txt: dapple ($SCRATCH/dapple) has no profiling_results/m-pbs-2.txt" "$SCRATCH/new"
HARNESS_HPGO_REPO="$SCRATCH/no-such-repo" expect_fetch_error \
  "error: cannot fetch hpgo from $SCRATCH/no-such-repo: fatal: repository '$SCRATCH/no-such-repo' does not exist" "$SCRATCH/new"
expect_fetch_error "error: $SCRATCH/new: no such folder (fetch it: scripts/fetch-profiles.sh)" --verify "$SCRATCH/new"
[[ ! -e "$SCRATCH/new" ]] || fail "a failed fetch created its folder"
[[ -z "$(find "$SCRATCH" -maxdepth 1 -name '.fetch-profiles.*')" ]] || fail "a staging folder was left behind"
printf 'not a checksum line\n' > "$SCRATCH/bad.sha256"
HARNESS_PROFILE_LIST="$SCRATCH/bad.sha256" expect_fetch_error \
  "error: $SCRATCH/bad.sha256:1: expected 'SHA256  PATH  SOURCE:PATH'" "$SCRATCH/new"
unset HARNESS_PROFILE_LIST HARNESS_DAPPLE_REPO HARNESS_HPGO_REPO

# -- 2. the specs without the profiles -------------------------------------------------------
paper_specs=$(grep -l '{profiles}' experiments/*.yaml)
[[ $(wc -w <<< "$paper_specs") -ge 8 ]] || fail "expected the 8 paper specs to name {profiles}: $paper_specs"
mkdir -p "$SCRATCH/empty"
for spec in $paper_specs; do
  for dry in --dry-run ""; do
    set +e
    HARNESS_PROFILES="$SCRATCH/empty" "$HARNESS" run "$spec" --set "output=$SCRATCH/results" $dry \
      >/dev/null 2>"$SCRATCH/err"
    code=$?
    set -e
    [[ $code == 2 ]] || fail "$spec without profiles: exit $code; $(cat "$SCRATCH/err")"
    [[ ! -e "$SCRATCH/results" ]] || fail "$spec without profiles wrote results"
    while IFS= read -r line; do
      [[ "$line" == "error: $spec:"*": cannot open '$SCRATCH/empty/"*"': the published DAPPLE profiles are not in $SCRATCH/empty (fetch them: scripts/fetch-profiles.sh, or set HARNESS_PROFILES to their folder)" ]] ||
        fail "$spec without profiles: '$line'"
    done < "$SCRATCH/err"
  done
done

# -- 3. the real list, fetched from stand-ins of the two repositories -----------------------
reference="$repo/../shared/reference/dapple_profiles"
if [[ ! -d "$reference" ]]; then
  echo "skipped: the published profiles ($reference) are not on this machine"
  echo "ok"
  exit 0
fi
while read -r hash path origin; do
  [[ -z "$hash" || "$hash" == \#* ]] && continue
  source_name="${origin%%:*}" source_path="${origin#*:}"
  mkdir -p "$(dirname "$SCRATCH/real-$source_name/$source_path")"
  cp "$reference/$path" "$SCRATCH/real-$source_name/$source_path"
done < profiles/published.sha256
(cd "$SCRATCH/real-hpgo" && git init -q && git add -A &&
  git -c user.email=t@example.com -c user.name=test commit -qm profiles)
HARNESS_DAPPLE_REPO="$SCRATCH/real-dapple" HARNESS_HPGO_REPO="$SCRATCH/real-hpgo" \
  "$fetch" "$SCRATCH/published" > "$SCRATCH/log"
expect_contains "$(cat "$SCRATCH/log")" "$SCRATCH/published: 49 profiles fetched and verified"

have_gnuplot=$(command -v gnuplot >/dev/null && echo 1 || echo 0)
for spec in $paper_specs; do
  HARNESS_PROFILES="$SCRATCH/published" "$HARNESS" run "$spec" --set "output=$SCRATCH/paper" \
    > "$SCRATCH/log" 2>&1 || fail "$spec: $(tail -3 "$SCRATCH/log")"
  name=$(basename "$spec" .yaml)
  [[ $have_gnuplot == 1 ]] || continue
  pngs=$(find "$SCRATCH/paper/$name" -path '*/plots/*.png' | wc -l)
  svgs=$(find "$SCRATCH/paper/$name" -path '*/plots/*.svg' | wc -l)
  [[ $pngs -ge 1 && $pngs == "$svgs" ]] || fail "$spec drew $pngs PNG and $svgs SVG figures"
done
echo "ok"
