# lbbench: see README.md.
GO      ?= go
BIN     := bin/lbbench
COMMIT  := $(shell git rev-parse --short HEAD 2>/dev/null)
LDFLAGS := -X main.commit=$(COMMIT)
OUT     ?= reports/out/latest

.PHONY: build setup k8s-testbed test test-short fuzz bench-compare bench-self claims screenshot fmt-check vet lint-workflows clean

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/lbbench

## setup: install from Debian's packages when missing: nginx, HAProxy, Chromium, wrk, libhdrhistogram-java and a headless JRE, libxml2-utils (xmllint), shellcheck, gunicorn, uvicorn, and for the test cluster etcd, docker-registry and the CNI plugins.
setup:
	bash scripts/setup.sh

## k8s-testbed: build the Kubernetes test cluster's kube-apiserver and kubelet
## from the Go module proxy, once per machine (10 to 14 minutes on 2 CPUs;
## cached under ~/.cache/lbbench/k8s). The tests of --driver kubernetes
## start the cluster from them (scripts/k8s-testbed.sh up) and stop it after.
k8s-testbed:
	bash scripts/k8s-testbed.sh build

## test: everything CI runs: setup, format, vet, the workflows' lint, the test cluster's binaries, then every test and the fuzz targets.
## The end-to-end tests of cmd/lbbench measure the machine (a run is valid
## only if the generator kept its schedule), so they run after the other
## packages, not beside them: on 2 CPUs a package's simulations next to
## them made the generator send 15 ms late. Inside the package, the tests
## that measure run one at a time first; those that judge behaviour only
## (failures, interrupts, containers; t.Parallel) then run E2E_PARALLEL at
## a time, most of it waiting on timeouts and containers.
E2E_PKG := ./cmd/lbbench
E2E_PARALLEL ?= 8
test: setup fmt-check vet lint-workflows k8s-testbed
	$(GO) test -count=1 -timeout 14m $$($(GO) list ./... | grep -v '/cmd/lbbench$$')
	$(GO) test -count=1 -timeout 14m -parallel $(E2E_PARALLEL) $(E2E_PKG)
	$(MAKE) fuzz

## fuzz: every fuzz target of the module, each for FUZZTIME
## (scripts/fuzz.sh). FUZZ_TARGETS names them as package:Target;
## internal/archtest's TestFuzzTargetsListed fails when a Fuzz function of
## the tree is missing here (or one listed is gone), so none runs only on
## its seeds. Seeds live in the tests; a failure leaves its input under the
## package's testdata/fuzz.
## FUZZTIME is a count of inputs per target, not a duration: with a
## duration, Go 1.26's fuzzing coordinator sometimes fails a target with a
## bare "context deadline exceeded" as the time runs out (golang/go#75804,
## fixed in Go 1.27), which red CI with no failing input. FUZZTIME=30s still
## works for longer local runs. The count is a quarter of the 20000 inputs
## each of the nine targets once listed here got: make fuzz over the 26
## took 59 s with a warm build cache (2026-12-05, 2 CPUs); each package's
## instrumented test binary is built once and cached.
FUZZTIME ?= 5000x
FUZZ_TARGETS = \
	balance:FuzzHashKey \
	cmd/lbbench:FuzzRateFlag \
	cmd/lbbench:FuzzOverrides \
	compare:FuzzParseTolerance \
	driver:FuzzDecodeStats \
	driver:FuzzDecodeEngineReport \
	engines:FuzzParseVersion \
	engines:FuzzParseNginxStatus \
	engines:FuzzParseHAProxyCSV \
	internal/shellwords:FuzzSplit \
	loadgen:FuzzReadTargets \
	model:FuzzRandomExact \
	reports:FuzzParseHgrm \
	reports:FuzzParseVerdicts \
	results:FuzzDecode \
	results:FuzzHistogram \
	results:FuzzHistogramUnmarshal \
	scenario:FuzzParse \
	scenario:FuzzParseWorkload \
	targets/balancer:FuzzParsePool \
	targets/balancer:FuzzSetPolicyArg \
	targets/balancer:FuzzParseUpstream \
	targets/balancer:FuzzProxyRequest \
	targets/worker:FuzzParseService \
	workloads:FuzzClassOf \
	workloads:FuzzOverridesApply \
	workloads:FuzzParseTimes
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh $(FUZZ_TARGETS)

