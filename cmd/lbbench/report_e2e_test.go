package main

// End-to-end tests of the reports: a real run of the built binary, its
// report opened in real headless Chromium, the report and publish
// commands, and the live progress line on a real pseudo-terminal.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/internal/browser"
	"github.com/lbbench/lbbench/internal/browser/browsertest"
	"github.com/lbbench/lbbench/results"
)

// evilName is a scenario name that would run script if it were not
// escaped.
const evilName = `<script>alert(1)</script>`

const reportScenario = `name: '` + evilName + `'
` + smallWorkers + `variants:
  - {name: rp, topology: reuseport}
  - {name: lc, topology: proxy, proxy: {policy: least_conn, upstream_keepalive: false}}
repeat: 3
validity: {max_send_lag_p99: 1s, max_rate_error: 0.5}
`

// runReportScenario runs reportScenario with the built binary and returns
// the output directory.
func runReportScenario(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	scen := filepath.Join(dir, "report.yaml")
	if err := os.WriteFile(scen, []byte(reportScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	cmd := binCmd(t, "run", scen, "-o", out)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "report:  "+filepath.Join(out, "report.html")) {
		t.Errorf("run does not say where the report is:\n%s", stdout.String())
	}
	waitNoProcs(t)
	return out
}

func fileURL(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return (&url.URL{Scheme: "file", Path: abs}).String()
}

// openClean opens path in Chromium and fails the test unless the page
// loaded nothing but itself, logged no problem and opened no dialog.
func openClean(t *testing.T, exe, path string, opts ...browser.Option) *browser.Page {
	t.Helper()
	// The browser lives as long as ctx: until the test's cleanup.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	u := fileURL(t, path)
	p, err := browser.Open(ctx, u, append([]browser.Option{browser.WithExecutable(exe)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if got := p.Requests(); !slices.Equal(got, []string{u}) {
		t.Errorf("requests %q, want only the page itself", got)
	}
	if c := p.ConsoleProblems(); len(c) > 0 {
		t.Errorf("console problems:\n%s", strings.Join(c, "\n"))
	}
	if d := p.Dialogs(); len(d) > 0 {
		t.Errorf("dialogs opened: %q", d)
	}
	return p
}

func eval[T any](t *testing.T, p *browser.Page, expr string) T {
	t.Helper()
	v, err := browser.Eval[T](context.Background(), p, expr)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// cutTables names each table whose box scrolls sideways (its table
// wider than the box), with the widths.
const cutTables = `Array.from(document.querySelectorAll(".scroll")).filter(e => e.scrollWidth > e.clientWidth + 1).map(e => {
	const t = e.querySelector("table");
	return (t && t.id || "table after " + (e.previousElementSibling ? e.previousElementSibling.textContent.slice(0, 40) : "?")) + ": " + e.scrollWidth + " px in " + e.clientWidth;
})`

// smallPlotText names each plot text drawn under 10 CSS px tall.
const smallPlotText = `Array.from(document.querySelectorAll("figure.plot svg text")).filter(e => {
	const r = e.getBoundingClientRect();
	return r.width > 0 && r.height < 10;
}).map(e => e.closest("figure").id + ": " + e.textContent + " " + e.getBoundingClientRect().height.toFixed(1) + " px")`

// overlappingTicks names each pair of tick labels of one axis whose drawn
// boxes overlap.
const overlappingTicks = `(() => {
	const out = [];
	for (const ax of document.querySelectorAll("figure.plot g.axis")) {
		const rows = {};
		for (const e of ax.querySelectorAll("text")) {
			const r = e.getBoundingClientRect();
			const k = e.getAttribute("y") + (e.getAttribute("text-anchor") === "end" && e.getAttribute("x") < 100 ? "y" : "x");
			(rows[k] = rows[k] || []).push({t: e.textContent, r});
		}
		for (const k in rows) {
			const r = rows[k].sort((a, b) => a.r.left - b.r.left);
			for (let i = 1; i < r.length; i++) {
				if (r[i].r.left < r[i-1].r.right - 0.5 && r[i].r.top < r[i-1].r.bottom && r[i-1].r.top < r[i].r.bottom) {
					out.push(ax.closest("figure").id + ": " + r[i-1].t + " / " + r[i].t);
				}
			}
		}
	}
	return out;
})()`

// firstDifference shows where a and b first differ, with some text of
// each around it.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	around := func(p []byte) string { return string(p[max(i-120, 0):min(i+120, len(p))]) }
	return fmt.Sprintf("at byte %d of %d and %d:\n  %q\n  %q", i, len(a), len(b), around(a), around(b))
}

func TestReportInChromium(t *testing.T) {
	exe := browsertest.Require(t)
	// It reads the page's structure, not the run's figures (the report
	// scenario's validity limits are loose), so it runs beside the other
	// behaviour tests.
	t.Parallel()
	out := runReportScenario(t)
	res, err := results.ReadFile(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Scenario.Name != evilName || len(res.Runs) != 6 {
		t.Fatalf("scenario %q with %d runs", res.Scenario.Name, len(res.Runs))
	}
	report := filepath.Join(out, "report.html")

	t.Run("desktop", func(t *testing.T) {
		p := openClean(t, exe, report, browser.WithViewport(1200, 900, 1, false))
		// One series per variant in the percentile plot, named after it,
		// each a line of several points.
		series := eval[[]string](t, p, `Array.from(document.querySelectorAll("#hdr-plot g.series")).map(g => g.dataset.variant)`)
		if !slices.Equal(series, []string{"rp", "lc"}) {
			t.Errorf("plot series %q, want [rp lc]", series)
		}
		points := eval[[]int](t, p, `Array.from(document.querySelectorAll("#hdr-plot g.series path.line")).map(l => (l.getAttribute("d").match(/L/g) || []).length)`)
		for i, n := range points {
			if n < 10 {
				t.Errorf("series %d has %d segments", i, n)
			}
		}
		// The hostile name is text, and no script exists in the page.
		if got := eval[string](t, p, `document.querySelector(".scenario-name").textContent`); got != evilName {
			t.Errorf("scenario name shows as %q", got)
		}
		if got := eval[string](t, p, `document.title`); got != "lbbench: "+evilName {
			t.Errorf("title %q", got)
		}
		if n := eval[int](t, p, `document.scripts.length`); n != 0 {
			t.Errorf("%d scripts in the page", n)
		}
		// The answer first: the comparison of lc with rp in one line,
		// above the verdicts' counts.
		answers := eval[[]string](t, p, `Array.from(document.querySelectorAll("header p.answer")).map(e => e.textContent)`)
		if len(answers) != 1 || !strings.HasPrefix(answers[0], "lc: p99 ") || !strings.Contains(answers[0], "× rp's [") {
			t.Errorf("answers %q, want one, lc's p99 against rp's", answers)
		}
		if !eval[bool](t, p, `(() => {
			const a = document.querySelector("header p.answer"), v = document.querySelector('header p.banner a[href="#verdicts"]');
			return !!(a && v && (a.compareDocumentPosition(v) & Node.DOCUMENT_POSITION_FOLLOWING));
		})()`) {
			t.Error("the answer is not above the verdicts' counts")
		}
		// Over time is drawn from the runs' interval histograms.
		if n := eval[int](t, p, `document.querySelectorAll("#p99-over-time g.series").length`); n != 2 {
			t.Errorf("p99 over time has %d series", n)
		}
		// The figures are tables too.
		rows := eval[[]string](t, p, `Array.from(document.querySelectorAll("#summary-table tbody tr td.name")).map(td => td.textContent.trim())`)
		if !slices.Equal(rows, []string{"rp", "lc"}) {
			t.Errorf("summary rows %q", rows)
		}
		shot, err := p.Screenshot(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 1200 || b.Dy() < 900 {
			t.Errorf("screenshot %v", b)
		}
		if dir := os.Getenv("LBBENCH_SCREENSHOT_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, "e2e-report.png"), shot, 0o644)
		}
		pdf, err := p.PDF(context.Background())
		if err != nil || !bytes.HasPrefix(pdf, []byte("%PDF")) {
			t.Errorf("print: %d bytes, %v", len(pdf), err)
		}
	})
	t.Run("desktop 1280", func(t *testing.T) {
		// At a laptop's 1280 px every table shows all its columns: no box
		// scrolls sideways, so no column is cut at its edge.
		p := openClean(t, exe, report, browser.WithViewport(1280, 900, 1, false))
		if w := eval[int](t, p, `document.documentElement.scrollWidth`); w > 1280 {
			t.Errorf("page is %d px wide in a 1280 px window", w)
		}
		cut := eval[[]string](t, p, cutTables)
		if len(cut) > 0 {
			t.Errorf("tables wider than their box at 1280 px (columns cut behind a scrollbar): %q", cut)
		}
		if n := eval[int](t, p, `document.querySelectorAll(".scroll table").length`); n < 4 {
			t.Errorf("%d tables checked, want the summary, runs, proxy and more", n)
		}
		shot, err := p.Screenshot(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		if img, err := png.Decode(bytes.NewReader(shot)); err != nil || img.Bounds().Dx() != 1280 {
			t.Errorf("screenshot at 1280 px: %v", err)
		}
		if dir := os.Getenv("LBBENCH_SCREENSHOT_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, "e2e-report-1280.png"), shot, 0o644)
		}
	})
	t.Run("phone", func(t *testing.T) {
		p := openClean(t, exe, report, browser.WithViewport(390, 844, 2, true))
		// Nothing makes the page wider than the phone: wide tables scroll
		// inside their own boxes, plots scale.
		if w := eval[int](t, p, `document.documentElement.scrollWidth`); w > 390 {
			t.Errorf("page is %d px wide on a 390 px phone", w)
		}
		if w := eval[float64](t, p, `document.querySelector("#hdr-plot svg").getBoundingClientRect().width`); w > 390 || w < 300 {
			t.Errorf("plot is %g px wide on a 390 px phone", w)
		}
		// Labels stay readable: as drawn, no plot's text is under 10 CSS
		// px, and no two tick labels of an axis overlap.
		if small := eval[[]string](t, p, smallPlotText); len(small) > 0 {
			t.Errorf("plot text under 10 px on a phone: %q", small)
		}
		if overlaps := eval[[]string](t, p, overlappingTicks); len(overlaps) > 0 {
			t.Errorf("tick labels overlap on a phone: %q", overlaps)
		}
		if dir := os.Getenv("LBBENCH_SCREENSHOT_DIR"); dir != "" {
			if shot, err := p.Screenshot(context.Background(), true); err == nil {
				os.WriteFile(filepath.Join(dir, "e2e-report-390.png"), shot, 0o644)
			}
		}
	})
	t.Run("report command", func(t *testing.T) {
		// lbbench report on the same results writes the same page.
		again := filepath.Join(t.TempDir(), "again")
		outb, err := binCmd(t, "report", out, "-o", again).CombinedOutput()
		if err != nil {
			t.Fatalf("report: %v\n%s", err, outb)
		}
		a, _ := os.ReadFile(report)
		b, _ := os.ReadFile(filepath.Join(again, "report.html"))
		if !bytes.Equal(a, b) {
			t.Errorf("lbbench report wrote a different page than lbbench run:\n%s", firstDifference(a, b))
		}
		for _, f := range []string{"summary.md", "summary.csv", "hgrm/rp.hgrm", "hgrm/lc.short.hgrm"} {
			if _, err := os.Stat(filepath.Join(again, f)); err != nil {
				t.Error(err)
			}
		}
		if logs, _ := filepath.Glob(filepath.Join(again, "hlog", "*.hlog")); len(logs) != 6 {
			t.Errorf("interval logs %q, want one per run", logs)
		}
		// Verdicts beside the results become a table and junit.xml.
		vs, _ := json.Marshal(compare.VerdictFile{Verdicts: []compare.Verdict{{Variant: "lc", Baseline: "rp", Metric: "p99", Outcome: compare.Fail, Ratio: 1.3}}})
		vpath := filepath.Join(t.TempDir(), "v.json")
		os.WriteFile(vpath, vs, 0o644)
		if outb, err := binCmd(t, "report", out, "-o", again, "--verdicts", vpath).CombinedOutput(); err != nil {
			t.Fatalf("report --verdicts: %v\n%s", err, outb)
		}
		p := openClean(t, exe, filepath.Join(again, "report.html"))
		if got := eval[string](t, p, `document.querySelector("#verdict-table td.v-fail").textContent`); got != "fail" {
			t.Errorf("verdict cell %q", got)
		}
		if _, err := os.Stat(filepath.Join(again, "junit.xml")); err != nil {
			t.Error(err)
		}
	})
	t.Run("publish", func(t *testing.T) {
		site := filepath.Join(t.TempDir(), "site")
		outb, err := binCmd(t, "publish", filepath.Dir(out), site).CombinedOutput()
		if err != nil {
			t.Fatalf("publish: %v\n%s", err, outb)
		}
		p := openClean(t, exe, filepath.Join(site, "index.html"))
		links := eval[[]string](t, p, `Array.from(document.querySelectorAll("#runs-index a")).map(a => a.getAttribute("href"))`)
		if len(links) == 0 || links[0] != "out/report.html" {
			t.Fatalf("index links %q", links)
		}
		if got := eval[string](t, p, `document.querySelector("#runs-index td.name a").textContent`); got != evilName {
			t.Errorf("index shows the scenario as %q", got)
		}
		for _, l := range links {
			if _, err := os.Stat(filepath.Join(site, l)); err != nil {
				t.Errorf("broken link %s: %v", l, err)
			}
		}
	})
}

func TestReportCommandErrors(t *testing.T) {
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"missing":         {[]string{"report", filepath.Join(dir, "nope")}, "no such file"},
		"bad unit ratio":  {[]string{"report", dir, "--unit-ratio", "-1"}, "--unit-ratio must be > 0"},
		"publish nothing": {[]string{"publish", dir, filepath.Join(dir, "site")}, "no results.json"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := binCmd(t, tc.args...)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 2 {
				t.Errorf("exit %d, want 2:\n%s", cmd.ProcessState.ExitCode(), out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
}

// openPTY returns a pseudo-terminal's two ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(s.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 40, Col: 160}); err != nil {
		t.Fatal(err)
	}
	return m, s
}

func TestRunLiveProgressOnTerminal(t *testing.T) {
	if testing.Short() {
		t.Skip("a 3-second run; skipped under -short")
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "live.yaml")
	live := strings.NewReplacer("duration: 1s", "duration: 3s", "repeat: 3", "repeat: 1",
		"  - {name: lc, topology: proxy, proxy: {policy: least_conn, upstream_keepalive: false}}\n", "",
		"'"+evilName+"'", "live").Replace(reportScenario)
	os.WriteFile(scen, []byte(live), 0o644)
	master, slave := openPTY(t)
	defer master.Close()
	cmd := binCmd(t, "run", scen, "-o", filepath.Join(dir, "out"))
	cmd.Stdout, cmd.Stderr = io.Discard, slave
	cmd.Env = append(os.Environ(), "TERM=xterm")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var screen bytes.Buffer
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(&screen, master)
		copied <- err
	}()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, screen.String())
	}
	select {
	case err := <-copied:
		// The master reads EIO once the last slave is closed.
		if err != nil && !errors.Is(err, syscall.EIO) {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("terminal output did not end")
	}
	out := screen.String()
	// Live lines are rewritten in place: return, erase line, new text,
	// with the rate and p99 of the last second while load is on.
	re := regexp.MustCompile(`\r\x1b\[2K\[1/1\] rp rep 1: \ds/3s measuring, \d+ req/s, p99 [0-9.]+(µs|ms|s) \| elapsed \d+s, about \d+s left`)
	if n := len(re.FindAllString(out, -1)); n < 2 {
		t.Errorf("%d live lines with rate and p99, want at least 2:\n%q", n, out)
	}
	// The run's result replaces the live line, in the plain format.
	if !regexp.MustCompile(`\r\x1b\[2K\[1/1\] rp rep 1: \d+ req/s, p99 `).MatchString(out) {
		t.Errorf("no result line after the live line:\n%q", out)
	}
	waitNoProcs(t)
}
