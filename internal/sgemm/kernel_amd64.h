// Macros shared by the AVX2 and the AVX-512 kernels (kernel_amd64.s,
// kernel_avx512_amd64.s): their arguments and their loops over the depth, with the
// registers those files describe.

// ARGS loads the arguments shared by the kernels: CX the depth, SI packed A, DX packed B,
// DI the first row of C and R8 its row stride in bytes.
#define ARGS \
	MOVQ depth+0(FP), CX; \
	MOVQ ap+8(FP), SI; \
	MOVQ bp+16(FP), DX; \
	MOVQ c+24(FP), DI; \
	MOVQ ldc+32(FP), R8; \
	SHLQ $2, R8

// DARGS loads the arguments of a direct kernel: CX the depth, SI row 0 of A and R13 row
// 3, R10 the row stride and R12 the step stride of A in bytes, DX B's values at step 0 and
// R11 its step stride in bytes, DI the first row of C and R8 its row stride in bytes.
#define DARGS \
	MOVQ depth+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ rs+16(FP), R10; \
	SHLQ $2, R10; \
	MOVQ cs+24(FP), R12; \
	SHLQ $2, R12; \
	MOVQ bp+32(FP), DX; \
	MOVQ bs+40(FP), R11; \
	SHLQ $2, R11; \
	MOVQ c+48(FP), DI; \
	MOVQ ldc+56(FP), R8; \
	SHLQ $2, R8; \
	LEAQ (SI)(R10*2), R13; \
	ADDQ R10, R13

// KLOOP runs the step macro S over the depth in CX, four steps of k per iteration and
// then the remaining 0..3 one at a time, and falls through to the label store.
#define KLOOP(S) \
	MOVQ CX, R9; \
	SHRQ $2, R9; \
	JZ   tail; \
loop4: \
	S(0, 0); \
	S(24, 64); \
	S(48, 128); \
	S(72, 192); \
	ADDQ $96, SI; \
	ADDQ $256, DX; \
	DECQ R9; \
	JNZ  loop4; \
tail: \
	ANDQ $3, CX; \
	JZ   store; \
loop1: \
	S(0, 0); \
	ADDQ $24, SI; \
	ADDQ $64, DX; \
	DECQ CX; \
	JNZ  loop1

// DKLOOP is KLOOP for a direct kernel's step macro S, which moves along A itself; B's
// values move on by the stride in R11 after each step.
#define DKLOOP(S) \
	MOVQ CX, R9; \
	SHRQ $2, R9; \
	JZ   tail; \
loop4: \
	S; \
	ADDQ R11, DX; \
	S; \
	ADDQ R11, DX; \
	S; \
	ADDQ R11, DX; \
	S; \
	ADDQ R11, DX; \
	DECQ R9; \
	JNZ  loop4; \
tail: \
	ANDQ $3, CX; \
	JZ   store; \
loop1: \
	S; \
	ADDQ R11, DX; \
	DECQ CX; \
	JNZ  loop1
