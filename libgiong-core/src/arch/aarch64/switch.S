/* SPDX-License-Identifier: MIT */
/*
 * AArch64 (AAPCS64) fiber switch.
 *
 * Callee-saved per AAPCS64: x19-x28, the frame pointer x29, the link
 * register x30 (it holds our return address), sp, and the low 64 bits of
 * v8-v15 (d8-d15). FPCR (rounding mode, flush-to-zero, default NaN) is
 * not a callee-saved register in the ABI text, but a fiber that sets a
 * rounding mode must not leak it into the scheduler or other fibers, so we
 * carry it per context like the MXCSR control bits on x86-64. FPSR holds
 * only sticky exception flags, which are per-thread status, not state
 * worth switching.
 *
 * Saved frame, from the saved stack pointer upwards (176 bytes, a
 * multiple of 16 as sp must always be):
 *	+0   x19 x20   +16  x21 x22   +32  x23 x24   +48  x25 x26
 *	+64  x27 x28   +80  x29 x30   +96  d8 d9     +112 d10 d11
 *	+128 d12 d13   +144 d14 d15   +160 fpcr, pad
 *
 * giong__ctx_make() (context.c) builds the same frame on a fresh stack
 * with x30 = giong__ctx_trampoline, x19 = entry, x20 = arg, x29 = 0.
 *
 * Pointer authentication: x30 is stored exactly as the caller left it;
 * each side signs and authenticates its own return address against its
 * own sp, which the switch restores, so -mbranch-protection=pac-ret code
 * works unchanged. BTI: we reach the trampoline with ret, which BTI does
 * not check, and call the entry with blr, which lands on its bti c.
 */

	.text

/* void giong__ctx_jump(void **save_sp (x0), void *new_sp (x1)) */
	.globl	giong__ctx_jump
	.hidden	giong__ctx_jump
	.type	giong__ctx_jump, %function
	.p2align 4
giong__ctx_jump:
	.cfi_startproc
	sub	sp, sp, #176
	.cfi_def_cfa_offset 176
	stp	x19, x20, [sp, #0]
	stp	x21, x22, [sp, #16]
	stp	x23, x24, [sp, #32]
	stp	x25, x26, [sp, #48]
	stp	x27, x28, [sp, #64]
	stp	x29, x30, [sp, #80]
	.cfi_offset x29, -96
	.cfi_offset x30, -88
	stp	d8, d9, [sp, #96]
	stp	d10, d11, [sp, #112]
	stp	d12, d13, [sp, #128]
	stp	d14, d15, [sp, #144]
	mrs	x9, fpcr
	str	x9, [sp, #160]

	/* The only instructions that change stacks. */
	mov	x9, sp
	str	x9, [x0]
	mov	sp, x1

	ldr	x9, [sp, #160]
	msr	fpcr, x9
	ldp	x19, x20, [sp, #0]
	ldp	x21, x22, [sp, #16]
	ldp	x23, x24, [sp, #32]
	ldp	x25, x26, [sp, #48]
	ldp	x27, x28, [sp, #64]
	ldp	x29, x30, [sp, #80]
	ldp	d8, d9, [sp, #96]
	ldp	d10, d11, [sp, #112]
	ldp	d12, d13, [sp, #128]
	ldp	d14, d15, [sp, #144]
	add	sp, sp, #176
	.cfi_def_cfa_offset 0
	.cfi_restore x29
	.cfi_restore x30
	ret
	.cfi_endproc
	.size	giong__ctx_jump, .-giong__ctx_jump

/*
 * First code a new context runs: the ret above lands here with sp at the
 * 16-byte aligned stack top, x19 = entry, x20 = arg, x29 = 0 (a null frame
 * record terminates frame-pointer walks). x30 is marked undefined so CFI
 * unwinders stop here too.
 */
	.globl	giong__ctx_trampoline
	.hidden	giong__ctx_trampoline
	.type	giong__ctx_trampoline, %function
	.p2align 4
giong__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined x30
	mov	x0, x20
	blr	x19
	/* entry must never return. */
	brk	#0
	.cfi_endproc
	.size	giong__ctx_trampoline, .-giong__ctx_trampoline

	.section .note.GNU-stack,"",%progbits
