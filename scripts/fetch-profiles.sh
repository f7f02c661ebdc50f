#!/usr/bin/env bash
# Fetches the DAPPLE planner's published layer profiles (the inputs of the planner and
# simulator specs, experiments/plan_*.yaml and simulate_*.yaml) from their public
# repositories and verifies every file against profiles/published.sha256.
#
#   scripts/fetch-profiles.sh [FOLDER]      fetch into FOLDER (default: $HARNESS_PROFILES, or
#                                           profiles/published in this checkout, git-ignored)
#   scripts/fetch-profiles.sh --verify [FOLDER]
#                                           check a fetched folder against the list, fetch nothing
#
# Sources are pinned in the list, each to a commit (`source NAME COMMIT URL` lines), and
# fetched by SHA, never by branch: an upstream whose branches move (HPGO's master is now a
# one-commit stub) cannot change what is fetched, and a file that changed at the pinned commit
# is still refused by its checksum. A commit is asked for by SHA (shallow); where the server
# refuses an unadvertised SHA, every advertised ref (branches, tags, pull-request refs) is
# fetched and the commit looked up there. Each source's URL can be replaced by a git URL, a
# local git repository (bare or not: a mirror on a machine without network), or a plain folder
# holding the files at their paths (no commit to check; the checksums still are):
#   HARNESS_DAPPLE_REPO  default from the list: https://github.com/AlibabaPAI/DAPPLE.git
#   HARNESS_HPGO_REPO    default from the list: https://github.com/LER0ever/HPGO.git
# HARNESS_PROFILE_LIST names another checksum list (tests use it).
#
# Exit 0: every listed file is in FOLDER with its checksum. Exit 2, with one line on stderr: a
# source that cannot be fetched, a commit it does not have, a file missing at that commit, a
# checksum that differs, a bad list. FOLDER is replaced only once every file has been fetched
# and verified: an interrupted or failed fetch leaves it as it was.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
list="${HARNESS_PROFILE_LIST:-$repo_root/profiles/published.sha256}"
declare -A source_url=() source_commit=()

die() {
  echo "error: $*" >&2
  exit 2
}

verify_only=0
if [[ "${1:-}" == "--verify" ]]; then
  verify_only=1
  shift