## test-short: the quick loop, about 40 s on 2 CPUs once the build cache
## is warm. The first run on a machine builds lbbench statically for the
## Docker and end-to-end tests and takes about 5 minutes; later runs link
## it again only when its sources changed (testkit.BuildStatic keeps it
## in the user's cache).
test-short:
	$(GO) test -short -count=1 ./...

## bench-compare: the main job, on local processes.
## Without BASE it runs SCENARIO (the embedded default scenario when not
## given) and compares its variants with the first, for information:
## round after round until the scenario's verdict metrics (its
## "verdicts:", p99 for the default) are decided for every variant
## (paired rounds; at most 4 rounds, never a round that would end past
## 150 s: the default's 3 variants make rounds of about 31 s; with 6 as the
## default's limit its looks' shares of alpha were too small to decide p99
## in its 4 rounds. A run the generator fell behind in is made again once,
## in its round; BENCH_FLAGS sets these).
## With BASE=<git ref> it is the gate: it calls scripts/gate, which builds
## lbbench here and at that ref and runs SCENARIO (default: gate, the
## embedded scenarios/gate.yaml) with both builds interleaved until
## decided. The gate's flags are the script's (GATE_FLAGS overrides them):
## at most 12 rounds judged at 3 looks (after rounds 4, 8 and 12), never
## one that would end past 150 s (the gate's 1 variant and its twin make
## rounds of about 12 s), a run the generator fell behind in made again
## once. Another scenario needs a larger budget:
## GATE_FLAGS="--until-decided --max-rounds 8 --budget 6m --retry-invalid 1".
## The script's status is the verdict (0 pass, 1 regression, 3
## inconclusive, 2 error) and lbbench prints it, but make's own status is
## 0 or 2: make exits 2 whenever a recipe fails, a regression and a broken
## runner alike. CI that acts on the verdict calls scripts/gate (or
## bin/lbbench run --baseline) itself, as .github/workflows/perf.yml does
## (README, "CI").
## RUN_FLAGS adds flags to lbbench run, e.g. RUN_FLAGS="--inject-slowdown 1.2".
## DRIVER=docker runs the targets in containers (see README, "Containers").
BENCH_FLAGS ?= --until-decided --max-rounds 4 --budget 150s --retry-invalid 1
ifneq ($(BASE),)
bench-compare:
	BASE='$(BASE)' OUT='$(OUT)' GO='$(GO)' $(if $(SCENARIO),SCENARIO='$(SCENARIO)') $(if $(GATE_FLAGS),GATE_FLAGS='$(GATE_FLAGS)') \
		scripts/gate $(if $(DRIVER),--driver $(DRIVER)) $(RUN_FLAGS)
else
bench-compare: build
	rm -rf $(OUT)
	./$(BIN) run -o $(OUT) $(BENCH_FLAGS) $(if $(DRIVER),--driver $(DRIVER)) $(RUN_FLAGS) $(SCENARIO)
endif

