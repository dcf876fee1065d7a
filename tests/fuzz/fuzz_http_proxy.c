/* SPDX-License-Identifier: MIT */
/*
 * fuzz_http_proxy.c - libFuzzer target for the PROXY protocol header parser
 * (src/common/proxy.c, linked from giong-http-internal): the answer never claims
 * more bytes than given, an accepted header names an IPv4 or IPv6 client,
 * and the parser decides the same on every prefix (0 before the header's
 * end, its length after).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/proxy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct giong_addr a;
	bool has = false;
	int r = giong__http_proxy_parse((const char *)data, size, &a, &has);

	if (r > 0 && (size_t)r > size)
		abort();
	if (r < 0 && r != -EBADMSG)
		abort();
	if (r > 0 && has && a.ss.ss_family != AF_INET && a.ss.ss_family != AF_INET6)
		abort();
	/* The prefix property, on a few cut points. */
	for (size_t k = 0; k < size; k += 1 + size / 8) {
		int p = giong__http_proxy_parse((const char *)data, k, &a, &has);
		int want = r > 0 && k >= (size_t)r ? r : (r == -EBADMSG ? p : 0);

		if (r == -EBADMSG && p != 0 && p != -EBADMSG)
			abort(); /* a refused input's prefix: more, or the same refusal */
		if (r >= 0 && p != want)
			abort();
	}
	return 0;
}
