// Package dataset holds what an audit runs on: records and datasets, the
// adjacency relations between a dataset D and its neighbour D′ (replace-one,
// remove-one, add-one) and the pairs they build — including Heller &
// Fetaya's counterexample pair (eq. 8), materialised or described
// analytically — and the CSV loader with its validation, feature scaling,
// presets for the bundled sets and seeded (stratified) train/test splits.
package dataset
