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
