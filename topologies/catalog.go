package topologies

import (
	"github.com/lbbench/lbbench/balance"
	"github.com/lbbench/lbbench/engines"
	"github.com/lbbench/lbbench/results"
	"github.com/lbbench/lbbench/scenario"
	"github.com/lbbench/lbbench/targets/worker"
)

// Catalog returns what this lbbench supports, for validating a scenario:
// the built-in proxy's policies, each engine's policies and the built-in
// worker's accept strategies.
func Catalog() scenario.Catalog {
	cat := scenario.Catalog{
		Policies:          balance.Policies(),
		EnginePolicies:    map[string][]string{},
		Accept:            worker.AcceptStrategies(),
		Metrics:           results.MetricDefs(),
		ComparisonMetrics: results.ComparisonMetrics(),
		PolicyArgs: func(policy string, args map[string]string) error {
			_, err := balance.NewPolicy(policy, args)
			return err
		},
	}
	for _, e := range engines.Names() {
		cat.EnginePolicies[e] = engines.Policies(e)
	}
	return cat
}
