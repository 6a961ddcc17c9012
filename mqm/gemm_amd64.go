//go:build !purego

package mqm

import (
	"golang.org/x/sys/cpu"

	"github.com/pufferfish-privacy/pufferfish/internal/gemm"
)

// haveKernel: the AVX2 kernel may run (a variable so tests can compare the
// two paths on one machine).
var haveKernel = cpu.X86.HasAVX2

// Vector forms of the product maxima of stationary.go and lazy.go (n a
// positive multiple of 4; gemm_amd64.s).
//
//go:noescape
func minMaxProd4(a, b *float64, n int) (lo, hi float64)

//go:noescape
func maxProd4(a, b *float64, n int) float64

//go:noescape
func minProd4(a, b *float64, n int) float64

//go:noescape
func minMaxInto4(row, hi, lo *float64, n int)

//go:noescape
func mulMax4(a, b, out *float64, n int) float64

// haveWide: the AVX-512 kernel may run.
var haveWide = gemm.HaveWide

//go:noescape
func recip4(in, out *float64, n int)

//go:noescape
func minOf4(x *float64, n int) float64
