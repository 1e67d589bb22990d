// Package samples is "audit analyze": precomputed runs on D and on D′ read
// from .csv, .csv.gz or NumPy .npy files under limits on their size (File,
// ReadFile; the .npy header is parsed without trusting it), laid out as
// release points (Build), or from two directories of CmdStan chain files,
// one chain one run, its releases chosen draws of chosen columns
// (ReadStanDirs, BuildStan), checked for rows that repeat more often than
// independent runs would, and audited like the runs of a sampler (Job). It
// also records the releases of "audit run --save-releases" in the CSV
// layout it reads back (Recorder), so that an analysis of the saved runs
// splits them exactly as the run did.
package samples
