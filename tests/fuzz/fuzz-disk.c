/* SPDX-License-Identifier: MIT */
/* Fuzz target: a disk image as preflight and plan read it: disk_open, then layout_analyze (partition
 * table through libfdisk and our GPT header checks, filesystems through libblkid and libext2fs).
 * A disk is mostly zeros, so the input describes a sparse image instead of being one:
 *   byte 0     bit 0: 4096-byte LBAs (else 512); bits 1-3: the target's size, in eighths of the
 *              image (0: 1/8 ... 7: 8/8) or, with bit 4, the image plus that many MiB
 *   bytes 1-2  image size in 64 KiB units, little-endian (clamped to 1..64 MiB)
 *   then       chunks: u32 sector (512 B, little-endian, modulo the image), u16 length, bytes
 * tests/fuzz/mkseed-disk turns real images into this form. */
#include "fuzz.h"

#include "disk.h"
#include "gpt.h"
#include "layout.h"
#include "probe.h"

static uint32_t le32(const uint8_t *p) { return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct disk d = { .fd = -1 };
	struct layout l = { 0 };
	char path[64], *why = NULL;
	uint64_t img, tgt;
	uint32_t lba;
	size_t pos = 3;
	int fd;

	if (size < 3)
		return 0;
	lba = (data[0] & 1) ? 4096 : 512;
	img = (uint64_t)(data[1] | data[2] << 8) << 16;
	if (img < (1 << 20))
		img = 1 << 20;
	if (img > (64ull << 20))
		img = 64ull << 20;
	fd = fuzz_memfd("", 0, path);
	if (ftruncate(fd, (off_t)img) < 0)
		abort();
	while (pos + 6 <= size) {
		uint64_t off = (uint64_t)le32(data + pos) * 512 % img;
		size_t len = data[pos + 4] | data[pos + 5] << 8;

		pos += 6;
		if (len > size - pos)
			len = size - pos;
		if (len > img - off)
			len = img - off;
		if (pwrite(fd, data + pos, len, (off_t)off) != (ssize_t)len)
			abort();
		pos += len;
	}
	tgt = (data[0] & 16) ? img + ((uint64_t)((data[0] >> 1) & 7) << 20) : img / 8 * (((data[0] >> 1) & 7) + 1);

	if (disk_open(path, lba, &d, &why) == 0) {
		struct fs_id id = { 0 };

		(void)probe_fs(d.fd, 0, d.size_bytes, &id);
		free(why);
		why = NULL;
		(void)layout_analyze(&d, tgt, lba, &l, &why);
		layout_free(&l);
		disk_close(&d);
	}
	free(why);
	close(fd);
	return 0;
}
