/* SPDX-License-Identifier: MIT */
/*
 * fuzz_util.h - what the socket-level fuzz targets share: the check that traps
 * (libFuzzer saves the input of a trap as a crash) and the xorshift that cuts
 * an input's bytes into pieces.
 */
#ifndef GIONG_FUZZ_UTIL_H
#define GIONG_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What must hold whatever the input: else a message naming the line, and a trap. */
#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c);                    \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

/* The next state of the xorshift at @x (not 0): piece sizes drawn from the input. */
static inline uint64_t fuzz_rng(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The size of the next piece of @left bytes: all of them when @k is 15, else
 * 1 + a draw of @rng mod 2^@k, at most @left. */
static inline size_t fuzz_piece(uint64_t *rng, unsigned k, size_t left)
{
	size_t piece;

	if (k >= 15)
		return left;
	piece = 1 + (size_t)(fuzz_rng(rng) & ((1u << k) - 1));
	return piece < left ? piece : left;
}

#endif /* GIONG_FUZZ_UTIL_H */
