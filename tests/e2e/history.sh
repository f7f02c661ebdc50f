#!/usr/bin/env bash
# harness history on SQLite, end to end on results folders of known timings (history_common.sh):
# add, check's three answers (3 too short, 0 no change, 1 a regression at its commit) in Markdown
# and JSON, two adds at once losing nothing, and bad input refused in one line with exit 2 and
# the database unchanged (a commit twice, --replace, a folder that is no results folder, a corrupt
# file, another schema version, an unknown --since, a commit git would read as an option, names
# with control characters, a time that is not ISO 8601, an empty --db).
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/history_common.sh"
db=$SCRATCH/history.sqlite

# Three commits: too short to say.
add_history "$db" 1 3 99 0
set +e
"$HARNESS" history check --db "$db" > "$SCRATCH/check.md"
code=$?
set -e
[[ $code == 3 ]] || fail "check of 3 commits: exit $code, want 3: $(cat "$SCRATCH/check.md")"
expect_contains "$(cat "$SCRATCH/check.md")" "### Benchmark history: inconclusive"

# Sixteen commits of noise: no change.
add_history "$db" 4 16 99 0
"$HARNESS" history check --db "$db" --since c10 > "$SCRATCH/check.md" ||
  fail "A/A check: exit $?: $(cat "$SCRATCH/check.md")"
expect_contains "$(cat "$SCRATCH/check.md")" "### Benchmark history: no regression"
expect_contains "$(cat "$SCRATCH/check.md")" "0 regressed, 0 worse on fewer than 3 runs after the change (unconfirmed), 0 improved"

# Then 12% slower from c17 on: a regression at c17, with the medians on both sides.
add_history "$db" 17 22 17 0.12
set +e
"$HARNESS" history check --db "$db" --since c15 --link https://ci.example/history \
  --json "$SCRATCH/check.json" --out "$SCRATCH/comment.md" > "$SCRATCH/check.md"
code=$?
set -e
[[ $code == 1 ]] || fail "a 12% step: exit $code, want 1: $(cat "$SCRATCH/check.md")"
cmp -s "$SCRATCH/check.md" "$SCRATCH/comment.md" || fail "--out differs from what check printed"
expect_contains "$(cat "$SCRATCH/check.md")" "| regression | ci_regression / default / overlap | [iteration p50](https://ci.example/history/b-ci-regression-default-overlap-"
"$PY" - "$SCRATCH/check.json" "$REFERENCE_RESULTS" <<'PY' || fail "check.json"
import csv, glob, json, statistics, sys
check = json.load(open(sys.argv[1]))
assert check["exit_code"] == 1 and check["since"] == "c15", check
rows = {(r["benchmark"], r["metric"]): r for r in check["rows"]}
for system in ("overlap", "sync"):
    row = rows[(f"ci_regression / default / {system}", "iteration p50")]
    assert row["verdict"] == "regression", row
    change = row["change"]
    assert change["commit"] == "c17" and change["index"] == 16, change
    # The reference run's iteration p50 (its one run, ranks pooled) is the level before, times
    # the commits' noise (median over c01..c16 of 1 + 0.005 ((5k mod 7) - 3)).
    times = []
    for path in glob.glob(f"{sys.argv[2]}/raw/p000/{system}/rep0/rank*.csv"):
        times += [float(r["iteration_ms"]) for r in csv.DictReader(open(path))]
    p50 = statistics.median(times)
    noise = statistics.median(1 + 0.005 * ((5 * k) % 7 - 3) for k in range(1, 17))
    assert abs(change["median_before"] / (p50 * noise) - 1) < 2e-3, (change, p50)
    assert abs(change["change_pct"] - 12) < 1.5, change
    assert change["low_pct"] <= change["change_pct"] <= change["high_pct"], change
    assert change["pvalue"] < 0.001, change
    # The exact counters did not change.
    counter = rows[(f"ci_regression / default / {system}", "all-reduces per iteration")]
    assert counter["verdict"] == "no change" and not counter["changes"], counter
PY
# After the step, nothing new.
"$HARNESS" history check --db "$db" --since c20 > /dev/null || fail "check after the step: exit $?"

# Two adds at once: both land.
before=$(dump_db "$db" | grep -c "INSERT INTO \"commits\"")
add_history "$db" 23 28 1 0.12 &
add_history "$db" 29 34 1 0.12 &
wait %1 || fail "the first concurrent add failed"
wait %2 || fail "the second concurrent add failed"
after=$(dump_db "$db" | grep -c "INSERT INTO \"commits\"")
((after == before + 12)) || fail "concurrent adds: $before commits, then $after (want $((before + 12)))"

