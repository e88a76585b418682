package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lbbench/lbbench/compare"
	"golang.org/x/net/html"
)

func TestPublish(t *testing.T) {
	root := t.TempDir()
	write := func(dir string, shift time.Duration, mutate func(map[string]any)) {
		t.Helper()
		r := richResults(t)
		r.Started = r.Started.Add(shift)
		path := filepath.Join(root, dir, ResultsFileName)
		if err := r.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			var m map[string]any
			data, _ := os.ReadFile(path)
			json.Unmarshal(data, &m)
			mutate(m)
			data, _ = json.Marshal(m)
			os.WriteFile(path, data, 0o644)
		}
	}
	write("older", 0, nil)
	write("nested/newer", time.Hour, nil)
	vs, _ := json.Marshal(compare.VerdictFile{Verdicts: testVerdicts()})
	os.WriteFile(filepath.Join(root, "nested/newer", compare.VerdictsFileName), vs, 0o644)
	write("future", 2*time.Hour, func(m map[string]any) { m["schema"] = 99 })
	write(".hidden", 3*time.Hour, nil)
	site := filepath.Join(root, "site")
	// A site inside the results directory is not published into itself.
	write("site/stale", 4*time.Hour, nil)

	s, err := Publish(root, site, newTestDoc)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Entries) != 2 || s.Entries[0].Dir != "nested-newer" || s.Entries[1].Dir != "older" {
		t.Fatalf("entries %+v", s.Entries)
	}
	if len(s.Skipped) != 1 || !strings.Contains(s.Skipped[0], "schema 99") {
		t.Errorf("skipped %v", s.Skipped)
	}
	if e := s.Entries[0]; e.Fail != 1 || e.Pass != 1 || e.Inconclusive != 1 || e.Commit != "0123456789abcdef" || e.Runs != 4 || e.Valid != 3 {
		t.Errorf("newest entry %+v", e)
	}
	for _, f := range []string{"index.html", "index.json", "older/report.html", "older/results.json", "older/summary.md",
		"nested-newer/report.html", "nested-newer/junit.xml", "nested-newer/verdicts.json"} {
		if _, err := os.Stat(filepath.Join(site, f)); err != nil {
			t.Error(err)
		}
	}
	// Every link of the index resolves to a file of the site.
	f, err := os.Open(filepath.Join(site, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	walk(doc, func(n *html.Node) {
		if href, ok := attr(n, "href"); ok && n.Data == "a" {
			links++
			if strings.Contains(href, "://") || strings.HasPrefix(href, "/") {
				t.Errorf("link %q is not relative", href)
			}
			if _, err := os.Stat(filepath.Join(site, filepath.FromSlash(href))); err != nil {
				t.Errorf("link %q: %v", href, err)
			}
		}
	})
	if links != 1+2*4 {
		t.Errorf("%d links in the index, want index.json + 4 per run", links)
	}
	var idx Site
	data, _ := os.ReadFile(filepath.Join(site, "index.json"))
	if err := json.Unmarshal(data, &idx); err != nil || len(idx.Entries) != 2 {
		t.Errorf("index.json: %v, %d entries", err, len(idx.Entries))
	}

	if _, err := Publish(t.TempDir(), site, newTestDoc); err == nil || !strings.Contains(err.Error(), "no results.json") {
		t.Errorf("empty results directory: %v", err)
	}
}
