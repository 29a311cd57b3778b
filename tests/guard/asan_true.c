/* SPDX-License-Identifier: MIT */
/*
 * guard-asan-true: exits 0.  Built with AddressSanitizer whatever the
 * build's own options (tests/guard/meson.build): libasan.so is among its
 * DT_NEEDED entries, and ASan aborts at start unless its runtime comes
 * first in the initial library list, which the launcher must arrange
 * (test_options.c).
 */
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	/* Something for ASan to check: a heap copy of the program name. */
	char *copy = malloc(strlen(argv[0]) + 1);
	if (!copy)
		return 1;
	strcpy(copy, argv[0]);
	int rc = argc > 1 && !strcmp(argv[1], copy);
	free(copy);
	return rc;
}