# Bad input: one line, exit 2, the database as it was.
dump_db "$db" > "$SCRATCH/before.sql"
expect_history_refused "commit c05 is in the history already for this environment" \
  history add "$SCRATCH/commits/c5" --commit c05 --db "$db"
expect_history_refused "$SCRATCH/nothing: no such folder" \
  history add "$SCRATCH/nothing" --commit c99 --db "$db"
mkdir -p "$SCRATCH/not-results" && echo hello > "$SCRATCH/not-results/notes.txt"
expect_history_refused "not-results" history add "$SCRATCH/not-results" --commit c99 --db "$db"
expect_history_refused "--since c77: the history holds no such commit" \
  history check --db "$db" --since c77
# Outputs that cannot be written are bad input (exit 2), found before the database is read.
echo x > "$SCRATCH/a-file"
expect_history_refused "--out '$SCRATCH/a-file/c.md': cannot write there: '$SCRATCH/a-file' is not a folder" \
  history check --db "$db" --out "$SCRATCH/a-file/c.md"
expect_history_refused "--json '$SCRATCH': is a folder, not a file" \
  history check --db "$db" --json "$SCRATCH"
expect_history_refused "--out '$SCRATCH/a-file/site': cannot write there: '$SCRATCH/a-file' is not a folder" \
  history report --db "$db" --out "$SCRATCH/a-file/site"
# Names that reach git, the database, Markdown and the terminal are checked where they enter.
# A commit that git would read as an option, run inside a git checkout: refused, nothing written.
mkdir -p "$SCRATCH/checkout" && git -C "$SCRATCH/checkout" init -q
(cd "$SCRATCH/checkout" && expect_history_refused "--commit: starts with '-'" \
  history add "$SCRATCH/commits/c5" "--commit=--output=$SCRATCH/pwned" --db "$db")
[[ ! -e $SCRATCH/pwned ]] || fail "--commit=--output=FILE reached git and wrote FILE"
expect_history_refused "--commit: has a control character" \
  history add "$SCRATCH/commits/c5" --commit $'c99\nx' --db "$db"
expect_history_refused "--branch: has a '|'" \
  history add "$SCRATCH/commits/c5" --commit c99 --branch 'a|b' --db "$db"
expect_history_refused "--machine: has a control character" \
  history add "$SCRATCH/commits/c5" --commit c99 --machine $'ci\e[31m' --db "$db"
expect_history_refused "--commit-time: not an ISO 8601 time (2026-12-06T04:53:12Z)" \
  history add "$SCRATCH/commits/c5" --commit c99 --commit-time yesterday --db "$db"
expect_history_refused "--db: expected a SQLite file or a postgresql:// URI (got '')" \
  history add "$SCRATCH/commits/c5" --commit c99 --db ""
for alpha in 0 1 2 nan; do
  expect_history_refused "--alpha: expected a level in (0, 1) (got $alpha)" \
    history check --db "$db" --alpha "$alpha"
done
expect_history_refused "--metric 'iteration p5O': the history holds no such metric; did you mean 'iteration p50'?" \
  history check --db "$db" --metric "iteration p5O"
# An escape sequence or a NUL in a value reaches the terminal as text.
expect_history_refused 'nothing\x1b[2J: no such folder' \
  history add "$SCRATCH/nothing"$'\e[2J' --commit c99 --db "$db"
dump_db "$db" > "$SCRATCH/after.sql"
cmp -s "$SCRATCH/before.sql" "$SCRATCH/after.sql" || fail "a refused command changed the database"

# --replace swaps a commit's values and keeps its place.
make_results "$SCRATCH/replacement" 2
"$HARNESS" history add "$SCRATCH/replacement" --commit c05 --db "$db" --replace > /dev/null
"$PY" - "$db" <<'PY' || fail "--replace"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
order = [sha for (sha,) in db.execute("SELECT sha FROM commits ORDER BY position")]
assert order[4] == "c05" and len(order) == 34, order
(results,) = db.execute("SELECT a.results FROM additions a JOIN commits c ON a.commit_id = c.id "
                        "WHERE c.sha = 'c05'").fetchone()
assert results.endswith("replacement"), results
PY

# Corrupt files and other schemas are refused, and left as they were.
head -c 4096 /dev/urandom > "$SCRATCH/corrupt.sqlite"
cp "$SCRATCH/corrupt.sqlite" "$SCRATCH/corrupt.copy"
expect_history_refused "file is not a database" \
  history add "$SCRATCH/commits/c5" --commit c05 --db "$SCRATCH/corrupt.sqlite"
