package program_test

import (
	"context"
	"fmt"

	"github.com/mcmcaudit/mcmcaudit/mechanisms/program"
)

// A pool of a sampler program: Start runs the program and reads its
// handshake, Run serves one trial per request (from any goroutine, in up
// to MaxProcs processes), Close ends the processes. The program here is a
// toy protocol server in POSIX sh (testdata/toy_sampler.sh) whose release
// is a deterministic function of the seed and the side; a real one runs
// its sampler on D or D′ (docs/protocol.md).
func Example() {
	ctx := context.Background()
	pool, hs, err := program.Start(ctx, program.Config{
		Command:  []string{"/bin/sh", "testdata/toy_sampler.sh"},
		MaxProcs: 2,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
	fmt.Println("handshake:", hs)
	for i, r := range []program.Request{
		{Trial: 0, Side: program.SideD, Seed: 1234},
		{Trial: 1, Side: program.SideDPrime, Seed: 1234},
		{Trial: 2, Side: program.SideD, Seed: 18446744073709551557},
	} {
		res, err := pool.Run(ctx, r)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%d: %v → %v\n", i, r, res.Releases)
	}
	// Output:
	// handshake: {dim 1, releases ["final"]}
	// 0: trial 0 (side D, seed 1234) → [[0.34]]
	// 1: trial 1 (side D', seed 1234) → [[1.34]]
	// 2: trial 2 (side D, seed 18446744073709551557) → [[0.57]]
}
