// SPDX-License-Identifier: MIT
/* Uses only libgiong-core, through the installed headers and library. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <giong/core.h>
#include <giong/core/version.h>

int main(void)
{
	const char *v = giong_version();
	const char *e = giong_strerror(-ENOENT);

	if (v == NULL || strcmp(v, GIONG_VERSION_STRING) != 0 || e == NULL || e[0] == '\0') {
		fprintf(stderr, "unexpected: giong_version()=%s, header %s\n", v ? v : "(null)",
			GIONG_VERSION_STRING);
		return 1;
	}
	printf("giong %s: ENOENT is \"%s\"\n", v, e);
	return 0;
}
