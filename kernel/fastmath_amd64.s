#include "textflag.h"

// AVX2/FMA kernels of fastmath.go's, gelu.go's and elu.go's float32 functions, 8 floats per step: the same formulas and
// coefficients, with fused multiply-adds (so results may differ from the portable loops
// in the last bit). The GELU kernels compute every lane on the input clamped to
// [-geluFastMax, geluFastMax] and return a bit mask of the 8-float vectors that hold an
// input outside it (or NaN), which their callers recompute exactly.

// Constants, each repeated in the 8 lanes of a 32-byte vector (float32 bit patterns).
#define ONE fastc<>+0(SB)           // 1
#define HALF fastc<>+32(SB)         // 0.5
#define NEGHALF fastc<>+64(SB)      // -0.5
#define NEG3 fastc<>+96(SB)         // -geluFastMax
#define POS3 fastc<>+128(SB)        // geluFastMax
#define SQRT1_2 fastc<>+160(SB)     // sqrt(2)/2
#define INVSQRT2PI fastc<>+192(SB)  // 1/sqrt(2 pi)
#define EP0 fastc<>+224(SB)         // -2.72614225801306e-10
#define EP1 fastc<>+256(SB)         // 2.77068142495902e-08
#define EP2 fastc<>+288(SB)         // -2.10102402082508e-06
#define EP3 fastc<>+320(SB)         // -5.69250639462346e-05
#define EP4 fastc<>+352(SB)         // -0.000734990630326855
#define EP5 fastc<>+384(SB)         // -0.00295459980854025
#define EP6 fastc<>+416(SB)         // -0.0160960333262415
#define EQ0 fastc<>+448(SB)         // -1.45660718464996e-05
#define EQ1 fastc<>+480(SB)         // -0.000213374055278905
#define EQ2 fastc<>+512(SB)         // -0.00168282697438203
#define EQ3 fastc<>+544(SB)         // -0.00737332916720468
#define EQ4 fastc<>+576(SB)         // -0.0142647390514189
#define LOG2E fastc<>+608(SB)       // 1.4426950408889634
#define SHIFTER fastc<>+640(SB)     // 1.5 * 2^23
#define LN2HI fastc<>+672(SB)       // 0.693359375
#define LN2LO fastc<>+704(SB)       // -0.00021219444
#define XP0 fastc<>+736(SB)         // 0.000198756915
#define XP1 fastc<>+768(SB)         // 0.0013981999507
#define XP2 fastc<>+800(SB)         // 0.0083334519073
#define XP3 fastc<>+832(SB)         // 0.041665795894
#define XP4 fastc<>+864(SB)         // 0.16666665459
#define XP5 fastc<>+896(SB)         // 0.50000001201
#define EXPMIN fastc<>+928(SB)      // -87.3
#define BIAS127 fastc<>+960(SB)     // int32 127, the exponent bias
#define ABSMASK32 fastc<>+992(SB)   // 0x7fffffff, clears the sign
#define MINNORMAL32 fastc<>+1024(SB) // 2^-126, the smallest normal float32

