#include "textflag.h"

// AdamUpdate's loop in AVX2, eight float32 elements per step, each operation rounded as
// the portable loop rounds it (no fused multiply-add), so that results equal it bit for
// bit. The scalars are AdamStep[float32]'s fields in order: Keep, Beta1, OneMinusB1,
// Beta2, OneMinusB2, StepSize, InvRootBc2, Eps.

// func adam32AVX2(x, dx, m, v *float32, n int, s *AdamStep[float32])
TEXT ·adam32AVX2(SB), NOSPLIT, $0-48
	MOVQ         x+0(FP), DI
	MOVQ         dx+8(FP), SI
	MOVQ         m+16(FP), DX
	MOVQ         v+24(FP), R8
	MOVQ         n+32(FP), CX
	MOVQ         s+40(FP), AX
	VBROADCASTSS 0(AX), Y8   // keep
	VBROADCASTSS 4(AX), Y9   // beta1
	VBROADCASTSS 8(AX), Y10  // 1 - beta1
	VBROADCASTSS 12(AX), Y11 // beta2
	VBROADCASTSS 16(AX), Y12 // 1 - beta2
	VBROADCASTSS 20(AX), Y13 // step size
	VBROADCASTSS 24(AX), Y14 // 1 / sqrt(1 - beta2^t)
	VBROADCASTSS 28(AX), Y15 // eps
	SHRQ         $3, CX
	JZ           adamdone

adamloop:
	VMOVUPS (SI), Y0      // g
	VMULPS  (DX), Y9, Y1  // beta1 m
	VMULPS  Y0, Y10, Y2   // (1 - beta1) g
	VADDPS  Y2, Y1, Y1    // m
	VMOVUPS Y1, (DX)
	VMULPS  (R8), Y11, Y3 // beta2 v
	VMULPS  Y0, Y12, Y4   // (1 - beta2) g
	VMULPS  Y0, Y4, Y4    // ((1 - beta2) g) g
	VADDPS  Y4, Y3, Y3    // v
	VMOVUPS Y3, (R8)
	VSQRTPS Y3, Y5
	VMULPS  Y14, Y5, Y5
	VADDPS  Y15, Y5, Y5   // the denominator
	VMULPS  Y1, Y13, Y6   // step size m
	VDIVPS  Y5, Y6, Y6
	VMULPS  (DI), Y8, Y7  // keep p
	VSUBPS  Y6, Y7, Y7
	VMOVUPS Y7, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, R8
	ADDQ    $32, DI
	DECQ    CX
	JNZ     adamloop

adamdone:
	VZEROUPPER
	RET
