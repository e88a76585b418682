package reports

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/lbbench/lbbench/compare"
	"github.com/lbbench/lbbench/results"
	"golang.org/x/net/html"
)

// parseHTML renders r and parses the page as a browser would.
func parseHTML(t *testing.T, vs []compare.Verdict) (*html.Node, string) {
	t.Helper()
	r := richResults(t)
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, r, vs)); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return doc, buf.String()
}

// walk calls f for every element.
func walk(n *html.Node, f func(*html.Node)) {
	if n.Type == html.ElementNode {
		f(n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

// byID finds the element with id.
func byID(doc *html.Node, id string) *html.Node {
	var found *html.Node
	walk(doc, func(n *html.Node) {
		if v, _ := attr(n, "id"); v == id && found == nil {
			found = n
		}
	})
	return found
}

func TestHTMLSelfContained(t *testing.T) {
	doc, page := parseHTML(t, testVerdicts())
	walk(doc, func(n *html.Node) {
		switch n.Data {
		case "script", "iframe", "object", "embed", "img", "link", "base", "form":
			if v, _ := attr(n, "href"); n.Data == "link" && v == "data:," {
				return // the empty favicon, so the browser asks for none
			}
			t.Errorf("element <%s> in a page that must load nothing", n.Data)
		}
		for _, a := range n.Attr {
			if strings.HasPrefix(a.Key, "on") {
				t.Errorf("<%s %s=...>: event handler", n.Data, a.Key)
			}
			if (a.Key == "href" || a.Key == "src" || a.Key == "xlink:href") && !strings.HasPrefix(a.Val, "#") && a.Val != "data:," {
				t.Errorf("<%s %s=%q>: a link out of the page", n.Data, a.Key, a.Val)
			}
		}
	})
	for _, s := range []string{"http://", "https://", "url(", "@import"} {
		if strings.Contains(page, s) {
			t.Errorf("page contains %q", s)
		}
	}
	if !strings.Contains(page, `http-equiv="Content-Security-Policy" content="default-src 'none';`) {
		t.Error("no content security policy forbidding loads")
	}
}

func TestHTMLSections(t *testing.T) {
	doc, _ := parseHTML(t, testVerdicts())
	r := richResults(t)
	// One series per variant in the percentile plot, in scenario order.
	var series []string
	walk(byID(doc, "hdr-plot"), func(n *html.Node) {
		if c, _ := attr(n, "class"); c == "series" {
			v, _ := attr(n, "data-variant")
			series = append(series, v)
		}
	})
	if len(series) != len(r.Scenario.Variants) || series[0] != "reuseport" || series[1] != "least_conn" {
		t.Errorf("percentile plot series %v", series)
	}
	for _, id := range []string{"summary-table", "percentile-table", "worker-table", "timeline-table", "p99-over-time",
		"rate-over-time", "runs-table", "invalid-runs", "proxy-table", "errors-table", "verdict-table", "scenario-doc",
		"class-plot-0", "worker-bars-0", "worker-bars-1"} {
		if byID(doc, id) == nil {
			t.Errorf("no #%s", id)
		}
	}
	// Every plotted figure is in a table too: the timeline table has a p99
	// and a rate row per variant, one column per interval.
	var cells int
	walk(byID(doc, "timeline-table"), func(n *html.Node) {
		if n.Data == "td" {
			cells++
		}
	})
	// per variant: name cell + 2 labels + 2×3 values
	if want := len(r.Scenario.Variants) * (1 + 2 + 2*3); cells != want {
		t.Errorf("timeline table has %d cells, want %d", cells, want)
	}
	// Without verdicts or intervals those sections are gone.
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, fakeResults(), nil)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{`id="verdict-table"`, `id="timeline-table"`, `id="proxy-table"`} {
		if strings.Contains(buf.String(), id) {
			t.Errorf("%s present without data", id)
		}
	}
	if !strings.Contains(buf.String(), "carry no interval histograms") {
		t.Error("no word on the missing intervals")
	}
}

func TestHTMLEscapes(t *testing.T) {
	r := richResults(t)
	const evil = `<script>alert(1)</script>`
	r.Scenario.Name = evil
	r.Scenario.Description = `<img src=x onerror=alert(2)>`
	r.Scenario.Variants[0].Name = `"><svg onload=alert(3)>`
	for i := range r.Runs {
		if r.Runs[i].Variant == "reuseport" {
			r.Runs[i].Variant = r.Scenario.Variants[0].Name
		}
	}
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, r, []compare.Verdict{{Variant: evil, Metric: "p99", Outcome: compare.Fail, Detail: evil}})); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{evil, "<img", "<svg onload"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	// The name is text: the heading reads exactly the scenario name.
	var text strings.Builder
	var collect func(*html.Node)
	collect = func(n *html.Node) {
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			collect(c)
		}
	}
	collect(byID(doc, "title"))
	if got := text.String(); got != "lbbench report: "+evil {
		t.Errorf("title reads %q", got)
	}
	walk(doc, func(n *html.Node) {
		if n.Data == "script" || n.Data == "img" {
			t.Errorf("<%s> element made it into the page", n.Data)
		}
	})
}

