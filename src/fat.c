/* SPDX-License-Identifier: MIT */
/* FAT32 written whole from a file list, and read back by path: the rescue stick's ESP. */
#include "util.h"
#include "fat.h"

#include <ctype.h>
#include <inttypes.h>
#include <openssl/evp.h>

#define FAT_RESERVED 32u          /* reserved sectors, as mkfs.fat makes them for FAT32 */
#define FAT_NFATS 2u
#define FAT32_MIN_CLUSTERS 65525u /* fewer, and a reader takes it for FAT16 */
#define FAT32_MAX_CLUSTERS 0x0FFFFFF4u
#define FAT_EOC 0x0FFFFFFFu
#define FAT_ENTRY_MASK 0x0FFFFFFFu
#define DIRENT 32u
#define LFN_CHARS 13u
#define FAT_MAX_TABLE (256u << 20) /* the largest FAT the reader loads: 64 M clusters */
#define FAT_CHUNK (1u << 20)

struct geo {
	uint32_t sector, spc, cbytes;
	uint64_t sectors, fat_sectors, data_off;
	uint32_t clusters;
};

/* Microsoft's table for FAT32: 512-byte clusters up to 260 MiB, then 4 KiB up to 8 GiB. */
static uint32_t cluster_bytes_for(uint64_t bytes, uint32_t sector)
{
	uint32_t c = bytes <= (260ull << 20) ? 512 : bytes <= (8ull << 30) ? 4096 : 8192;

	return c < sector ? sector : c;
}

static int geometry(uint64_t bytes, uint32_t sector, struct geo *g)
{
	uint64_t est, c;

	if (sector != 512 && sector != 1024 && sector != 2048 && sector != 4096)
		return -EINVAL;
	*g = (struct geo){ .sector = sector, .sectors = bytes / sector, .cbytes = cluster_bytes_for(bytes, sector) };
	g->spc = g->cbytes / sector;
	if (g->sectors <= FAT_RESERVED || g->sectors > UINT32_MAX)
		return g->sectors > UINT32_MAX ? -EFBIG : -ENOSPC;
	/* the FAT sized for every cluster the region could hold: a few sectors more than it needs */
	est = (g->sectors - FAT_RESERVED) / g->spc + 2;
	g->fat_sectors = (est * 4 + sector - 1) / sector;
	if (FAT_RESERVED + FAT_NFATS * g->fat_sectors >= g->sectors)
		return -ENOSPC;
	c = (g->sectors - FAT_RESERVED - FAT_NFATS * g->fat_sectors) / g->spc;
	if (c < FAT32_MIN_CLUSTERS)
		return -ENOSPC;
	if (c > FAT32_MAX_CLUSTERS)
		return -EFBIG;
	g->clusters = (uint32_t)c;
	g->data_off = (FAT_RESERVED + FAT_NFATS * g->fat_sectors) * sector;
	return 0;
}

/* ---- the tree of names ---- */

struct node {
	char *name;
	char sname[11]; /* 8.3, space-padded */
	bool dir, lfn;
	size_t parent;
	struct fat_file *file;
	uint32_t first, nclusters, entries;
};

struct tree {
	struct node *v;
	size_t n;
};

static void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i].name);
	free(t->v);
}

static bool short_char(int c)
{
	return isupper(c) || isdigit(c) || (c && strchr("$%'-_@~`!(){}^#&", c));
}

/* The name as an 8.3 entry when it is one exactly (upper case, one dot at most): true and sname set. */
static bool exact_short(const char *name, char sname[11])
{
	const char *dot = strchr(name, '.');
	size_t base = dot ? (size_t)(dot - name) : strlen(name), ext = dot ? strlen(dot + 1) : 0;

	if (base < 1 || base > 8 || ext > 3 || (dot && (!ext || strchr(dot + 1, '.'))))
		return false;
	for (size_t i = 0; i < base; i++)
		if (!short_char((unsigned char)name[i]))
			return false;
	for (size_t i = 0; i < ext; i++)
		if (!short_char((unsigned char)dot[1 + i]))
			return false;
	memset(sname, ' ', 11);
	memcpy(sname, name, base);
	if (ext)
		memcpy(sname + 8, dot + 1, ext);
	return true;
}

