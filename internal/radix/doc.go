// Package radix sorts unsigned 64-bit keys by a least-significant-digit
// radix sort: the one sort behind the threshold attack's rule choice and
// the descriptive figures of an audit, whose scores become order-preserving
// keys (a float's bits with the sign handled) before sorting.
package radix
