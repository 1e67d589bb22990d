//go:build amd64

#include "textflag.h"

// func dot1AVX(x, w *float64, n8 int) float64
// Lanes 0-3 in Y0, 4-7 in Y1; reduced as in dotLanes.
TEXT ·dot1AVX(SB), NOSPLIT, $0-32
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ n8+16(FP), CX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	XORQ AX, AX

d1loop:
	TESTQ CX, CX
	JE    d1done
	VMOVUPD     (SI)(AX*1), Y8
	VMOVUPD     32(SI)(AX*1), Y9
	VFMADD231PD (DI)(AX*1), Y8, Y0
	VFMADD231PD 32(DI)(AX*1), Y9, Y1
	ADDQ        $64, AX
	DECQ        CX
	JMP         d1loop

d1done:
	VADDPD       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VUNPCKHPD    X0, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+24(FP)
	VZEROUPPER
	RET

// REDUCE4 reduces lanes (lo, hi) into the low double of lo.
#define REDUCE4(lo, hi, xlo, xtmp) \
	VADDPD       hi, lo, lo \
	VEXTRACTF128 $1, lo, xtmp \
	VADDPD       xtmp, xlo, xlo \
	VUNPCKHPD    xlo, xlo, xtmp \
	VADDSD       xtmp, xlo, xlo

