package driver

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/harness"
	"github.com/lbbench/lbbench/results"
)

// TestEngineReportRoundTrip: what engine-stats prints decodes into the
// engine's CPU and, for HAProxy, its counters; a report without rows
// leaves the counters alone (nginx's come from stub_status).
func TestEngineReportRoundTrip(t *testing.T) {
	b, err := json.Marshal(EngineReport{CPU: 1500 * time.Millisecond, HAProxy: []engines.HAProxyRow{
		{Proxy: "proxy", Name: "FRONTEND", Sessions: 7, Requests: 40},
		{Proxy: "workers", Name: "w0", Sessions: 20},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var st harness.Stats
	if err := DecodeEngineReport(engines.HAProxy, b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.CPU) != 1 || st.CPU[0].Time != 1500*time.Millisecond || st.CPU[0].Role != results.RoleProxy || st.CPU[0].Name != engines.HAProxy {
		t.Errorf("CPU %+v", st.CPU)
	}
	if st.Engine == nil || len(st.Engine.HAProxy) != 2 || st.Engine.HAProxy[0].Requests != 40 {
		t.Errorf("counters %+v", st.Engine)
	}
	var nginx harness.Stats
	if err := DecodeEngineReport(engines.Nginx, []byte(`{"cpu_ns": 2000000}`), &nginx); err != nil || nginx.Engine != nil || len(nginx.CPU) != 1 {
		t.Errorf("nginx: %v, %+v", err, nginx)
	}
	if err := DecodeEngineReport(engines.Nginx, []byte(`not json`), &nginx); err == nil {
		t.Error("a broken answer decoded")
	}
	if got := EngineStatsArgs("/work/haproxy.sock"); len(got) != 3 || got[0] != EngineStatsSubcommand {
		t.Errorf("args %v", got)
	}
}
