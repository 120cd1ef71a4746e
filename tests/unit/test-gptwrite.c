/* SPDX-License-Identifier: MIT */
/* gptwrite: tables written with libfdisk on image files, checked with sgdisk -v and sfdisk -J. */
#include <fcntl.h>
#include <sys/stat.h>

#include "gptwrite.h"
#include "size.h"
#include "tap.h"
#include "util.h"

static char *sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sh(const char *fmt, ...)
{
	_cleanup_free_ char *cmd = NULL;
	char *out = NULL;
	size_t cap = 0, len = 0;
	va_list ap;
	FILE *p;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		abort();
	va_end(ap);
	p = popen(cmd, "r");
	if (!p)
		return xstrdup("");
	for (;;) {
		if (len + 4096 > cap) {
			cap = cap * 2 + 8192;
			out = realloc(out, cap);
		}
		size_t n = fread(out + len, 1, cap - len - 1, p);
		if (n == 0)
			break;
		len += n;
	}
	out[len] = '\0';
	pclose(p);
	return out;
}

/* The expected layout, worked out by hand from the GPT rules (UEFI 2.10 section 5.3), never from
 * the code under test: a 128-entry array of 128-byte entries is 16 KiB (32 LBAs of 512 bytes, 4 of
 * 4096); the backup header is the last LBA with its array just before it, so the last usable LBA is
 * last - 1 - array; the primary array runs from LBA 2 to 1 + array, so nothing may start before
 * 2 + array (first_usable here; libfdisk's header says the 1 MiB alignment). Partition 1 is the
 * 4 MiB at 1 MiB, partition 2 runs from 5 MiB to the last usable LBA. sgdisk and sfdisk must say
 * the same. */
struct layout {
	uint32_t lba;
	uint64_t bytes, last_lba, first_usable, last_usable, p1_start, p1_end, p2_start;
};