DATA fastc<>+0(SB)/8, $0x3f8000003f800000
DATA fastc<>+8(SB)/8, $0x3f8000003f800000
DATA fastc<>+16(SB)/8, $0x3f8000003f800000
DATA fastc<>+24(SB)/8, $0x3f8000003f800000
DATA fastc<>+32(SB)/8, $0x3f0000003f000000
DATA fastc<>+40(SB)/8, $0x3f0000003f000000
DATA fastc<>+48(SB)/8, $0x3f0000003f000000
DATA fastc<>+56(SB)/8, $0x3f0000003f000000
DATA fastc<>+64(SB)/8, $0xbf000000bf000000
DATA fastc<>+72(SB)/8, $0xbf000000bf000000
DATA fastc<>+80(SB)/8, $0xbf000000bf000000
DATA fastc<>+88(SB)/8, $0xbf000000bf000000
DATA fastc<>+96(SB)/8, $0xc0400000c0400000
DATA fastc<>+104(SB)/8, $0xc0400000c0400000
DATA fastc<>+112(SB)/8, $0xc0400000c0400000
DATA fastc<>+120(SB)/8, $0xc0400000c0400000
DATA fastc<>+128(SB)/8, $0x4040000040400000
DATA fastc<>+136(SB)/8, $0x4040000040400000
DATA fastc<>+144(SB)/8, $0x4040000040400000
DATA fastc<>+152(SB)/8, $0x4040000040400000
DATA fastc<>+160(SB)/8, $0x3f3504f33f3504f3
DATA fastc<>+168(SB)/8, $0x3f3504f33f3504f3
DATA fastc<>+176(SB)/8, $0x3f3504f33f3504f3
DATA fastc<>+184(SB)/8, $0x3f3504f33f3504f3
DATA fastc<>+192(SB)/8, $0x3ecc422a3ecc422a
DATA fastc<>+200(SB)/8, $0x3ecc422a3ecc422a
DATA fastc<>+208(SB)/8, $0x3ecc422a3ecc422a
DATA fastc<>+216(SB)/8, $0x3ecc422a3ecc422a
DATA fastc<>+224(SB)/8, $0xaf95df0baf95df0b
DATA fastc<>+232(SB)/8, $0xaf95df0baf95df0b
DATA fastc<>+240(SB)/8, $0xaf95df0baf95df0b
DATA fastc<>+248(SB)/8, $0xaf95df0baf95df0b
DATA fastc<>+256(SB)/8, $0x32edffee32edffee
DATA fastc<>+264(SB)/8, $0x32edffee32edffee
DATA fastc<>+272(SB)/8, $0x32edffee32edffee
DATA fastc<>+280(SB)/8, $0x32edffee32edffee
DATA fastc<>+288(SB)/8, $0xb60cff51b60cff51
DATA fastc<>+296(SB)/8, $0xb60cff51b60cff51
DATA fastc<>+304(SB)/8, $0xb60cff51b60cff51
DATA fastc<>+312(SB)/8, $0xb60cff51b60cff51
DATA fastc<>+320(SB)/8, $0xb86ec2d2b86ec2d2
DATA fastc<>+328(SB)/8, $0xb86ec2d2b86ec2d2
DATA fastc<>+336(SB)/8, $0xb86ec2d2b86ec2d2
DATA fastc<>+344(SB)/8, $0xb86ec2d2b86ec2d2
DATA fastc<>+352(SB)/8, $0xba40ac63ba40ac63
DATA fastc<>+360(SB)/8, $0xba40ac63ba40ac63
DATA fastc<>+368(SB)/8, $0xba40ac63ba40ac63
DATA fastc<>+376(SB)/8, $0xba40ac63ba40ac63
DATA fastc<>+384(SB)/8, $0xbb41a1f6bb41a1f6
DATA fastc<>+392(SB)/8, $0xbb41a1f6bb41a1f6
DATA fastc<>+400(SB)/8, $0xbb41a1f6bb41a1f6
DATA fastc<>+408(SB)/8, $0xbb41a1f6bb41a1f6
DATA fastc<>+416(SB)/8, $0xbc83dbd4bc83dbd4
DATA fastc<>+424(SB)/8, $0xbc83dbd4bc83dbd4
DATA fastc<>+432(SB)/8, $0xbc83dbd4bc83dbd4
DATA fastc<>+440(SB)/8, $0xbc83dbd4bc83dbd4
DATA fastc<>+448(SB)/8, $0xb77460cdb77460cd
DATA fastc<>+456(SB)/8, $0xb77460cdb77460cd
DATA fastc<>+464(SB)/8, $0xb77460cdb77460cd
DATA fastc<>+472(SB)/8, $0xb77460cdb77460cd
DATA fastc<>+480(SB)/8, $0xb95fbd29b95fbd29
DATA fastc<>+488(SB)/8, $0xb95fbd29b95fbd29
DATA fastc<>+496(SB)/8, $0xb95fbd29b95fbd29
DATA fastc<>+504(SB)/8, $0xb95fbd29b95fbd29
DATA fastc<>+512(SB)/8, $0xbadc924ebadc924e
DATA fastc<>+520(SB)/8, $0xbadc924ebadc924e
DATA fastc<>+528(SB)/8, $0xbadc924ebadc924e
DATA fastc<>+536(SB)/8, $0xbadc924ebadc924e
DATA fastc<>+544(SB)/8, $0xbbf19bf8bbf19bf8
DATA fastc<>+552(SB)/8, $0xbbf19bf8bbf19bf8
DATA fastc<>+560(SB)/8, $0xbbf19bf8bbf19bf8
DATA fastc<>+568(SB)/8, $0xbbf19bf8bbf19bf8
DATA fastc<>+576(SB)/8, $0xbc69b6a7bc69b6a7
DATA fastc<>+584(SB)/8, $0xbc69b6a7bc69b6a7
DATA fastc<>+592(SB)/8, $0xbc69b6a7bc69b6a7
DATA fastc<>+600(SB)/8, $0xbc69b6a7bc69b6a7
DATA fastc<>+608(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA fastc<>+616(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA fastc<>+624(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA fastc<>+632(SB)/8, $0x3fb8aa3b3fb8aa3b
DATA fastc<>+640(SB)/8, $0x4b4000004b400000
DATA fastc<>+648(SB)/8, $0x4b4000004b400000
DATA fastc<>+656(SB)/8, $0x4b4000004b400000
DATA fastc<>+664(SB)/8, $0x4b4000004b400000
DATA fastc<>+672(SB)/8, $0x3f3180003f318000
DATA fastc<>+680(SB)/8, $0x3f3180003f318000
DATA fastc<>+688(SB)/8, $0x3f3180003f318000
DATA fastc<>+696(SB)/8, $0x3f3180003f318000
DATA fastc<>+704(SB)/8, $0xb95e8083b95e8083
DATA fastc<>+712(SB)/8, $0xb95e8083b95e8083
DATA fastc<>+720(SB)/8, $0xb95e8083b95e8083
DATA fastc<>+728(SB)/8, $0xb95e8083b95e8083
DATA fastc<>+736(SB)/8, $0x3950696739506967
DATA fastc<>+744(SB)/8, $0x3950696739506967
DATA fastc<>+752(SB)/8, $0x3950696739506967
DATA fastc<>+760(SB)/8, $0x3950696739506967
DATA fastc<>+768(SB)/8, $0x3ab743ce3ab743ce
DATA fastc<>+776(SB)/8, $0x3ab743ce3ab743ce
DATA fastc<>+784(SB)/8, $0x3ab743ce3ab743ce
DATA fastc<>+792(SB)/8, $0x3ab743ce3ab743ce
DATA fastc<>+800(SB)/8, $0x3c0889083c088908
DATA fastc<>+808(SB)/8, $0x3c0889083c088908
DATA fastc<>+816(SB)/8, $0x3c0889083c088908
DATA fastc<>+824(SB)/8, $0x3c0889083c088908
DATA fastc<>+832(SB)/8, $0x3d2aa9c13d2aa9c1
DATA fastc<>+840(SB)/8, $0x3d2aa9c13d2aa9c1
DATA fastc<>+848(SB)/8, $0x3d2aa9c13d2aa9c1
DATA fastc<>+856(SB)/8, $0x3d2aa9c13d2aa9c1
DATA fastc<>+864(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA fastc<>+872(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA fastc<>+880(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA fastc<>+888(SB)/8, $0x3e2aaaaa3e2aaaaa
DATA fastc<>+896(SB)/8, $0x3f0000003f000000
DATA fastc<>+904(SB)/8, $0x3f0000003f000000
DATA fastc<>+912(SB)/8, $0x3f0000003f000000
DATA fastc<>+920(SB)/8, $0x3f0000003f000000
DATA fastc<>+928(SB)/8, $0xc2ae999ac2ae999a
DATA fastc<>+936(SB)/8, $0xc2ae999ac2ae999a
DATA fastc<>+944(SB)/8, $0xc2ae999ac2ae999a
DATA fastc<>+952(SB)/8, $0xc2ae999ac2ae999a
DATA fastc<>+960(SB)/8, $0x0000007f0000007f
DATA fastc<>+968(SB)/8, $0x0000007f0000007f
DATA fastc<>+976(SB)/8, $0x0000007f0000007f
DATA fastc<>+984(SB)/8, $0x0000007f0000007f
DATA fastc<>+992(SB)/8, $0x7fffffff7fffffff
DATA fastc<>+1000(SB)/8, $0x7fffffff7fffffff
DATA fastc<>+1008(SB)/8, $0x7fffffff7fffffff
DATA fastc<>+1016(SB)/8, $0x7fffffff7fffffff
DATA fastc<>+1024(SB)/8, $0x0080000000800000
DATA fastc<>+1032(SB)/8, $0x0080000000800000
DATA fastc<>+1040(SB)/8, $0x0080000000800000
DATA fastc<>+1048(SB)/8, $0x0080000000800000
GLOBL fastc<>(SB), RODATA|NOPTR, $1056

// ERF sets e = erf(z) for 8 floats, |z| <= 4, as erf32s computes it: z p(z^2) / q(z^2).
// z is kept; z2, q are overwritten.
#define ERF(z, e, z2, q) \
	VMULPS      z, z, z2; \
	VMOVUPS     EP0, e; \
	VFMADD213PS EP1, z2, e; \
	VFMADD213PS EP2, z2, e; \
	VFMADD213PS EP3, z2, e; \
	VFMADD213PS EP4, z2, e; \
	VFMADD213PS EP5, z2, e; \
	VFMADD213PS EP6, z2, e; \
	VMOVUPS     EQ0, q; \
	VFMADD213PS EQ1, z2, q; \
	VFMADD213PS EQ2, z2, q; \
	VFMADD213PS EQ3, z2, q; \
	VFMADD213PS EQ4, z2, q; \
	VMULPS      z, e, e; \
	VDIVPS      q, e, e

// EXPREDUCE is the reduction of expNeg32s for 8 floats, -87.3 <= x <= 0: n = round(x log2 e)
// by the shifter, a degree-5 polynomial on r = x - n ln 2 giving u = e^r - 1, and t = 2^n
// put in the exponent bits, so that e^x = t (1 + u). x is kept; n, r are overwritten.
#define EXPREDUCE(x, u, t, n, r) \
	VMOVUPS      SHIFTER, t; \
	VFMADD231PS  LOG2E, x, t; \
	VSUBPS       SHIFTER, t, n; \
	VMOVAPS      x, r; \
	VFNMADD231PS LN2HI, n, r; \
	VFNMADD231PS LN2LO, n, r; \
	VMOVUPS      XP0, u; \
	VFMADD213PS  XP1, r, u; \
	VFMADD213PS  XP2, r, u; \
	VFMADD213PS  XP3, r, u; \
	VFMADD213PS  XP4, r, u; \
	VFMADD213PS  XP5, r, u; \
	VMULPS       r, u, u; \
	VFMADD213PS  r, r, u; \
	VPSUBD       SHIFTER, t, t; \
	VPADDD       BIAS127, t, t; \
	VPSLLD       $23, t, t

// EXP sets e = e^x = 2^n (1 + u) for 8 floats, -87.3 <= x <= 0, as expNeg32s computes it.
// x is kept; t, n, r are overwritten.
#define EXP(x, e, t, n, r) \
	EXPREDUCE(x, e, t, n, r); \
	VADDPS ONE, e, e; \
	VMULPS t, e, e

// EXPM1 sets e = e^x - 1 = 2^n u + (2^n - 1) for 8 floats, -87.3 <= x <= 0, as
// expm1Neg32sGo computes it. x is kept; t, n, r are overwritten.
#define EXPM1(x, e, t, n, r) \
	EXPREDUCE(x, e, t, n, r); \
	VSUBPS      ONE, t, n; \
	VFMADD213PS n, t, e

// EXPNEG sets Y4 = e^Y0 for 8 floats as expNeg32s computes it: positive lanes are taken
// as 0, lanes below -87.3 give 0 and NaN lanes stay NaN. Y15 must hold zeros; Y1-Y3 and
// Y5-Y7 are overwritten.
#define EXPNEG \
	VCMPPS    $0x03, Y0, Y0, Y1; \
	VCMPPS    $0x01, EXPMIN, Y0, Y2; \
	VMINPS    Y15, Y0, Y3; \
	VMAXPS    EXPMIN, Y3, Y3; \
	EXP(Y3, Y4, Y5, Y6, Y7); \
	VANDNPS   Y4, Y2, Y4; \
	VBLENDVPS Y1, Y0, Y4, Y4

// OUTSIDE ORs into acc the lanes of x outside [-geluFastMax, geluFastMax] or NaN, with m
// overwritten, and sets c = x clamped to the range.
#define OUTSIDE(x, c, m, acc) \
	VCMPPS $0x09, NEG3, x, m; \
	VORPS  m, acc, acc; \
	VCMPPS $0x06, POS3, x, m; \
	VORPS  m, acc, acc; \
	VMAXPS NEG3, x, c; \
	VMINPS POS3, c, c

// func expNegAVX2(dst, src *float32, n int)
TEXT ·expNegAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   expdone
	VXORPS Y15, Y15, Y15

exploop:
	VMOVUPS (SI), Y0
	EXPNEG
	VMOVUPS Y4, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       exploop
	VZEROUPPER

expdone:
	RET

// func expShiftSumAVX2(dst, src *float32, n int, shift float32) float64
// dst = e^(src - shift) as expNegAVX2 computes it, and the float64 sum of dst (softmax's
// exponentials and their sum in one pass).
TEXT ·expShiftSumAVX2(SB), NOSPLIT, $0-40
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         n+16(FP), CX
	VBROADCASTSS shift+24(FP), Y14
	VXORPS       Y15, Y15, Y15
	VXORPD       Y12, Y12, Y12
	VXORPD       Y13, Y13, Y13
	SHRQ         $3, CX
	JZ           essdone

essloop:
	VMOVUPS      (SI), Y0
	VSUBPS       Y14, Y0, Y0
	EXPNEG
	VMOVUPS      Y4, (DI)
	VCVTPS2PD    X4, Y5
	VADDPD       Y5, Y12, Y12
	VEXTRACTF128 $1, Y4, X6
	VCVTPS2PD    X6, Y6
	VADDPD       Y6, Y13, Y13
	ADDQ         $32, SI
	ADDQ         $32, DI
	DECQ         CX
	JNZ          essloop

essdone:
	VADDPD       Y13, Y12, Y12
	VEXTRACTF128 $1, Y12, X13
	VADDPD       X13, X12, X12
	VHADDPD      X12, X12, X12
	VZEROUPPER
	MOVSD        X12, ret+32(FP)
	RET

// func eluAVX2(y, x *float32, n int)
TEXT ·eluAVX2(SB), NOSPLIT, $0-24
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   eludone
	VXORPS Y15, Y15, Y15

eluloop:
	VMOVUPS   (SI), Y0
	VCMPPS    $0x03, Y0, Y0, Y1 // NaN lanes
	VCMPPS    $0x0E, Y15, Y0, Y2 // x > 0
	VMINPS    Y15, Y0, Y3
	VMAXPS    EXPMIN, Y3, Y3    // e^-87.3 - 1 rounds to -1
	EXPM1(Y3, Y4, Y5, Y6, Y7)
	VBLENDVPS Y2, Y0, Y4, Y4    // x where x > 0
	VBLENDVPS Y1, Y0, Y4, Y4    // NaN stays NaN
	VMOVUPS   Y4, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DI
	DECQ      CX
	JNZ       eluloop
	VZEROUPPER

eludone:
	RET

// func eluGradAVX2(dx, y, dy *float32, n int)
// dx = dy f with f = min(y, 0) + 1 from the output y = elu(x) (1 where y > 0, e^x
// otherwise; NaN for NaN), the product in float32 and written as 0 where it is subnormal.
// f is 0 or at least 2^-24, so a subnormal product needs |dy| < 2^-102.
TEXT ·eluGradAVX2(SB), NOSPLIT, $0-32
	MOVQ dx+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JZ   elugraddone
	VXORPS Y15, Y15, Y15

elugradloop:
	VMOVUPS (SI), Y0
	VMINPS  Y0, Y15, Y1                // min(0, y): y where either is NaN
	VADDPS  ONE, Y1, Y1
	VMULPS  (DX), Y1, Y1
	VANDPS  ABSMASK32, Y1, Y2
	VCMPPS  $0x01, MINNORMAL32, Y2, Y2 // |dx| < 2^-126 (NaN: false)
	VANDNPS Y1, Y2, Y1                 // flushed to 0
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	DECQ    CX
	JNZ     elugradloop
	VZEROUPPER

elugraddone:
	RET

// func geluAVX2(y, x *float32, n int) (outside uint64)
TEXT ·geluAVX2(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ R10, R10 // outside
	XORQ R9, R9   // index of the vector
	SHRQ $3, CX
	JZ   geludone

geluloop:
	VMOVUPS   (SI), Y0
	VXORPS    Y8, Y8, Y8
	OUTSIDE(Y0, Y1, Y2, Y8)
	VMOVMSKPS Y8, AX
	TESTL     AX, AX
	JZ        geluinside
	BTSQ      R9, R10

geluinside:
	VMULPS  SQRT1_2, Y1, Y1
	ERF(Y1, Y2, Y3, Y4)
	VADDPS  ONE, Y2, Y2
	VMULPS  HALF, Y0, Y3
	VMULPS  Y2, Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	INCQ    R9
	DECQ    CX
	JNZ     geluloop
	VZEROUPPER

geludone:
	MOVQ R10, outside+24(FP)
	RET

// func geluGradAVX2(dx, x, dy *float32, n int) (outside uint64)
TEXT ·geluGradAVX2(SB), NOSPLIT, $0-40
	MOVQ dx+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ dy+16(FP), DX
	MOVQ n+24(FP), CX
	XORQ R10, R10 // outside
	XORQ R9, R9   // index of the vector
	SHRQ $3, CX
	JZ   graddone

gradloop:
	VMOVUPS   (SI), Y0
	VXORPS    Y9, Y9, Y9
	OUTSIDE(Y0, Y1, Y2, Y9)
	VMOVMSKPS Y9, AX
	TESTL     AX, AX
	JZ        gradinside
	BTSQ      R9, R10

gradinside:
	VMULPS  SQRT1_2, Y1, Y2
	ERF(Y2, Y3, Y4, Y5)             // Y3 = erf(c / sqrt 2)
	VMULPS  Y1, Y1, Y4
	VMULPS  NEGHALF, Y4, Y4         // -c^2 / 2
	EXP(Y4, Y5, Y6, Y7, Y8)         // Y5 = e^(-c^2/2)
	VADDPS  ONE, Y3, Y3
	VMULPS  HALF, Y3, Y3            // Phi(c)
	VMULPS  INVSQRT2PI, Y0, Y6
	VMULPS  Y5, Y6, Y6              // x phi(c)
	VADDPS  Y6, Y3, Y3
	VMULPS  (DX), Y3, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	ADDQ    $32, DX
	INCQ    R9
	DECQ    CX
	JNZ     gradloop
	VZEROUPPER

graddone:
	MOVQ R10, outside+32(FP)
	RET
