/* SPDX-License-Identifier: MIT */
/*
 * A program outside the tree, built against an installed libarenacert
 * with nothing but `pkg-config arenacert` (tests/install/run): reads one
 * program (JSON or image) and prints "verdict N" or "error: ...".
 */
#include <stdio.h>
#include <stdlib.h>

#include <arenaguard/certify.h>

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: consumer FILE\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	static char data[1 << 20];
	size_t len = fread(data, 1, sizeof(data), f);
	fclose(f);

	struct ac_model *model = NULL;
	struct ac_error err;
	struct ac_diag diag;
	uint64_t verdict;
	char text[400];
	if (ac_model_read(data, len, &model, &err) != 0 ||
	    ac_certify(model, &verdict, &diag, &err) != 0) {
		printf("error: %s\n", ac_error_text(&err, text, sizeof(text)));
		ac_model_free(model);
		return 2;
	}
	printf("verdict %llu\n", (unsigned long long)verdict);
	ac_model_free(model);
	return 0;
}
