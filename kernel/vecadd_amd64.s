#include "textflag.h"

// The AVX2 elementwise sum of elementwise.go's addRange: eight float32 sums per
// instruction, each rounded once as the scalar sum is, so that results equal the portable
// loop's bit for bit.

// func add32AVX2(y, a, b *float32, n int)
// y[i] = a[i] + b[i] for i < n (n a multiple of 8); y may be a or b.
TEXT ·add32AVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   adddone
	MOVQ CX, BX
	SHRQ $2, BX
	JZ   addone

addfour:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VADDPS  64(DX), Y2, Y2
	VADDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	DECQ    BX
	JNZ     addfour
	ANDQ    $3, CX
	JZ      adddone

addone:
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	DECQ    CX
	JNZ     addone

adddone:
	VZEROUPPER
	RET
