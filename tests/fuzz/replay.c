/* SPDX-License-Identifier: MIT */
/* Replays inputs through a fuzz target without libFuzzer (built with the normal compiler): every
 * file of every directory given (the seed corpus, the regression inputs of fixed crashes), so the
 * normal test suite keeps each past crash fixed. Usage: replay-TARGET DIR|FILE... */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

static int one(const char *path, unsigned *count)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "replay: cannot read '%s'\n", path);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	(*count)++;
	return 0;
}

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	unsigned count = 0;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			/* a target without a regression directory yet */
			if (errno == ENOENT)
				continue;
			fprintf(stderr, "replay: cannot stat '%s'\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= one(argv[i], &count) < 0;
			continue;
		}
		DIR *d = opendir(argv[i]);
		struct dirent *de;
		char **names = NULL;
		size_t n = 0;

		if (!d)
			return 1;
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			names = realloc(names, (n + 1) * sizeof(*names));
			if (!names || asprintf(&names[n++], "%s/%s", argv[i], de->d_name) < 0)
				abort();
		}
		closedir(d);
		qsort(names, n, sizeof(*names), cmp);
		for (size_t j = 0; j < n; j++) {
			printf("# %s\n", names[j]);
			fflush(stdout);
			bad |= one(names[j], &count) < 0;
			free(names[j]);
		}
		free(names);
	}
	printf("replayed %u inputs\n", count);
	if (count == 0) {
		fprintf(stderr, "replay: no inputs found\n");
		return 1;
	}
	return bad;
}