static bool sname_taken(const struct tree *t, size_t parent, const char sname[11])
{
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i].parent == parent && memcmp(t->v[i].sname, sname, 11) == 0)
			return true;
	return false;
}

/* A short alias for a long name, "SWAPTO~1CON", unique among its siblings. */
static void alias(const struct tree *t, size_t parent, const char *name, char sname[11])
{
	const char *dot = strrchr(name, '.');
	char base[9] = "", ext[4] = "";
	size_t nb = 0, ne = 0;

	for (const char *p = name; *p && (!dot || p < dot) && nb < 8; p++)
		if (*p != '.' && *p != ' ')
			base[nb++] = short_char(toupper((unsigned char)*p)) ? (char)toupper((unsigned char)*p) : '_';
	for (const char *p = dot ? dot + 1 : ""; *p && ne < 3; p++)
		if (*p != ' ')
			ext[ne++] = short_char(toupper((unsigned char)*p)) ? (char)toupper((unsigned char)*p) : '_';
	if (!nb)
		base[nb++] = '_';
	for (unsigned k = 1; k < 1000000; k++) {
		char tail[9];
		int tl = snprintf(tail, sizeof(tail), "~%u", k);
		size_t keep = nb + (size_t)tl > 8 ? 8 - (size_t)tl : nb;

		memset(sname, ' ', 11);
		memcpy(sname, base, keep);
		memcpy(sname + keep, tail, (size_t)tl);
		memcpy(sname + 8, ext, ne);
		if (!sname_taken(t, parent, sname))
			return;
	}
}

static bool name_ok(const char *s)
{
	if (!*s || streq(s, ".") || streq(s, "..") || strlen(s) > 255)
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p > 0x7e || strchr("\\:*?\"<>|", *p))
			return false;
	return true;
}

static size_t child(const struct tree *t, size_t parent, const char *name)
{
	for (size_t i = 1; i < t->n; i++)
		if (t->v[i].parent == parent && strcasecmp(t->v[i].name, name) == 0)
			return i;
	return 0;
}

static size_t add_node(struct tree *t, size_t parent, const char *name, struct fat_file *file)
{
	struct node *n;

	t->v = realloc(t->v, (t->n + 1) * sizeof(*t->v));
	if (!t->v)
		abort();
	n = &t->v[t->n];
	*n = (struct node){ .name = xstrdup(name), .dir = !file, .parent = parent, .file = file };
	if (!exact_short(name, n->sname)) {
		char s[11];

		n->lfn = true;
		alias(t, parent, name, s); /* among the siblings so far: n is not counted yet */
		memcpy(n->sname, s, 11);
	}
	return t->n++;
}

static int tree_build(struct fat_file *files, size_t n, struct tree *t, char **why)
{
	*t = (struct tree){ .v = xcalloc(1, sizeof(*t->v)), .n = 1 };
	t->v[0] = (struct node){ .name = xstrdup(""), .dir = true }; /* the root */
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *copy = xstrdup(files[i].path);
		char *save = NULL, *next;
		size_t at = 0;

		for (char *c = strtok_r(copy, "/", &save); c; c = next) {
			size_t k;

			next = strtok_r(NULL, "/", &save);
			if (!name_ok(c))
				return set_why(why, -EINVAL, "'%s' is no FAT name (in '%s')", c, files[i].path);
			k = child(t, at, c);
			if (k && (!next || !t->v[k].dir))
				return set_why(why, -EEXIST, "'%s' is there twice (FAT names ignore case)", files[i].path);
			at = k ? k : add_node(t, at, c, next ? NULL : &files[i]);
		}
		if (!at)
			return set_why(why, -EINVAL, "'%s' names no file", files[i].path);
	}
	return 0;
}

/* Entries and clusters per node, clusters allocated from 2 in node order (the root first). -ENOSPC
 * when they need more clusters than g has. */
