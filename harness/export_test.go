package harness

// The validity judgement and the CPU arithmetic, for the tests of package
// harness_test, which use the shared fake driver's measurements
// (internal/testkit/fakedriver imports harness, so those tests cannot be
// in package harness).
var (
	Judge        = judge
	CPUDuring    = cpuDuring
	ServerDuring = serverDuring
)
