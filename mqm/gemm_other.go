//go:build !amd64 || purego

package mqm

var haveKernel = false

func minMaxProd4(a, b *float64, n int) (lo, hi float64) { panic("mqm: no kernel") }
func maxProd4(a, b *float64, n int) float64             { panic("mqm: no kernel") }
func minProd4(a, b *float64, n int) float64             { panic("mqm: no kernel") }

func minMaxInto4(row, hi, lo *float64, n int) { panic("mqm: no kernel") }

func mulMax4(a, b, out *float64, n int) float64 { panic("mqm: no kernel") }

var haveWide = false

func recip4(in, out *float64, n int) { panic("mqm: no kernel") }

func minOf4(x *float64, n int) float64 { panic("mqm: no kernel") }
