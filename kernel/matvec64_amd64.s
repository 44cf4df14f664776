#include "textflag.h"

// AVX2/FMA kernels of matvec64.go: products of a float32 matrix (rows of stride lda
// floats) with a float64 vector, accumulated in float64. Each float32 element is widened
// exactly (VCVTPS2PD) before its multiply-add. n is a multiple of 4.

// MV_ARGS loads the arguments of mulVec64AVX2 and mulVec64x32AVX2: y in DI, a in SI, x in
// DX, n in BX, the row stride in bytes in R8, the groups of four rows in CX (flags set by
// the shift) and the rows after them in R13.
#define MV_ARGS \
	MOVQ y+0(FP), DI; \
	MOVQ a+8(FP), SI; \
	MOVQ x+16(FP), DX; \
	MOVQ m+24(FP), CX; \
	MOVQ n+32(FP), BX; \
	MOVQ lda+40(FP), R8; \
	SHLQ $2, R8; \
	MOVQ CX, R13; \
	ANDQ $3, R13; \
	SHRQ $2, CX

// MV_GROUP zeroes the four rows' accumulators Y0-Y3 and points R9-R11 at rows 1-3 of the
// group at SI; AX, the column, is 0.
#define MV_GROUP \
	VXORPD Y0, Y0, Y0; \
	VXORPD Y1, Y1, Y1; \
	VXORPD Y2, Y2, Y2; \
	VXORPD Y3, Y3, Y3; \
	LEAQ   (SI)(R8*1), R9; \
	LEAQ   (R9)(R8*1), R10; \
	LEAQ   (R10)(R8*1), R11; \
	XORQ   AX, AX

// MV_FMA4 adds the four columns at AX of the four rows times x's, in Y4, into Y0-Y3.
#define MV_FMA4 \
	VCVTPS2PD   (SI)(AX*4), Y5; \
	VCVTPS2PD   (R9)(AX*4), Y6; \
	VCVTPS2PD   (R10)(AX*4), Y7; \
	VCVTPS2PD   (R11)(AX*4), Y8; \
	VFMADD231PD Y5, Y4, Y0; \
	VFMADD231PD Y6, Y4, Y1; \
	VFMADD231PD Y7, Y4, Y2; \
	VFMADD231PD Y8, Y4, Y3; \
	ADDQ        $4, AX

// MV_STORE4 reduces each of Y0-Y3 as (lane 0 + lane 1) + (lane 2 + lane 3), writes the
// four sums at DI and moves DI and SI to the next group. VHADDPD gives rows 0, 1 (and 2,
// 3) as (0 + 1), (0 + 1), (2 + 3), (2 + 3); VPERM2F128 and VBLENDPD line up each row's
// two halves.
#define MV_STORE4 \
	VHADDPD    Y1, Y0, Y0; \
	VHADDPD    Y3, Y2, Y2; \
	VPERM2F128 $0x21, Y2, Y0, Y5; \
	VBLENDPD   $0xC, Y2, Y0, Y6; \
	VADDPD     Y5, Y6, Y0; \
	VMOVUPD    Y0, (DI); \
	ADDQ       $32, DI; \
	LEAQ       (R11)(R8*1), SI

// MV_STORE1 reduces Y0 as MV_STORE4 does a row, writes the sum at DI and moves DI and SI
// to the next row.
#define MV_STORE1 \
	VEXTRACTF128 $1, Y0, X1; \
	VHADDPD      X0, X0, X0; \
	VHADDPD      X1, X1, X1; \
	VADDSD       X1, X0, X0; \
	VMOVSD       X0, (DI); \
	ADDQ         $8, DI; \
	ADDQ         R8, SI

// func mulVec64AVX2(y *float64, a *float32, x *float64, m, n, lda int)
// y_i = a_i . x for rows i < m, four rows at a time: one accumulator of four lanes per row
// (lane k sums the columns j = k mod 4), reduced as (lane 0 + lane 1) + (lane 2 + lane 3);
// the last m mod 4 rows one at a time, reduced the same way.
TEXT ·mulVec64AVX2(SB), NOSPLIT, $0-48
	MV_ARGS
	JZ mvrest

mvgroup:
	MV_GROUP

