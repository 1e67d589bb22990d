package sweep

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/mcmcaudit/mcmcaudit/audit/scenario"
	"github.com/mcmcaudit/mcmcaudit/internal/cli"
)

// The accuracy runs honour Ctrl-C: with the context already cancelled,
// measureAccuracy runs nothing and ends as an interruption (exit 130), where
// the same call with a live context measures the sampler.
func TestMeasureAccuracyCancelled(t *testing.T) {
	cfg, err := scenario.LoadConfig("../../testdata/dp-penalty-gauss.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := scenario.BuildWith(cfg, scenario.BuildOptions{Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer plan.Close()
	law, err := accuracyLaw(plan)
	if err != nil {
		t.Fatal(err)
	}
	acc, err := measureAccuracy(context.Background(), plan, cfg, plan.Sampler, *law, 20)
	if err != nil || acc == nil || acc.Runs != 20 {
		t.Fatalf("live context: %+v, %v", acc, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	acc, err = measureAccuracy(ctx, plan, cfg, plan.Sampler, *law, 20)
	var in cli.InterruptedError
	if !errors.As(err, &in) || acc != nil {
		t.Fatalf("cancelled context: %+v, %v; want an interruption (exit 130)", acc, err)
	}
}
