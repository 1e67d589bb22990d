// Package closedform holds analytic privacy results: the exact privacy loss
// of cyclic SGLD on the Gaussian-mixture counterexample of Heller & Fetaya
// (lower bounds), the privacy of the linear-regression posterior, and the
// theoretical upper bounds of the papers the project is built from.
//
// It is mathematics without I/O. Everything is deterministic except
// ProposeTestSample.Run, which simulates Algorithm 1 of Heller & Fetaya and
// draws from the random source its caller passes in.
package closedform
