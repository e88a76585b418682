// Command screenshot opens an lbbench HTML report in headless Chromium,
// checks that it loaded nothing but itself and logged no problem, and
// writes a PNG of it (the README's picture: `make screenshot`).
//
//	go run ./internal/browser/screenshot [-o report.png] [-width 1100] [-height 1500] [-full] REPORT.html
package main

import (
	"context"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/lbbench/lbbench/internal/browser"
)

func main() {
	out := flag.String("o", "report.png", "PNG file to write")
	width := flag.Int("width", 1100, "viewport width in CSS pixels")
	height := flag.Int("height", 1500, "viewport height in CSS pixels (the picture's height unless -full)")
	scale := flag.Float64("scale", 1, "device scale factor")
	full := flag.Bool("full", false, "capture the whole page, not just the viewport")
	mobile := flag.Bool("mobile", false, "emulate a phone (use with -width 390)")
	pdf := flag.String("pdf", "", "also print the page (print CSS) to this PDF file")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: screenshot [flags] REPORT.html\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, flag.Arg(0), *out, *pdf, *width, *height, *scale, *full, *mobile)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "screenshot:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, in, out, pdf string, width, height int, scale float64, full, mobile bool) error {
	abs, err := filepath.Abs(in)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return err
	}
	u := (&url.URL{Scheme: "file", Path: abs}).String()
	p, err := browser.Open(ctx, u, browser.WithViewport(width, height, scale, mobile))
	if err != nil {
		return err
	}
	defer p.Close()
	var problems []string
	for _, r := range p.Requests() {
		if r != u {
			problems = append(problems, "request beyond the file: "+r)
		}
	}
	problems = append(problems, p.ConsoleProblems()...)
	for _, d := range p.Dialogs() {
		problems = append(problems, "dialog: "+d)
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s is not clean:\n  %s", in, strings.Join(problems, "\n  "))
	}
	png, err := p.Screenshot(ctx, full)
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes\n", out, len(png))
	if pdf != "" {
		b, err := p.PDF(ctx)
		if err != nil {
			return err
		}
		if err := os.WriteFile(pdf, b, 0o644); err != nil {
			return err
		}
		fmt.Printf("%s: %d bytes\n", pdf, len(b))
	}
	return nil
}
