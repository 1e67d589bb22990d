package dataset

// Side names the dataset a trial runs on.
type Side uint8

const (
	// SideD is the original dataset D (a "negative" in the counts).
	SideD Side = 0
	// SideDPrime is the neighbour D′ (a "positive").
	SideDPrime Side = 1
)

// String returns "D" or "D′".
func (s Side) String() string {
	if s == SideDPrime {
		return "D′"
	}
	return "D"
}
