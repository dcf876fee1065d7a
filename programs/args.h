/* SPDX-License-Identifier: MIT */
/*
 * args.h - strict number arguments for programs/, examples/ and tests/harness/: "abc",
 * "12x", "-1" or a value out of range is refused with a message naming the
 * option, not read as 0 (which would, say, make --port pick a random port).
 */
#ifndef GIONG_TOOLS_ARGS_H
#define GIONG_TOOLS_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The value of option @opt of program @prog, from @text: a decimal (or 0x)
 * number in [@min, @max]. Exits with status 2 and a message otherwise. */
static inline unsigned long long tool_number(const char *prog, const char *opt, const char *text,
					     unsigned long long min, unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(text, &end, 0);
	if (!*text || *end || errno || text[0] == '-' || v < min || v > max) {
		fprintf(stderr, "%s: %s wants a number from %llu to %llu, not '%s'\n", prog, opt,
			min, max, text);
		exit(2);
	}
	return v;
}

#endif /* GIONG_TOOLS_ARGS_H */
