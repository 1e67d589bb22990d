// Package field carries the path of the field an error is about beside its
// message, so that each layer names the field in its own terms: a Go
// caller reads Go field names ("Sampler.Step.Eta: must be …"), the
// scenario layer the YAML path and line ("line 7: sampler.sgld.step.eta:
// …"), and no layer parses a message to find the field.
//
// Checks build errors with Errorf relative to the value they check; each
// layer above prefixes the field under which it holds that value with
// Wrap. Every layer may import this package.
package field
