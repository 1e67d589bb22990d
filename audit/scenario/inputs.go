package scenario

import "path/filepath"

// InputFile is a file a scenario reads besides itself, with the field that
// names it.
type InputFile struct {
	// Path is resolved as Build resolves it: relative to the scenario
	// file's directory.
	Path string
	// Field is the scenario field, e.g. "data.csv.path".
	Field string
}

// InputFiles returns the data files the scenario reads when it is built
// (data.csv.path, audit.canaries.pool), so that a command can refuse an
// output that would replace one of them.
func (c *Config) InputFiles() []InputFile {
	var out []InputFile
	add := func(path, field string) {
		if path == "" {
			return
		}
		if !filepath.IsAbs(path) && c.baseDir != "" {
			path = filepath.Join(c.baseDir, path)
		}
		out = append(out, InputFile{Path: path, Field: field})
	}
	if c.Data.CSV != nil {
		add(c.Data.CSV.Path, "data.csv.path")
	}
	if c.Audit.Canaries != nil {
		add(c.Audit.Canaries.Pool, "audit.canaries.pool")
	}
	return out
}
