package workloads

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// classParam is the query parameter that tags each request with its class
// index, so a result can be attributed to its class from its URL alone. It is
// always the last parameter.
const classParam = "lbc="

// Targeter draws, for each request, a class by weight and a service time
// from the class's distribution, using a random source seeded from the spec.
// Classes are drawn at random rather than in a fixed rotation: a rotation
// such as one long request in every ten aliases with round robin and sends
// every long request to the same workers.
//
// Target is safe for concurrent use.
type Targeter struct {
	base    string
	classes []Class
	cum     []float64     // cumulative weights
	prefix  []string      // per class: base + path + "?" or "&"
	headers []http.Header // per class, shared read-only
	bodies  [][]byte      // per class, shared read-only

	mu  sync.Mutex
	rng *rand.Rand
}

// NewTargeter returns a Targeter sending s's classes to baseURL (for example
// "http://127.0.0.1:8080"). s must have been through WithDefaults and
// Validate.
func NewTargeter(s Spec, baseURL string) (*Targeter, error) {
	if !strings.HasPrefix(baseURL, "http://") && !strings.HasPrefix(baseURL, "https://") {
		return nil, fmt.Errorf("workloads: base URL %q must start with http:// or https://", baseURL)
	}
	t := &Targeter{
		base:    strings.TrimSuffix(baseURL, "/"),
		classes: s.Classes,
		rng:     rand.New(rand.NewPCG(s.Seed, 0xda942042e4dd58b5)),
	}
	var sum float64
	for _, c := range s.Classes {
		sum += c.Weight
		t.cum = append(t.cum, sum)
		sep := "?"
		if strings.Contains(c.Path, "?") {
			sep = "&"
		}
		t.prefix = append(t.prefix, t.base+c.Path+sep)
		var h http.Header
		if len(c.Headers) > 0 {
			h = http.Header{}
			for k, v := range c.Headers {
				h.Set(k, v)
			}
		}
		t.headers = append(t.headers, h)
		var body []byte
		if c.BodyBytes > 0 {
			body = bytes.Repeat([]byte{'x'}, c.BodyBytes)
		}
		t.bodies = append(t.bodies, body)
	}
	return t, nil
}

// Classes returns the class names in index order.
func (t *Targeter) Classes() []string {
	names := make([]string, len(t.classes))
	for i, c := range t.classes {
		names[i] = c.Name
	}
	return names
}

// Request is one request a Targeter asks for. A generator copies it into
// its HTTP client's request (harness into vegeta's Target). Header and Body
// are shared between requests of a class: read them, never modify them.
type Request struct {
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Target fills tgt with the next request. It never fails; the error is
// there for the generator's targeter signature.
func (t *Targeter) Target(tgt *Request) error {
	t.mu.Lock()
	x := t.rng.Float64() * t.cum[len(t.cum)-1]
	i := 0
	for i < len(t.cum)-1 && x >= t.cum[i] {
		i++
	}
	svc := t.classes[i].Service.draw(t.rng)
	t.mu.Unlock()
	t.fill(tgt, i, svc)
	return nil
}

// TargetClass fills tgt with a request of class i (an index into the
// workload's classes), its service time drawn from the seed: the
// deterministic clients' fixed class pattern. It is safe for concurrent
// use.
func (t *Targeter) TargetClass(tgt *Request, i int) error {
	if i < 0 || i >= len(t.classes) {
		return fmt.Errorf("workloads: class %d out of range (%d classes)", i, len(t.classes))
	}
	t.mu.Lock()
	svc := t.classes[i].Service.draw(t.rng)
	t.mu.Unlock()
	t.fill(tgt, i, svc)
	return nil
}

// fill writes class i's request with service time svc into tgt.
func (t *Targeter) fill(tgt *Request, i int, svc time.Duration) {
	c := &t.classes[i]
	tgt.Method = c.Method
	tgt.Header = t.headers[i]
	tgt.Body = t.bodies[i]
	tgt.URL = t.prefix[i] + "us=" + strconv.FormatInt(svc.Microseconds(), 10)
	if c.CPU {
		tgt.URL += "&mode=spin"
	}
	tgt.URL += "&" + classParam + strconv.Itoa(i)
}

func (d Service) draw(rng *rand.Rand) time.Duration {
	switch d.Dist {
	case Exp:
		return time.Duration(rng.ExpFloat64() * float64(d.Mean))
	case Uniform:
		return d.Min + time.Duration(rng.Float64()*float64(d.Max-d.Min))
	case LogNormal:
		return time.Duration(float64(d.Median) * math.Exp(d.Sigma*rng.NormFloat64()))
	case Bimodal:
		if rng.Float64() < d.PHigh {
			return d.High
		}
		return d.Low
	case Pareto:
		u := 1 - rng.Float64() // (0, 1]
		return min(time.Duration(float64(d.Min)/math.Pow(u, 1/d.Alpha)), d.Max)
	default:
		return d.Value
	}
}

// ClassOf returns the class index a request URL made by Target carries, or
// -1 if it carries none.
func ClassOf(url string) int {
	i := strings.LastIndex(url, classParam)
	if i < 0 {
		return -1
	}
	n, err := strconv.Atoi(url[i+len(classParam):])
	if err != nil || n < 0 {
		return -1
	}
	return n
}
