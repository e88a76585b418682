package driver

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"fmt"
)

// What the container drivers' images hold: nothing but the static lbbench
// binary, run as an unprivileged user.
const (
	// ImageBinary is where the binary sits in the image.
	ImageBinary = "/lbbench"
	// ImageUser is the unprivileged user the image runs as ("nobody").
	ImageUser = "65534:65534"
	// LabelImage marks lbbench's images.
	LabelImage = "lbbench.image"
)

// BinaryTag is the tag of the image holding the binary data: the first 16
// hex digits of its SHA-256, so that an unchanged binary keeps its tag.
func BinaryTag(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:8])
}

// CheckStatic returns an error unless the ELF file at path is statically
// linked, as a binary must be to run in an image with nothing else in it.
func CheckStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("image: %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("image: %s is dynamically linked and cannot run in a FROM scratch image; build it with CGO_ENABLED=0 (make build does)", path)
		}
	}
	return nil
}