fi
[[ $# -le 1 ]] || die "usage: scripts/fetch-profiles.sh [--verify] [FOLDER]"
[[ "${1:-}" != -* ]] || die "unknown option '$1' (usage: scripts/fetch-profiles.sh [--verify] [FOLDER])"
folder="${1:-${HARNESS_PROFILES:-$repo_root/profiles/published}}"
[[ -r "$list" ]] || die "$list: cannot read the checksum list"

# The list: "source NAME COMMIT URL" lines, then "SHA256  PATH  SOURCE:PATH_IN_SOURCE" lines;
# '#' comments and blank lines skipped.
hashes=() paths=() sources=() source_paths=()
line_number=0
while IFS= read -r line || [[ -n "$line" ]]; do
  line_number=$((line_number + 1))
  [[ -z "${line// /}" || "$line" == \#* ]] && continue
  if [[ "$line" == source* ]]; then
    read -r _ name commit url extra <<< "$line"
    [[ -z "${extra:-}" && "$name" =~ ^[a-z][a-z0-9_]*$ && -n "${url:-}" ]] ||
      die "$list:$line_number: expected 'source NAME COMMIT URL'"
    [[ "$commit" =~ ^[0-9a-f]{40}$ ]] ||
      die "$list:$line_number: '$commit' is not a commit SHA (40 hexadecimal digits)"
    override="HARNESS_${name^^}_REPO"
    source_url[$name]="${!override:-$url}" source_commit[$name]="$commit"
    continue
  fi
  read -r hash path origin extra <<< "$line"
  [[ -z "${extra:-}" && "$hash" =~ ^[0-9a-f]{64}$ && -n "${origin:-}" && "$origin" == *:* ]] ||
    die "$list:$line_number: expected 'SHA256  PATH  SOURCE:PATH'"
  [[ "$path" != /* && "$path" != *..* ]] || die "$list:$line_number: '$path' leaves the folder"
  [[ -n "${source_url[${origin%%:*}]+set}" ]] ||
    die "$list:$line_number: unknown source '${origin%%:*}' (no 'source ${origin%%:*} COMMIT URL' line before it)"
  hashes+=("$hash") paths+=("$path") sources+=("${origin%%:*}") source_paths+=("${origin#*:}")
done < "$list"
[[ ${#paths[@]} -gt 0 ]] || die "$list: lists no file"

# Prints the first problem of FOLDER against the list; nothing when every file matches.
first_mismatch() {
  local base=$1 i got
  for i in "${!paths[@]}"; do
    if [[ ! -f "$base/${paths[$i]}" ]]; then
      echo "${paths[$i]}: missing"
      return
    fi
    got="$(sha256sum "$base/${paths[$i]}" | cut -d' ' -f1)"
    if [[ "$got" != "${hashes[$i]}" ]]; then
      echo "${paths[$i]}: SHA-256 $got differs from the list's ${hashes[$i]}"
      return
    fi
  done
}

if [[ $verify_only == 1 ]]; then
  [[ -d "$folder" ]] || die "$folder: no such folder (fetch it: scripts/fetch-profiles.sh)"
  problem="$(first_mismatch "$folder")"
  [[ -z "$problem" ]] || die "$folder/$problem"
  echo "$folder: ${#paths[@]} profiles verified"
  exit 0
fi
if [[ -d "$folder" && -z "$(first_mismatch "$folder")" ]]; then
  echo "$folder: ${#paths[@]} profiles already fetched and verified"
  exit 0
fi

# Everything is fetched into a staging folder beside FOLDER (so that the last step is one
# rename on the same file system) and removed whatever happens.
parent="$(dirname "$folder")"
mkdir -p "$parent" || die "$parent: cannot create the folder"
stage="$(mktemp -d "$parent/.fetch-profiles.XXXXXX")" || die "$parent: cannot write there"
trap 'rm -rf "$stage"' EXIT
trap 'exit 130' INT TERM

# One source's pinned commit into the bare repository $3: by SHA (shallow), else every
# advertised ref; dies unless the commit is there.
fetch_commit() {
  local name=$1 url=$2 into=$3 commit=${source_commit[$1]} message
  git init -q --bare "$into"
  export GIT_TERMINAL_PROMPT=0
  if ! git -C "$into" fetch -q --depth 1 "$url" "$commit" 2>/dev/null; then
    message="$(git -C "$into" fetch -q "$url" '+refs/*:refs/fetched/*' 2>&1)" ||
      die "cannot fetch $name from $url: $(head -n 1 <<< "$message")"
  fi
  git -C "$into" cat-file -e "$commit^{commit}" 2>/dev/null ||
    die "$name: $url has no commit $commit (asked for by SHA, then in every ref it advertises)"
}

declare -A checkout=()
for name in "${!source_url[@]}"; do
  url="${source_url[$name]}"
  used=0
  for s in "${sources[@]}"; do [[ "$s" == "$name" ]] && used=1 && break; done
  [[ $used == 1 ]] || continue
  if [[ -d "$url" && ! -e "$url/.git" && ! -f "$url/HEAD" ]]; then
    checkout[$name]="$url"  # a plain folder with the repository's files
    continue
  fi
  echo "fetching $name at ${source_commit[$name]:0:12} from $url"
  fetch_commit "$name" "$url" "$stage/.source-$name"
  checkout[$name]="git:$stage/.source-$name"
done

for i in "${!paths[@]}"; do
  name="${sources[$i]}" where="${checkout[${sources[$i]}]}"
  mkdir -p "$stage/profiles/$(dirname "${paths[$i]}")"
  if [[ "$where" == git:* ]]; then
    git -C "${where#git:}" cat-file -e "${source_commit[$name]}:${source_paths[$i]}" 2>/dev/null ||
      die "${paths[$i]}: $name (${source_url[$name]}) has no ${source_paths[$i]} at ${source_commit[$name]}"
    git -C "${where#git:}" show "${source_commit[$name]}:${source_paths[$i]}" > "$stage/profiles/${paths[$i]}"
  else
    [[ -f "$where/${source_paths[$i]}" ]] ||
      die "${paths[$i]}: $name (${source_url[$name]}) has no ${source_paths[$i]}"
    cp "$where/${source_paths[$i]}" "$stage/profiles/${paths[$i]}"
  fi
done
problem="$(first_mismatch "$stage/profiles")"
fetched_from=""
for name in $(printf '%s\n' "${!checkout[@]}" | sort); do
  fetched_from+="${fetched_from:+ and }${source_url[$name]}"
done
[[ -z "$problem" ]] || die "$problem (fetched from $fetched_from; nothing was written)"

# Swap in the verified folder; an older (incomplete or altered) one is removed after.
if [[ -e "$folder" ]]; then
  mv "$folder" "$stage/previous"
fi
mv "$stage/profiles" "$folder"
echo "$folder: ${#paths[@]} profiles fetched and verified against $(basename "$list")"
