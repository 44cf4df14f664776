#include "textflag.h"

// AVX2/FMA kernels of row reductions: the row sums of layernorm.go's rowStats, float32
// values widened to float64 four at a time (VCVTPS2PD) and summed in two float64 vectors,
// so that the sums keep float64 accuracy; and SoftmaxRow's maximum.

// func sum32AVX2(x *float32, n int) float64
TEXT ·sum32AVX2(SB), NOSPLIT, $0-24
	MOVQ   x+0(FP), SI
	MOVQ   n+8(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	SHRQ   $3, CX
	JZ     sumdone

sumloop:
	VCVTPS2PD (SI), Y2
	VCVTPS2PD 16(SI), Y3
	VADDPD    Y2, Y0, Y0
	VADDPD    Y3, Y1, Y1
	ADDQ      $32, SI
	DECQ      CX
	JNZ       sumloop

sumdone:
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+16(FP)
	RET

// func sqDev32AVX2(x *float32, n int, mean float64) float64
TEXT ·sqDev32AVX2(SB), NOSPLIT, $0-32
	MOVQ         x+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSD mean+16(FP), Y4
	VXORPD       Y0, Y0, Y0
	VXORPD       Y1, Y1, Y1
	SHRQ         $3, CX
	JZ           sqdone

sqloop:
	VCVTPS2PD   (SI), Y2
	VCVTPS2PD   16(SI), Y3
	VSUBPD      Y4, Y2, Y2
	VSUBPD      Y4, Y3, Y3
	VFMADD231PD Y2, Y2, Y0
	VFMADD231PD Y3, Y3, Y1
	ADDQ        $32, SI
	DECQ        CX
	JNZ         sqloop

sqdone:
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VHADDPD      X0, X0, X0
	VZEROUPPER
	MOVSD        X0, ret+24(FP)
	RET

// func max32AVX2(x *float32, n int) float32
// The largest of the n floats at x (n a multiple of 8, at least 8), in two vectors of
// running maxima. With a NaN among them, the result is unspecified (VMAXPS returns its
// second operand when either is NaN).
TEXT ·max32AVX2(SB), NOSPLIT, $0-20
	MOVQ    x+0(FP), SI
	MOVQ    n+8(FP), CX
	VMOVUPS (SI), Y0
	VMOVAPS Y0, Y1
	ADDQ    $32, SI
	SHRQ    $3, CX
	DECQ    CX
	JZ      maxdone

maxloop:
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	DECQ   CX
	JZ     maxdone
	VMAXPS (SI), Y1, Y1
	ADDQ   $32, SI
	DECQ   CX
	JNZ    maxloop

maxdone:
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0x4e, X0, X1
	VMAXPS       X1, X0, X0
	VPERMILPS    $0xb1, X0, X1
	VMAXPS       X1, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+16(FP)
	RET
