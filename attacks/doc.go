// Package attacks holds the distinguishers of an audit: feature maps of a
// released sampler output and classifiers trained on the A1 runs whose
// scores, thresholded, decide "D" or "D′" on the A2 runs.
package attacks
