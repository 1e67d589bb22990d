// Package pool runs the items of a job on a bounded number of goroutines:
// the one worker pool of the audit command (the epochs of "audit curve",
// the accuracy runs of "audit bounds --sweep"). Items are independent and
// write their results by index, so a result never depends on the number
// of workers.
package pool
