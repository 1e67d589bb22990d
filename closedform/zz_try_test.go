package closedform

import (
	"fmt"
	"testing"
)

func TestZZTry(t *testing.T) {
	c := Counterexample{N: 100, Alpha: 1e-300, Beta: 1, XH: 1.8, C: 1}
	c.Eta = c.EtaScaled(2)
	m, err := c.Moments(1)
	fmt.Printf("%+v %v\n", m, err)
	q := m.mixture()
	fmt.Println(q.logCDF(0, true))
	fmt.Println(q.logChernoff())
	d := c.Domain(0.1, 0.9)
	fmt.Println(d.PosteriorDP(1e-3, A1Printed))
	fmt.Println(d.MaxOrder(), d.eps1(1.5, A1Printed), d.eps1Slope(A1Printed))
}
