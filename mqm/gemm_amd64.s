//go:build !purego

#include "textflag.h"

// func minMaxProd4(a, b *float64, n int) (lo, hi float64)
//
// min and max over v < n of a[v]·b[v] (n a positive multiple of 4), each
// product rounded once (VMULPD), for positive finite products: the same
// floats as a scalar loop (a minimum or maximum is exact).
TEXT ·minMaxProd4(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VMOVUPD (SI), Y0
	VMULPD  (DI), Y0, Y0
	VMOVAPD Y0, Y1
	VMOVAPD Y0, Y2
	VMOVAPD Y0, Y3
	MOVQ    $4, AX

mm8:
	LEAQ    8(AX), BX
	CMPQ    BX, CX
	JGT     mm4
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (DI)(AX*8), Y4, Y4
	VMOVUPD 32(SI)(AX*8), Y5
	VMULPD  32(DI)(AX*8), Y5, Y5
	VMINPD  Y4, Y0, Y0
	VMAXPD  Y4, Y2, Y2
	VMINPD  Y5, Y1, Y1
	VMAXPD  Y5, Y3, Y3
	MOVQ    BX, AX
	JMP     mm8

mm4:
	CMPQ    AX, CX
	JGE     mmreduce
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (DI)(AX*8), Y4, Y4
	VMINPD  Y4, Y0, Y0
	VMAXPD  Y4, Y2, Y2

mmreduce:
	VMINPD       Y1, Y0, Y0
	VMAXPD       Y3, Y2, Y2
	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINSD       X1, X0, X0
	VEXTRACTF128 $1, Y2, X3
	VMAXPD       X3, X2, X2
	VPERMILPD    $1, X2, X3
	VMAXSD       X3, X2, X2
	VMOVSD       X0, lo+24(FP)
	VMOVSD       X2, hi+32(FP)
	VZEROUPPER
	RET

// func maxProd4(a, b *float64, n int) float64
//
// max over v < n of a[v]·b[v] (n a positive multiple of 4), as minMaxProd4.
TEXT ·maxProd4(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VMOVUPD (SI), Y0
	VMULPD  (DI), Y0, Y0
	VMOVAPD Y0, Y1
	MOVQ    $4, AX

mx8:
	LEAQ    8(AX), BX
	CMPQ    BX, CX
	JGT     mx4
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (DI)(AX*8), Y4, Y4
	VMOVUPD 32(SI)(AX*8), Y5
	VMULPD  32(DI)(AX*8), Y5, Y5
	VMAXPD  Y4, Y0, Y0
	VMAXPD  Y5, Y1, Y1
	MOVQ    BX, AX
	JMP     mx8

mx4:
	CMPQ    AX, CX
	JGE     mxreduce
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (DI)(AX*8), Y4, Y4
	VMAXPD  Y4, Y0, Y0

mxreduce:
	VMAXPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMAXSD       X1, X0, X0
	VMOVSD       X0, ret+24(FP)
	VZEROUPPER
	RET

// func minProd4(a, b *float64, n int) float64
TEXT ·minProd4(SB), NOSPLIT, $0-32
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VMOVUPD (SI), Y0
	VMULPD  (DI), Y0, Y0
	VMOVAPD Y0, Y1
	MOVQ    $4, AX

mn8:
	LEAQ    8(AX), BX
	CMPQ    BX, CX
	JGT     mn4
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (DI)(AX*8), Y4, Y4
	VMOVUPD 32(SI)(AX*8), Y5
	VMULPD  32(DI)(AX*8), Y5, Y5
	VMINPD  Y4, Y0, Y0
	VMINPD  Y5, Y1, Y1
	MOVQ    BX, AX
	JMP     mn8

mn4:
	CMPQ    AX, CX
	JGE     mnreduce
	VMOVUPD (SI)(AX*8), Y4
	VMULPD  (DI)(AX*8), Y4, Y4
	VMINPD  Y4, Y0, Y0

mnreduce:
	VMINPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINSD       X1, X0, X0
	VMOVSD       X0, ret+24(FP)
	VZEROUPPER
	RET

// func minMaxInto4(row, hi, lo *float64, n int)
//
// hi[v] = max(hi[v], row[v]) and lo[v] = min(lo[v], row[v]) for v < n (n a
// positive multiple of 4), for positive finite entries.
TEXT ·minMaxInto4(SB), NOSPLIT, $0-32
	MOVQ row+0(FP), SI
	MOVQ hi+8(FP), DI
	MOVQ lo+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ AX, AX

mi4:
	VMOVUPD (SI)(AX*8), Y0
	VMAXPD  (DI)(AX*8), Y0, Y1
	VMINPD  (DX)(AX*8), Y0, Y2
	VMOVUPD Y1, (DI)(AX*8)
	VMOVUPD Y2, (DX)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, CX
	JLT     mi4
	VZEROUPPER
	RET

// func mulMax4(a, b, out *float64, n int) float64
//
// out[v] = a[v]·b[v] for v < n (n a positive multiple of 4), one rounding
// each, and the maximum of those products (non-negative, not NaN).
TEXT ·mulMax4(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ out+16(FP), DX
	MOVQ n+24(FP), CX
	VXORPD Y1, Y1, Y1
	XORQ AX, AX

mm4loop:
	VMOVUPD (SI)(AX*8), Y0
	VMULPD  (DI)(AX*8), Y0, Y0
	VMOVUPD Y0, (DX)(AX*8)
	VMAXPD  Y0, Y1, Y1
	ADDQ    $4, AX
	CMPQ    AX, CX
	JLT     mm4loop

	VEXTRACTF128 $1, Y1, X0
	VMAXPD       X0, X1, X1
	VPERMILPD    $1, X1, X0
	VMAXSD       X0, X1, X1
	VMOVSD       X1, ret+32(FP)
	VZEROUPPER
	RET

// func recip4(in, out *float64, n int)
//
// out[v] = 1/in[v] for v < n (n a positive multiple of 4): VDIVPD is the
// correctly rounded quotient, as DIVSD.
TEXT ·recip4(SB), NOSPLIT, $0-24
	MOVQ in+0(FP), SI
	MOVQ out+8(FP), DI
	MOVQ n+16(FP), CX
	MOVQ $0x3ff0000000000000, AX
	MOVQ AX, X1
	VBROADCASTSD X1, Y1
	XORQ AX, AX

rc4:
	VMOVUPD (SI)(AX*8), Y0
	VDIVPD  Y0, Y1, Y2
	VMOVUPD Y2, (DI)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, CX
	JLT     rc4
	VZEROUPPER
	RET

// func minOf4(x *float64, n int) float64
//
// The least of x[0..n) (n a positive multiple of 4), or NaN when any entry
// is NaN (VMINPD alone would drop it).
TEXT ·minOf4(SB), NOSPLIT, $0-24
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPD (SI), Y0
	VXORPD  Y3, Y3, Y3
	XORQ    AX, AX

mo4:
	VMOVUPD (SI)(AX*8), Y1
	VCMPPD  $3, Y1, Y1, Y2
	VORPD   Y2, Y3, Y3
	VMINPD  Y1, Y0, Y0
	ADDQ    $4, AX
	CMPQ    AX, CX
	JLT     mo4

	VEXTRACTF128 $1, Y0, X1
	VMINPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VMINSD       X1, X0, X0
	VMOVMSKPD    Y3, AX
	TESTQ        AX, AX
	JZ           mo4done
	MOVQ         $0x7ff8000000000001, AX
	MOVQ         AX, X0

mo4done:
	VMOVSD X0, ret+16(FP)
	VZEROUPPER
	RET
