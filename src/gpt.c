/* SPDX-License-Identifier: MIT */
/* Partition tables: entries through libfdisk; both GPT headers checked by us (signature, CRC32s, LBAs),
 * because an operator must hear "primary header corrupt, backup good", not "no partition table". */
#include "util.h"
#include "gpt.h"

#include <endian.h>
#include <inttypes.h>
#include <stdarg.h>
#include <libfdisk/libfdisk.h>
#include <zlib.h>

static void fdisk_unrefp(struct fdisk_context **c) { fdisk_unref_context(*c); }
static void fdisk_table_unrefp(struct fdisk_table **t) { fdisk_unref_table(*t); }

const char *ptable_kind_name(enum ptable_kind k)
{
	return k == PT_GPT ? "gpt" : k == PT_DOS ? "dos" : "none";
}

struct gpt_header {
	uint64_t my_lba, alt_lba, first_usable, last_usable, entries_lba;
	uint32_t nentries, entry_size;
	uint8_t guid[16];
};

/* The largest entry array a header may declare: 65,536 entries of 128 B (the usual is 16 KiB). */
#define GPT_ENTRIES_MAX_BYTES (8ULL * 1024 * 1024)

/* GUIDs are stored with their first three fields little-endian (UEFI spec, appendix A). */
static void guid_str(const uint8_t g[16], char out[37])
{
	snprintf(out, 37, "%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X", g[3], g[2], g[1],
		 g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

static int read_lba(int fd, uint64_t lba, uint32_t lba_size, void *buf, size_t len)
{
	uint64_t off;
	ssize_t n;

	if (u64_mul(lba, lba_size, &off) < 0)
		return -EOVERFLOW;
	n = pread(fd, buf, len, (off_t)off);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* The LBA at `lba` read into buf (lba_size bytes) when it holds a GPT header whose signature,
 * size and header CRC32 check out (the CRC field is left zeroed). */
static bool gpt_header_read(int fd, uint64_t lba, uint32_t lba_size, uint64_t lba_count, uint8_t *buf)
{
	uint32_t hsize, crc, le32;

	if (lba >= lba_count || read_lba(fd, lba, lba_size, buf, lba_size) < 0 || memcmp(buf, "EFI PART", 8) != 0)
		return false;
	memcpy(&le32, buf + 12, 4);
	hsize = le32toh(le32);
	if (hsize < 92 || hsize > lba_size)
		return false;
	memcpy(&le32, buf + 16, 4);
	crc = le32toh(le32);
	memset(buf + 16, 0, 4);
	return (uint32_t)crc32(0, buf, hsize) == crc;
}

/* A GPT header at `lba` is valid when its signature, size, own LBA and both CRC32s check out. */
static bool gpt_header_valid(int fd, uint64_t lba, uint32_t lba_size, uint64_t lba_count, struct gpt_header *h)
{
	_cleanup_free_ uint8_t *buf = xcalloc(1, lba_size);
	_cleanup_free_ uint8_t *entries = NULL;
	uint32_t crc, le32;
	uint64_t le64;
	size_t elen;

	if (!gpt_header_read(fd, lba, lba_size, lba_count, buf))
		return false;
#define LE64(off) (memcpy(&le64, buf + (off), 8), le64toh(le64))
#define LE32(off) (memcpy(&le32, buf + (off), 4), le32toh(le32))
	h->my_lba = LE64(24);
	h->alt_lba = LE64(32);
	h->first_usable = LE64(40);
	h->last_usable = LE64(48);
	memcpy(h->guid, buf + 56, 16);
	h->entries_lba = LE64(72);
	h->nentries = LE32(80);
	h->entry_size = LE32(84);
	crc = LE32(88);
#undef LE64
#undef LE32
	/* UEFI: SizeOfPartitionEntry is 128 x 2^n. The array is capped (GPT_ENTRIES_MAX_BYTES), so a
	 * hostile header cannot make us read 256 MiB. */
	if (h->my_lba != lba || h->entry_size < 128 || h->entry_size > 4096 ||
	    (h->entry_size & (h->entry_size - 1)) || h->nentries > 65536 ||
	    (uint64_t)h->nentries * h->entry_size > GPT_ENTRIES_MAX_BYTES)
		return false;
	elen = (size_t)h->nentries * h->entry_size;
	entries = xcalloc(1, elen);
	if (read_lba(fd, h->entries_lba, lba_size, entries, elen) < 0)
		return false;
	return (uint32_t)crc32(0, entries, (uInt)elen) == crc;
}

static bool gpt_signature(int fd, uint64_t lba, uint32_t lba_size)
{
	char sig[8];

	return read_lba(fd, lba, lba_size, sig, sizeof(sig)) == 0 && memcmp(sig, "EFI PART", 8) == 0;
}

/*
 * A header whose signature and header CRC32 check out but whose entry array is larger than any GPT
 * needs. libfdisk allocates what such a header declares (gigabytes) before it checks the array's
 * CRC32, so these are refused before libfdisk reads the disk. *bytes gets the declared size.
 */
static bool header_oversized(int fd, uint64_t lba, uint32_t lba_size, uint64_t lba_count, uint64_t *bytes)
{
	_cleanup_free_ uint8_t *buf = xcalloc(1, lba_size);
	uint32_t le32, n, esize;

	if (!gpt_header_read(fd, lba, lba_size, lba_count, buf))
		return false;
	memcpy(&le32, buf + 80, 4);
	n = le32toh(le32);
	memcpy(&le32, buf + 84, 4);
	esize = le32toh(le32);
	*bytes = (uint64_t)n * esize;
	return *bytes > GPT_ENTRIES_MAX_BYTES;
}

static int read_entries(struct fdisk_context *cxt, struct ptable *t)
{
	_cleanup_(fdisk_table_unrefp) struct fdisk_table *tb = NULL;
	struct fdisk_iter *itr;
	struct fdisk_partition *pa;
	int r = fdisk_get_partitions(cxt, &tb);

	if (r < 0)
		return r;
	itr = fdisk_new_iter(FDISK_ITER_FORWARD);
	if (!itr)
		return -ENOMEM;
	t->parts = xcalloc(fdisk_table_get_nents(tb), sizeof(*t->parts));
	while (fdisk_table_next_partition(tb, itr, &pa) == 0) {
		struct part *p = &t->parts[t->nparts];
		struct fdisk_parttype *type = fdisk_partition_get_type(pa);
		const char *s;
		uint64_t sectors;

		if (!fdisk_partition_has_start(pa) || !fdisk_partition_has_size(pa))
			continue;
		p->number = (unsigned)fdisk_partition_get_partno(pa) + 1;
		p->start_lba = fdisk_partition_get_start(pa);
		sectors = fdisk_partition_get_size(pa);
		/* Modulo 2^64 for an entry that ends before it starts; a GPT's raw LBAs replace these
		 * (raw_lbas), and ptable_check names the problem. */
		p->end_lba = p->start_lba + sectors - 1;
		if (p->end_lba < p->start_lba || u64_mul(sectors, t->lba_size, &p->size_bytes) < 0)
			p->size_bytes = 0;
		p->container = fdisk_partition_is_container(pa);
		if (t->kind == PT_GPT) {
			s = type ? fdisk_parttype_get_string(type) : NULL;
			snprintf(p->type_guid, sizeof(p->type_guid), "%s", s ? s : "");
			s = fdisk_partition_get_uuid(pa);
			snprintf(p->part_guid, sizeof(p->part_guid), "%s", s ? s : "");
			s = fdisk_partition_get_name(pa);
			p->name = xstrdup(s ? s : "");
			fdisk_gpt_get_partition_attrs(cxt, p->number - 1, &p->attrs);
		} else
			snprintf(p->type_guid, sizeof(p->type_guid), "0x%02x", type ? fdisk_parttype_get_code(type) : 0);
		t->nparts++;
	}
	fdisk_free_iter(itr);
	return 0;
}

/* A GPT entry's StartingLBA and EndingLBA as the disk holds them (UEFI 2.10, table 5.3.3): libfdisk
 * reports an entry that ends before it starts with size 0, which would hide its end LBA. */
static void raw_lbas(int fd, struct ptable *t, const struct gpt_header *h)
{
	for (size_t i = 0; i < t->nparts; i++) {
		struct part *p = &t->parts[i];
		uint64_t off, le[2];

		if (p->number == 0 || p->number > h->nentries ||
		    u64_mul(h->entries_lba, t->lba_size, &off) < 0 ||
		    u64_add(off, (uint64_t)(p->number - 1) * h->entry_size + 32, &off) < 0 || off > INT64_MAX ||
		    pread(fd, le, sizeof(le), (off_t)off) != (ssize_t)sizeof(le))
			continue;
		p->start_lba = le64toh(le[0]);
		p->end_lba = le64toh(le[1]);
		if (p->end_lba < p->start_lba || u64_mul(p->end_lba - p->start_lba + 1, t->lba_size, &p->size_bytes) < 0)
			p->size_bytes = 0;
	}
}

int ptable_read(int fd, const char *path, uint32_t lba_size, uint64_t size_bytes, struct ptable *t, char **why)
{
	_cleanup_(fdisk_unrefp) struct fdisk_context *cxt = NULL;
	struct gpt_header ph = { 0 }, bh = { 0 };
	uint8_t mbr[512];
	bool protective = false;
	unsigned extended = 0;
	int r;

	*t = (struct ptable){ .lba_size = lba_size, .lba_count = size_bytes / lba_size };
	*why = NULL;
	if (read_lba(fd, 0, lba_size, mbr, sizeof(mbr)) == 0 && mbr[510] == 0x55 && mbr[511] == 0xAA)
		for (int i = 0; i < 4; i++) {
			uint8_t type = mbr[446 + 16 * i + 4];

			protective |= type == 0xEE;
			extended += type == 0x05 || type == 0x0F || type == 0x85; /* what libfdisk takes for extended */
		}
	/* An MBR holds one extended partition at most (fdisk warns and ignores the others); with
	 * more, libfdisk 2.38 loses one EBR buffer per read (found by fuzzing). Refused before it reads. */
	if (extended > 1)
		return set_why(why, -EBADMSG,
			       "'%s' has %u extended partitions in its MBR, where a sound table has one at most: the "
			       "table is damaged or hostile; recover it with fdisk or testdisk before anything else",
			       path, extended);

	t->primary_ok = gpt_header_valid(fd, 1, lba_size, t->lba_count, &ph);
	/* The backup lives where the primary says; without a primary, at the disk's last LBA. */
	t->backup_ok = gpt_header_valid(fd, t->primary_ok ? ph.alt_lba : t->lba_count - 1, lba_size, t->lba_count,
					&bh);

	{
		/* where libfdisk looks: LBA 1, the primary's AlternateLBA, the last LBA */
		uint64_t at[3] = { 1, t->primary_ok ? ph.alt_lba : t->lba_count - 1, t->lba_count - 1 }, bytes = 0;

		for (size_t i = 0; i < ARRAY_SIZE(at); i++)
			if (header_oversized(fd, at[i], lba_size, t->lba_count, &bytes))
				return set_why(why, -EBADMSG,
					       "'%s' has a GPT header at LBA %" PRIu64 " declaring a %" PRIu64
					       "-byte entry array, more than any GPT needs (%llu): the table is damaged or "
					       "hostile; recover it with gdisk before anything else",
					       path, at[i], bytes, GPT_ENTRIES_MAX_BYTES);
	}
	cxt = fdisk_new_context();
	if (!cxt)
		return -ENOMEM;
	/* Image files have no BLKSSZGET: tell libfdisk the LBA size we were given. */
	fdisk_save_user_sector_size(cxt, lba_size, lba_size);
	r = fdisk_assign_device_by_fd(cxt, fd, path, 1);
	if (r < 0)
		return set_why(why, r, "libfdisk cannot read '%s': %s", path, strerror(-r));
	if (fdisk_is_labeltype(cxt, FDISK_DISKLABEL_GPT) || t->primary_ok || t->backup_ok) {
		const struct gpt_header *h = t->primary_ok ? &ph : &bh;

		t->kind = PT_GPT;
		if (!t->primary_ok && !t->backup_ok)
			return set_why(why, -EBADMSG,
				       "'%s' has a GPT that libfdisk reads but whose headers fail their checks", path);
		guid_str(h->guid, t->disk_guid);
		t->entries_lba = h->entries_lba;
		t->entries_lbas = ((uint64_t)h->nentries * h->entry_size + lba_size - 1) / lba_size;
		t->first_usable_lba = h->first_usable;
		t->last_usable_lba = h->last_usable;
		/* From the primary header when valid (AlternateLBA), else the backup's own LBA. */
		t->backup_header_lba = t->primary_ok ? ph.alt_lba : bh.my_lba;
		if (!fdisk_is_labeltype(cxt, FDISK_DISKLABEL_GPT))
			return set_why(why, -EBADMSG,
				       "'%s' has a valid GPT %s header but libfdisk does not read the table", path,
				       t->primary_ok ? "primary" : "backup");
	} else if (protective || (!fdisk_has_label(cxt) && (gpt_signature(fd, 1, lba_size) ||
								gpt_signature(fd, t->lba_count - 1, lba_size)))) {
		/* A protective MBR (or, with no other table, a header's signature) says GPT; with both
		 * headers failing their checks libfdisk falls back to the MBR (not the disk's table) or
		 * to nothing. A real MBR next to a stale GPT signature stays an MBR. */
		return set_why(why, -EBADMSG,
			       "'%s' has a GPT (a protective MBR or a header's signature) but both GPT headers fail "
			       "their checks "
			       "(signature, CRC32 or LBA) at %u-byte LBAs: the table is damaged (or the LBA size is "
			       "another); recover it with gdisk (r, then b or c, v, w) before anything else",
			       path, lba_size);
	} else if (fdisk_is_labeltype(cxt, FDISK_DISKLABEL_DOS))
		t->kind = PT_DOS;
	else if (fdisk_has_label(cxt)) {
		return set_why(why, -EPROTONOSUPPORT,
			       "'%s' has a '%s' partition table; only GPT and MBR are supported", path,
			       fdisk_label_get_name(fdisk_get_label(cxt, NULL)));
	} else
		return 0;
	r = read_entries(cxt, t);
	if (r < 0)
		return set_why(why, r, "cannot read the partition entries of '%s': %s", path, strerror(-r));
	if (t->kind == PT_GPT)
		raw_lbas(fd, t, t->primary_ok ? &ph : &bh);
	return 0;
}

void ptable_free(struct ptable *t)
{
	for (size_t i = 0; i < t->nparts; i++)
		free(t->parts[i].name);
	free(t->parts);
	t->parts = NULL;
	t->nparts = 0;
}

static void problem(char **list, size_t *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void problem(char **list, size_t *n, const char *fmt, ...)
{
	_cleanup_free_ char *one = NULL;
	char *joined;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&one, fmt, ap) < 0)
		abort();
	va_end(ap);
	joined = xasprintf("%s%s%s", *list ? *list : "", *list ? "; " : "", one);
	free(*list);
	*list = joined;
	(*n)++;
}

static const struct ptable *sort_table; /* qsort has no context argument */
static int by_start(const void *a, const void *b)
{
	const struct part *x = &sort_table->parts[*(const size_t *)a], *y = &sort_table->parts[*(const size_t *)b];

	/* ties by number, so the message names the pair the same way on every run */
	if (x->start_lba != y->start_lba)
		return x->start_lba < y->start_lba ? -1 : 1;
	return x->number < y->number ? -1 : x->number > y->number ? 1 : 0;
}

size_t ptable_check(const struct ptable *t, char **problems)
{
	_cleanup_free_ size_t *order = NULL;
	size_t n = 0, nvalid = 0, widest = SIZE_MAX;
	uint64_t last = t->lba_count ? t->lba_count - 1 : 0, lo, hi;

	*problems = NULL;
	if (t->kind == PT_NONE)
		return 0;
	if (t->kind == PT_GPT) {
		uint64_t array_end;

		lo = t->first_usable_lba;
		hi = t->last_usable_lba;
		if (lo > hi)
			problem(problems, &n, "the GPT's first usable LBA %" PRIu64 " is past its last usable LBA %" PRIu64,
				lo, hi);
		if (hi > last)
			problem(problems, &n, "the GPT's last usable LBA %" PRIu64 " is past the disk's last LBA %" PRIu64,
				hi, last);
		if (t->backup_header_lba > last)
			problem(problems, &n, "the GPT's backup header LBA %" PRIu64 " is past the disk's last LBA %" PRIu64,
				t->backup_header_lba, last);
		if (t->primary_ok && (u64_add(t->entries_lba, t->entries_lbas, &array_end) < 0 || t->entries_lba < 2 ||
				      array_end > lo))
			problem(problems, &n, "the GPT's entry array (LBA %" PRIu64 ", %" PRIu64 " LBAs) overlaps its usable "
					      "LBAs from %" PRIu64,
				t->entries_lba, t->entries_lbas, lo);
	} else {
		lo = 1; /* LBA 0 holds the MBR itself */
		hi = last;
	}
	order = xcalloc(t->nparts ? t->nparts : 1, sizeof(*order));
	for (size_t i = 0; i < t->nparts; i++) {
		const struct part *p = &t->parts[i];
		uint64_t end_bytes;

		if (p->start_lba > p->end_lba) {
			problem(problems, &n, "partition %u ends (LBA %" PRIu64 ") before it begins (LBA %" PRIu64 ")",
				p->number, p->end_lba, p->start_lba);
			continue;
		}
		if (u64_add(p->end_lba, 1, &end_bytes) < 0 || u64_mul(end_bytes, t->lba_size, &end_bytes) < 0 ||
		    end_bytes > INT64_MAX) {
			problem(problems, &n, "partition %u's end (LBA %" PRIu64 ") overflows 64-bit byte offsets", p->number,
				p->end_lba);
			continue;
		}
		if (p->end_lba > last)
			problem(problems, &n, "partition %u ends at LBA %" PRIu64 ", past the disk's last LBA %" PRIu64,
				p->number, p->end_lba, last);
		else if (p->end_lba > hi)
			problem(problems, &n, "partition %u ends at LBA %" PRIu64 ", past the last usable LBA %" PRIu64,
				p->number, p->end_lba, hi);
		if (p->start_lba < lo)
			problem(problems, &n, "partition %u begins at LBA %" PRIu64 ", before the first usable LBA %" PRIu64,
				p->number, p->start_lba, lo);
		if (!p->container)
			order[nvalid++] = i;
	}
	/* Overlaps: sorted by start, a partition overlaps another when it starts at or before the
	 * furthest end seen so far (n log n: a GPT may list thousands of entries). */
	sort_table = t;
	qsort(order, nvalid, sizeof(*order), by_start);
	for (size_t k = 0; k < nvalid; k++) {
		const struct part *p = &t->parts[order[k]];

		if (widest != SIZE_MAX && p->start_lba <= t->parts[widest].end_lba) {
			const struct part *q = &t->parts[widest];

			problem(problems, &n, "partitions %u and %u overlap (LBAs %" PRIu64 "-%" PRIu64 " and %" PRIu64 "-%" PRIu64 ")",
				q->number, p->number, q->start_lba, q->end_lba, p->start_lba, p->end_lba);
		}
		if (widest == SIZE_MAX || p->end_lba > t->parts[widest].end_lba)
			widest = order[k];
	}
	return n;
}