mvvec:
	VMOVUPD (DX)(AX*8), Y4
	MV_FMA4
	CMPQ    AX, BX
	JLT     mvvec
	MV_STORE4
	DECQ    CX
	JNZ     mvgroup

mvrest:
	TESTQ R13, R13
	JZ    mvdone

mvrow:
	VXORPD Y0, Y0, Y0
	XORQ   AX, AX

mvrowvec:
	VCVTPS2PD   (SI)(AX*4), Y5
	VFMADD231PD (DX)(AX*8), Y5, Y0
	ADDQ        $4, AX
	CMPQ        AX, BX
	JLT         mvrowvec
	MV_STORE1
	DECQ        R13
	JNZ         mvrow

mvdone:
	VZEROUPPER
	RET

// func mulVec64x32AVX2(y *float64, a *float32, x *float32, m, n, lda int)
// mulVec64AVX2 for a float32 x, widened exactly as it is read.
TEXT ·mulVec64x32AVX2(SB), NOSPLIT, $0-48
	MV_ARGS
	JZ mxrest

mxgroup:
	MV_GROUP

mxvec:
	VCVTPS2PD (DX)(AX*4), Y4
	MV_FMA4
	CMPQ      AX, BX
	JLT       mxvec
	MV_STORE4
	DECQ      CX
	JNZ       mxgroup

mxrest:
	TESTQ R13, R13
	JZ    mxdone

mxrow:
	VXORPD Y0, Y0, Y0
	XORQ   AX, AX

mxrowvec:
	VCVTPS2PD   (SI)(AX*4), Y5
	VCVTPS2PD   (DX)(AX*4), Y4
	VFMADD231PD Y4, Y5, Y0
	ADDQ        $4, AX
	CMPQ        AX, BX
	JLT         mxrowvec
	MV_STORE1
	DECQ        R13
	JNZ         mxrow

mxdone:
	VZEROUPPER
	RET

// func mulTVecAdd64AVX2(y *float64, a *float32, x *float64, m, n, lda int)
// y_j += sum_{i < m} x_i a_ij for columns j < n: sixteen columns at a time in four
// accumulators while the rows stream by, then the last n mod 16 four at a time; each y_j
// is y_j plus the row terms added in row order.
TEXT ·mulTVecAdd64AVX2(SB), NOSPLIT, $0-48
	MOVQ y+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DX
	MOVQ m+24(FP), CX
	MOVQ n+32(FP), BX
	MOVQ lda+40(FP), R8
	SHLQ $2, R8          // row stride in bytes
	MOVQ BX, R13
	ANDQ $15, R13        // columns after the blocks of sixteen
	SHRQ $4, BX          // blocks of sixteen columns
	JZ   mtrest

mtblock:
	VMOVUPD (DI), Y0
	VMOVUPD 32(DI), Y1
	VMOVUPD 64(DI), Y2
	VMOVUPD 96(DI), Y3
	MOVQ    SI, R9
	XORQ    AX, AX

mtrow:
	VBROADCASTSD (DX)(AX*8), Y4
	VCVTPS2PD    (R9), Y5
	VCVTPS2PD    16(R9), Y6
	VCVTPS2PD    32(R9), Y7
	VCVTPS2PD    48(R9), Y8
	VFMADD231PD  Y5, Y4, Y0
	VFMADD231PD  Y6, Y4, Y1
	VFMADD231PD  Y7, Y4, Y2
	VFMADD231PD  Y8, Y4, Y3
	ADDQ         R8, R9
	INCQ         AX
	CMPQ         AX, CX
	JLT          mtrow

	VMOVUPD Y0, (DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $64, SI
	DECQ    BX
	JNZ     mtblock

mtrest:
	SHRQ $2, R13         // blocks of four columns
	JZ   mtdone

mtfour:
	VMOVUPD (DI), Y0
	MOVQ    SI, R9
	XORQ    AX, AX

mtfourrow:
	VBROADCASTSD (DX)(AX*8), Y4
	VCVTPS2PD    (R9), Y5
	VFMADD231PD  Y5, Y4, Y0
	ADDQ         R8, R9
	INCQ         AX
	CMPQ         AX, CX
	JLT          mtfourrow

	VMOVUPD Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $16, SI
	DECQ    R13
	JNZ     mtfour

mtdone:
	VZEROUPPER
	RET
