/* SPDX-License-Identifier: MIT */
/* Fuzz target: a backup tarball as restore reads it (arc_load: gzip, tar, manifest, entries, limits),
 * then the restore plan against an empty root (which reads the root and writes nothing).
 * The first byte picks the encoding: odd, the rest is a tar stream the harness gzips (so that
 * mutations reach tar and manifest instead of failing the gzip CRC); even, the rest is the file. */
#include "fuzz.h"

#include <zlib.h>

#include "profile.h"
#include "extract.h"
#include "tarball.h"

/* fstab identifiers: none resolves (restore keeps the current fstab), and no device is probed */
static bool resolve_none(const char *tag, const char *value, void *userdata)
{
	(void)tag, (void)value, (void)userdata;
	return false;
}

static char root[4096];

/* the directory is empty between inputs: gone when the process ends */
static void remove_dir(void)
{
	rmdir(root);
}
static struct profile *prof;

static unsigned char *gzip(const uint8_t *data, size_t size, size_t *outlen)
{
	z_stream z = { 0 };
	size_t cap = compressBound(size) + 64;
	unsigned char *out = malloc(cap);

	if (!out || deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		abort();
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)size;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END)
		abort();
	*outlen = z.total_out;
	deflateEnd(&z);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct arc a = { 0 };
	char *why = NULL, path[64];
	unsigned char *gz = NULL;
	size_t len = size ? size - 1 : 0;
	const uint8_t *body = size ? data + 1 : data;
	int fd;

	if (!prof) {
		char *err = NULL;
		const char *tmp = getenv("TMPDIR");

		/* in $TMPDIR, which tests/fuzz/run empties after each target: libFuzzer's fork mode
		 * ends its workers with a signal, so the atexit removal does not always run */
		snprintf(root, sizeof(root), "%s/fuzz-tarball-root.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(root) || atexit(remove_dir) != 0 || profile_load(NULL, &prof, &err) < 0)
			abort();
	}
	if (size && (data[0] & 1)) {
		gz = gzip(body, len, &len);
		body = gz;
	}
	fd = fuzz_memfd(body, len, path);
	if (arc_load(path, &prof->limits, &a, &why) == 0) {
		struct restore_opts o = { .root = root, .profile = prof, .resolve = resolve_none };
		struct restore_plan p = { 0 };
		char *why2 = NULL;

		(void)restore_plan(&a, &o, &p, &why2);
		restore_plan_free(&p);
		free(why2);
	}
	arc_free(&a);
	free(why);
	free(gz);
	close(fd);
	return 0;
}
