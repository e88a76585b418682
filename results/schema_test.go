package results_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/job"
	"github.com/lbbench/lbbench/loadgen"
	"github.com/lbbench/lbbench/model"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/scenarios"
	"github.com/lbbench/lbbench/targets/worker"
	"github.com/lbbench/lbbench/topologies"
	"github.com/lbbench/lbbench/workloads"
)

// schemaPath is the JSON Schema of results.json, relative to this package.
const schemaPath = "../docs/results.schema.json"

// schemas compiles the schema of a results file and of a measurement file
// (its $defs/measurement), asserting formats (date-time) and content
// (base64) as well as structure.
func schemas(t *testing.T) (res, meas *jsonschema.Schema) {
	t.Helper()
	path, err := filepath.Abs(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.AssertContent()
	if res, err = c.Compile(path); err != nil {
		t.Fatalf("compile %s: %v", schemaPath, err)
	}
	if meas, err = c.Compile(path + "#/$defs/measurement"); err != nil {
		t.Fatalf("compile %s#/$defs/measurement: %v", schemaPath, err)
	}
	return res, meas
}

// validateFile validates the JSON file at path against sch.
func validateFile(t *testing.T, sch *jsonschema.Schema, path string) error {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return validateBytes(t, sch, data)
}

func validateBytes(t *testing.T, sch *jsonschema.Schema, data []byte) error {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("decode instance: %v", err)
	}
	return sch.Validate(inst)
}

// schemaDoc returns the schema file decoded.
func schemaDoc(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", schemaPath, err)
	}
	return doc
}

// at returns the value at a JSON pointer (no escapes) in doc.
func at(t *testing.T, doc any, pointer string) any {
	t.Helper()
	v := doc
	if pointer == "" {
		return v
	}
	for _, tok := range strings.Split(strings.TrimPrefix(pointer, "/"), "/") {
		switch c := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = c[tok]; !ok {
				t.Fatalf("%s: no %q", pointer, tok)
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				t.Fatalf("%s: no index %q", pointer, tok)
			}
			v = c[i]
		default:
			t.Fatalf("%s: %q is inside a %T", pointer, tok, v)
		}
	}
	return v
}

// TestSchemaVersion ties the schema's `schema` const to SchemaVersion. A
// change to the format that removes a field or changes its meaning, unit
// or encoding must bump both: results.SchemaVersion, so that older
// lbbench refuses the new files, and the const in docs/results.schema.json,
// so that the schema of version N never describes a file of version N+1.
// Additive changes (a field, a value of an enum) keep both and only extend
// the schema.
func TestSchemaVersion(t *testing.T) {
	doc := schemaDoc(t)
	if got := at(t, doc, "/$defs/results/properties/schema/const"); got != float64(results.SchemaVersion) {
		t.Errorf("%s: schema const is %v, results.SchemaVersion is %d: bump both together", schemaPath, got, results.SchemaVersion)
	}
	if title, want := at(t, doc, "/title").(string), "schema "+strconv.Itoa(results.SchemaVersion); !strings.HasSuffix(title, want) {
		t.Errorf("%s: title %q does not end in %q", schemaPath, title, want)
	}
}

