#include "textflag.h"

// AVX2/FMA kernels of rowdots.go: one query row against rows of width d (a multiple of
// 8) stored contiguously, at the speed the rows stream from memory.

// func dotRowsAVX2(s, k, q *float32, m, d int, alpha float32)
// Four rows at a time: one accumulator each over the d/8 vectors of the row, the query's
// vector loaded once for the four; the four are then reduced together by horizontal adds.
// The last m mod 4 rows one at a time.
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-44
	MOVQ         s+0(FP), DI
	MOVQ         k+8(FP), SI
	MOVQ         q+16(FP), DX
	MOVQ         m+24(FP), CX
	MOVQ         d+32(FP), BX
	VBROADCASTSS alpha+40(FP), X7
	MOVQ         BX, R8
	SHLQ         $2, R8             // row stride in bytes
	SHRQ         $3, BX             // vectors per row
	MOVQ         CX, R13
	ANDQ         $3, R13            // rows after the groups
	SHRQ         $2, CX             // groups of four rows
	JZ           dotrest

dotgroup:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	LEAQ   (SI)(R8*1), R9
	LEAQ   (R9)(R8*1), R10
	LEAQ   (R10)(R8*1), R11
	XORQ   AX, AX
	MOVQ   BX, R12

dotvec:
	VMOVUPS     (DX)(AX*1), Y4
	VFMADD231PS (SI)(AX*1), Y4, Y0
	VFMADD231PS (R9)(AX*1), Y4, Y1
	VFMADD231PS (R10)(AX*1), Y4, Y2
	VFMADD231PS (R11)(AX*1), Y4, Y3
	ADDQ        $32, AX
	DECQ        R12
	JNZ         dotvec

	VHADDPS      Y1, Y0, Y0 // per lane: row 0's pair sums, row 1's
	VHADDPS      Y3, Y2, Y2 // rows 2 and 3
	VHADDPS      Y2, Y0, Y0 // per lane: the four rows' sums
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMULPS       X7, X0, X0
	VMOVUPS      X0, (DI)
	ADDQ         $16, DI
	LEAQ         (R11)(R8*1), SI
	DECQ         CX
	JNZ          dotgroup

dotrest:
	TESTQ R13, R13
	JZ    dotdone

dotrow:
	VXORPS Y0, Y0, Y0
	XORQ   AX, AX
	MOVQ   BX, R12

dotrowvec:
	VMOVUPS     (DX)(AX*1), Y4
	VFMADD231PS (SI)(AX*1), Y4, Y0
	ADDQ        $32, AX
	DECQ        R12
	JNZ         dotrowvec

	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VMULSS       X7, X0, X0
	VMOVSS       X0, (DI)
	ADDQ         $4, DI
	ADDQ         R8, SI
	DECQ         R13
	JNZ          dotrow

dotdone:
	VZEROUPPER
	RET

// ROWS and NEXT enclose the loop over the m rows for the columns at SI: the row pointer
// R9, the row index AX and p[AX] broadcast in Y8.
#define ROWS(label) \
	MOVQ SI, R9; \
	XORQ AX, AX; \
label:; \
	VBROADCASTSS (DX)(AX*4), Y8

#define NEXT(label) \
	ADDQ R8, R9; \
	INCQ AX; \
	CMPQ AX, CX; \
	JLT  label

// func weightedSumAVX2(out, p, v *float32, m, d int)
// Blocks of 64 columns in eight accumulators, then of 32 in four, then of 8 in one; each
// block streams the m rows once.
TEXT ·weightedSumAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ p+8(FP), DX
	MOVQ v+16(FP), SI
	MOVQ m+24(FP), CX
	MOVQ d+32(FP), BX
	MOVQ BX, R8
	SHLQ $2, R8       // row stride in bytes

w64:
	CMPQ   BX, $64
	JLT    w32
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	ROWS(w64rows)
	VFMADD231PS (R9), Y8, Y0
	VFMADD231PS 32(R9), Y8, Y1
	VFMADD231PS 64(R9), Y8, Y2
	VFMADD231PS 96(R9), Y8, Y3
	VFMADD231PS 128(R9), Y8, Y4
	VFMADD231PS 160(R9), Y8, Y5
	VFMADD231PS 192(R9), Y8, Y6
	VFMADD231PS 224(R9), Y8, Y7
	NEXT(w64rows)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y4, 128(DI)
	VMOVUPS Y5, 160(DI)
	VMOVUPS Y6, 192(DI)
	VMOVUPS Y7, 224(DI)
	ADDQ    $256, SI
	ADDQ    $256, DI
	SUBQ    $64, BX
	JMP     w64

w32:
	CMPQ   BX, $32
	JLT    w8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	ROWS(w32rows)
	VFMADD231PS (R9), Y8, Y0
	VFMADD231PS 32(R9), Y8, Y1
	VFMADD231PS 64(R9), Y8, Y2
	VFMADD231PS 96(R9), Y8, Y3
	NEXT(w32rows)
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DI
	SUBQ    $32, BX

w8:
	CMPQ   BX, $8
	JLT    wdone
	VXORPS Y0, Y0, Y0
	ROWS(w8rows)
	VFMADD231PS (R9), Y8, Y0
	NEXT(w8rows)
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, BX
	JMP     w8

wdone:
	VZEROUPPER
	RET
