#include "textflag.h"
#include "kernel_amd64.h"

// Register layout of the 6 x 16 micro-kernel (row r of the tile, r = 0..5):
//
//	Y(2r)    sums of row r, columns 0..7
//	Y(2r+1)  sums of row r, columns 8..15
//	Y12 Y13  the 16 values of packed B at the current step of k
//	Y14 Y15  alternately the broadcast value of packed A for the next row
//
//	SI packed A (6 floats per step)   DX packed B (16 floats per step)
//	DI row of C                       R8 row stride of C in bytes
//	CX, R9 loop counters

// STEP2 does one step of k for rows 0 and 1: it loads 16 values of B at byte offset bo
// and, for each of the first 2 values of A at byte offset ao, adds their products into the
// accumulators of its row. STEP4 does the same for rows 0 to 3, STEP for all 6, in the same
// order: a row's sums are the same chain of FMAs in the three, so that the short kernels
// (the first 2 or 4 rows of a tile cut by the edge of A) compute each row as the 6 x 16
// kernel does.
#define STEP2(ao, bo) \
	VMOVUPS      bo(DX), Y12; \
	VMOVUPS      bo+32(DX), Y13; \
	VBROADCASTSS ao(SI), Y14; \
	VFMADD231PS  Y12, Y14, Y0; \
	VFMADD231PS  Y13, Y14, Y1; \
	VBROADCASTSS ao+4(SI), Y15; \
	VFMADD231PS  Y12, Y15, Y2; \
	VFMADD231PS  Y13, Y15, Y3

#define STEP4(ao, bo) \
	STEP2(ao, bo); \
	VBROADCASTSS ao+8(SI), Y14; \
	VFMADD231PS  Y12, Y14, Y4; \
	VFMADD231PS  Y13, Y14, Y5; \
	VBROADCASTSS ao+12(SI), Y15; \
	VFMADD231PS  Y12, Y15, Y6; \
	VFMADD231PS  Y13, Y15, Y7

#define STEP(ao, bo) \
	STEP4(ao, bo); \
	VBROADCASTSS ao+16(SI), Y14; \
	VFMADD231PS  Y12, Y14, Y8; \
	VFMADD231PS  Y13, Y14, Y9; \
	VBROADCASTSS ao+20(SI), Y15; \
	VFMADD231PS  Y12, Y15, Y10; \
	VFMADD231PS  Y13, Y15, Y11

// UPDATE stores row r of the tile as lo, hi + beta (in Y15) * the row of C at DI, then
// moves DI to the next row.
#define UPDATE(lo, hi) \
	VFMADD231PS (DI), Y15, lo; \
	VFMADD231PS 32(DI), Y15, hi; \
	VMOVUPS     lo, (DI); \
	VMOVUPS     hi, 32(DI); \
	ADDQ        R8, DI

// OVERWRITE stores row r of the tile over the row of C at DI, then moves DI to the next row.
#define OVERWRITE(lo, hi) \
	VMOVUPS lo, (DI); \
	VMOVUPS hi, 32(DI); \
	ADDQ    R8, DI

// STORE6 stores the 6 rows of the tile into C at DI, then returns: as UPDATE with beta
// read from the argument at b, or as OVERWRITE without reading C when beta is 0 (or -0).
#define STORE6(b) \
	MOVL         b(FP), AX; \
	ANDL         $0x7fffffff, AX; \
	JZ           overwrite; \
	VBROADCASTSS b(FP), Y15; \
	UPDATE(Y0, Y1); \
	UPDATE(Y2, Y3); \
	UPDATE(Y4, Y5); \
	UPDATE(Y6, Y7); \
	UPDATE(Y8, Y9); \
	UPDATE(Y10, Y11); \
	VZEROUPPER; \
	RET; \
overwrite: \
	OVERWRITE(Y0, Y1); \
	OVERWRITE(Y2, Y3); \
	OVERWRITE(Y4, Y5); \
	OVERWRITE(Y6, Y7); \
	OVERWRITE(Y8, Y9); \
	OVERWRITE(Y10, Y11); \
	VZEROUPPER; \
	RET

// ZERO4 clears the accumulators of rows 0 and 1, ZERO8 of rows 0 to 3.
#define ZERO4 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

#define ZERO8 \
	ZERO4; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7

// func kernel6x16AVX2(depth int, ap, bp, c *float32, ldc int, beta float32)
TEXT ·kernel6x16AVX2(SB), NOSPLIT, $0-44
	ARGS
	ZERO8
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	KLOOP(STEP)

store:
	STORE6(beta+40)

// The short kernels always overwrite c (macro's tile buffer).

// func kernel2x16AVX2(depth int, ap, bp, c *float32, ldc int)
TEXT ·kernel2x16AVX2(SB), NOSPLIT, $0-40
	ARGS
	ZERO4
	KLOOP(STEP2)

store:
	OVERWRITE(Y0, Y1)
	OVERWRITE(Y2, Y3)
	VZEROUPPER
	RET

// func kernel4x16AVX2(depth int, ap, bp, c *float32, ldc int)
TEXT ·kernel4x16AVX2(SB), NOSPLIT, $0-40
	ARGS
	ZERO8
	KLOOP(STEP4)

store:
	OVERWRITE(Y0, Y1)
	OVERWRITE(Y2, Y3)
	OVERWRITE(Y4, Y5)
	OVERWRITE(Y6, Y7)
	VZEROUPPER
	RET

// The direct kernel reads A where it lies instead of from a packed panel: row r of the
// tile at step p of k is the float at A + r*rs + p*cs (rs and cs in floats, shifted to bytes
// here); B's 16 values at step p are at bp + p*bs, packed (bs = 16) or in B's own rows. SI addresses rows 0 to 2 and R13 rows 3 to 5 at the current step, R10 holds rs
// and R12 cs in bytes. Each row's sums are the chain of FMAs of STEP, so that the result
// equals the packed kernel's bit for bit.

// DROW broadcasts the value of A at addr into t and adds its products with the 16 values
// of B in Y12 and Y13 into the row's accumulators lo and hi.
#define DROW(addr, t, lo, hi) \
	VBROADCASTSS addr, t; \
	VFMADD231PS  Y12, t, lo; \
	VFMADD231PS  Y13, t, hi

// DSTEP does one step of k for the 6 rows from the 16 values of B at DX, then moves SI
// and R13 to the next step.
#define DSTEP \
	VMOVUPS (DX), Y12; \
	VMOVUPS 32(DX), Y13; \
	DROW((SI), Y14, Y0, Y1); \
	DROW((SI)(R10*1), Y15, Y2, Y3); \
	DROW((SI)(R10*2), Y14, Y4, Y5); \
	DROW((R13), Y15, Y6, Y7); \
	DROW((R13)(R10*1), Y14, Y8, Y9); \
	DROW((R13)(R10*2), Y15, Y10, Y11); \
	ADDQ    R12, SI; \
	ADDQ    R12, R13

// func kernel6x16DirectAVX2(depth int, a *float32, rs, cs int, bp *float32, bs int, c *float32, ldc int, beta float32)
TEXT ·kernel6x16DirectAVX2(SB), NOSPLIT, $0-68
	DARGS
	ZERO8
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	DKLOOP(DSTEP)

store:
	STORE6(beta+64)
