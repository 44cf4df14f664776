#include "textflag.h"
#include "kernel_amd64.h"

// The AVX-512 kernels compute the 6 x 16 tile of kernel6x16AVX2 and kernel6x16DirectAVX2
// with one 16-float ZMM register per row of the tile:
//
//	Z(r)     sums of row r, r = 0..5
//	Z12      the 16 values of B at the current step of k
//	Z14 Z15  alternately the broadcast value of A for the next row
//
// and the other registers as there. Each element of C is the same chain of FMAs as in the
// AVX2 kernels, one per step of k in order, so their results are equal bit for bit.

// ZROW broadcasts the value of A at addr into t and adds its products with B into acc.
#define ZROW(addr, t, acc) \
	VBROADCASTSS addr, t; \
	VFMADD231PS  Z12, t, acc

// ZSTEP does one step of k from packed A at byte offset ao of SI and packed B at byte
// offset bo of DX.
#define ZSTEP(ao, bo) \
	VMOVUPS bo(DX), Z12; \
	ZROW(ao(SI), Z14, Z0); \
	ZROW(ao+4(SI), Z15, Z1); \
	ZROW(ao+8(SI), Z14, Z2); \
	ZROW(ao+12(SI), Z15, Z3); \
	ZROW(ao+16(SI), Z14, Z4); \
	ZROW(ao+20(SI), Z15, Z5)

// ZDSTEP does one step of k from A in place (SI rows 0 to 2, R13 rows 3 to 5, R10 the row
// stride and R12 the step stride, in bytes) and the 16 values of B at DX.
#define ZDSTEP \
	VMOVUPS (DX), Z12; \
	ZROW((SI), Z14, Z0); \
	ZROW((SI)(R10*1), Z15, Z1); \
	ZROW((SI)(R10*2), Z14, Z2); \
	ZROW((R13), Z15, Z3); \
	ZROW((R13)(R10*1), Z14, Z4); \
	ZROW((R13)(R10*2), Z15, Z5); \
	ADDQ    R12, SI; \
	ADDQ    R12, R13

// ZUPDATE stores row acc as acc + beta (in Z15) * the row of C at DI, ZOVERWRITE as acc
// alone; both move DI to the next row (R8 bytes on).
#define ZUPDATE(acc) \
	VFMADD231PS (DI), Z15, acc; \
	VMOVUPS     acc, (DI); \
	ADDQ        R8, DI

#define ZOVERWRITE(acc) \
	VMOVUPS acc, (DI); \
	ADDQ    R8, DI

// ZSTORE6 stores the tile into C at DI and returns: with beta read from the argument at b,
// or without reading C when beta is 0 (or -0).
#define ZSTORE6(b) \
	MOVL         b(FP), AX; \
	ANDL         $0x7fffffff, AX; \
	JZ           overwrite; \
	VBROADCASTSS b(FP), Z15; \
	ZUPDATE(Z0); \
	ZUPDATE(Z1); \
	ZUPDATE(Z2); \
	ZUPDATE(Z3); \
	ZUPDATE(Z4); \
	ZUPDATE(Z5); \
	VZEROUPPER; \
	RET; \
overwrite: \
	ZOVERWRITE(Z0); \
	ZOVERWRITE(Z1); \
	ZOVERWRITE(Z2); \
	ZOVERWRITE(Z3); \
	ZOVERWRITE(Z4); \
	ZOVERWRITE(Z5); \
	VZEROUPPER; \
	RET

#define ZZERO \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5

// func kernel6x16AVX512(depth int, ap, bp, c *float32, ldc int, beta float32)
TEXT ·kernel6x16AVX512(SB), NOSPLIT, $0-44
	ARGS
	ZZERO
	KLOOP(ZSTEP)

store:
	ZSTORE6(beta+40)

// func kernel6x16DirectAVX512(depth int, a *float32, rs, cs int, bp *float32, bs int, c *float32, ldc int, beta float32)
TEXT ·kernel6x16DirectAVX512(SB), NOSPLIT, $0-68
	DARGS
	ZZERO
	DKLOOP(ZDSTEP)

store:
	ZSTORE6(beta+64)

