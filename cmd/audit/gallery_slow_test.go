//go:build slow

package main

import "testing"

func TestGallerySlowCommands(t *testing.T) { runGallery(t, true) }
