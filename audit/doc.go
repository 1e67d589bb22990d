// Package audit is the engine of an empirical privacy audit: it runs a
// sampler many times on two adjacent datasets, splits the runs into a set
// that trains the attacks (A1) and a set that counts their errors (A2),
// turns the counts into ε lower bounds with package stats, and tests them
// against the sampler's claimed upper bounds.
package audit
