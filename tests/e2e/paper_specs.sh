#!/usr/bin/env bash
# The published DAPPLE profiles and the paper specs that read them:
#  1. scripts/fetch-profiles.sh against local stand-ins for the two repositories: HPGO as it is
#     today (its default branch a one-commit stub, the pinned commit reachable only from a
#     pull-request ref, and not its tip), as a bare mirror and with a server that allows any
#     SHA; DAPPLE as a plain folder. A good fetch, a source that moves again, an altered file,
#     a missing file, a wrong or missing commit, a source that cannot be fetched, --verify; a
#     failed fetch leaves the folder as it was.
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
git_in() { git -C "$1" -c user.email=t@example.com -c user.name=test "${@:2}"; }
# HPGO as it is today: the profiles at an old commit, a later commit on a pull-request ref, and
# the default branch an orphan stub.
make_hpgo_standin() {  # folder to create, folder of the files its old commit holds
  local dir=$1
  git init -q "$dir"
  cp -r "$2/." "$dir/"
  git_in "$dir" add -A && git_in "$dir" commit -qm "feat(example): finish vs-pipedream exp"
  pinned=$(git -C "$dir" rev-parse HEAD)
  echo later > "$dir/later.txt" && git_in "$dir" add -A && git_in "$dir" commit -qm later
  git -C "$dir" update-ref refs/pull/24/head HEAD
  git_in "$dir" checkout -q --orphan stub && git_in "$dir" rm -rqf . &&
    echo "302 moved" > "$dir/README.md" && git_in "$dir" add README.md &&
    git_in "$dir" commit -qm "302 moved"
  git -C "$dir" branch -q -D master 2>/dev/null || git -C "$dir" branch -q -D main
  git -C "$dir" branch -q -m master
}
mkdir -p "$SCRATCH/dapple/profiling_results" "$SCRATCH/files/profiles/m" "$SCRATCH/files/contrib/test_graphs"
printf 'node1 -- a -- forward_compute_time=1\n' > "$SCRATCH/dapple/profiling_results/m-pbs-2.txt"
printf 'node1 -- b -- forward_compute_time=2\n' > "$SCRATCH/files/profiles/m/graph.txt"
printf 'node1 -- c -- forward_compute_time=3\n' > "$SCRATCH/files/contrib/test_graphs/other.txt"
make_hpgo_standin "$SCRATCH/hpgo" "$SCRATCH/files"
[[ -z "$(git -C "$SCRATCH/hpgo" branch --contains "$pinned")" ]] || fail "a branch reaches the pinned commit"
hash_at() { git -C "$SCRATCH/hpgo" show "$pinned:$1" | sha256sum | cut -d' ' -f1; }
list="$SCRATCH/list.sha256"
{
  echo "# test list"
  echo "source dapple fd75dcfbc6c73a7624b9fd9d8c3334e5d04bcd20 https://github.com/AlibabaPAI/DAPPLE.git"
  echo "source hpgo $pinned https://github.com/LER0ever/HPGO.git"
  echo "$(sha256sum < "$SCRATCH/dapple/profiling_results/m-pbs-2.txt" | cut -d' ' -f1)  m/m-pbs-2.txt  dapple:profiling_results/m-pbs-2.txt"
  echo "$(hash_at profiles/m/graph.txt)  m/graph.txt  hpgo:profiles/m/graph.txt"
  echo "$(hash_at contrib/test_graphs/other.txt)  m/other.txt  hpgo:contrib/test_graphs/other.txt"
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
expect_contains "$(cat "$SCRATCH/log")" "fetching hpgo at ${pinned:0:12} from $SCRATCH/hpgo"
expect_contains "$(cat "$SCRATCH/log")" "$out: 3 profiles fetched and verified against list.sha256"
cmp "$out/m/graph.txt" <(git -C "$SCRATCH/hpgo" show "$pinned:profiles/m/graph.txt") || fail "fetched file differs"
# A bare mirror (a machine without network), and a server that hands out any SHA (the shallow
# fetch by SHA, as GitHub does), give the same files.
git clone -q --mirror "$SCRATCH/hpgo" "$SCRATCH/hpgo-mirror.git"
HARNESS_HPGO_REPO="$SCRATCH/hpgo-mirror.git" "$fetch" "$SCRATCH/from-mirror" > /dev/null
git -C "$SCRATCH/hpgo-mirror.git" config uploadpack.allowAnySHA1InWant true
HARNESS_HPGO_REPO="file://$SCRATCH/hpgo-mirror.git" "$fetch" "$SCRATCH/by-sha" > /dev/null
for f in m/graph.txt m/other.txt m/m-pbs-2.txt; do
  cmp "$out/$f" "$SCRATCH/from-mirror/$f" && cmp "$out/$f" "$SCRATCH/by-sha/$f" || fail "$f differs by source"
done
# The source moves again (its stub branch rewritten, the pull ref gone, a tag left on the
# commit): the pinned commit is still what is fetched.
git_in "$SCRATCH/hpgo" tag v0 "$pinned" && git -C "$SCRATCH/hpgo" update-ref -d refs/pull/24/head
echo "moved again" > "$SCRATCH/hpgo/README.md" && git_in "$SCRATCH/hpgo" commit -qam "moved again"
"$fetch" "$SCRATCH/moved" > /dev/null || fail "a moved source broke the fetch"
cmp "$out/m/other.txt" "$SCRATCH/moved/m/other.txt" || fail "a moved source changed a file"
# A commit the source does not have, a list whose commit is not a SHA: one line, exit 2.
sed "s/^source hpgo $pinned/source hpgo 0123456789abcdef0123456789abcdef01234567/" "$list" > "$SCRATCH/missing.sha256"
HARNESS_PROFILE_LIST="$SCRATCH/missing.sha256" expect_fetch_error \
  "error: hpgo: $SCRATCH/hpgo has no commit 0123456789abcdef0123456789abcdef01234567 (asked for by SHA, then in every ref it advertises)" "$SCRATCH/new"
sed "s/^source hpgo $pinned/source hpgo master/" "$list" > "$SCRATCH/branch.sha256"
HARNESS_PROFILE_LIST="$SCRATCH/branch.sha256" expect_fetch_error \
  "error: $SCRATCH/branch.sha256:3: 'master' is not a commit SHA (40 hexadecimal digits)" "$SCRATCH/new"
cmp "$out/m/m-pbs-2.txt" "$SCRATCH/dapple/profiling_results/m-pbs-2.txt" || fail "fetched file differs"
expect_contains "$("$fetch" --verify "$out")" "$out: 3 profiles verified"
expect_contains "$("$fetch" "$out")" "$out: 3 profiles already fetched and verified"

# An altered file in the fetched folder: --verify names it; a fetch replaces the folder whole.
echo "# edited" >> "$out/m/other.txt"
want="$(hash_at contrib/test_graphs/other.txt)"
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

# A file the pinned commit does not hold.
sed 's|hpgo:profiles/m/graph.txt|hpgo:profiles/m/gone.txt|' "$list" > "$SCRATCH/gone.sha256"
HARNESS_PROFILE_LIST="$SCRATCH/gone.sha256" expect_fetch_error \
  "error: m/graph.txt: hpgo ($SCRATCH/hpgo) has no profiles/m/gone.txt at $pinned" "$SCRATCH/new"
# A file the source does not have, a source that cannot be cloned, a folder never fetched.
rm "$SCRATCH/dapple/profiling_results/m-pbs-2.txt"
expect_fetch_error "error: m/m-pbs-2.txt: dapple ($SCRATCH/dapple) has no profiling_results/m-pbs-2.txt" "$SCRATCH/new"
HARNESS_HPGO_REPO="$SCRATCH/no-such-repo" expect_fetch_error \
  "error: cannot fetch hpgo from $SCRATCH/no-such-repo: fatal: '$SCRATCH/no-such-repo' does not appear to be a git repository" "$SCRATCH/new"
# A URL nobody answers (loopback port 9): curl's words after the first part vary by version.
set +e
HARNESS_HPGO_REPO="http://127.0.0.1:9/HPGO.git" "$fetch" "$SCRATCH/new" >/dev/null 2>"$SCRATCH/err"
code=$?
set -e
[[ $code == 2 && $(wc -l < "$SCRATCH/err") == 1 ]] || fail "unreachable URL: exit $code: $(cat "$SCRATCH/err")"
expect_contains "$(cat "$SCRATCH/err")" "error: cannot fetch hpgo from http://127.0.0.1:9/HPGO.git: fatal: unable to access 'http://127.0.0.1:9/HPGO.git/'"
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
# Stand-ins laid out like the two repositories today: DAPPLE's files at its tag, HPGO's at an
# old commit behind a stub default branch; the list's pins point at the stand-ins' commits.
while read -r hash path origin; do
  [[ -z "$hash" || "$hash" == \#* || "$hash" == source ]] && continue
  source_name="${origin%%:*}" source_path="${origin#*:}"
  mkdir -p "$(dirname "$SCRATCH/real-$source_name/$source_path")"
  cp "$reference/$path" "$SCRATCH/real-$source_name/$source_path"
done < profiles/published.sha256
make_hpgo_standin "$SCRATCH/real-hpgo-git" "$SCRATCH/real-hpgo"
git init -q "$SCRATCH/real-dapple" && git_in "$SCRATCH/real-dapple" add -A &&
  git_in "$SCRATCH/real-dapple" commit -qm "Merge pull request #2" && git_in "$SCRATCH/real-dapple" tag v1.0.0
sed -e "s/^source hpgo [0-9a-f]*/source hpgo $pinned/" \
    -e "s/^source dapple [0-9a-f]*/source dapple $(git -C "$SCRATCH/real-dapple" rev-parse HEAD)/" \
    profiles/published.sha256 > "$SCRATCH/real.sha256"
HARNESS_PROFILE_LIST="$SCRATCH/real.sha256" HARNESS_DAPPLE_REPO="$SCRATCH/real-dapple" HARNESS_HPGO_REPO="$SCRATCH/real-hpgo-git" \
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