## claims: run every scenario of scenarios/claims/ and write one report of
## their claims to $(CLAIMS_OUT)/claims.html (and claims.md, claims.txt,
## junit.xml; each scenario's own report is in $(CLAIMS_OUT)/<scenario>/).
## Every scenario runs as one part of the suite (run --suite): the suite's
## 5% is split evenly among its scenarios with statistical claims (9
## shares of 0.556%), each run judges its claims, a family of their own,
## at its share (its comparison of variants apart, for information), and
## the suite's report judges every claim as its run did, so that what
## stops a run is what the suite decides.
## One line per scenario as it goes, with the rounds it made. Exits 4 when a
## claim fails. CLAIMS_FLAGS go to every run: by default each scenario goes
## on round after round until its statistical claims are decided
## (--until-decided), looking 4 times (--looks 4: after rounds spread
## evenly up to its most, each look a larger share of alpha than one after
## every round would have; with a look after every round from the 3rd,
## g's CPU claims were judged at 0.0123% after 10 rounds and stayed
## undecided, 2026-12-07). A scenario whose claims are exact counts makes
## its repeat rounds, which is all it needs; so do a closed loop's claims
## but its ratios of throughput and CPU (h's, which go on until decided)
## and a burst workload's but a's model claim, pmax ~ model, judged run by
## run, up to CLAIMS_ROUNDS_DEFAULT's 10 rounds of 340 bursts. A run the
## generator fell behind in, or the host stole from, is made again, up to
## twice (--retry-invalid 2).
## CLAIMS_ROUNDS gives each scenario its own bounds, NAME:MAX-ROUNDS:BUDGET
## (--max-rounds, --budget; CLAIMS_ROUNDS_DEFAULT for a scenario not listed),
## from its round's length on 2 CPUs, variants x (duration + 1 s warm-up +
## about 1 s of bring-up): b1, b2, b3 and c2 (2 variants of 5 s) about 15 s
## a round, 14 rounds in 4 minutes (b1 decided after 13, 8 and 11 rounds
## in three suites, 2026-12-07); d (3 variants) about 21 s, 14 rounds in 5.5
## minutes; g (3 proxies, 4 s at 8000/s) 16 s a round as measured (165 s
## for 10; 17.2 s in a run of g alone), 72 rounds within 22 minutes (its CPU claim against nginx,
## 1.030 [0.952, 1.114] against 1.1 after 10 rounds, forecast 14; both CPU
## claims held after 16 in two suites, 2026-12-07; in a third, 2026-12-08,
## the one against nginx was undecided after 16, 0.992 [0.889, 1.106],
## forecast 20, and in a run of g alone after 32, 1.039 [0.968, 1.115],
## forecast 67, its rounds' log ratio's sd 0.080; its p99 claims need
## hundreds, so it makes all 72, about 21 minutes); h (3 proxies, closed loop of 80,000 requests) about
## 16 s a round (477 s for 30), 50 rounds within 14.5 minutes (after 30
## rounds 3 of its 4 claims held and its throughput against HAProxy,
## 0.952 [0.900, 1.008] against 0.9, was forecast to need 44); c1 (10 variants of 10 s) about 2
## minutes, 7 rounds in 16 minutes. The budget leaves a round or two of
## slack for retries, so that --max-rounds, not the budget, ends an
## undecided scenario: the looks' shares of alpha grow to the last allowed
## (docs/verdicts.md), and a budget that stops a run earlier leaves the
## last ones unspent. e and f take under a minute each; a up to 10 rounds
## of 340 bursts, about 27 s a round of its two variants, up to 4.5
## minutes. The suite took 40, 39 and 40 minutes in three runs on
## 2026-12-07 with 10 rounds of g and 12 of h (c1 14 minutes, g and h about
## 3 each, b2, b3 and d to their last round); 45 minutes with 16 of g and
## 30 of h, the claims alone stopping each part; and 37 minutes with up to
## 50 of h, which decided after 13 (130 s). Were h to take all 50, the
## suite would take about 5 minutes more than with its 30 (20 rounds of 16 s).
## On 2026-12-08 it took 48 minutes: h decided after 38 rounds (645 s).
## g's 72 rounds add about 16 minutes to that (56 rounds of 17.2 s).
## Give CLAIMS_FLAGS="--retry-invalid 2" for the scenarios' own repeat
## rounds (about 20 minutes).
CLAIMS_OUT ?= reports/out/claims
CLAIMS_FLAGS ?= --until-decided --looks 4 --retry-invalid 2
CLAIMS_ROUNDS ?= b1-least-conn-high-load:14:4m b2-least-conn-low-load:14:4m \
	b3-least-conn-concurrent-workers:14:4m c1-keepalive-eventloop:7:16m \
	c2-epoll-ladder:14:4m d-ewma-slow-backend:14:5m30s g-proxy-cost:72:22m \
	h-proxy-saturation:50:14m30s
