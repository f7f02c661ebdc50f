#!/usr/bin/env bash
# harness history report in a real browser: the static site of a history with a 12% step at c17
# opened from file:// in headless Chromium (Debian's chromium); the index lists both benchmarks
# with the step as their latest change, every chart of every page loads (each page marks
# data-charts="loaded/total" on its body once loaded), and screenshots of the index and a page are
# PNGs of the window's size. A second report replaces the first whole; a folder that is not a
# report is refused.
source "$(dirname "$0")/common.sh"
source "$(dirname "$0")/history_common.sh"
browser=$(command -v chromium || command -v chromium-browser || true)
[[ -n $browser ]] || fail "no chromium (scripts/install-deps.sh installs Debian's)"
db=$SCRATCH/history.sqlite
add_history "$db" 1 16 99 0
add_history "$db" 17 22 17 0.12
site=$SCRATCH/site
"$HARNESS" history report --db "$db" --out "$site" > "$SCRATCH/report.out" || fail "report: exit $?"
expect_contains "$(cat "$SCRATCH/report.out")" "charts of 22 commits"

# A profile of its own, no network, no sandbox (root in CI has none to give it).
open_page() {  # file, then chromium's own options
  local file=$1
  shift
  timeout 60 "$browser" --headless --no-sandbox --disable-gpu --no-first-run \
    --user-data-dir="$SCRATCH/chromium-profile" --proxy-server=127.0.0.1:9 \
    --virtual-time-budget=5000 "$@" "file://$file" 2> "$SCRATCH/chromium.err"
}
open_page "$site/index.html" --dump-dom > "$SCRATCH/index.dom" ||
  fail "chromium: $(tail -3 "$SCRATCH/chromium.err")"
"$PY" - "$SCRATCH/index.dom" "$site" <<'PY' || fail "the index as Chromium read it"
import html.parser, os, sys
class Rows(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.rows, self.cell, self.links, self.body = [], None, [], {}
    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "body": self.body = attrs
        if tag == "tr" and attrs.get("class") == "benchmark": self.rows.append([])
        if tag == "td" and self.rows: self.cell = ""
        if tag == "a" and self.rows and "href" in attrs: self.links.append(attrs["href"])
    def handle_data(self, data):
        if self.cell is not None: self.cell += data
    def handle_endtag(self, tag):
        if tag == "td" and self.cell is not None:
            self.rows[-1].append(self.cell.strip()); self.cell = None
page = Rows()
page.feed(open(sys.argv[1]).read())
names = sorted(r[0] for r in page.rows)
assert names == ["ci_regression / default / overlap", "ci_regression / default / sync"], names
for row in page.rows:
    assert "at c17" in row[3] and "+12." in row[3], row  # the latest change: the step
    assert row[4].startswith("worse since c17"), row
assert page.body.get("data-charts") == "0/0", page.body  # the index has no chart
for link in page.links:
    assert os.path.isfile(os.path.join(sys.argv[2], link)), link
open(os.path.join(os.path.dirname(sys.argv[1]), "pages.txt"), "w").write("".join(l + "\n" for l in page.links))
PY
pages=0
while read -r page; do
  open_page "$site/$page" --dump-dom > "$SCRATCH/page.dom" || fail "chromium on $page"
  loaded=$(grep -o 'data-charts="[0-9]*/[0-9]*"' "$SCRATCH/page.dom" | head -1)
  [[ $loaded =~ data-charts=\"([0-9]+)/([0-9]+)\" ]] || fail "$page: no data-charts mark"
  # A chart per metric: four phases' p50, p90, p99 and mean, and the reference run's two exact
  # counters (all-reduces and their wire bytes; it has no flops.json or memory files).
  ((BASH_REMATCH[2] == 18 && BASH_REMATCH[1] == 18)) ||
    fail "$page: $loaded, want 18/18 (every chart of the 18 metrics loaded)"
  pages=$((pages + 1))
done < "$SCRATCH/pages.txt"
((pages == 2)) || fail "$pages benchmark pages, want 2"
first=$(head -1 "$SCRATCH/pages.txt")
for shot in index.html "$first"; do
  open_page "$site/$shot" --screenshot="$SCRATCH/shot.png" --window-size=1100,900 > /dev/null ||
    fail "screenshot of $shot"
  "$PY" - "$SCRATCH/shot.png" <<'PY' || fail "screenshot of $shot"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
width, height = struct.unpack(">II", data[16:24])
assert (width, height) == (1100, 900), (width, height)
PY
done

# The charts: standalone SVG, each with its runs, its change point where it has one.
chart=$(ls "$site"/charts/ci-regression-default-overlap-*-iteration-p50-*-e0.svg)
[[ $(grep -c '<circle class="run"' "$chart") == 22 ]] || fail "$chart: not 22 runs"
[[ $(grep -c '<line class="change"' "$chart") == 1 ]] || fail "$chart: not one change point"

# Written again: replaced whole. A folder that is not a report: refused, untouched.
touch "$site/stale-file"
"$HARNESS" history report --db "$db" --out "$site" > /dev/null || fail "second report"
[[ ! -e $site/stale-file ]] || fail "the second report kept the first's files"
mkdir -p "$SCRATCH/mine" && echo keep > "$SCRATCH/mine/notes.txt"
expect_history_refused "is not a report of harness history" \
  history report --db "$db" --out "$SCRATCH/mine"
[[ $(cat "$SCRATCH/mine/notes.txt") == keep ]] || fail "a refused report touched the folder"
echo "history report in chromium: ok"
