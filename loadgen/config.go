package loadgen

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lbbench/lbbench/internal/files"
)

// The results formats of an attack (AttackConfig.Format).
const (
	// FormatLbbench is lbbench's measurement (results.Measurement) as
	// JSON, written when the attack ends.
	FormatLbbench = "lbbench"
	// FormatVegeta, FormatVegetaJSON and FormatVegetaCSV are vegeta's
	// results, streamed as requests end: its gob (what "vegeta attack"
	// writes), its JSON lines and its CSV.
	FormatVegeta     = "vegeta"
	FormatVegetaJSON = "vegeta-json"
	FormatVegetaCSV  = "vegeta-csv"
)

// AttackConfig is an attack as "lbbench attack" is given it beside its
// workload: where requests go, what they carry and in what format the
// results are written. Validate checks it without reading anything;
// Resolve reads the targets and the body it names into the entry and
// Options of Attack. Errors name the command's flags, unprefixed: the
// command says whose they are.
type AttackConfig struct {
	// Target is --target: a base URL (scheme://host:port, path / at most)
	// the workload's classes are sent to, or a URL with a path or query
	// sent as given, a literal target.
	Target string
	// Targets is --targets, a file of literal targets; "-" reads them
	// from Stdin.
	Targets string
	// TargetsFormat is the format of the literal targets read,
	// TargetsHTTP or TargetsJSON (vegeta's -format); empty means
	// TargetsHTTP.
	TargetsFormat string
	// Stdin is the command's standard input. StdinHasData says that it
	// is a pipe or a file: with neither Target nor Targets given, the
	// targets are read from it, and with Target it must hold none.
	Stdin        io.Reader
	StdinHasData bool
	// SpecOnStdin says that the workload spec is read from Stdin (--spec
	// -, how a driver hands its generator the spec), so Stdin holds no
	// targets.
	SpecOnStdin bool
	// Headers are --header values, "NAME: VALUE", added to every request.
	Headers []string
	// Body is --body, the file whose content is the body of every
	// literal target that has none of its own.
	Body string
	// MaxBody is --max-body (Options.MaxBody); -1 means MaxBodyCap.
	MaxBody int64
	// Format is --format, one of the Format constants; empty means
	// FormatLbbench.
	Format string
	// Insecure and Name are Options.Insecure and Options.Name.
	Insecure bool
	Name     string
}

// maxBodyFile bounds the file of AttackConfig.Body: every request holds it.
const maxBodyFile = 16 << 20

// Validate reports the first problem of c that shows without reading a
// file: a results format, a header, a --max-body, or targets given more
// than one way, none or as a URL that is not http or https.
func (c AttackConfig) Validate() error {
	switch c.Format {
	case "", FormatLbbench, FormatVegeta, FormatVegetaJSON, FormatVegetaCSV:
	case TargetsHTTP, TargetsJSON:
		return fmt.Errorf("--format %s: --format is the results' format; the targets' format (vegeta's -format %s) is --targets-format %s", c.Format, c.Format, c.Format)
	default:
		return fmt.Errorf("--format %q: want %s, %s, %s or %s", c.Format, FormatLbbench, FormatVegeta, FormatVegetaJSON, FormatVegetaCSV)
	}
	if _, err := c.header(); err != nil {
		return err
	}
	if c.MaxBody < -1 || c.MaxBody > MaxBodyCap {
		return fmt.Errorf("--max-body %d: want 0 to %d bytes (-1: %d)", c.MaxBody, MaxBodyCap, MaxBodyCap)
	}
	if c.MaxBody != 0 && (c.Format == "" || c.Format == FormatLbbench) {
		return errors.New("--max-body keeps bodies in vegeta's results: give --format vegeta, vegeta-json or vegeta-csv")
	}
	switch {
	case c.Target != "" && c.Targets != "":
		return errors.New("give --target or --targets, not both")
	case c.Target != "" && c.StdinHasData && !c.SpecOnStdin:
		return errors.New("--target given and standard input is a pipe or file: give targets one way (--target URL, or targets on standard input without --target; redirect standard input from /dev/null to keep it)")
	case c.Target == "" && c.Targets == "" && !c.StdinHasData:
		return errors.New("no target: give --target URL, --targets FILE, or targets on standard input (\"GET http://127.0.0.1:8080/work?ms=1\")")
	}
	if c.Target != "" {
		u, err := url.Parse(c.Target)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("--target %q is not an http:// or https:// URL", c.Target)
		}
		if c.Body != "" && c.baseURL() {
			return errors.New("--body is the body of literal targets; the workload's classes (--target with a base URL) have none")
		}
	}
	return nil
}

// baseURL says whether Target, a valid URL, is a base URL for the
// workload's classes rather than a literal target.
func (c AttackConfig) baseURL() bool {
	u, err := url.Parse(c.Target)
	return err == nil && (u.Path == "" || u.Path == "/") && u.RawQuery == ""
}

// header is Headers as an http.Header; nil for none.
func (c AttackConfig) header() (http.Header, error) {
	var h http.Header
	for _, line := range c.Headers {
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" {
			return nil, fmt.Errorf("--header %q: want \"NAME: VALUE\"", line)
		}
		if h == nil {
			h = http.Header{}
		}
		h.Add(k, v)
	}
	return h, nil
}

// Resolve validates c, reads its body and targets, and returns the entry
// to attack and the Options that send them. The Options have literal
// Targets, or none when the workload's classes go to the base URL entry;
// Raw and Results are the caller's to set.
func (c AttackConfig) Resolve() (entry string, o Options, err error) {
	if err := c.Validate(); err != nil {
		return "", o, err
	}
	header, _ := c.header()
	o = Options{Insecure: c.Insecure, Name: c.Name, MaxBody: c.MaxBody}
	if c.MaxBody == -1 {
		o.MaxBody = MaxBodyCap
	}
	var body []byte
	if c.Body != "" {
		if body, err = files.Read(c.Body, maxBodyFile); err != nil {
			return "", o, fmt.Errorf("--body: %w", err)
		}
	}
	switch {
	case c.Target != "" && c.baseURL():
		o.Header = header
		return c.Target, o, nil
	case c.Target != "":
		o.Targets = []vegeta.Target{{Method: "GET", URL: c.Target, Header: header, Body: body}}
	default:
		var src io.Reader = c.Stdin
		name := "standard input"
		if c.Targets != "" && c.Targets != "-" {
			f, err := os.Open(c.Targets)
			if err != nil {
				return "", o, fmt.Errorf("--targets: %w", err)
			}
			defer f.Close()
			src, name = f, c.Targets
		}
		format := c.TargetsFormat
		if format == "" {
			format = TargetsHTTP
		}
		if o.Targets, err = ReadTargetsAs(src, format, body, header); err != nil {
			return "", o, fmt.Errorf("%s: %w", name, err)
		}
	}
	entry, err = TargetsEntry(o.Targets)
	return entry, o, err
}

// ResultsEncoder returns the encoder of vegeta's results format format
// (FormatVegeta, FormatVegetaJSON or FormatVegetaCSV) writing to w, or nil
// for lbbench's own (or a format Validate refuses).
func ResultsEncoder(format string, w io.Writer) vegeta.Encoder {
	switch format {
	case FormatVegeta:
		return vegeta.NewEncoder(w)
	case FormatVegetaJSON:
		return vegeta.NewJSONEncoder(w)
	case FormatVegetaCSV:
		return vegeta.NewCSVEncoder(w)
	}
	return nil
}