static void one(const char *dir, const struct layout *L)
{
	const uint32_t lba = L->lba;
	_cleanup_free_ char *img = xasprintf("%s/t%u.img", dir, lba);
	struct gpt_new_part parts[2] = {
		{ .number = 1, .type_guid = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B",
		  .part_guid = "0FC63DAF-8483-4772-8E79-3D69D8477DE4", .name = "EFI System Partition", .attrs = 1 },
		{ .number = 2, .type_guid = "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
		  .part_guid = "6A1B7E0C-1D6B-4B0E-9E8D-2C4F0A5B9C11", .name = "root" },
	};
	struct gpt_new t = { .lba_size = lba, .disk_guid = "5E0C1A7D-2B3C-4D5E-8F90-A1B2C3D4E5F6", .parts = parts,
			     .nparts = 2 };
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *why = NULL, *v = NULL, *j = NULL, *p = NULL, *usable = NULL, *entries = NULL;

	t.lba_count = L->last_lba + 1;
	parts[0].start_lba = L->p1_start;
	parts[0].end_lba = L->p1_end;
	parts[1].start_lba = L->p2_start;
	parts[1].end_lba = L->last_usable;
	fd = open(img, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	CHECK(ftruncate(fd, L->bytes) == 0);
	/* junk where the headers go: the writer must not care */
	CHECK(pwrite(fd, "junkjunk", 8, 512) == 8);
	CHECK(gpt_write(fd, img, &t, &why) == 0);
	if (why)
		fprintf(stderr, "gpt_write: %s\n", why);
	_cleanup_free_ char *dev = NULL, *want = NULL; /* before the goto below: cleanup must see NULL */
	if (lba != 512) {
		/* sgdisk and sfdisk read an image file as 512-byte sectors: look through a loop
		 * device with 4096-byte sectors, or skip the independent check when there is none */
		dev = sh("losetup -f --show -b %u '%s' 2>/dev/null | tr -d '\\n'", lba, img);
		if (!*dev) {
			fprintf(stderr, "no loop device: 4096-byte check with tools skipped\n");
			goto wipe;
		}
	}
	const char *dv = dev ? dev : img;
	v = sh("sgdisk -v '%s' 2>&1", dv);
	CHECK(strstr(v, "No problems found") != NULL);
	if (!strstr(v, "No problems found"))
		fprintf(stderr, "%s\n", v);
	j = sh("sfdisk -J '%s' 2>/dev/null | jq -r '[.partitiontable.id, .partitiontable.sectorsize, "
	       ".partitiontable.lastlba, (.partitiontable.partitions[] | .start, .size, .type, .uuid, .name, (.attrs // \"\"))] | map(tostring) | join(\",\")'",
	       dv);
	want = xasprintf(
		"5E0C1A7D-2B3C-4D5E-8F90-A1B2C3D4E5F6,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64
		",C12A7328-F81F-11D2-BA4B-00A0C93EC93B,0FC63DAF-8483-4772-8E79-3D69D8477DE4,EFI System Partition,RequiredPartition,"
		"%" PRIu64 ",%" PRIu64 ",0FC63DAF-8483-4772-8E79-3D69D8477DE4,6A1B7E0C-1D6B-4B0E-9E8D-2C4F0A5B9C11,root,\n",
		lba, L->last_usable, L->p1_start, L->p1_end - L->p1_start + 1, L->p2_start, L->last_usable - L->p2_start + 1);
	CHECK_STR(j, want);
	/* sgdisk's own reading of the usable range */
	p = sh("sgdisk -p '%s' 2>&1", dv);
	entries = xasprintf("Main partition table begins at sector 2 and ends at sector %" PRIu64, L->first_usable - 1);
	usable = xasprintf("last usable sector is %" PRIu64 "\n", L->last_usable);
	CHECK(strstr(p, entries) != NULL && strstr(p, usable) != NULL);
	if (!strstr(p, entries) || !strstr(p, usable))
		fprintf(stderr, "sgdisk -p lacks '%s' or '%s':\n%s\n", entries, usable, p);
	/* backup header at the last LBA: its signature is there */
	char sig[9] = { 0 };
	CHECK(pread(fd, sig, 8, L->last_lba * lba) == 8);
	CHECK_STR(sig, "EFI PART");
	if (dev) {
		free(sh("losetup -d '%s'", dev));
	}
wipe:

	/* a partition past the last usable LBA is refused before anything is written */
	parts[1].end_lba = L->last_usable + 1;
	CHECK(gpt_write(fd, img, &t, &why) == -ERANGE);
	parts[1].end_lba = L->last_usable;
	/* and one before the first usable LBA */
	parts[0].start_lba = L->first_usable - 1;
	CHECK(gpt_write(fd, img, &t, &why) == -ERANGE);
	parts[0].start_lba = L->p1_start;

	/* wipe: no table afterwards */
	CHECK(gpt_wipe(fd, lba, L->last_lba + 1) == 0);
	free(v);
	v = sh("sfdisk -d '%s' 2>&1", img);
	CHECK(strstr(v, "does not contain a recognized partition table") != NULL);
	memset(sig, 0, sizeof(sig));
	CHECK(pread(fd, sig, 8, L->last_lba * lba) == 8);
	CHECK(sig[0] == 0);
}

int main(void)
{
	char dir[] = "/tmp/test-gptwrite.XXXXXX";
	uint64_t o;

	if (system("command -v sgdisk >/dev/null && command -v sfdisk >/dev/null && command -v jq >/dev/null") != 0)
		return 77;
	CHECK(mkdtemp(dir) != NULL);
	CHECK(lba_convert(1050624, 512, 4096, &o) == 0);
	CHECK_U64(o, 131328);
	CHECK(lba_convert(2049, 512, 4096, &o) == -EINVAL);
	CHECK(lba_convert(34, 4096, 512, &o) == 0);
	CHECK_U64(o, 272);
	/* 64 MiB: 131,072 LBAs of 512 bytes, 16,384 of 4096 */
	one(dir, &(struct layout){ .lba = 512, .bytes = 64ull << 20, .last_lba = 131071, .first_usable = 34,
				   .last_usable = 131038, .p1_start = 2048, .p1_end = 10239, .p2_start = 10240 });
	one(dir, &(struct layout){ .lba = 4096, .bytes = 64ull << 20, .last_lba = 16383, .first_usable = 6,
				   .last_usable = 16378, .p1_start = 256, .p1_end = 1279, .p2_start = 1280 });
	_cleanup_free_ char *rm = xasprintf("rm -rf '%s'", dir);
	CHECK(system(rm) == 0);
	return tap_done();
}