static int tree_place(struct tree *t, const struct geo *g, uint64_t *need)
{
	uint64_t next = 2;

	for (size_t i = 0; i < t->n; i++)
		t->v[i].entries = t->v[i].dir ? (i ? 2 : 1) : 0; /* . and .., or the root's volume label */
	for (size_t i = 1; i < t->n; i++)
		t->v[t->v[i].parent].entries += 1 + (t->v[i].lfn ? (uint32_t)((strlen(t->v[i].name) + LFN_CHARS - 1) / LFN_CHARS) : 0);
	for (size_t i = 0; i < t->n; i++) {
		struct node *n = &t->v[i];
		uint64_t bytes = n->dir ? (uint64_t)(n->entries + 1) * DIRENT : n->file->size;
		uint64_t c = (bytes + g->cbytes - 1) / g->cbytes;

		n->nclusters = (uint32_t)c;
		n->first = c ? (uint32_t)next : 0;
		next += c;
	}
	*need = next - 2;
	return *need > g->clusters ? -ENOSPC : 0;
}

uint64_t fat_min_bytes(const struct fat_file *files, size_t n, uint32_t sector)
{
	struct tree t;
	uint64_t b = 32ull << 20, need = 0;
	int r = tree_build((struct fat_file *)files, n, &t, NULL);

	for (; r == 0 && b < (1ull << 40); b += 1ull << 20) {
		struct geo g;

		if (geometry(b, sector, &g) == 0 && tree_place(&t, &g, &need) == 0)
			break;
	}
	tree_free(&t);
	return r == 0 ? b : 0;
}

/* ---- writing ---- */

static void put16(unsigned char *p, uint32_t v) { p[0] = (unsigned char)v; p[1] = (unsigned char)(v >> 8); }
static void put32(unsigned char *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }
static uint32_t get16(const unsigned char *p) { return p[0] | (uint32_t)p[1] << 8; }
static uint32_t get32(const unsigned char *p) { return get16(p) | get16(p + 2) << 16; }

static void dos_time(time_t t, uint16_t *date, uint16_t *tm)
{
	struct tm g;

	gmtime_r(&t, &g);
	if (g.tm_year < 80) {
		*date = (1 << 5) | 1;
		*tm = 0;
		return;
	}
	*date = (uint16_t)(((g.tm_year - 80) << 9) | ((g.tm_mon + 1) << 5) | g.tm_mday);
	*tm = (uint16_t)((g.tm_hour << 11) | (g.tm_min << 5) | (g.tm_sec / 2));
}

static unsigned char lfn_sum(const char sname[11])
{
	unsigned char s = 0;

	for (int i = 0; i < 11; i++)
		s = (unsigned char)(((s & 1) << 7) + (s >> 1) + (unsigned char)sname[i]);
	return s;
}

static void short_entry(unsigned char *e, const char sname[11], uint8_t attr, uint32_t cluster, uint32_t size,
			time_t t)
{
	uint16_t d, tm;

	dos_time(t, &d, &tm);
	memcpy(e, sname, 11);
	e[11] = attr;
	put16(e + 14, tm);
	put16(e + 16, d);
	put16(e + 18, d);
	put16(e + 20, cluster >> 16);
	put16(e + 22, tm);
	put16(e + 24, d);
	put16(e + 26, cluster & 0xffff);
	put32(e + 28, size);
}

/* The long-name entries of `name` at e, last piece first, as the specification orders them. */
static unsigned char *lfn_entries(unsigned char *e, const char *name, const char sname[11])
{
	static const int at[LFN_CHARS] = { 1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30 };
	size_t len = strlen(name), k = (len + LFN_CHARS - 1) / LFN_CHARS;

	for (size_t i = k; i-- > 0; e += DIRENT) {
		e[0] = (unsigned char)((i + 1) | (i + 1 == k ? 0x40 : 0));
		e[11] = 0x0f;
		e[13] = lfn_sum(sname);
		for (size_t j = 0; j < LFN_CHARS; j++) {
			size_t c = i * LFN_CHARS + j;

			put16(e + at[j], c < len ? (unsigned char)name[c] : c == len ? 0 : 0xffff);
		}
	}
	return e;
}

