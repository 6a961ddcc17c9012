package noise

import (
	"encoding/binary"
	"math/rand/v2"
)

// Seeded returns a reproducible Source: ChaCha8 keyed by seed. It is for
// experiments and attacks that must be repeatable, never for a release's
// noise (Secure).
func Seeded(seed uint64) Source {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	return rand.New(rand.NewChaCha8(key))
}
