#include "textflag.h"

// The AVX2 scalings of elementwise.go: eight float32 products per step, each rounded as
// the scalar loop rounds it, so that results equal the portable loop's bit for bit.

// func scale32AVX2(y, x *float32, s float32, n int)
// y[i] = s * x[i] for i < n (n a multiple of 8); y may be x.
TEXT ·scale32AVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS s+16(FP), Y15
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	JZ           scaledone

scaleloop:
	VMULPS  (SI), Y15, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     scaleloop

scaledone:
	VZEROUPPER
	RET

// WIDE_PRODUCTS writes into X0 and X1 the eight products float32(float64(x[i]) * f) of the
// floats at SI and the factor f in all four lanes of Y15: each taken in float64 and
// rounded once, as the scalar conversion does.
#define WIDE_PRODUCTS \
	VCVTPS2PD  (SI), Y0; \
	VCVTPS2PD  16(SI), Y1; \
	VMULPD     Y15, Y0, Y0; \
	VMULPD     Y15, Y1, Y1; \
	VCVTPD2PSY Y0, X0; \
	VCVTPD2PSY Y1, X1

// func scaleWide32AVX2(y, x *float32, f float64, n int)
// y[i] = float32(float64(x[i]) * f) for i < n (n a multiple of 8); y may be x. The
// product is taken in float64 and rounded once to float32, as the scalar conversion does.
TEXT ·scaleWide32AVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSD f+16(FP), Y15
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	JZ           widedone

wideloop:
	WIDE_PRODUCTS
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     wideloop

widedone:
	VZEROUPPER
	RET

// func subScaled32AVX2(y, x *float32, f float32, n int)
// y[i] = y[i] - f * x[i] for i < n (n a multiple of 8): the product rounded, then the
// difference, as the scalar loop does.
TEXT ·subScaled32AVX2(SB), NOSPLIT, $0-32
	MOVQ         y+0(FP), DI
	MOVQ         x+8(FP), SI
	VBROADCASTSS f+16(FP), Y15
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	JZ           subdone

subloop:
	VMULPS  (SI), Y15, Y0
	VMOVUPS (DI), Y1
	VSUBPS  Y0, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     subloop

subdone:
	VZEROUPPER
	RET

// func scaleDiffWide32AVX2(y, d, v *float32, f float64, s float32, n int)
// y[i] = s * (d[i] - float32(float64(v[i]) * f)) for i < n (n a multiple of 8): the
// product taken in float64 and rounded once to float32, then the difference and the
// scaling in float32, as the scalar loop does.
TEXT ·scaleDiffWide32AVX2(SB), NOSPLIT, $0-48
	MOVQ         y+0(FP), DI
	MOVQ         d+8(FP), DX
	MOVQ         v+16(FP), SI
	VBROADCASTSD f+24(FP), Y15
	VBROADCASTSS s+32(FP), X14
	MOVQ         n+40(FP), CX
	SHRQ         $3, CX
	JZ           diffdone

diffloop:
	WIDE_PRODUCTS
	VMOVUPS (DX), X2
	VMOVUPS 16(DX), X3
	VSUBPS  X0, X2, X2
	VSUBPS  X1, X3, X3
	VMULPS  X14, X2, X2
	VMULPS  X14, X3, X3
	VMOVUPS X2, (DI)
	VMOVUPS X3, 16(DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     diffloop

diffdone:
	VZEROUPPER
	RET