static int write_dir(int fd, uint64_t off, const struct geo *g, const struct tree *t, size_t d, const char *label,
		     time_t ts)
{
	const struct node *n = &t->v[d];
	size_t len = (size_t)n->nclusters * g->cbytes;
	_cleanup_free_ unsigned char *buf = xcalloc(1, len);
	unsigned char *e = buf;

	if (d == 0) {
		short_entry(e, label, 0x08, 0, 0, ts);
		e += DIRENT;
	} else {
		uint32_t up = n->parent ? t->v[n->parent].first : 0; /* ".." of a child of the root is 0 */

		short_entry(e, ".          ", 0x10, n->first, 0, ts);
		short_entry(e + DIRENT, "..         ", 0x10, up, 0, ts);
		e += 2 * DIRENT;
	}
	for (size_t i = 1; i < t->n; i++) {
		const struct node *c = &t->v[i];

		if (c->parent != d)
			continue;
		if (c->lfn)
			e = lfn_entries(e, c->name, c->sname);
		short_entry(e, c->sname, c->dir ? 0x10 : 0x20, c->first, c->dir ? 0 : (uint32_t)c->file->size, ts);
		e += DIRENT;
	}
	return pwrite_all(fd, buf, len, off + g->data_off + (uint64_t)(n->first - 2) * g->cbytes);
}

static int write_file(int fd, uint64_t off, const struct geo *g, struct node *n, char **why)
{
	_cleanup_free_ unsigned char *buf = xcalloc(1, FAT_CHUNK);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char h[32];
	uint64_t at = off + g->data_off + (n->first ? (uint64_t)(n->first - 2) * g->cbytes : 0);
	int r = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) ? 0 : -ENOMEM;

	for (uint64_t done = 0; r == 0 && done < n->file->size;) {
		size_t k = n->file->size - done < FAT_CHUNK ? (size_t)(n->file->size - done) : FAT_CHUNK;

		r = pread_all(n->file->fd, buf, k, done);
		if (r < 0)
			r = set_why(why, r, "cannot read '%s' (it changed while it was copied?): %s", n->file->path, strerror(-r));
		else if ((r = pwrite_all(fd, buf, k, at + done)) < 0)
			r = set_why(why, r, "cannot write '%s' into the FAT: %s", n->file->path, strerror(-r));
		else
			EVP_DigestUpdate(md, buf, k);
		done += k;
	}
	if (r == 0) {
		EVP_DigestFinal_ex(md, h, NULL);
		for (int i = 0; i < 32; i++)
			snprintf(n->file->sha256 + 2 * i, 3, "%02x", h[i]);
	}
	EVP_MD_CTX_free(md);
	return r;
}

/* Boot sector, FSInfo, and their backups at sectors 6 and 7. */
static int write_boot(int fd, uint64_t off, const struct geo *g, uint32_t hidden, const char *label, uint32_t volid,
		      uint32_t free_clusters, uint32_t next_free)
{
	_cleanup_free_ unsigned char *s = xcalloc(2, g->sector);
	unsigned char *b = s, *fi = s + g->sector;
	int r;

	memcpy(b, "\xeb\x58\x90" "SWAPTOOL", 11);
	put16(b + 11, g->sector);
	b[13] = (unsigned char)g->spc;
	put16(b + 14, FAT_RESERVED);
	b[16] = FAT_NFATS;
	b[21] = 0xf8;
	put16(b + 24, 63);
	put16(b + 26, 255);
	put32(b + 28, hidden);
	put32(b + 32, (uint32_t)g->sectors);
	put32(b + 36, (uint32_t)g->fat_sectors);
	put32(b + 44, 2);
	put16(b + 48, 1);
	put16(b + 50, 6);
	b[64] = 0x80;
	b[66] = 0x29;
	put32(b + 67, volid);
	memcpy(b + 71, label, 11);
	memcpy(b + 82, "FAT32   ", 8);
	b[510] = 0x55;
	b[511] = 0xaa;
	put32(fi, 0x41615252);
	put32(fi + 484, 0x61417272);
	put32(fi + 488, free_clusters);
	put32(fi + 492, next_free);
	put32(fi + 508, 0xaa550000);
	r = pwrite_all(fd, s, 2 * (size_t)g->sector, off);
	return r ? r : pwrite_all(fd, s, 2 * (size_t)g->sector, off + 6ull * g->sector);
}

