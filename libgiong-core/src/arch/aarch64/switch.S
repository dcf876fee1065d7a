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
 * x30 is saved as signed (below, PAC). giong__ctx_make() (context.c) builds
 * the same frame on a fresh stack with x30 = giong__ctx_trampoline (signed
 * by giong__ctx_sign_lr), x19 = entry, x20 = arg, x29 = 0.
 *
 * Branch protection (-mbranch-protection=bti, pac-ret or standard):
 *
 * BTI. A guarded page (PROT_BTI, set by the loader for an ELF file whose
 * GNU property note claims BTI) takes an indirect branch (br, blr) only to
 * a landing pad. giong__ctx_jump and giong__ctx_sign_lr are called with bl
 * from C, which BTI does not check, but a linker may reach them through a
 * range-extension veneer (br x16), so each starts with bti c, as every
 * C function whose address may be taken does. The trampoline is reached
 * only by the ret of giong__ctx_jump; ret leaves BTYPE at 0, which every
 * instruction accepts, so it needs no pad and has none on purpose: in a
 * guarded page a br or blr to it (nothing of ours does either) faults. It
 * calls the entry with blr, which lands on the bti c the compiler gives an
 * address-taken function.
 *
 * PAC. With pac-ret a function signs x30 with paciasp, against its entry
 * sp, before saving it, and authenticates it with autiasp against the same
 * sp before returning. giong__ctx_jump saves x30 on one stack and returns
 * on another: authenticating against the sp it was entered with would
 * check the resumed context's return address against the sp of the one
 * that left, and fail. So it signs at entry, against the leaving context's
 * sp, and authenticates at exit only once the resumed context's sp is back,
 * the sp that context signed against when it left: each saved x30 is
 * checked against the sp it was signed with, and a suspended fiber's saved
 * return address is as protected as any frame of pac-ret code. A fresh
 * context's frame holds the trampoline's address signed by
 * giong__ctx_sign_lr against the sp the switch restores for it (the
 * 16-aligned stack top). Both use the A key and the hint-space forms,
 * no-ops on cores without pointer authentication; they are assembled only
 * when the build asks for return address signing (__ARM_FEATURE_PAC_DEFAULT),
 * so a build without it is unchanged.
 *
 * The GNU property note at the end claims BTI and PAC when the build asks
 * for them (as the compiler does for C), so that a BTI build that links
 * this file keeps BTI: the linker ANDs the notes of its inputs, and an
 * input without one turns BTI off for the whole output, silently. The ABI
 * (ELF for the Arm 64-bit Architecture) has the PAC bit say that all code
 * is protected with return address signing, so it is claimed only because
 * the switch signs the return address it keeps in memory. Not claimed:
 * GCS, the guarded control stack, which a switch between stacks would have
 * to switch too.
 */

#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT == 1
#define GIONG_BTI_C hint #34 /* bti c */
#define GIONG_PROP_BTI 1     /* GNU_PROPERTY_AARCH64_FEATURE_1_BTI */
#else
#define GIONG_BTI_C
#define GIONG_PROP_BTI 0
#endif

#if defined(__ARM_FEATURE_PAC_DEFAULT)
#define GIONG_SIGN_LR hint #25 ; .cfi_negate_ra_state /* paciasp */
#define GIONG_AUTH_LR hint #29 ; .cfi_negate_ra_state /* autiasp */
#define GIONG_PROP_PAC 2     /* GNU_PROPERTY_AARCH64_FEATURE_1_PAC */
#else
#define GIONG_SIGN_LR
#define GIONG_AUTH_LR
#define GIONG_PROP_PAC 0
#endif

	.text

/* void giong__ctx_jump(void **save_sp (x0), void *new_sp (x1)) */
	.globl	giong__ctx_jump
	.hidden	giong__ctx_jump
	.type	giong__ctx_jump, %function
	.p2align 4
giong__ctx_jump:
	.cfi_startproc
	GIONG_BTI_C
	GIONG_SIGN_LR		/* x30 signed against the caller's sp */
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
	GIONG_AUTH_LR		/* against the sp it was signed with */
	ret
	.cfi_endproc
	.size	giong__ctx_jump, .-giong__ctx_jump

/*
 * First code a new context runs: the ret above lands here (no BTI landing
 * pad: see the top of the file) with sp at the 16-byte aligned stack top,
 * x19 = entry, x20 = arg, x29 = 0 (a null frame record terminates
 * frame-pointer walks). x30 is marked undefined so CFI unwinders stop here
 * too.
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

/*
 * uintptr_t giong__ctx_sign_lr(uintptr_t lr (x0), uintptr_t sp (x1)): @lr
 * signed as paciasp would sign it with sp = @sp (pacia1716: x17 against
 * x16), for the first frame giong__ctx_make() builds; @lr unchanged in a
 * build without return address signing.
 */
	.globl	giong__ctx_sign_lr
	.hidden	giong__ctx_sign_lr
	.type	giong__ctx_sign_lr, %function
	.p2align 4
giong__ctx_sign_lr:
	.cfi_startproc
	GIONG_BTI_C
#if defined(__ARM_FEATURE_PAC_DEFAULT)
	mov	x17, x0
	mov	x16, x1
	hint	#8		/* pacia1716 */
	mov	x0, x17
#endif
	ret
	.cfi_endproc
	.size	giong__ctx_sign_lr, .-giong__ctx_sign_lr

	.section .note.GNU-stack,"",%progbits

#if GIONG_PROP_BTI || GIONG_PROP_PAC
/* NT_GNU_PROPERTY_TYPE_0, one property: GNU_PROPERTY_AARCH64_FEATURE_1_AND. */
	.section .note.gnu.property, "a"
	.p2align 3
	.long	4		/* n_namesz: "GNU\0" */
	.long	16		/* n_descsz: pr_type, pr_datasz, pr_data, pad to 8 */
	.long	5		/* n_type: NT_GNU_PROPERTY_TYPE_0 */
	.asciz	"GNU"
	.long	0xc0000000	/* pr_type: GNU_PROPERTY_AARCH64_FEATURE_1_AND */
	.long	4		/* pr_datasz */
	.long	GIONG_PROP_BTI | GIONG_PROP_PAC
	.long	0		/* pad */
#endif
