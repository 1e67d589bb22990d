package field

import (
	"errors"
	"io"
	"testing"
)

func TestPathText(t *testing.T) {
	p := At("Data", "data").Field("Records", "records").Index(3).Field("X", "x").Index(1)
	if got := p.Go(); got != "Data.Records[3].X[1]" {
		t.Errorf("Go() = %q", got)
	}
	if got := p.YAML(); got != "data.records[3].x[1]" {
		t.Errorf("YAML() = %q", got)
	}
	// Extending a path never changes it (nor a sibling built from it).
	base := At("Step", "step")
	a, b := base.Field("Eta", "eta"), base.Field("B", "b")
	if base.Go() != "Step" || a.Go() != "Step.Eta" || b.Go() != "Step.B" {
		t.Errorf("extensions share storage: %q %q %q", base.Go(), a.Go(), b.Go())
	}
}

func TestWrapPrefixesThePath(t *testing.T) {
	inner := Errorf(At("Eta", "eta"), "must be finite and > 0, got %g", -1.0)
	err := Wrap(Wrap(inner, At("Step", "step")), At("Sampler", "sampler"))
	var fe *Error
	if !errors.As(err, &fe) {
		t.Fatalf("%T does not unwrap to *Error", err)
	}
	if got := err.Error(); got != "Sampler.Step.Eta: must be finite and > 0, got -1" {
		t.Errorf("Error() = %q", got)
	}
	if fe.Path.YAML() != "sampler.step.eta" || fe.Msg != "must be finite and > 0, got -1" {
		t.Errorf("path %q, message %q", fe.Path.YAML(), fe.Msg)
	}
	// The inner error is not changed by wrapping it.
	if inner.Error() != "Eta: must be finite and > 0, got -1" {
		t.Errorf("inner error changed to %q", inner)
	}
	if Wrap(nil, At("X", "x")) != nil {
		t.Error("Wrap(nil) is not nil")
	}
}

func TestWrapPlainErrorAndCause(t *testing.T) {
	err := Wrap(io.ErrUnexpectedEOF, At("Data", "data"))
	if err.Error() != "Data: unexpected EOF" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%q (is EOF: %v)", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
	err = Errorf(At("CSV", "csv"), "cannot read: %w", io.ErrUnexpectedEOF)
	if err.Error() != "CSV: cannot read: unexpected EOF" || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%q (is EOF: %v)", err, errors.Is(err, io.ErrUnexpectedEOF))
	}
	if got := Errorf(nil, "set exactly one").Error(); got != "set exactly one" {
		t.Errorf("an error about the value itself reads %q", got)
	}
}
