package driver

// Labels on every object a container driver creates (containers,
// networks, volumes; pods, services, config maps), so that Clean finds
// what a run left behind.
const (
	LabelManaged = "lbbench.managed" // "true"
	LabelSession = "lbbench.session" // one lbbench process's driver
	LabelRun     = "lbbench.run"     // the run (plan) inside the session
	LabelPlan    = "lbbench.plan"    // the run's id in the results
	LabelRole    = "lbbench.role"    // workers, proxy, server, generator
	// LabelOwner is the Owner of the lbbench process that created the
	// object: Clean removes objects whose owner is gone.
	LabelOwner = "lbbench.owner"
)

// Labels returns the labels of an object of session made by the lbbench
// process owner (an Owner label value), with LabelRole when role is not
// empty.
func Labels(session, owner, role string) map[string]string {
	l := map[string]string{LabelManaged: "true", LabelSession: session, LabelOwner: owner}
	if role != "" {
		l[LabelRole] = role
	}
	return l
}