static int write_fats(int fd, uint64_t off, const struct geo *g, const struct tree *t)
{
	size_t len = (size_t)(g->fat_sectors * g->sector);
	_cleanup_free_ unsigned char *fat = xcalloc(1, len);
	int r = 0;

	put32(fat, 0x0ffffff8);
	put32(fat + 4, FAT_EOC);
	for (size_t i = 0; i < t->n; i++)
		for (uint32_t c = 0; c < t->v[i].nclusters; c++) {
			uint32_t at = t->v[i].first + c;

			put32(fat + 4 * (size_t)at, c + 1 == t->v[i].nclusters ? FAT_EOC : at + 1);
		}
	for (unsigned k = 0; r == 0 && k < FAT_NFATS; k++)
		r = pwrite_all(fd, fat, len, off + (FAT_RESERVED + k * g->fat_sectors) * g->sector);
	return r;
}

int fat_write(int fd, uint64_t offset, uint64_t bytes, uint32_t sector, uint32_t hidden, const char *label,
	      uint32_t volume_id, time_t t, struct fat_file *files, size_t n, char **why)
{
	struct geo g;
	struct tree tr;
	char lab[12];
	uint64_t need = 0;
	int r;

	memset(lab, ' ', 11);
	lab[11] = 0;
	for (size_t i = 0; label && label[i] && i < 11; i++)
		lab[i] = (char)toupper((unsigned char)label[i]);
	r = geometry(bytes, sector, &g);
	if (r < 0)
		return set_why(why, r, "%" PRIu64 " bytes of %u-byte sectors make no FAT32 (it needs at least %u clusters)",
			       bytes, sector, FAT32_MIN_CLUSTERS);
	r = tree_build(files, n, &tr, why);
	if (r == 0 && (r = tree_place(&tr, &g, &need)) < 0)
		set_why(why, r, "the files need %" PRIu64 " clusters of %u bytes, the FAT has %u", need, g.cbytes, g.clusters);
	if (r == 0)
		r = write_fats(fd, offset, &g, &tr);
	for (size_t i = 0; r == 0 && i < tr.n; i++)
		r = tr.v[i].dir ? write_dir(fd, offset, &g, &tr, i, lab, t) : write_file(fd, offset, &g, &tr.v[i], why);
	if (r == 0)
		r = write_boot(fd, offset, &g, hidden, lab, volume_id, (uint32_t)(g.clusters - need), (uint32_t)(need + 2));
	tree_free(&tr);
	if (r < 0 && why && !*why)
		set_why(why, r, "cannot write the FAT: %s", strerror(-r));
	return r;
}

/* ---- reading back ---- */

struct rd {
	int fd;
	uint64_t off;
	struct geo g;
	uint32_t root;
	uint32_t *fat; /* the first FAT, host order */
};