// The wide direct kernel computes a 6 x 32 tile: two 16-column panels of B side by side,
// the first into Z0-Z5 as above and the second into Z6-Z11, with its 16 values of B at
// the current step of k in Z13 and BX its pointer (moving by the same stride R11 as DX).
// Every element of C is the chain of FMAs of the 6 x 16 kernels, so the results are theirs
// bit for bit; twelve independent sums in flight in place of six keep both FMA units busy.

// ZWROW broadcasts the value of A at addr into t and adds its products with both panels
// of B into acc0 and acc1.
#define ZWROW(addr, t, acc0, acc1) \
	VBROADCASTSS addr, t; \
	VFMADD231PS  Z12, t, acc0; \
	VFMADD231PS  Z13, t, acc1

// ZWDSTEP is ZDSTEP for both panels of B.
#define ZWDSTEP \
	VMOVUPS (DX), Z12; \
	VMOVUPS (BX), Z13; \
	ZWROW((SI), Z14, Z0, Z6); \
	ZWROW((SI)(R10*1), Z15, Z1, Z7); \
	ZWROW((SI)(R10*2), Z14, Z2, Z8); \
	ZWROW((R13), Z15, Z3, Z9); \
	ZWROW((R13)(R10*1), Z14, Z4, Z10); \
	ZWROW((R13)(R10*2), Z15, Z5, Z11); \
	ADDQ    R12, SI; \
	ADDQ    R12, R13; \
	ADDQ    R11, DX; \
	ADDQ    R11, BX

// ZWUPDATE stores the row of 32 as acc + beta (in Z15) * the row of C at DI, ZWOVERWRITE
// as acc alone; both move DI to the next row.
#define ZWUPDATE(acc0, acc1) \
	VFMADD231PS (DI), Z15, acc0; \
	VMOVUPS     acc0, (DI); \
	VFMADD231PS 64(DI), Z15, acc1; \
	VMOVUPS     acc1, 64(DI); \
	ADDQ        R8, DI

#define ZWOVERWRITE(acc0, acc1) \
	VMOVUPS acc0, (DI); \
	VMOVUPS acc1, 64(DI); \
	ADDQ    R8, DI

// func kernel6x32DirectAVX512(depth int, a *float32, rs, cs int, bp0, bp1 *float32, bs int, c *float32, ldc int, beta float32)
TEXT ·kernel6x32DirectAVX512(SB), NOSPLIT, $0-76
	MOVQ depth+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R10
	SHLQ $2, R10
	MOVQ cs+24(FP), R12
	SHLQ $2, R12
	MOVQ bp0+32(FP), DX
	MOVQ bp1+40(FP), BX
	MOVQ bs+48(FP), R11
	SHLQ $2, R11
	MOVQ c+56(FP), DI
	MOVQ ldc+64(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R10*2), R13
	ADDQ R10, R13
	ZZERO
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	MOVQ CX, R9
	SHRQ $2, R9
	JZ   wtail

wloop4:
	ZWDSTEP
	ZWDSTEP
	ZWDSTEP
	ZWDSTEP
	DECQ R9
	JNZ  wloop4

wtail:
	ANDQ $3, CX
	JZ   wstore

wloop1:
	ZWDSTEP
	DECQ CX
	JNZ  wloop1

wstore:
	MOVL         beta+72(FP), AX
	ANDL         $0x7fffffff, AX
	JZ           woverwrite
	VBROADCASTSS beta+72(FP), Z15
	ZWUPDATE(Z0, Z6)
	ZWUPDATE(Z1, Z7)
	ZWUPDATE(Z2, Z8)
	ZWUPDATE(Z3, Z9)
	ZWUPDATE(Z4, Z10)
	ZWUPDATE(Z5, Z11)
	VZEROUPPER
	RET

woverwrite:
	ZWOVERWRITE(Z0, Z6)
	ZWOVERWRITE(Z1, Z7)
	ZWOVERWRITE(Z2, Z8)
	ZWOVERWRITE(Z3, Z9)
	ZWOVERWRITE(Z4, Z10)
	ZWOVERWRITE(Z5, Z11)
	VZEROUPPER
	RET
