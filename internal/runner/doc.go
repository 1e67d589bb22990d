// Package runner is the trial phase of "audit run": where a run keeps its
// checkpoint (--checkpoint DIR, or a private default one in the user's
// cache), the simulation of the trials under SIGINT/SIGTERM with the
// command that resumes an interrupted run, the removal of a default
// checkpoint once it has served, and the trials file of one shard
// (--shard I/N) for "audit merge".
package runner