static int rd_boot(struct rd *d, uint64_t bytes, char **why)
{
	unsigned char b[512];
	uint32_t bps, spc, rsvd, nfats, fatsz, tot, root;
	uint64_t data, c;

	if (pread_all(d->fd, b, sizeof(b), d->off) < 0)
		return set_why(why, -EIO, "cannot read its boot sector");
	bps = get16(b + 11), spc = b[13], rsvd = get16(b + 14), nfats = b[16];
	fatsz = get32(b + 36), tot = get32(b + 32), root = get32(b + 44);
	if (b[510] != 0x55 || b[511] != 0xaa || memcmp(b + 82, "FAT32   ", 8) != 0)
		return set_why(why, -EBADMSG, "its boot sector is not a FAT32's");
	if ((bps != 512 && bps != 1024 && bps != 2048 && bps != 4096) || !spc || (spc & (spc - 1)) || spc * bps > 65536 ||
	    !rsvd || nfats < 1 || nfats > 2 || !fatsz || get16(b + 22) || get16(b + 17))
		return set_why(why, -EBADMSG, "its BPB is not sound (%u-byte sectors, %u per cluster, %u reserved, %u FATs "
				"of %u sectors)", bps, spc, rsvd, nfats, fatsz);
	data = (uint64_t)rsvd + (uint64_t)nfats * fatsz;
	if ((uint64_t)tot * bps > bytes || data >= tot)
		return set_why(why, -EBADMSG, "its %u sectors of %u bytes do not fit the %" PRIu64 "-byte partition",
			       tot, bps, bytes);
	c = (tot - data) / spc;
	if (c > FAT32_MAX_CLUSTERS || (uint64_t)fatsz * bps / 4 < c + 2 || (uint64_t)fatsz * bps > FAT_MAX_TABLE ||
	    root < 2 || root > c + 1)
		return set_why(why, -EBADMSG, "its FAT of %u sectors cannot describe its %" PRIu64 " clusters, or its root "
				"cluster %u is outside them", fatsz, c, root);
	d->g = (struct geo){ .sector = bps, .spc = spc, .cbytes = spc * bps, .sectors = tot, .fat_sectors = fatsz,
			     .data_off = data * bps, .clusters = (uint32_t)c };
	d->root = root;
	/* the FAT itself, then its copy compared chunk by chunk */
	size_t len = (size_t)fatsz * bps;
	_cleanup_free_ unsigned char *raw = xcalloc(1, len), *copy = nfats == 2 ? xcalloc(1, len) : NULL;
	if (pread_all(d->fd, raw, len, d->off + (uint64_t)rsvd * bps) < 0)
		return set_why(why, -EIO, "cannot read its FAT");
	if (copy && (pread_all(d->fd, copy, len, d->off + ((uint64_t)rsvd + fatsz) * bps) < 0 || memcmp(raw, copy, len)))
		return set_why(why, -EBADMSG, "its two FATs differ");
	d->fat = xcalloc(c + 2, sizeof(uint32_t));
	for (uint64_t i = 0; i < c + 2; i++)
		d->fat[i] = get32(raw + 4 * i) & FAT_ENTRY_MASK;
	return 0;
}

/* The cluster after `c` in a chain: 0 at its end, -EBADMSG when the entry points nowhere valid. */
static int64_t next_cluster(const struct rd *d, uint32_t c)
{
	uint32_t v = d->fat[c];

	if (v >= 0x0ffffff8)
		return 0;
	if (v < 2 || v > d->g.clusters + 1)
		return -EBADMSG;
	return v;
}

/* The whole chain from `first` read into memory (a directory), at most `max` bytes. */
static int read_chain(const struct rd *d, uint32_t first, size_t max, unsigned char **out, size_t *len)
{
	size_t cap = 0;

	*out = NULL;
	*len = 0;
	for (uint64_t c = first, steps = 0; c; steps++) {
		int64_t nx;

		if (c < 2 || c > d->g.clusters + 1 || steps > d->g.clusters || *len + d->g.cbytes > max)
			return -EBADMSG;
		if (*len + d->g.cbytes > cap) {
			cap = cap ? cap * 2 : 4u * d->g.cbytes;
			*out = realloc(*out, cap);
			if (!*out)
				abort();
		}
		if (pread_all(d->fd, *out + *len, d->g.cbytes, d->off + d->g.data_off + (c - 2) * d->g.cbytes) < 0)
			return -EIO;
		*len += d->g.cbytes;
		if ((nx = next_cluster(d, (uint32_t)c)) < 0)
			return -EBADMSG;
		c = (uint64_t)nx;
	}
	return 0;
}

/* The entry named `name` (long name or 8.3, ignoring case) in the directory at `first`. */
static int find_entry(const struct rd *d, uint32_t first, const char *name, unsigned char ent[DIRENT])
{
	_cleanup_free_ unsigned char *buf = NULL;
	char lname[256] = "";
	unsigned char sum = 0;
	int expect = 0;
	size_t len;
	int r = read_chain(d, first, 8u << 20, &buf, &len);

	if (r < 0)
		return r;
	for (size_t i = 0; i + DIRENT <= len && buf[i]; i += DIRENT) {
		unsigned char *e = buf + i;
		char sname[13];
		size_t k = 0;

		if (e[0] == 0xe5) {
			expect = 0;
			continue;
		}
		if (e[11] == 0x0f) {
			unsigned ord = e[0] & 0x3f;
			static const int at[LFN_CHARS] = { 1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30 };

			if (e[0] & 0x40) {
				memset(lname, 0, sizeof(lname)), expect = (int)ord, sum = e[13];
			}
			if (!ord || ord > 19 || (int)ord != expect || e[13] != sum) {
				expect = 0;
				continue;
			}
			for (unsigned j = 0; j < LFN_CHARS; j++) {
				uint32_t ch = get16(e + at[j]);

				if (ch && ch != 0xffff)
					lname[(ord - 1) * LFN_CHARS + j] = ch < 0x80 ? (char)ch : '?';
			}
			expect--;
			continue;
		}
		for (int j = 0; j < 8 && e[j] != ' '; j++)
			sname[k++] = (char)e[j];
		if (e[8] != ' ')
			sname[k++] = '.';
		for (int j = 8; j < 11 && e[j] != ' '; j++)
			sname[k++] = (char)e[j];
		sname[k] = 0;
		bool long_ok = expect == 0 && lname[0] && sum == lfn_sum((const char *)e);
		if (!(e[11] & 0x08) && (strcasecmp(long_ok ? lname : sname, name) == 0 || strcasecmp(sname, name) == 0)) {
			memcpy(ent, e, DIRENT);
			return 0;
		}
		lname[0] = 0;
		expect = 0;
	}
	return -ENOENT;
}