func TestHTMLDeterministic(t *testing.T) {
	r := richResults(t)
	var a, b bytes.Buffer
	if err := writeHTML(&a, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if err := writeHTML(&b, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("the same results rendered twice differ")
	}
}

func TestHTMLEmptyResults(t *testing.T) {
	// An interrupted scenario with no finished run still renders.
	r := fakeResults()
	r.Runs, r.Complete, r.Error = nil, false, "context canceled"
	r.Order = []string{"001-reuseport-r1"}
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Incomplete: 0 of 1 runs finished (context canceled)") {
		t.Error("no incomplete banner")
	}
}

func TestStylesDistinct(t *testing.T) {
	seen := map[[3]string]bool{}
	for i := range 24 {
		s := styleFor(i)
		k := [3]string{s.Color, s.Dash, s.Marker}
		if seen[k] {
			t.Errorf("variant %d looks like an earlier one: %v", i, k)
		}
		seen[k] = true
	}
}

func TestHTMLWarnsWhenNoRunIsValid(t *testing.T) {
	r := fakeResults()
	for i := range r.Runs {
		if r.Runs[i].Variant == "least_conn" {
			r.Runs[i].Valid, r.Runs[i].Invalid = false, []string{"send lag p99 9ms exceeds 5ms"}
		}
	}
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	banner := byID(doc, "no-valid")
	if banner == nil {
		t.Fatal("no banner when a variant has no valid run")
	}
	var names []string
	walk(banner, func(n *html.Node) {
		if n.Data == "b" {
			names = append(names, n.FirstChild.Data)
		}
	})
	if len(names) != 1 || names[0] != "least_conn" {
		t.Errorf("banner names %v, want [least_conn]", names)
	}
}

func TestHTMLShowsContainerEnvironment(t *testing.T) {
	r := fakeResults()
	r.Env.Driver = "docker"
	r.Env.Containers = &results.ContainerEnv{Engine: "20.10.24", API: "1.41", Image: "lbbench:0123456789abcdef", Session: "cafe0001",
		Network: "internal bridge network, one per run", Generator: "lbbench attack in a container"}
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Engine 20.10.24, API 1.41; image lbbench:0123456789abcdef; session cafe0001", "internal bridge network, one per run"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report does not show %q", want)
		}
	}
}

func TestHTMLShowsPodPlacement(t *testing.T) {
	r := fakeResults()
	r.Env.Driver = "kubernetes"
	r.Env.Kubernetes = &results.KubernetesEnv{Server: "https://127.0.0.1:16443", Version: "v1.37.2", Namespace: "default",
		Session: "d4e5f6a7", Image: "lbbench.local/lbbench:0123", Generators: 1, Placement: "server on node1; generators on node2"}
	if len(r.Runs) < 2 {
		t.Fatalf("fixture has %d runs, want at least 2", len(r.Runs))
	}
	for i := range r.Runs {
		r.Runs[i].Pods = []results.Pod{
			{Name: "s", Role: "server", Node: "node1", CPURequest: "2", CPULimit: "2", MemoryLimit: "1Gi", QOS: "Guaranteed"},
			{Name: "g", Role: "generator", Node: "node2", CPURequest: "1", CPULimit: "2", MemoryLimit: "1Gi", QOS: "Burstable"},
		}
	}
	r.Runs[1].Pods[1].Node = "node3"
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, r, nil)); err != nil {
		t.Fatal(err)
	}
	n := len(r.Runs)
	for _, want := range []string{
		"https://127.0.0.1:16443 (v1.37.2); namespace default; image lbbench.local/lbbench:0123; session d4e5f6a7",
		"server on node1; generators on node2",
		fmt.Sprintf("node1: 2 CPUs (request = limit), 1Gi, Guaranteed, %d pods", n),
		fmt.Sprintf("node2: CPU request 1, limit 2, 1Gi, Burstable, %d pods; node3: CPU request 1, limit 2, 1Gi, Burstable, 1 pod", n-1),
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("report does not show %q", want)
		}
	}
}

func TestHTMLEngineAndClients(t *testing.T) {
	var buf bytes.Buffer
	if err := writeHTML(&buf, docOf(t, withEngineAndClients(t), nil)); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	rows := func(id string) []string {
		var out []string
		walk(byID(doc, id), func(n *html.Node) {
			if n.Data == "tr" {
				var cells []string
				walk(n, func(c *html.Node) {
					if c.Data == "td" || c.Data == "th" {
						cells = append(cells, strings.TrimSpace(textContent(c)))
					}
				})
				out = append(out, strings.Join(cells, "|"))
			}
		})
		return out
	}
	eng := rows("engine-table")
	if len(eng) != 5 || eng[1] != "001-reuseport-r1|reuseport|haproxy|12|1000|1000|0|700 300" || eng[2] != "002-least_conn-r1|least_conn|nginx|9|1003|-|-|-" {
		t.Errorf("engine table rows %q", eng)
	}
	cl := rows("client-table")
	if len(cl) != 5 || !strings.Contains(cl[3], "least_conn|heavy|0.8|160|0|4.00ms") {
		t.Errorf("client table rows %q", cl)
	}
}

// textContent is the text under n, as a browser shows it.
func textContent(n *html.Node) string {
	if n.Type == html.TextNode {
		return n.Data
	}
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		b.WriteString(textContent(c))
	}
	return b.String()
}
