package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcmcaudit/mcmcaudit/audit"
	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
)

func runMerge(args []string, e *env) error {
	fs := newFlagSet("merge PART... [--json FILE] [--csv FILE] [--plot FILE]",
		"Joins the trials files written by 'audit run --shard I/N --out PART', checks that they come from one\n"+
			"configuration and cover every trial exactly once, then runs the attacks and estimators: the report is\n"+
			"the one a single 'audit run' would have printed.")
	var outs outputFlags
	var maxWork float64
	outs.register(fs, outputHelp{
		json: "write the report as JSON to FILE (- for stdout)",
		csv:  "write one row per release point as CSV to FILE (- for stdout)",
		plot: "draw ε_lb per release point to FILE (.svg or .png)",
		html: "write a self-contained HTML report to FILE (- for stdout)",
	})
	fs.floatVar(&maxWork, "max-work", 0, "[0, ∞)", func(x float64) bool { return x >= 0 },
		"refuse an analysis whose estimated work exceeds this many units of a few ns each (0: the default), in")
	if err := fs.parse(args, e, 1<<20); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usagef("give the trials files to merge")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := outs.checkReportPlot(); err != nil {
		return err
	}
	paths := make([]string, fs.NArg())
	var inputs []namedInput
	for i := range paths {
		paths[i] = fs.Arg(i)
		inputs = append(inputs, namedInput{paths[i], "trials file"})
	}
	if err := outs.check(e, inputs); err != nil {
		return err
	}
	m, err := untilInterrupted(ctx, func() (merged, error) { return mergeParts(ctx, paths) })
	if ctx.Err() != nil {
		return interruptedError{"interrupted while reading the trials files; no report was written"}
	}
	if err != nil {
		return err
	}
	a, err := withRunExecution(m.audit, nil, maxWork)
	if err != nil {
		return err
	}
	if err := workError(a.CheckWork(0, 0, true)); err != nil {
		return err
	}
	return writeReport(ctx, e, &scenario.Plan{Config: m.config}, a, m.trials, outs, outs.stdoutTaken(), nil)
}

// merged is what the parts hold together: the scenario (for the report's
// document), the audit that analyses the trials, and the trials.
type merged struct {
	config *scenario.Config
	audit  *audit.Audit
	trials *audit.Trials
}

// mergeParts checks the parts' headers first — one configuration, one
// shape, every trial covered exactly once — so that the merged trials are
// allocated only for parts that fill them; then it reads the parts one at
// a time into the result and takes the audit's design from the first
// part's spec (theorem claims included, as data): the analysis is
// audit.FromDesign's, and nothing else is needed (no data, no sampler, no
// program, no scenario built), so the merge works from any directory.
func mergeParts(ctx context.Context, paths []string) (merged, error) {
	var out merged
	fail := func(err error) (merged, error) { return merged{}, err }
	infos := make([]audit.PartInfo, len(paths))
	for i, path := range paths {
		info, err := audit.ReadPartHeader(path)
		if err != nil {
			return fail(usageError{err.Error()})
		}
		infos[i] = info
	}
	if err := audit.CheckPartInfos(infos, paths); err != nil {
		return fail(usagef("merge: %v", err))
	}
	var m audit.Merger
	for _, path := range paths {
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		t, spec, err := audit.ReadPartFile(path)
		if err != nil {
			return fail(usageError{err.Error()})
		}
		if out.audit == nil {
			if out.config, out.audit, err = partAudit(path, spec); err != nil {
				return fail(err)
			}
			if id := out.audit.ID(); id != t.ConfigHash {
				return fail(usagef("%s: the design it carries has hash %.12s…, its trials %.12s… (a trials file of an older version?)", path, id, t.ConfigHash))
			}
			// The merged audit, and one part read into memory beside its store.
			largest := 0
			for _, in := range infos {
				largest = max(largest, in.Hi-in.Lo)
			}
			sizeMemory(out.audit.MemoryBytes(t.N) + out.audit.StoreBytes(largest))
		}
		if err := m.Add(t, path); err != nil {
			return fail(usagef("merge: %v", err))
		}
	}
	var err error
	if out.trials, err = m.Trials(); err != nil {
		return fail(usagef("merge: %v", err))
	}
	return out, nil
}

// partAudit returns the scenario (for the report's document) and the audit
// a part's spec describes, from the design it carries. A part without one
// was written by an older version and must be run again.
func partAudit(path string, spec []byte) (*scenario.Config, *audit.Audit, error) {
	cfg, design, err := scenario.ParsePartSpec(spec)
	if err != nil {
		return nil, nil, usagef("%s: %v", path, err)
	}
	a, err := audit.FromDesign(*design)
	if err != nil {
		return nil, nil, usagef("%s: %v", path, err)
	}
	return cfg, a, nil
}
