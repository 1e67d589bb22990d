package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// checkpointManifest identifies the audit a checkpoint directory belongs to.
type checkpointManifest struct {
	ConfigHash string `json:"config_hash"`
	Trials     int    `json:"trials"`
	Block      int    `json:"block"`
}

const manifestName = "manifest.json"

// InterruptedError reports a run stopped by cancellation; Saved trials are
// safe in the checkpoint directory (0 without one).
type InterruptedError struct {
	Saved, Total int
	Dir          string
}

func (e *InterruptedError) Error() string {
	if e.Dir == "" {
		return "interrupted; nothing was saved (use --checkpoint DIR to make long runs resumable)"
	}
	return fmt.Sprintf("interrupted; %d of %d trials are saved in %s", e.Saved, e.Total, e.Dir)
}

// CheckpointBlock is the number of trials persisted together: large enough
// that a directory holds at most a few hundred files, small enough that an
// interruption loses little work.
func CheckpointBlock(trials int) int {
	return max(256, (trials+199)/200)
}

// writeFileAtomic writes via a temporary file, fsync and rename, so that a
// crash (even kill -9) leaves either the old state or the complete file.
func writeFileAtomic(path string, fill func(f *os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fill(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func blockName(lo, hi int) string { return fmt.Sprintf("trials-%012d-%012d.part", lo, hi) }

// SimulateCheckpointed runs all trials of p, persisting every completed
// block of trials in dir. With resume, blocks already in dir (from a run of
// the same configuration, checked by hash) are loaded instead of rerun; the
// result is identical to an uninterrupted run. Without resume, dir must not
// hold a checkpoint yet. On cancellation it returns an *InterruptedError.
func SimulateCheckpointed(ctx context.Context, p *Plan, dir string, resume bool, workers int, progress Progress) (*Trials, error) {
	n := p.Config.Audit.Trials
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--checkpoint: cannot create %s: %s", dir, unwrapPathError(err))
	}
	mpath := filepath.Join(dir, manifestName)
	man := checkpointManifest{ConfigHash: p.Hash, Trials: n, Block: CheckpointBlock(n)}
	existing, err := os.ReadFile(mpath)
	switch {
	case err == nil && !resume:
		return nil, fmt.Errorf("--checkpoint: %s already holds a checkpoint; add --resume to continue it, or choose an empty directory", dir)
	case err == nil:
		var old checkpointManifest
		if json.Unmarshal(existing, &old) != nil {
			return nil, fmt.Errorf("--checkpoint: %s is corrupt", mpath)
		}
		if old.ConfigHash != p.Hash || old.Trials != n {
			return nil, fmt.Errorf("--resume: the checkpoint in %s belongs to another configuration (hash %.12s…, this one is %.12s…)", dir, old.ConfigHash, p.Hash)
		}
		man = old
	case errors.Is(err, os.ErrNotExist) && resume:
		return nil, fmt.Errorf("--resume: %s holds no checkpoint", dir)
	case errors.Is(err, os.ErrNotExist):
		if err := writeFileAtomic(mpath, func(f *os.File) error { return json.NewEncoder(f).Encode(man) }); err != nil {
			return nil, fmt.Errorf("--checkpoint: %v", err)
		}
	default:
		return nil, fmt.Errorf("--checkpoint: %v", err)
	}

	done := map[int]*Trials{}
	if resume {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "trials-") || !strings.HasSuffix(e.Name(), ".part") {
				continue
			}
			t, c, err := ReadPartFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, fmt.Errorf("--resume: %v", err)
			}
			if c.Hash() != p.Hash {
				return nil, fmt.Errorf("--resume: %s belongs to another configuration", e.Name())
			}
			done[t.Lo] = t
		}
	}
	saved := 0
	for _, t := range done {
		saved += t.Hi - t.Lo
	}
	if progress != nil && saved > 0 {
		progress(saved)
	}
	for lo := 0; lo < n; lo += man.Block {
		hi := min(lo+man.Block, n)
		if t, ok := done[lo]; ok {
			if t.Hi != hi {
				return nil, fmt.Errorf("--resume: block %s does not match the block size %d", blockName(t.Lo, t.Hi), man.Block)
			}
			continue
		}
		base := saved
		t, err := Simulate(ctx, p, lo, hi, workers, func(d int) {
			if progress != nil {
				progress(base + d)
			}
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, &InterruptedError{Saved: saved, Total: n, Dir: dir}
			}
			return nil, err
		}
		if err := writeFileAtomic(filepath.Join(dir, blockName(lo, hi)), func(f *os.File) error { return WritePart(f, p, t) }); err != nil {
			return nil, fmt.Errorf("--checkpoint: %v", err)
		}
		done[lo] = t
		saved += hi - lo
	}
	los := make([]int, 0, len(done))
	for lo := range done {
		los = append(los, lo)
	}
	sort.Ints(los)
	parts := make([]*Trials, len(los))
	names := make([]string, len(los))
	for i, lo := range los {
		parts[i] = done[lo]
		names[i] = blockName(done[lo].Lo, done[lo].Hi)
	}
	return MergeTrials(parts, names)
}
