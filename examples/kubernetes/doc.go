// Package kubernetes holds the tests of the Kubernetes example next to it:
// every manifest is decoded strictly into the Kubernetes API types and the
// references between the manifests (names, volumes, keys, paths, shard
// count, image) are checked. It is a module of its own so that the audit
// module never depends on the Kubernetes API packages.
package kubernetes