CLAIMS_ROUNDS_DEFAULT ?= 10:5m
claims: build
	rm -rf $(CLAIMS_OUT)
	mkdir -p $(CLAIMS_OUT)
	@set -e; dirs=""; total=$$(ls scenarios/claims/*.yaml | wc -l); i=0; for f in scenarios/claims/*.yaml; do \
		n=$$(basename $$f .yaml); i=$$((i+1)); t0=$$(date +%s); \
		b=$(CLAIMS_ROUNDS_DEFAULT); for e in $(CLAIMS_ROUNDS); do case $$e in "$$n":*) b=$${e#"$$n":};; esac; done; \
		echo "claims: [$$i/$$total] $$n ..."; \
		./$(BIN) run -q --suite scenarios/claims --max-rounds $${b%%:*} --budget $${b#*:} $(CLAIMS_FLAGS) -o $(CLAIMS_OUT)/$$n $$f > $(CLAIMS_OUT).$$n.log 2>&1 || { cat $(CLAIMS_OUT).$$n.log; exit 2; }; \
		mv $(CLAIMS_OUT).$$n.log $(CLAIMS_OUT)/$$n/run.log; \
		echo "claims: [$$i/$$total] $$n: $$(( $$(date +%s) - t0 ))s, $$(grep -c '^  HOLDS' $(CLAIMS_OUT)/$$n/run.log || true) hold, $$(grep -c '^  FAILS' $(CLAIMS_OUT)/$$n/run.log || true) fail, $$(grep -c '^  INCONCLUSIVE' $(CLAIMS_OUT)/$$n/run.log || true) inconclusive$$(sed -n 's/^rounds: \([0-9]* of at most [0-9]*\):.*/, rounds \1/p' $(CLAIMS_OUT)/$$n/run.log | head -n 1)"; \
		dirs="$$dirs $(CLAIMS_OUT)/$$n"; \
	done; \
	./$(BIN) report --claims -o $(CLAIMS_OUT) $$dirs

## bench-self: what lbbench itself costs on this machine (lbbench
## selftest): its generator beside vegeta's attack at 1,000 to 20,000
## requests/s and wrk's closed-loop ceiling against nginx, the tools in
## turn round by round; the built-in worker's CPU per request with no and
## with a 2 ms service beside nginx's. vegeta's CLI is installed into bin/
## at the version go.mod pins (from the module proxy); nginx and wrk come
## from make setup. SELFTEST_FLAGS go to lbbench selftest (--rounds,
## --duration, --rates). Writes $(SELFTEST_OUT)/figures.txt and
## results.json; about 3 minutes with the defaults (3 rounds of 5 s runs).
SELFTEST_OUT ?= reports/out/selftest
SELFTEST_FLAGS ?=
bench-self: build
	CGO_ENABLED=0 GOBIN=$(CURDIR)/bin $(GO) install github.com/tsenart/vegeta/v12@$$($(GO) list -m -f '{{.Version}}' github.com/tsenart/vegeta/v12)
	rm -rf $(SELFTEST_OUT)
	./$(BIN) selftest -o $(SELFTEST_OUT) --vegeta bin/vegeta $(SELFTEST_FLAGS)

## screenshot: docs/report.png, the README's picture, from the report of the
## last bench-compare, taken in headless Chromium (which must load nothing else).
screenshot:
	$(GO) run ./internal/browser/screenshot -o docs/report.png -width 1100 -height 1450 $(OUT)/report.html

fmt-check:
	@out=$$(gofmt -l .); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

## lint-workflows: actionlint, pinned in go.mod as a tool, on the GitHub
## workflows: their syntax, expressions, the actions' inputs, and the
## shell of each run: step when shellcheck is installed (it skips those
## checks otherwise).
lint-workflows:
	$(GO) tool actionlint .github/workflows/*.yml

clean:
	rm -rf bin reports/out