// TestSchemaEnums keeps the schema's closed sets equal to the Go lists they
// come from, so that a new arrival kind, distribution, topology or accept
// strategy cannot be written before the schema knows it.
func TestSchemaEnums(t *testing.T) {
	doc := schemaDoc(t)
	for _, c := range []struct {
		pointer string
		want    []string
	}{
		{"/$defs/arrival/properties/kind/enum", workloads.ArrivalKinds},
		{"/$defs/service/properties/dist/enum", workloads.Dists},
		{"/$defs/variant/properties/topology/enum", topologies.Names()},
		{"/$defs/variant/properties/accept/enum", worker.AcceptStrategies()},
		{"/$defs/proxySpec/properties/engine/enum", []string{"", scenario.Builtin, scenario.Nginx, scenario.HAProxy}},
		{"/$defs/workers/properties/mode/enum", []string{worker.ModeSleep, worker.ModeSpin}},
		{"/$defs/env/properties/driver/enum", []string{"local", "docker", "kubernetes", model.Driver}},
	} {
		t.Run(c.pointer, func(t *testing.T) {
			var got []string
			for _, v := range at(t, doc, c.pointer).([]any) {
				got = append(got, v.(string))
			}
			want := slices.Clone(c.want)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("schema has %q, Go has %q", got, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// hist returns a histogram holding ds.
func hist(ds ...time.Duration) *results.Histogram {
	h := results.NewHistogram()
	for _, d := range ds {
		h.RecordDuration(d)
	}
	return h
}

// fullScenario sets every field of a scenario somewhere: every
// distribution, every proxy option, a foreign target, named clients and a
// steps arrival with the other arrival fields too (the schema does not tie
// them to the kind; Validate does).
func fullScenario() scenario.Scenario {
	ms := time.Millisecond
	return scenario.Scenario{
		Name:        "full",
		Description: "every field of the results format set",
		Workers: scenario.Workers{
			Count: 4, Concurrency: 2, Mode: worker.ModeSpin, AcceptWhen: scenario.AcceptAlways,
			Slow:   []scenario.Slow{{Index: 1, Factor: 2.5}},
			Target: &scenario.Target{Exec: "gunicorn -b 127.0.0.1:{port} app:app", Probe: "/healthz", Dir: "app"},
		},
		Workload: workloads.Spec{
			Arrival: workloads.Arrival{
				Kind: workloads.Steps, RatePerSec: 100, Size: 10, Every: 100 * ms, From: 50, To: 150,
				Steps: []workloads.Step{{RatePerSec: 100, Duration: time.Second}, {RatePerSec: 200, Duration: time.Second}},
			},
			Duration: 2 * time.Second,
			Warmup:   -1,
			Classes: []workloads.Class{
				{Name: "fixed", Path: "/work", Method: "POST", Headers: map[string]string{"X-Class": "fixed"}, BodyBytes: 128,
					Weight: 1, Service: workloads.Service{Dist: workloads.Fixed, Value: 2 * ms}, CPU: true},
				{Name: "exp", Path: "/work", Weight: 1, Service: workloads.Service{Dist: workloads.Exp, Mean: 2 * ms}},
				{Name: "uniform", Path: "/work", Weight: 1, Service: workloads.Service{Dist: workloads.Uniform, Min: ms, Max: 3 * ms}},
				{Name: "lognormal", Path: "/work", Weight: 1, Service: workloads.Service{Dist: workloads.LogNormal, Median: 2 * ms, Sigma: 0.5}},
				{Name: "bimodal", Path: "/work", Weight: 1, Service: workloads.Service{Dist: workloads.Bimodal, Low: ms, High: 40 * ms, PHigh: 0.1}},
				{Name: "pareto", Path: "/work", Weight: 1, Service: workloads.Service{Dist: workloads.Pareto, Min: ms, Max: 100 * ms, Alpha: 1.5}},
			},
			Clients: workloads.Clients{
				Connections: 64, KeepAlive: ptr(true), RequestsPerConn: 5, Preopen: true, MaxInFlight: 500,
				Named: []workloads.NamedClient{{Name: "web", Share: 3, Connections: 4, Requests: 30}, {Name: "batch", Share: 1, Connections: 1}},
			},
			Timeout: 10 * time.Second,
			Seed:    7,
			// Not a valid combination (a workload is closed or bursts): the
			// fixture sets every field the format can hold.
			Closed: &workloads.Closed{Order: workloads.Sequential, Think: ms, Pattern: []string{"fixed", "exp"}, PatternOver: workloads.WholeSequence},
			Bursts: &workloads.Bursts{Size: 16, Count: 2, Gap: 10 * ms},
		},
		Variants: []scenario.Variant{
			{Name: "reuseport", Topology: scenario.ReusePort, Target: &scenario.Target{Exec: "uvicorn --fd {fd} app:asgi"}},
			{Name: "pools", Topology: scenario.L7Pools, Build: "baseline", ProxyCost: 40 * time.Microsecond, WorkerCost: 20 * time.Microsecond,
				Proxy: scenario.ProxySpec{Engine: scenario.Builtin, Policy: "least_conn", UpstreamKeepAlive: ptr(true),
					PolicyArgs: map[string]string{"alpha": "0.5"}, CloseAfter: 100, MaxIdle: 8, Preopen: 4, Retries: 1, Threads: 2,
					Pools: []scenario.Pool{{Name: "read", Prefix: "/", Policy: "p2c", PolicyArgs: map[string]string{"d": "2"}, Workers: []int{0, 1}}}},
				Clients: &workloads.Clients{Connections: 32, KeepAlive: ptr(false)}},
			{Name: "shared", Topology: scenario.Shared, Accept: worker.AcceptEpollExclusive, MaxConns: 1, AcceptWhen: scenario.AcceptIdle, ServiceScale: 1.2},
			{Name: "nginx", Topology: scenario.Proxy, Proxy: scenario.ProxySpec{Engine: scenario.Nginx, Policy: "least_conn", UpstreamKeepAlive: ptr(false)}},
		},
		Repeat:   1,
		Validity: scenario.Validity{MaxRateError: 0.05, MaxSendLagP99: 5 * ms, MaxSteal: 0.05, AllowConcurrent: true},
		Claims:   []scenario.Claim{{Say: "pools beat reuseport", Check: "p99(pools) < 0.8 * p99(reuseport)"}},
		Verdicts: []string{"p99", "cpu_per_request(proxy)"},
	}
}

// fullMeasurement records what one generator could have recorded in a run
// of s: every optional part present.
func fullMeasurement(t *testing.T, s scenario.Scenario) results.Measurement {
	t.Helper()
	ms := time.Millisecond
	m := results.Measurement{
		Duration: 2 * time.Second, Requests: 400, Errors: 3,
		ErrorKinds:     map[string]uint64{"502": 2, "timeout": 1},
		WarmupRequests: 50, Unmapped: 1,
		Latency:      hist(ms, 2*ms, 3*ms, 40*ms),
		Uncorrected:  hist(ms, 2*ms, 2*ms, 39*ms),
		SendLag:      hist(10*time.Microsecond, 50*time.Microsecond),
		ErrorLatency: hist(10 * time.Second),
		Wait:         hist(100*time.Microsecond, 3*ms),
		ConnWait:     hist(0, 2*ms),
		ByWorker:     map[int]uint64{0: 130, 1: 90, 2: 100, 3: 80},
		IntendedRate: 200, AchievedRate: 199.5,
		Generator: results.Generator{CPU: 120 * ms, MaxRSS: 30 << 20, Processes: 2, Streams: 2,
			Connections: 64, Opened: 70, KeepAlive: true, RequestsPerConn: 5, Preopen: true,
			MaxInFlight: 1088, PeakInFlight: 70, Held: 3, Unsent: 2, CPUs: 2, Steal: 30 * time.Millisecond},
		Closed: true,
		Bursts: &results.Bursts{Size: 4, Workers: 2, Loads: [][]int{{3, 1}, {2, 1}}, Unattributed: []int{0, 1}, Late: []int{1, 0}},
	}
	for _, c := range s.Workload.Classes {
		m.Classes = append(m.Classes, results.Class{Name: c.Name, Requests: 66, Errors: 1, Latency: hist(ms, 5*ms), Wait: hist(200 * time.Microsecond)})
	}
	for _, c := range s.Workload.Clients.Named {
		m.Clients = append(m.Clients, results.Client{Name: c.Name, Share: c.Share, Requests: 200, Errors: 1, Latency: hist(2 * ms)})
	}
	var start time.Duration
	for _, st := range s.Workload.Arrival.Steps {
		m.Steps = append(m.Steps, results.Step{RatePerSec: float64(st.RatePerSec), Start: start, Duration: st.Duration,
			Requests: 100, Errors: 1, Latency: hist(ms, 3*ms)})
		start += st.Duration
	}
	for i := range 2 {
		iv, err := results.EncodeInterval(time.Duration(i)*time.Second, results.IntervalLength, hist(ms, 4*ms), 200, 1)
		if err != nil {
			t.Fatal(err)
		}
		m.Intervals = append(m.Intervals, iv)
	}
	m.Summarize()
	return m
}

// fullResults builds results with every optional part populated: a proxy
// run with the built-in proxy's and nginx's counters, an invalid run with
// HAProxy's, the docker driver's environment, and Simulated.
func fullResults(t *testing.T) *results.Results {
	t.Helper()
	s := fullScenario()
	zone := time.FixedZone("CET", 3600)
	started := time.Date(2026, 1, 2, 3, 4, 5, 123456789, zone)
	m := fullMeasurement(t, s)
	run := func(id, variant string) results.Run {
		return results.Run{
			ID: id, Variant: variant, Rep: 1, Seed: 7, Started: started.Add(time.Second),
			Entry:   "http://127.0.0.1:8080",
			BringUp: 300 * time.Millisecond, TearDown: 200 * time.Millisecond, Saturated: "the target could not keep up",
			CPU:         []results.ProcessCPU{{Role: results.RoleWorkers, Name: "worker 0", Worker: 0, Time: 300 * time.Millisecond}, {Role: results.RoleProxy, Name: "nginx", Worker: -1, Time: time.Second}},
			Measurement: m,
			Summary:     m.Latency.Summarize(),
			Workers: []results.Worker{
				{Index: 0, Responses: 130, Requests: 140, Connections: 9, MaxQueue: 3},
				{Index: 1, Responses: 90, Requests: 95, Connections: 8, MaxQueue: 2},
			},
		}
	}
	proxied := run("001-pools-r1", "pools")
	proxied.Valid = true
	proxied.Proxy = &results.ProxyStats{
		Policy: "least_conn", Mode: "l7", Decisions: 460, ClientConns: 64, UpstreamConns: 8, Unsolicited: 1, Retries: 2, NoBackend: 1,
		Backends: []results.BackendStats{{Addr: "127.0.0.1:8081", Pool: "read", Requests: 230, Errors: 1, Active: 1,
			PeakActive: 4, UpstreamConns: 4, IdleConns: 3, DownMarks: 1, Down: true}},
		Pools: []results.PoolStats{{Name: "read", Prefix: "/", Policy: "p2c", Requests: 460, Decisions: 461, NoBackend: 1}},
	}
	proxied.Engine = &results.EngineStats{Engine: "nginx", Nginx: &results.NginxStatus{
		Active: 65, Accepts: 70, Handled: 70, Requests: 460, Reading: 1, Writing: 2, Waiting: 62}}
	proxied.Pods = []results.Pod{{Name: "lbbench-d4e5f6-001-server", Containers: []string{"workers-0", "proxy-1"}, Role: "server",
		Node: "node1", IP: "10.244.1.7", CPURequest: "2", CPULimit: "2", MemoryLimit: "1Gi", QOS: "Guaranteed"}}
	proxied.Server = &results.Server{CPUs: 15, Steal: 40 * time.Millisecond}
	invalid := run("002-nginx-r1", "nginx")
	invalid.Concurrent = []string{"pid 4242, scenario default, since 03:04:00"}
	invalid.Invalid = []string{"failed: proxy (pid 4242) died (signal: killed)", "achieved rate 150.0/s is 25% below the intended 200.0/s"}
	invalid.Failed = []results.Failure{{Process: "proxy (pid 4242)", Exit: "signal: killed", LogTail: []string{"nginx: started"}},
		{Process: "workers: worker 1 (pid 4243)", Exit: "stopped answering: no stats within 2s; it is stopped (SIGSTOP or a debugger)", Alive: true}}
	invalid.Engine = &results.EngineStats{Engine: "haproxy", HAProxy: []results.HAProxyRow{
		{Proxy: "workers", Name: "w0", Status: "UP", Sessions: 230, MaxSessions: 4, Selected: 230, Requests: 230,
			Connects: 8, Reuses: 222, Responses2xx: 229, Responses5xx: 1, ConnErrors: 1, RespErrors: 1},
		{Proxy: "workers", Name: "BACKEND", Sessions: 460, MaxSessions: 8},
	}}
	return &results.Results{
		Schema:   results.SchemaVersion,
		Scenario: s,
		Env: results.Env{
			Hostname: "bench-1", Kernel: "6.1.0-13-amd64", OS: "linux", Arch: "amd64",
			CPUModel: "AMD EPYC 7B13", CPUs: 16, GoVersion: "go1.26.8", Version: "v0.9.0", Commit: "f16f117",
			Driver: "docker", Pinning: "docker cpusets: generator cpu 0; server containers cpus 1-15",
			Engines: map[string]string{"nginx": "nginx version: nginx/1.22.1", "haproxy": "HAProxy version 2.6.12"},
			Containers: &results.ContainerEnv{
				Engine: "27.3.1", API: "1.47", Session: "a1b2c3", Image: "lbbench:0123abcd",
				Network: "internal bridge, one per run", Generator: "a container on the run's network",
				Placement: []results.ContainerPlacement{{Role: "generator", Cpuset: "0"}, {Role: "server", CPULimit: 7.5}},
			},
			Kubernetes: &results.KubernetesEnv{
				Server: "https://127.0.0.1:16443", Version: "v1.37.2", Namespace: "default", Session: "d4e5f6",
				Image: "lbbench.local/lbbench:0123abcd", Generators: 2,
				Placement: "server pod on node1; generator pods on nodes other than the server's",
			},
		},
		Simulated: true,
		Started:   started,
		Finished:  started.Add(time.Minute),
		Complete:  true,
		Error:     "run 3 of 3: context canceled",
		Order:     []string{"001-pools-r1", "002-nginx-r1", "003-reuseport-r1"},
		Stop: &results.Stop{Rounds: 1, MaxRounds: 4, Looks: 2, Decided: true, Reason: "decided", Undecided: []string{"claim p99(pools) < 0.5 * p99(nginx)"},
			Judging: &results.Judging{Metrics: []string{"p99"}, Tolerances: map[string]float64{"p99": 0.1}, Alpha: 0.05, Claims: []string{"p99(pools) < 0.5 * p99(nginx)"}, ClaimsAlpha: 0.05, OneFamily: true}},
		Alpha: 0.05 / 7,
		Suite: &results.Suite{Dir: "scenarios/claims", Level: 0.05, Parts: 7, Share: true, ClaimsAlone: true},
		Runs:  []results.Run{proxied, invalid},
	}
}

// checkEveryFieldSet fails for each field of a struct type reachable from v
// that is zero (or an empty slice or map) wherever that type occurs: a
// field added to the format must be set in the fixture, so that the schema
// is checked against it. Histograms and times are leaves.
func checkEveryFieldSet(t *testing.T, v any) {
	t.Helper()
	set := map[reflect.Type][]bool{}
	leaf := map[reflect.Type]bool{reflect.TypeFor[time.Time](): true, reflect.TypeFor[results.Histogram](): true}
	var walk func(reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for it := v.MapRange(); it.Next(); {
				walk(it.Value())
			}
		case reflect.Struct:
			typ := v.Type()
			if leaf[typ] {
				return
			}
			if set[typ] == nil {
				set[typ] = make([]bool, typ.NumField())
			}
			for i := range typ.NumField() {
				if f := typ.Field(i); !f.IsExported() || f.Tag.Get("json") == "-" {
					continue
				}
				fv := v.Field(i)
				nonZero := !fv.IsZero()
				if k := fv.Kind(); k == reflect.Slice || k == reflect.Map {
					nonZero = fv.Len() > 0
				}
				set[typ][i] = set[typ][i] || nonZero
				walk(fv)
			}
		}
	}
	walk(reflect.ValueOf(v))
	for typ, fields := range set {
		for i, ok := range fields {
			if f := typ.Field(i); !ok && f.IsExported() && f.Tag.Get("json") != "-" {
				t.Errorf("the fixture never sets %s.%s: set it, so that the schema is tested against it", typ, f.Name)
			}
		}
	}
}

// TestSchemaFullResults writes results with every field set, reads the file
// back and validates it, and each run's measurement as `lbbench attack -o`
// writes it.
func TestSchemaFullResults(t *testing.T) {
	resSchema, measSchema := schemas(t)
	res := fullResults(t)
	checkEveryFieldSet(t, res)

	dir := t.TempDir()
	path := filepath.Join(dir, "results.json")
	if err := res.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := results.ReadFile(path); err != nil {
		t.Fatalf("read back: %v", err)
	}
	if err := validateFile(t, resSchema, path); err != nil {
		t.Fatalf("%s does not match %s:\n%v", path, schemaPath, err)
	}

	for _, run := range res.Runs {
		mpath := filepath.Join(dir, run.ID+".json")
		if err := run.Measurement.WriteFile(mpath); err != nil {
			t.Fatal(err)
		}
		if _, err := results.ReadMeasurement(mpath); err != nil {
			t.Fatalf("read back: %v", err)
		}
		if err := validateFile(t, measSchema, mpath); err != nil {
			t.Errorf("%s does not match %s#/$defs/measurement:\n%v", mpath, schemaPath, err)
		}
	}
}

// TestSchemaSimulated validates what `lbbench model` writes for every
// embedded scenario, shortened; a scenario the model cannot simulate is
// written as harness.Run writes one that failed before its first run.
func TestSchemaSimulated(t *testing.T) {
	resSchema, _ := schemas(t)
	for _, name := range scenarios.Names() {
		t.Run(name, func(t *testing.T) {
			data, err := scenarios.Get(name)
			if err != nil {
				t.Fatal(err)
			}
			s, err := scenario.Parse(name+".yaml", data, topologies.Catalog())
			if err != nil {
				t.Fatal(err)
			}
			s = shortened(s)
			var res *results.Results
			if err := model.Simulable(s); errors.Is(err, model.ErrUnsupported) {
				res = &results.Results{Schema: results.SchemaVersion, Scenario: s,
					Env: results.CaptureEnv("local", "", ""), Started: time.Now(), Finished: time.Now(), Error: err.Error()}
			} else if res, err = harness.Run(context.Background(), s, job.Simulator{}, harness.WithVersion("test", "")); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "results.json")
			if err := res.WriteFile(path); err != nil {
				t.Fatal(err)
			}
			if err := validateFile(t, resSchema, path); err != nil {
				t.Fatalf("%s does not match %s:\n%v", path, schemaPath, err)
			}
		})
	}
}

// shortened returns s with one repetition of at most 300 ms per variant
// (and per step), warm-up included, for a quick simulation.
func shortened(s scenario.Scenario) scenario.Scenario {
	const most = 300 * time.Millisecond
	s.Repeat = 1
	w := &s.Workload
	w.Warmup = -1
	if len(w.Arrival.Steps) > 0 {
		w.Arrival.Steps = slices.Clone(w.Arrival.Steps)
		w.Duration = 0
		for i := range w.Arrival.Steps {
			w.Arrival.Steps[i].Duration = min(w.Arrival.Steps[i].Duration, most)
			w.Duration += w.Arrival.Steps[i].Duration
		}
	} else {
		w.Duration = min(w.Duration, most)
	}
	return s
}

// TestSchemaAttackMeasurement validates a measurement recorded for real,
// by harness.Attack against a server that plays three workers and fails
// one request in ten, and written as `lbbench attack -o` writes it.
func TestSchemaAttackMeasurement(t *testing.T) {
	_, measSchema := schemas(t)
	var n atomic.Uint64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("X-Worker", strconv.Itoa(int(i%3)))
		if i%10 == 0 {
			http.Error(w, "boom", http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	spec := workloads.Spec{
		Arrival:  workloads.Arrival{Kind: workloads.Constant, RatePerSec: 400},
		Duration: 300 * time.Millisecond,
		Warmup:   50 * time.Millisecond,
		Classes:  []workloads.Class{{Name: "a", Weight: 1}, {Name: "b", Weight: 1}},
		Clients:  workloads.Clients{Named: []workloads.NamedClient{{Name: "web", Share: 1}, {Name: "batch", Share: 1}}},
	}.WithDefaults()
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	m, err := loadgen.Attack(context.Background(), srv.URL, spec, loadgen.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Errors == 0 || len(m.ByWorker) == 0 || len(m.Clients) != 2 {
		t.Fatalf("the attack recorded %d errors, %d workers, %d clients: want all of them", m.Errors, len(m.ByWorker), len(m.Clients))
	}
	path := filepath.Join(t.TempDir(), "attack.json")
	if err := m.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	if err := validateFile(t, measSchema, path); err != nil {
		t.Fatalf("%s does not match %s#/$defs/measurement:\n%v", path, schemaPath, err)
	}
}

// TestSchemaTestdata validates every results file (a top-level "schema")
// and measurement file (top-level "send_lag" and "generator") kept under a
// testdata directory of the module, so that a golden file added later is
// checked too.
func TestSchemaTestdata(t *testing.T) {
	resSchema, measSchema := schemas(t)
	var found int
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if d.IsDir() || filepath.Ext(path) != ".json" || !slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "testdata") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil {
			return nil
		}
		sch, ref := resSchema, ""
		switch {
		case string(top["schema"]) == "1":
			// A version 1 file differs from version 2 only in having no
			// waits (docs/results.md): with its number raised it must be
			// a valid version 2 file.
			top["schema"] = json.RawMessage(strconv.Itoa(results.SchemaVersion))
			if data, err = json.Marshal(top); err != nil {
				return err
			}
		case top["schema"] != nil:
		case top["send_lag"] != nil && top["generator"] != nil:
			sch, ref = measSchema, "#/$defs/measurement"
		default:
			return nil
		}
		found++
		if err := validateBytes(t, sch, data); err != nil {
			t.Errorf("%s does not match %s%s:\n%v", path, schemaPath, ref, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Skip("no results or measurement file under any testdata directory")
	}
	t.Logf("validated %d files", found)
}

// leafLocations returns the instance locations of err's innermost causes,
// as JSON pointers.
func leafLocations(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	var out []string
	var walk func(*jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			loc := ""
			for _, tok := range e.InstanceLocation {
				loc += "/" + tok
			}
			out = append(out, loc)
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return out
}

// TestSchemaRejects proves the schema can fail: each case breaks a valid
// file in one place, which must be rejected there.
func TestSchemaRejects(t *testing.T) {
	resSchema, measSchema := schemas(t)
	res := fullResults(t)
	resData, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	measData, err := json.Marshal(res.Runs[0].Measurement)
	if err != nil {
		t.Fatal(err)
	}
	set := func(pointer string, v any) func(any) {
		return func(doc any) {
			i := strings.LastIndexByte(pointer, '/')
			switch c := at(t, doc, pointer[:i]).(type) {
			case map[string]any:
				c[pointer[i+1:]] = v
			case []any:
				k, _ := strconv.Atoi(pointer[i+1:])
				c[k] = v
			}
		}
	}
	rename := func(pointer, from, to string) func(any) {
		return func(doc any) {
			obj := doc.(map[string]any)
			if pointer != "" {
				obj = at(t, doc, pointer).(map[string]any)
			}
			if _, ok := obj[from]; !ok {
				t.Fatalf("%s has no %q", pointer, from)
			}
			obj[to] = obj[from]
			delete(obj, from)
		}
	}
	remove := func(pointer, name string) func(any) {
		return func(doc any) { delete(at(t, doc, pointer).(map[string]any), name) }
	}
	for _, c := range []struct {
		name   string
		meas   bool // break the measurement file rather than the results file
		mutate func(any)
		where  string // the JSON pointer the error must point at
	}{
		{name: "misspelt top-level field", mutate: rename("", "simulated", "simulate"), where: ""},
		{name: "misspelt field of the embedded measurement", mutate: rename("/runs/0", "error_kinds", "errorkinds"), where: "/runs/0/errorkinds"},
		{name: "misspelt proxy counter", mutate: rename("/runs/0/proxy", "client_conns", "client_connections"), where: "/runs/0/proxy"},
		{name: "misspelt engine counter", mutate: rename("/runs/1/engine/haproxy/0", "reuses", "reused"), where: "/runs/1/engine/haproxy/0"},
		{name: "misspelt scenario field", mutate: rename("/scenario/workload/clients", "requests_per_conn", "requests_per_connection"), where: "/scenario/workload/clients"},
		{name: "misspelt env field", mutate: rename("/env", "engines", "engine_versions"), where: "/env"},
		{name: "required field missing", mutate: remove("/runs/1", "summary"), where: "/runs/1"},
		{name: "count as a string", mutate: set("/runs/0/requests", "400"), where: "/runs/0/requests"},
		{name: "duration as a fraction", mutate: set("/runs/0/duration", 1.5), where: "/runs/0/duration"},
		{name: "negative count", mutate: set("/runs/0/classes/0/errors", -1), where: "/runs/0/classes/0/errors"},
		{name: "time not RFC 3339", mutate: set("/started", "2026-01-02 03:04:05"), where: "/started"},
		{name: "schema 3", mutate: set("/schema", 3), where: "/schema"},
		{name: "schema 1", mutate: set("/schema", 1), where: "/schema"},
		{name: "unknown driver", mutate: set("/env/driver", "nomad"), where: "/env/driver"},
		{name: "histogram not base64", mutate: set("/runs/0/latency", "not base64!"), where: "/runs/0/latency"},
		{name: "histogram base64 but not HdrHistogram", mutate: set("/runs/0/uncorrected", "SGVsbG8="), where: "/runs/0/uncorrected"},
		{name: "histogram as a number", mutate: set("/runs/0/clients/0/latency", 12), where: "/runs/0/clients/0/latency"},
		{name: "interval histogram null", mutate: set("/runs/0/intervals/0/latency", nil), where: "/runs/0/intervals/0/latency"},
		{name: "measurement: misspelt field", meas: true, mutate: rename("", "unmapped", "unmaped"), where: "/unmaped"},
		{name: "measurement: a run's field", meas: true, mutate: set("/valid", true), where: "/valid"},
		{name: "measurement: histogram not base64", meas: true, mutate: set("/send_lag", "HISTF%%%"), where: "/send_lag"},
		{name: "measurement: by_worker key not an integer", meas: true, mutate: set("/by_worker/w1", 3), where: "/by_worker"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sch, data := resSchema, resData
			if c.meas {
				sch, data = measSchema, measData
			}
			var doc any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if err := validateBytes(t, sch, data); err != nil {
				t.Fatalf("the unbroken file does not validate: %v", err)
			}
			c.mutate(doc)
			broken, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			err = validateBytes(t, sch, broken)
			if err == nil {
				t.Fatal("accepted")
			}
			t.Logf("rejected: %v", err)
			if locs := leafLocations(err); !slices.Contains(locs, c.where) {
				t.Errorf("rejected at %q, want %q:\n%v", locs, c.where, err)
			}
		})
	}
}
