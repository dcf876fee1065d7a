/* SPDX-License-Identifier: MIT */
/*
 * x86-64 System V fiber switch.
 *
 * The ABI makes rbx, rbp, r12-r15 and rsp callee-saved, plus the control
 * bits of MXCSR and the x87 control word (rounding mode, exception masks,
 * precision). Everything else is caller-saved, so the compiler already
 * spilled it before calling us: pushing these seven values is the whole
 * switch. No xmm register is callee-saved on SysV, unlike Win64.
 *
 * Saved frame, from the saved stack pointer upwards (64 bytes):
 *	+0  MXCSR (4 bytes), x87 control word (2 bytes), pad
 *	+8  r15   +16 r14   +24 r13   +32 r12   +40 rbx   +48 rbp
 *	+56 return address
 *
 * giong__ctx_make() (context.c) builds the same frame on a fresh stack with
 * the return address pointing at giong__ctx_trampoline, entry in r13 and
 * its argument in r12. The layout constants there must match this file.
 *
 * This file is deliberately free of sanitizer hooks; context.c wraps the
 * switch when a sanitizer build needs to be told about it.
 *
 * CET: a switch "returns" to a different stack than it was called from,
 * with an indirect jmp to a return address that has no endbr64, which
 * neither a shadow stack nor IBT accepts, so this file does not carry the
 * GNU property note that would mark the binary CET-compatible.
 */

	.text

/* void giong__ctx_jump(void **save_sp (rdi), void *new_sp (rsi)) */
	.globl	giong__ctx_jump
	.hidden	giong__ctx_jump
	.type	giong__ctx_jump, @function
	.p2align 4
giong__ctx_jump:
	.cfi_startproc
	pushq	%rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbp, 0
	pushq	%rbx
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset rbx, 0
	pushq	%r12
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r12, 0
	pushq	%r13
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r13, 0
	pushq	%r14
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r14, 0
	pushq	%r15
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset r15, 0
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)

	/* The only instructions that change stacks. */
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp

	/*
	 * From here we run on the target's frame, so the CFI above describes
	 * it equally well: both frames have the same shape.
	 */
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%r15
	.cfi_adjust_cfa_offset -8
	.cfi_restore r15
	popq	%r14
	.cfi_adjust_cfa_offset -8
	.cfi_restore r14
	popq	%r13
	.cfi_adjust_cfa_offset -8
	.cfi_restore r13
	popq	%r12
	.cfi_adjust_cfa_offset -8
	.cfi_restore r12
	popq	%rbx
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbx
	popq	%rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore rbp
	/*
	 * Not ret: the return stack buffer still predicts the caller on the
	 * stack we just left, so ret would mispredict on every switch. An
	 * indirect jmp goes through the branch target predictor, which learns
	 * the alternation of a scheduler loop (measured: 9 ns instead of 22 ns
	 * per round trip). The RSB holds one stale entry either way.
	 */
	popq	%rdx
	.cfi_adjust_cfa_offset -8
	.cfi_register rip, rdx
	jmpq	*%rdx
	.cfi_endproc
	.size	giong__ctx_jump, .-giong__ctx_jump

/*
 * First code a new context runs: giong__ctx_jump's jmp lands here with
 * rsp 16-byte aligned and pointing at a zero "return address", r13 = entry,
 * r12 = arg, rbp = 0. The call pushes 8 bytes, so the entry sees rsp + 8
 * aligned as the ABI requires. rip is marked undefined so unwinders
 * (gdb, libgcc, ASan's reports) stop here instead of walking into the
 * zeroed slots above.
 */
	.globl	giong__ctx_trampoline
	.hidden	giong__ctx_trampoline
	.type	giong__ctx_trampoline, @function
	.p2align 4
giong__ctx_trampoline:
	.cfi_startproc
	.cfi_undefined rip
	movq	%r12, %rdi
	callq	*%r13
	/* entry must never return; trap rather than run off into zeroes. */
	ud2
	.cfi_endproc
	.size	giong__ctx_trampoline, .-giong__ctx_trampoline

	.section .note.GNU-stack,"",@progbits
