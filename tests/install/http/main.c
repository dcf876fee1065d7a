// SPDX-License-Identifier: MIT
/* Uses libgiong-http through the installed headers and library. */
#include <stdio.h>
#include <string.h>

#include <giong/core/version.h>
#include <giong/http.h>

int main(void)
{
	struct giong_http_limits l;

	if (giong_http_limits_init(&l) || giong_http_limits_check(&l) || l.head != 64 * 1024 ||
	    strcmp(giong_http_reason(404), "Not Found") != 0) {
		fprintf(stderr, "consumer: libgiong-http gave unexpected answers\n");
		return 1;
	}
	printf("consumer: giong %s, http ok (%s)\n", giong_version(), giong_http_reason(200));
	return 0;
}
