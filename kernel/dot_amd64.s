#include "textflag.h"

// func dotLanesAVX2(a, b *float32, n int, s *[4]float64)
// s[k] = sum of a[i] b[i] over i = k mod 4, i < n (a multiple of 4, at least 4), each
// sum in float64 in the order of i: one accumulator of four lanes, each product widened
// exactly before its fused multiply-add (a product of two float32 values is exact in
// float64, so the fused add rounds as Dot's separate multiply and add do).
TEXT ·dotLanesAVX2(SB), NOSPLIT, $0-32
	MOVQ   a+0(FP), SI
	MOVQ   b+8(FP), DX
	MOVQ   n+16(FP), CX
	MOVQ   s+24(FP), DI
	VXORPD Y0, Y0, Y0
	XORQ   AX, AX

dotlanes:
	VCVTPS2PD   (SI)(AX*4), Y1
	VCVTPS2PD   (DX)(AX*4), Y2
	VFMADD231PD Y1, Y2, Y0
	ADDQ        $4, AX
	CMPQ        AX, CX
	JLT         dotlanes

	VMOVUPD Y0, (DI)
	VZEROUPPER
	RET