// func dot4AVX(x, w *float64, ldw, n8 int, out *[4]float64)
TEXT ·dot4AVX(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ ldw+16(FP), BX
	SHLQ $3, BX
	MOVQ n8+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (DI)(BX*1), R8
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ   AX, AX

d4loop:
	TESTQ CX, CX
	JE    d4done
	VMOVUPD     (SI)(AX*1), Y8
	VMOVUPD     32(SI)(AX*1), Y9
	VFMADD231PD (DI)(AX*1), Y8, Y0
	VFMADD231PD 32(DI)(AX*1), Y9, Y1
	VFMADD231PD (R8)(AX*1), Y8, Y2
	VFMADD231PD 32(R8)(AX*1), Y9, Y3
	VFMADD231PD (R9)(AX*1), Y8, Y4
	VFMADD231PD 32(R9)(AX*1), Y9, Y5
	VFMADD231PD (R10)(AX*1), Y8, Y6
	VFMADD231PD 32(R10)(AX*1), Y9, Y7
	ADDQ        $64, AX
	DECQ        CX
	JMP         d4loop

d4done:
	REDUCE4(Y0, Y1, X0, X8)
	REDUCE4(Y2, Y3, X2, X9)
	REDUCE4(Y4, Y5, X4, X10)
	REDUCE4(Y6, Y7, X6, X11)
	VMOVSD X0, 0(DX)
	VMOVSD X2, 8(DX)
	VMOVSD X4, 16(DX)
	VMOVSD X6, 24(DX)
	VZEROUPPER
	RET

// func outer2AVX(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n16 int)
TEXT ·outer2AVX(SB), NOSPLIT, $0-56
	MOVQ xs+0(FP), SI
	MOVQ nr+8(FP), CX
	MOVQ gr+16(FP), DI
	MOVQ ldg+24(FP), BX
	SHLQ $3, BX
	MOVQ s+32(FP), DX
	MOVQ lds+40(FP), R8
	SHLQ $3, R8
	MOVQ n16+48(FP), R9
	LEAQ (DX)(R8*1), R10
	XORQ AX, AX

ojloop:
	TESTQ   R9, R9
	JE      ojdone
	VMOVUPD (DX)(AX*1), Y0
	VMOVUPD 32(DX)(AX*1), Y1
	VMOVUPD 64(DX)(AX*1), Y2
	VMOVUPD 96(DX)(AX*1), Y3
	VMOVUPD (R10)(AX*1), Y4
	VMOVUPD 32(R10)(AX*1), Y5
	VMOVUPD 64(R10)(AX*1), Y6
	VMOVUPD 96(R10)(AX*1), Y7
	MOVQ    SI, R11
	MOVQ    DI, R12
	MOVQ    CX, R13

orloop:
	TESTQ        R13, R13
	JE           ordone
	MOVQ         (R11), R8
	VBROADCASTSD (R12), Y8
	VBROADCASTSD 8(R12), Y9
	VMOVUPD      (R8)(AX*1), Y10
	VMOVUPD      32(R8)(AX*1), Y11
	VMOVUPD      64(R8)(AX*1), Y12
	VMOVUPD      96(R8)(AX*1), Y13
	VFMADD231PD  Y10, Y8, Y0
	VFMADD231PD  Y11, Y8, Y1
	VFMADD231PD  Y12, Y8, Y2
	VFMADD231PD  Y13, Y8, Y3
	VFMADD231PD  Y10, Y9, Y4
	VFMADD231PD  Y11, Y9, Y5
	VFMADD231PD  Y12, Y9, Y6
	VFMADD231PD  Y13, Y9, Y7
	ADDQ         $8, R11
	ADDQ         BX, R12
	DECQ         R13
	JMP          orloop

ordone:
	VMOVUPD Y0, (DX)(AX*1)
	VMOVUPD Y1, 32(DX)(AX*1)
	VMOVUPD Y2, 64(DX)(AX*1)
	VMOVUPD Y3, 96(DX)(AX*1)
	VMOVUPD Y4, (R10)(AX*1)
	VMOVUPD Y5, 32(R10)(AX*1)
	VMOVUPD Y6, 64(R10)(AX*1)
	VMOVUPD Y7, 96(R10)(AX*1)
	ADDQ    $128, AX
	DECQ    R9
	JMP     ojloop

ojdone:
	VZEROUPPER
	RET

// func dot2AVX(x, w *float64, ldw, n8 int, out *[2]float64)
TEXT ·dot2AVX(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), SI
	MOVQ w+8(FP), DI
	MOVQ ldw+16(FP), BX
	SHLQ $3, BX
	MOVQ n8+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (DI)(BX*1), R8
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	XORQ   AX, AX

d2loop:
	TESTQ CX, CX
	JE    d2done
	VMOVUPD     (SI)(AX*1), Y8
	VMOVUPD     32(SI)(AX*1), Y9
	VFMADD231PD (DI)(AX*1), Y8, Y0
	VFMADD231PD 32(DI)(AX*1), Y9, Y1
	VFMADD231PD (R8)(AX*1), Y8, Y2
	VFMADD231PD 32(R8)(AX*1), Y9, Y3
	ADDQ        $64, AX
	DECQ        CX
	JMP         d2loop

d2done:
	REDUCE4(Y0, Y1, X0, X8)
	REDUCE4(Y2, Y3, X2, X9)
	VMOVSD X0, 0(DX)
	VMOVSD X2, 8(DX)
	VZEROUPPER
	RET

// func softmaxResidual4AVX(f *float64, ldg, k int, ys *[4]int, e *float64, c *[expVecLen][4]float64) bool
//
// softmaxResidualGo on four rows at once, one row per lane: row r is
// f[r·ldg : r·ldg+k] with label ys[r]. Every lane performs the scalar
// code's operations in its order (separate multiplies and adds, the one
// fused multiply–add of fastExp, the sum and the residual accumulated
// over classes 0, 1, …, k−1), so each row gets the bits it gets there.
// Pass 1 copies the classes column by column into e (k×4) and takes the
// maxima; pass 2 replaces e by the exponentials and sums them; when a
// lane meets an exponent below −708 (or a NaN) the kernel returns false
// with f untouched, for the caller to use the scalar code. Pass 3 writes
// −p into f and the residual of the label's class last.
//
// The table entries are read by four scalar loads rather than a gather,
// which is no faster here and much slower on processors with the gather
// data sampling mitigation.
//
// Registers: R8–R11 the four rows, DI e, SI the constants (expVec), BX
// expTab, CX the class count, AX the byte offset of the class in a row
// (pass 2: table indices, with R12), DX that in e, R12 the labels.
TEXT ·softmaxResidual4AVX(SB), NOSPLIT, $0-49
	MOVQ f+0(FP), R8
	MOVQ ldg+8(FP), BX
	SHLQ $3, BX
	MOVQ k+16(FP), CX
	MOVQ ys+24(FP), R12
	MOVQ e+32(FP), DI
	MOVQ c+40(FP), SI
	LEAQ (R8)(BX*1), R9
	LEAQ (R9)(BX*1), R10
	LEAQ (R10)(BX*1), R11

	// Pass 1: transpose into e, maxima in Y0.
	XORQ AX, AX
	XORQ DX, DX
	MOVQ CX, R13

p1loop:
	VMOVSD      (R8)(AX*1), X1
	VMOVHPD     (R9)(AX*1), X1, X1
	VMOVSD      (R10)(AX*1), X2
	VMOVHPD     (R11)(AX*1), X2, X2
	VINSERTF128 $1, X2, Y1, Y1
	VMOVUPD     Y1, (DI)(DX*1)
	TESTQ       DX, DX
	JNE         p1max
	VMOVAPD     Y1, Y0
	JMP         p1next

p1max:
	VMAXPD Y0, Y1, Y0

p1next:
	ADDQ $8, AX
	ADDQ $32, DX
	DECQ R13
	JNE  p1loop

	// Pass 2: e = fastExp(x) with x = v − max, s = Σ e in Y13, the
	// lanes' range test in Y14.
	VXORPD   Y13, Y13, Y13
	VPCMPEQQ Y14, Y14, Y14
	LEAQ     ·expTab(SB), BX
	XORQ     DX, DX
	MOVQ     CX, R13

p2loop:
	VMOVUPD (DI)(DX*1), Y1
	VSUBPD  Y0, Y1, Y1               // x = v − mx
	VCMPPD  $0x1d, 288(SI), Y1, Y2   // x ≥ −708 (ordered)
	VANDPD  Y2, Y14, Y14
	VMULPD  0(SI), Y1, Y2            // x·64/ln2
	VADDPD  32(SI), Y2, Y2           // + shift
	VSUBPD  32(SI), Y2, Y3           // kf = (…) − shift
	VPSUBQ  32(SI), Y2, Y4           // ki = bits − bits(shift)
	VMULPD  64(SI), Y3, Y5           // kf·hi
	VSUBPD  Y5, Y1, Y1               // x − kf·hi
	VMULPD  96(SI), Y3, Y5           // kf·lo
	VSUBPD  Y5, Y1, Y1               // r
	VMULPD  128(SI), Y1, Y5          // r/120
	VADDPD  160(SI), Y5, Y5          // + 1/24
	VMULPD  Y1, Y5, Y5
	VADDPD  192(SI), Y5, Y5          // + 1/6
	VMULPD  Y1, Y5, Y5
	VADDPD  224(SI), Y5, Y5          // + 1/2
	VMULPD  Y1, Y5, Y5
	VADDPD  256(SI), Y5, Y5          // + 1
	VMULPD  Y5, Y1, Y5               // q = r·(…)
	VPAND   320(SI), Y4, Y6          // ki & 63
	VMOVQ   X6, AX
	VPEXTRQ $1, X6, R12
	VEXTRACTI128 $1, Y6, X7
	VMOVSD  (BX)(AX*8), X8
	VMOVHPD (BX)(R12*8), X8, X8
	VMOVQ   X7, AX
	VPEXTRQ $1, X7, R12
	VMOVSD  (BX)(AX*8), X9
	VMOVHPD (BX)(R12*8), X9, X9
	VINSERTF128 $1, X9, Y8, Y8
	VPSRLQ  $6, Y4, Y4
	VPSLLQ  $52, Y4, Y4
	VPADDQ  Y4, Y8, Y8               // t
	VFMADD213PD Y8, Y5, Y8           // t·q + t
	VMOVUPD Y8, (DI)(DX*1)
	VADDPD  Y8, Y13, Y13             // s += e
	ADDQ    $32, DX
	DECQ    R13
	JNE     p2loop

	VMOVMSKPD Y14, AX
	CMPQ      AX, $15
	JEQ       p3
	MOVB      $0, ret+48(FP)
	VZEROUPPER
	RET

p3:
	// Pass 3: p = e·(1/s); g = −p, rest += p off the label's class.
	VMOVUPD 256(SI), Y1
	VDIVPD  Y13, Y1, Y1              // inv = 1/s
	VXORPD  Y2, Y2, Y2               // rest
	MOVQ    ys+24(FP), R12
	VMOVDQU (R12), Y3                // labels
	VPXOR   Y4, Y4, Y4               // class index
	VMOVDQU 352(SI), Y5              // ones (int64)
	VMOVUPD 384(SI), Y6              // sign bits
	XORQ    AX, AX
	XORQ    DX, DX
	MOVQ    CX, R13

p3loop:
	VMULPD   (DI)(DX*1), Y1, Y7      // p
	VPCMPEQQ Y3, Y4, Y8              // class == label
	VANDNPD  Y7, Y8, Y9
	VADDPD   Y9, Y2, Y2              // rest += p where class ≠ label
	VXORPD   Y6, Y7, Y7              // −p
	VMOVSD   X7, (R8)(AX*1)
	VMOVHPD  X7, (R9)(AX*1)
	VEXTRACTF128 $1, Y7, X7
	VMOVSD   X7, (R10)(AX*1)
	VMOVHPD  X7, (R11)(AX*1)
	VPADDQ   Y5, Y4, Y4
	ADDQ     $8, AX
	ADDQ     $32, DX
	DECQ     R13
	JNE      p3loop

	// f[r][ys[r]] = rest, rows in order (with ldg = 0 they coincide).
	VEXTRACTF128 $1, Y2, X3
	MOVQ    0(R12), AX
	VMOVSD  X2, (R8)(AX*8)
	MOVQ    8(R12), AX
	VMOVHPD X2, (R9)(AX*8)
	MOVQ    16(R12), AX
	VMOVSD  X3, (R10)(AX*8)
	MOVQ    24(R12), AX
	VMOVHPD X3, (R11)(AX*8)
	MOVB    $1, ret+48(FP)
	VZEROUPPER
	RET

// permPairs reorders the eight sums of two records' four outputs, which
// the reduction leaves interleaved (r0c0, r1c0, r0c1, r1c1, …), into
// record order (r0c0, r0c1, r0c2, r0c3, r1c0, …).
DATA permPairs<>+0(SB)/8, $0
DATA permPairs<>+8(SB)/8, $2
DATA permPairs<>+16(SB)/8, $4
DATA permPairs<>+24(SB)/8, $6
DATA permPairs<>+32(SB)/8, $1
DATA permPairs<>+40(SB)/8, $3
DATA permPairs<>+48(SB)/8, $5
DATA permPairs<>+56(SB)/8, $7
GLOBL permPairs<>(SB), RODATA|NOPTR, $64

// REDUCE4X8 reduces four accumulators a, b, c, d of eight lanes s₀…s₇
// each into w = (ta′, ta″, tb′, tb″, tc′, tc″, td′, td″), with
// t′ = (s₀+s₄) + (s₂+s₆) and t″ = (s₁+s₅) + (s₃+s₇): dotLanes' sums
// before their last addition, in its order (t1–t3 are scratch).
#define REDUCE4X8(a, b, c, d, w, t1, t2, t3) \
	VSHUFF64X2 $0x44, b, a, t1 \
	VSHUFF64X2 $0xEE, b, a, t2 \
	VADDPD     t2, t1, t1 \
	VSHUFF64X2 $0x44, d, c, t2 \
	VSHUFF64X2 $0xEE, d, c, t3 \
	VADDPD     t3, t2, t2 \
	VSHUFF64X2 $0x88, t2, t1, t3 \
	VSHUFF64X2 $0xDD, t2, t1, w \
	VADDPD     t3, w, w

// FINISH2 ends the reduction of two REDUCE4X8 results w1, w2 into dst,
// their four sums t′ + t″ each in order (w1's then w2's), plus the
// bias vector bias; idx holds permPairs.
#define FINISH2(w1, w2, dst, t1, idx, bias) \
	VUNPCKLPD w2, w1, t1 \
	VUNPCKHPD w2, w1, dst \
	VADDPD    dst, t1, t1 \
	VPERMPD   t1, idx, dst \
	VADDPD    bias, dst, dst

// func dot4x4AVX512(xs *[4]*float64, w *float64, ldw, n8 int, bias *[4]float64, out *float64, ldo int)
//
// The eight-lane sums of dotLanes over 8·n8 entries, for four records
// (xs) against four rows of w (ldw apart), plus bias[c], into
// out[r·ldo + c]. Accumulator Z(4r+c) holds record r, class c, its lane l
// the sum over j ≡ l (mod 8) as in dotLanes; the reduction adds the lanes
// in dotLanes' order, and the bias after.
TEXT ·dot4x4AVX512(SB), NOSPLIT, $0-56
	MOVQ xs+0(FP), SI
	MOVQ 0(SI), R8
	MOVQ 8(SI), R9
	MOVQ 16(SI), R10
	MOVQ 24(SI), R11
	MOVQ w+8(FP), DI
	MOVQ ldw+16(FP), BX
	SHLQ $3, BX
	LEAQ (DI)(BX*1), R12
	LEAQ (R12)(BX*1), R13
	LEAQ (R13)(BX*1), R14
	MOVQ n8+24(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	VPXORQ Z8, Z8, Z8
	VPXORQ Z9, Z9, Z9
	VPXORQ Z10, Z10, Z10
	VPXORQ Z11, Z11, Z11
	VPXORQ Z12, Z12, Z12
	VPXORQ Z13, Z13, Z13
	VPXORQ Z14, Z14, Z14
	VPXORQ Z15, Z15, Z15
	XORQ   AX, AX

d44loop:
	VMOVUPD     (R8)(AX*1), Z16
	VMOVUPD     (R9)(AX*1), Z17
	VMOVUPD     (R10)(AX*1), Z18
	VMOVUPD     (R11)(AX*1), Z19
	VMOVUPD     (DI)(AX*1), Z20
	VMOVUPD     (R12)(AX*1), Z21
	VMOVUPD     (R13)(AX*1), Z22
	VMOVUPD     (R14)(AX*1), Z23
	VFMADD231PD Z20, Z16, Z0
	VFMADD231PD Z21, Z16, Z1
	VFMADD231PD Z22, Z16, Z2
	VFMADD231PD Z23, Z16, Z3
	VFMADD231PD Z20, Z17, Z4
	VFMADD231PD Z21, Z17, Z5
	VFMADD231PD Z22, Z17, Z6
	VFMADD231PD Z23, Z17, Z7
	VFMADD231PD Z20, Z18, Z8
	VFMADD231PD Z21, Z18, Z9
	VFMADD231PD Z22, Z18, Z10
	VFMADD231PD Z23, Z18, Z11
	VFMADD231PD Z20, Z19, Z12
	VFMADD231PD Z21, Z19, Z13
	VFMADD231PD Z22, Z19, Z14
	VFMADD231PD Z23, Z19, Z15
	ADDQ        $64, AX
	DECQ        CX
	JNE         d44loop

	REDUCE4X8(Z0, Z1, Z2, Z3, Z24, Z28, Z29, Z30)
	REDUCE4X8(Z4, Z5, Z6, Z7, Z25, Z28, Z29, Z30)
	REDUCE4X8(Z8, Z9, Z10, Z11, Z26, Z28, Z29, Z30)
	REDUCE4X8(Z12, Z13, Z14, Z15, Z27, Z28, Z29, Z30)
	MOVQ            bias+32(FP), SI
	VBROADCASTF64X4 (SI), Z31
	VMOVDQU64       permPairs<>(SB), Z30
	MOVQ            out+40(FP), DX
	MOVQ            ldo+48(FP), BX
	SHLQ            $3, BX
	FINISH2(Z24, Z25, Z0, Z28, Z30, Z31)
	FINISH2(Z26, Z27, Z2, Z28, Z30, Z31)
	VEXTRACTF64X4   $1, Z0, Y1
	VEXTRACTF64X4   $1, Z2, Y3
	VMOVUPD         Y0, (DX)
	ADDQ            BX, DX
	VMOVUPD         Y1, (DX)
	ADDQ            BX, DX
	VMOVUPD         Y2, (DX)
	ADDQ            BX, DX
	VMOVUPD         Y3, (DX)
	VZEROUPPER
	RET

// func dot4x2AVX512(xs *[4]*float64, w *float64, ldw, n8 int, bias *[2]float64, out *float64, ldo int)
//
// dot4x4AVX512 for two rows of w: accumulator Z(2r+c) holds record r,
// class c.
TEXT ·dot4x2AVX512(SB), NOSPLIT, $0-56
	MOVQ xs+0(FP), SI
	MOVQ 0(SI), R8
	MOVQ 8(SI), R9
	MOVQ 16(SI), R10
	MOVQ 24(SI), R11
	MOVQ w+8(FP), DI
	MOVQ ldw+16(FP), BX
	SHLQ $3, BX
	LEAQ (DI)(BX*1), R12
	MOVQ n8+24(FP), CX
	VPXORQ Z0, Z0, Z0
	VPXORQ Z1, Z1, Z1
	VPXORQ Z2, Z2, Z2
	VPXORQ Z3, Z3, Z3
	VPXORQ Z4, Z4, Z4
	VPXORQ Z5, Z5, Z5
	VPXORQ Z6, Z6, Z6
	VPXORQ Z7, Z7, Z7
	XORQ   AX, AX

d42loop:
	VMOVUPD     (R8)(AX*1), Z16
	VMOVUPD     (R9)(AX*1), Z17
	VMOVUPD     (R10)(AX*1), Z18
	VMOVUPD     (R11)(AX*1), Z19
	VMOVUPD     (DI)(AX*1), Z20
	VMOVUPD     (R12)(AX*1), Z21
	VFMADD231PD Z20, Z16, Z0
	VFMADD231PD Z21, Z16, Z1
	VFMADD231PD Z20, Z17, Z2
	VFMADD231PD Z21, Z17, Z3
	VFMADD231PD Z20, Z18, Z4
	VFMADD231PD Z21, Z18, Z5
	VFMADD231PD Z20, Z19, Z6
	VFMADD231PD Z21, Z19, Z7
	ADDQ        $64, AX
	DECQ        CX
	JNE         d42loop

	// Groups (r0c0, r0c1, r1c0, r1c1) and (r2c0, …, r3c1): FINISH2
	// leaves the eight sums in record order, two per record.
	REDUCE4X8(Z0, Z1, Z2, Z3, Z24, Z28, Z29, Z30)
	REDUCE4X8(Z4, Z5, Z6, Z7, Z25, Z28, Z29, Z30)
	MOVQ            bias+32(FP), SI
	VBROADCASTF32X4 (SI), Z31
	VMOVDQU64       permPairs<>(SB), Z30
	MOVQ            out+40(FP), DX
	MOVQ            ldo+48(FP), BX
	SHLQ            $3, BX
	FINISH2(Z24, Z25, Z0, Z28, Z30, Z31)
	VEXTRACTF64X4   $1, Z0, Y2
	VMOVUPD         X0, (DX)
	ADDQ            BX, DX
	VEXTRACTF128    $1, Y0, X1
	VMOVUPD         X1, (DX)
	ADDQ            BX, DX
	VMOVUPD         X2, (DX)
	ADDQ            BX, DX
	VEXTRACTF128    $1, Y2, X3
	VMOVUPD         X3, (DX)
	VZEROUPPER
	RET

// func outer4x32AVX512(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n32 int)
//
// outer2AVX for four classes (gr … gr+3) and 32 columns at a time:
// accumulator Z(4c+q) holds class c, columns 8q … 8q+7 of the block,
// loaded from s, one fused multiply–add per record in record order, and
// stored back.
TEXT ·outer4x32AVX512(SB), NOSPLIT, $0-56
	MOVQ xs+0(FP), SI
	MOVQ gr+16(FP), DI
	MOVQ ldg+24(FP), BX
	SHLQ $3, BX
	MOVQ s+32(FP), DX
	MOVQ lds+40(FP), CX
	SHLQ $3, CX
	MOVQ n32+48(FP), R9
	LEAQ (DX)(CX*1), R10
	LEAQ (R10)(CX*1), R14
	XORQ AX, AX

o4jloop:
	VMOVUPD (DX)(AX*1), Z0
	VMOVUPD 64(DX)(AX*1), Z1
	VMOVUPD 128(DX)(AX*1), Z2
	VMOVUPD 192(DX)(AX*1), Z3
	VMOVUPD (R10)(AX*1), Z4
	VMOVUPD 64(R10)(AX*1), Z5
	VMOVUPD 128(R10)(AX*1), Z6
	VMOVUPD 192(R10)(AX*1), Z7
	VMOVUPD (R14)(AX*1), Z8
	VMOVUPD 64(R14)(AX*1), Z9
	VMOVUPD 128(R14)(AX*1), Z10
	VMOVUPD 192(R14)(AX*1), Z11
	LEAQ    (R14)(CX*1), R8
	VMOVUPD (R8)(AX*1), Z12
	VMOVUPD 64(R8)(AX*1), Z13
	VMOVUPD 128(R8)(AX*1), Z14
	VMOVUPD 192(R8)(AX*1), Z15
	MOVQ    SI, R11
	MOVQ    DI, R12
	MOVQ    nr+8(FP), R13

o4rloop:
	MOVQ         (R11), R8
	VMOVUPD      (R8)(AX*1), Z16
	VMOVUPD      64(R8)(AX*1), Z17
	VMOVUPD      128(R8)(AX*1), Z18
	VMOVUPD      192(R8)(AX*1), Z19
	VBROADCASTSD (R12), Z20
	VBROADCASTSD 8(R12), Z21
	VBROADCASTSD 16(R12), Z22
	VBROADCASTSD 24(R12), Z23
	VFMADD231PD  Z16, Z20, Z0
	VFMADD231PD  Z17, Z20, Z1
	VFMADD231PD  Z18, Z20, Z2
	VFMADD231PD  Z19, Z20, Z3
	VFMADD231PD  Z16, Z21, Z4
	VFMADD231PD  Z17, Z21, Z5
	VFMADD231PD  Z18, Z21, Z6
	VFMADD231PD  Z19, Z21, Z7
	VFMADD231PD  Z16, Z22, Z8
	VFMADD231PD  Z17, Z22, Z9
	VFMADD231PD  Z18, Z22, Z10
	VFMADD231PD  Z19, Z22, Z11
	VFMADD231PD  Z16, Z23, Z12
	VFMADD231PD  Z17, Z23, Z13
	VFMADD231PD  Z18, Z23, Z14
	VFMADD231PD  Z19, Z23, Z15
	ADDQ         $8, R11
	ADDQ         BX, R12
	DECQ         R13
	JNE          o4rloop

	VMOVUPD Z0, (DX)(AX*1)
	VMOVUPD Z1, 64(DX)(AX*1)
	VMOVUPD Z2, 128(DX)(AX*1)
	VMOVUPD Z3, 192(DX)(AX*1)
	VMOVUPD Z4, (R10)(AX*1)
	VMOVUPD Z5, 64(R10)(AX*1)
	VMOVUPD Z6, 128(R10)(AX*1)
	VMOVUPD Z7, 192(R10)(AX*1)
	VMOVUPD Z8, (R14)(AX*1)
	VMOVUPD Z9, 64(R14)(AX*1)
	VMOVUPD Z10, 128(R14)(AX*1)
	VMOVUPD Z11, 192(R14)(AX*1)
	LEAQ    (R14)(CX*1), R8
	VMOVUPD Z12, (R8)(AX*1)
	VMOVUPD Z13, 64(R8)(AX*1)
	VMOVUPD Z14, 128(R8)(AX*1)
	VMOVUPD Z15, 192(R8)(AX*1)
	ADDQ    $256, AX
	DECQ    R9
	JNE     o4jloop

	VZEROUPPER
	RET

// func outer2x32AVX512(xs **float64, nr int, gr *float64, ldg int, s *float64, lds, n32 int)
//
// outer4x32AVX512 for two classes: accumulator Z(4c+q).
TEXT ·outer2x32AVX512(SB), NOSPLIT, $0-56
	MOVQ xs+0(FP), SI
	MOVQ gr+16(FP), DI
	MOVQ ldg+24(FP), BX
	SHLQ $3, BX
	MOVQ s+32(FP), DX
	MOVQ lds+40(FP), CX
	SHLQ $3, CX
	MOVQ n32+48(FP), R9
	LEAQ (DX)(CX*1), R10
	XORQ AX, AX

o2jloop:
	VMOVUPD (DX)(AX*1), Z0
	VMOVUPD 64(DX)(AX*1), Z1
	VMOVUPD 128(DX)(AX*1), Z2
	VMOVUPD 192(DX)(AX*1), Z3
	VMOVUPD (R10)(AX*1), Z4
	VMOVUPD 64(R10)(AX*1), Z5
	VMOVUPD 128(R10)(AX*1), Z6
	VMOVUPD 192(R10)(AX*1), Z7
	MOVQ    SI, R11
	MOVQ    DI, R12
	MOVQ    nr+8(FP), R13

o2rloop:
	MOVQ         (R11), R8
	VMOVUPD      (R8)(AX*1), Z16
	VMOVUPD      64(R8)(AX*1), Z17
	VMOVUPD      128(R8)(AX*1), Z18
	VMOVUPD      192(R8)(AX*1), Z19
	VBROADCASTSD (R12), Z20
	VBROADCASTSD 8(R12), Z21
	VFMADD231PD  Z16, Z20, Z0
	VFMADD231PD  Z17, Z20, Z1
	VFMADD231PD  Z18, Z20, Z2
	VFMADD231PD  Z19, Z20, Z3
	VFMADD231PD  Z16, Z21, Z4
	VFMADD231PD  Z17, Z21, Z5
	VFMADD231PD  Z18, Z21, Z6
	VFMADD231PD  Z19, Z21, Z7
	ADDQ         $8, R11
	ADDQ         BX, R12
	DECQ         R13
	JNE          o2rloop

	VMOVUPD Z0, (DX)(AX*1)
	VMOVUPD Z1, 64(DX)(AX*1)
	VMOVUPD Z2, 128(DX)(AX*1)
	VMOVUPD Z3, 192(DX)(AX*1)
	VMOVUPD Z4, (R10)(AX*1)
	VMOVUPD Z5, 64(R10)(AX*1)
	VMOVUPD Z6, 128(R10)(AX*1)
	VMOVUPD Z7, 192(R10)(AX*1)
	ADDQ    $256, AX
	DECQ    R9
	JNE     o2jloop

	VZEROUPPER
	RET

// func sgldStepAVX2(theta, gi, noise *float64, n4 int, c *[4]float64) bool
//
// sgldUpdate's isotropic-prior loop on 4·n4 coordinates, four at a time,
// with its operations in its order and none fused: with c = (−α, sc,
// η/2, sd), θ ← θ + ((η/2)·((−α)·θ + sc·g) + sd·z). It reports whether
// every new coordinate is finite (the sum of v − v is NaN otherwise).
TEXT ·sgldStepAVX2(SB), NOSPLIT, $0-41
	MOVQ         theta+0(FP), DI
	MOVQ         gi+8(FP), SI
	MOVQ         noise+16(FP), DX
	MOVQ         n4+24(FP), CX
	MOVQ         c+32(FP), BX
	VBROADCASTSD 0(BX), Y12
	VBROADCASTSD 8(BX), Y13
	VBROADCASTSD 16(BX), Y14
	VBROADCASTSD 24(BX), Y15
	VXORPD       Y10, Y10, Y10
	VXORPD       Y11, Y11, Y11
	XORQ         AX, AX
	TESTQ        CX, CX
	JE           sgdone

sgloop:
	VMOVUPD (DI)(AX*1), Y0
	VMULPD  Y12, Y0, Y1          // (−α)·θ
	VMULPD  (SI)(AX*1), Y13, Y2  // sc·g
	VADDPD  Y2, Y1, Y1
	VMULPD  Y14, Y1, Y1          // (η/2)·(…)
	VMULPD  (DX)(AX*1), Y15, Y2  // sd·z
	VADDPD  Y2, Y1, Y1
	VADDPD  Y1, Y0, Y0           // v = θ + (…)
	VMOVUPD Y0, (DI)(AX*1)
	VSUBPD  Y0, Y0, Y0
	VADDPD  Y0, Y10, Y10         // bad += v − v
	ADDQ    $32, AX
	DECQ    CX
	JE      sgdone
	VMOVUPD (DI)(AX*1), Y3
	VMULPD  Y12, Y3, Y4
	VMULPD  (SI)(AX*1), Y13, Y5
	VADDPD  Y5, Y4, Y4
	VMULPD  Y14, Y4, Y4
	VMULPD  (DX)(AX*1), Y15, Y5
	VADDPD  Y5, Y4, Y4
	VADDPD  Y4, Y3, Y3
	VMOVUPD Y3, (DI)(AX*1)
	VSUBPD  Y3, Y3, Y3
	VADDPD  Y3, Y11, Y11
	ADDQ    $32, AX
	DECQ    CX
	JNE     sgloop

sgdone:
	VADDPD    Y11, Y10, Y10
	VCMPPD    $0, Y10, Y10, Y10   // lanes equal to themselves (not NaN)
	VMOVMSKPD Y10, AX
	CMPQ      AX, $15
	SETEQ     ret+40(FP)
	VZEROUPPER
	RET
