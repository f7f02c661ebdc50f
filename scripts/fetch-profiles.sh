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
# Sources (each a git URL, a local git repository, or a plain folder holding the same files,
# e.g. a mirror on a machine without network):
#   HARNESS_DAPPLE_REPO  default https://github.com/AlibabaPAI/DAPPLE.git  (profiling_results/)
#   HARNESS_HPGO_REPO    default https://github.com/LER0ever/HPGO.git       (profiles/)
# HARNESS_PROFILE_LIST names another checksum list (tests use it).
#
# Exit 0: every listed file is in FOLDER with its checksum. Exit 2, with one line on stderr: a
# source that cannot be fetched, a file missing from it, a checksum that differs, a bad list.
# FOLDER is replaced only once every file has been fetched and verified: an interrupted or
# failed fetch leaves it as it was.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
list="${HARNESS_PROFILE_LIST:-$repo_root/profiles/published.sha256}"
declare -A source_url=(
  [dapple]="${HARNESS_DAPPLE_REPO:-https://github.com/AlibabaPAI/DAPPLE.git}"
  [hpgo]="${HARNESS_HPGO_REPO:-https://github.com/LER0ever/HPGO.git}"
)

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

# The list: "SHA256  PATH  SOURCE:PATH_IN_SOURCE" lines; '#' comments and blank lines skipped.
hashes=() paths=() sources=() source_paths=()
line_number=0
while IFS= read -r line || [[ -n "$line" ]]; do
  line_number=$((line_number + 1))
  [[ -z "${line// /}" || "$line" == \#* ]] && continue
  read -r hash path origin extra <<< "$line"
  [[ -z "${extra:-}" && "$hash" =~ ^[0-9a-f]{64}$ && -n "${origin:-}" && "$origin" == *:* ]] ||
    die "$list:$line_number: expected 'SHA256  PATH  SOURCE:PATH'"
  [[ "$path" != /* && "$path" != *..* ]] || die "$list:$line_number: '$path' leaves the folder"
  [[ -n "${source_url[${origin%%:*}]+set}" ]] ||
    die "$list:$line_number: unknown source '${origin%%:*}' (expected dapple or hpgo)"
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
  echo "fetching $name from $url"
  if ! message="$(GIT_TERMINAL_PROMPT=0 git clone --quiet --depth 1 "$url" "$stage/.source-$name" 2>&1)"; then
    die "cannot fetch $name from $url: $(head -n 1 <<< "$message")"
  fi
  checkout[$name]="$stage/.source-$name"
done

for i in "${!paths[@]}"; do
  from="${checkout[${sources[$i]}]}/${source_paths[$i]}"
  [[ -f "$from" ]] ||
    die "${paths[$i]}: ${sources[$i]} (${source_url[${sources[$i]}]}) has no ${source_paths[$i]}"
  mkdir -p "$stage/profiles/$(dirname "${paths[$i]}")"
  cp "$from" "$stage/profiles/${paths[$i]}"
done
problem="$(first_mismatch "$stage/profiles")"
[[ -z "$problem" ]] || die "$problem (fetched from ${source_url[dapple]} and ${source_url[hpgo]}; nothing was written)"

# Swap in the verified folder; an older (incomplete or altered) one is removed after.
if [[ -e "$folder" ]]; then
  mv "$folder" "$stage/previous"
fi
mv "$stage/profiles" "$folder"
echo "$folder: ${#paths[@]} profiles fetched and verified against $(basename "$list")"