static int hash_file(const struct rd *d, uint32_t first, uint64_t size, char hex[65])
{
	_cleanup_free_ unsigned char *buf = xcalloc(1, d->g.cbytes);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char h[32];
	uint64_t c = first, done = 0;
	int r = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) ? 0 : -ENOMEM;

	if (size > (uint64_t)d->g.clusters * d->g.cbytes || (size && first == 0))
		r = -EBADMSG;
	while (r == 0 && done < size) {
		size_t k = size - done < d->g.cbytes ? (size_t)(size - done) : d->g.cbytes;
		int64_t nx;

		if (c < 2 || c > d->g.clusters + 1) {
			r = -EBADMSG; /* the chain ended before the size did */
			break;
		}
		if (pread_all(d->fd, buf, k, d->off + d->g.data_off + (c - 2) * d->g.cbytes) < 0) {
			r = -EIO;
			break;
		}
		EVP_DigestUpdate(md, buf, k);
		done += k;
		nx = next_cluster(d, (uint32_t)c);
		if (nx < 0)
			r = -EBADMSG;
		c = nx < 0 ? 0 : (uint64_t)nx;
	}
	if (r == 0) {
		EVP_DigestFinal_ex(md, h, NULL);
		for (int i = 0; i < 32; i++)
			snprintf(hex + 2 * i, 3, "%02x", h[i]);
	}
	EVP_MD_CTX_free(md);
	return r;
}

int fat_file_sha256(int fd, uint64_t offset, uint64_t bytes, const char *path, char hex[65], uint64_t *size, char **why)
{
	struct rd d = { .fd = fd, .off = offset };
	_cleanup_free_ char *copy = xstrdup(path);
	unsigned char e[DIRENT] = { 0 };
	char *save = NULL, *next;
	uint32_t at;
	int r = rd_boot(&d, bytes, why);

	if (r < 0)
		goto out;
	at = d.root;
	if (!copy[strspn(copy, "/")]) {
		r = set_why(why, -EINVAL, "no file named");
		goto out;
	}
	for (char *c = strtok_r(copy, "/", &save); c; c = next) {
		next = strtok_r(NULL, "/", &save);
		r = find_entry(&d, at, c, e);
		if (r == -ENOENT) {
			set_why(why, r, "'%s' is not in the FAT", path);
			goto out;
		}
		if (r < 0) {
			set_why(why, r, "a directory on the way to '%s' is not sound (its cluster chain)", path);
			goto out;
		}
		at = get16(e + 20) << 16 | get16(e + 26);
		if (next && !(e[11] & 0x10)) {
			r = set_why(why, -ENOTDIR, "'%s' is not a directory in the FAT (on the way to '%s')", c, path);
			goto out;
		}
	}
	if (e[11] & 0x10) {
		r = set_why(why, -EISDIR, "'%s' is a directory in the FAT", path);
		goto out;
	}
	*size = get32(e + 28);
	r = hash_file(&d, at, *size, hex);
	if (r < 0)
		set_why(why, r, "the clusters of '%s' do not hold its %" PRIu64 " bytes", path, *size);
out:
	free(d.fat);
	return r;
}
