// Package clip shortens user input that a message echoes, so that a
// one-line error stays one short line whatever the input held (a CSV field
// of megabytes, a program argument of hundreds of kilobytes).
package clip
