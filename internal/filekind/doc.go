// Package filekind names the type of a file for error messages, so that
// every refusal of a path the tool will not read or replace says what the
// path is in the same words, and opens the files the tool reads only if
// they are regular files, without ever blocking on a FIFO.
package filekind
