module example.com/mysampler

go 1.26.0

require github.com/mcmcaudit/mcmcaudit v0.0.0-00010101000000-000000000000

require (
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.46.0 // indirect
	golang.org/x/tools v0.36.0 // indirect
	gonum.org/v1/gonum v0.17.0 // indirect
)

// Build against the repository this example lives in. Outside it, drop
// this line and require a released version instead (go get
// github.com/mcmcaudit/mcmcaudit@VERSION).
replace github.com/mcmcaudit/mcmcaudit => ../..