expect_history_refused "file is not a database" history check --db "$SCRATCH/corrupt.sqlite"
cmp -s "$SCRATCH/corrupt.sqlite" "$SCRATCH/corrupt.copy" || fail "a corrupt file was changed"
cp "$db" "$SCRATCH/v9.sqlite"
"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("UPDATE history_schema SET version = 9"); c.commit()' "$SCRATCH/v9.sqlite"
dump_db "$SCRATCH/v9.sqlite" > "$SCRATCH/v9.before"
expect_history_refused "a history of schema version 9; this harness reads versions 1 and 2" \
  history add "$SCRATCH/commits/c5" --commit c99 --db "$SCRATCH/v9.sqlite"
dump_db "$SCRATCH/v9.sqlite" > "$SCRATCH/v9.after"
cmp -s "$SCRATCH/v9.before" "$SCRATCH/v9.after" || fail "a history of another schema was changed"
# Another program's SQLite file: refused, and left byte for byte as it was (its journal mode too:
# the write-ahead log is turned on only once the file is known to be a history).
"$PY" -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE notes (t TEXT)"); c.commit()' "$SCRATCH/foreign.sqlite"
cp "$SCRATCH/foreign.sqlite" "$SCRATCH/foreign.copy"
expect_history_refused "holds tables (notes, ...) but no history_schema: not a history" \
  history add "$SCRATCH/commits/c5" --commit c05 --db "$SCRATCH/foreign.sqlite"
cmp -s "$SCRATCH/foreign.sqlite" "$SCRATCH/foreign.copy" || fail "a foreign SQLite file was changed"
[[ ! -e $SCRATCH/foreign.sqlite-wal ]] || fail "a foreign SQLite file was switched to WAL"
expect_history_refused "no such history" history check --db "$SCRATCH/none.sqlite"
[[ ! -e $SCRATCH/none.sqlite ]] || fail "check made a database"
# A control measured beside each commit: the machine 15% slower from c09 on, for the tested runs
# and the control alike. Judged alone it is a regression that is no code's; judged as the ratio to
# the control it is nothing.
for ((k = 1; k <= 16; k++)); do
  level=$(awk -v k="$k" 'BEGIN { printf "%.4f", (k >= 9 ? 1.15 : 1) }')
  make_results "$SCRATCH/control/t$k" "$(awk -v a="$(aa_factor "$k")" -v l="$level" 'BEGIN { printf "%.4f", a * l }')"
  make_results "$SCRATCH/control/c$k" "$level"
  for with in alone ratio; do
    control=()
    [[ $with == ratio ]] && control=(--control "$SCRATCH/control/c$k")
    out=$("$HARNESS" history add "$SCRATCH/control/t$k" --commit "$(printf 'k%02d' "$k")" \
      --db "$SCRATCH/$with.sqlite" ${control[@]+"${control[@]}"}) || fail "add of k$k ($with)"
  done
done
expect_contains "$out" "of its control"
set +e
"$HARNESS" history check --db "$SCRATCH/alone.sqlite" --since k05 > "$SCRATCH/alone.md"
alone=$?
"$HARNESS" history check --db "$SCRATCH/ratio.sqlite" --since k05 > "$SCRATCH/ratio.md"
ratio=$?
set -e
[[ $alone == 1 ]] || fail "the machine's step judged alone: exit $alone, want 1: $(cat "$SCRATCH/alone.md")"
[[ $ratio == 0 ]] || fail "the machine's step against the control: exit $ratio, want 0: $(cat "$SCRATCH/ratio.md")"
expect_contains "$(cat "$SCRATCH/ratio.md")" "series judged against their control"
# A control of another study is refused, and the history left as it was.
make_results "$SCRATCH/control/other" 1
sed -i 's/^name: ci_regression/name: another_study/' "$SCRATCH/control/other/spec.yaml"
dump_db "$SCRATCH/ratio.sqlite" > "$SCRATCH/ratio.before"
expect_history_refused "--control $SCRATCH/control/other: another study or machine than the results" \
  history add "$SCRATCH/control/t16" --commit k17 --db "$SCRATCH/ratio.sqlite" --control "$SCRATCH/control/other"
dump_db "$SCRATCH/ratio.sqlite" > "$SCRATCH/ratio.after"
cmp -s "$SCRATCH/ratio.before" "$SCRATCH/ratio.after" || fail "a refused control changed the history"
# The report's index says what check says of a history too short to judge.
add_history "$SCRATCH/short.sqlite" 1 3 99 0
"$HARNESS" history report --db "$SCRATCH/short.sqlite" --out "$SCRATCH/short-site" > /dev/null
expect_contains "$(cat "$SCRATCH/short-site/index.html")" "too short to say"
echo "history: ok"
