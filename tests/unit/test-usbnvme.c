/* SPDX-License-Identifier: MIT */
/* usbnvme (src/usbnvme.c): recorded exchanges of each bridge family (fixtures/usbnvme/FAMILY/exchanges,
 * built on the nvme-cli dumps of fixtures/nvme) replayed through the transport hook: every CDB and
 * every byte sent checked, the identity read equal to nvme_load_dumps' of the same dumps; hostile
 * replies refused; the allow-list (no other NVMe command reaches an exchange; no CDB that writes);
 * the bridges by USB id; and a target presenting 4096-byte LBAs (a loop device) whose namespace,
 * read through its bridge, is 512: path 2 refused naming both sizes (src/layout.c). */
#include "util.h"
#include "usbnvme.h"
#include "layout.h"
#include "plan.h"
#include "profile.h"
#include "tap.h"
#include "testsh.h"

#include <ctype.h>
#include <limits.h>

static const char *srcdir;

/* One recorded exchange: what swaptool must send, and what the bridge returns. */
struct step {
	uint8_t cdb[16];
	unsigned cdb_len;
	enum usbnvme_dir dir;
	uint8_t *data;              /* TO_DEVICE: the bytes expected; FROM_DEVICE: the bytes returned */
	size_t len;
};

struct script {
	char vid[8], pid[8], drive[32];
	struct step steps[16];
	size_t n;
};

/* What the replay does to one exchange, as a hostile bridge would. */
enum fault {
	F_NONE,
	F_SHORT,       /* 512 bytes of the 4096 transferred (an identify of another size) */
	F_OVERRUN,     /* a residue beyond the length */
	F_CHECK,       /* CHECK CONDITION, ILLEGAL REQUEST / INVALID COMMAND OPERATION CODE */
	F_SENSE_GOOD,  /* GOOD status, but MEDIUM ERROR sense data */
	F_SENSE_ODD,   /* sense data of no known format */
	F_HOST,        /* the host adapter lost it (DID_ERROR) */
	F_DRIVER,      /* a driver error */
	F_TRANSPORT,   /* the ioctl itself failed */
	F_ZEROS,       /* success and all zeros */
	F_GARBAGE,     /* success and noise */
	F_STALE,       /* success and the previous reply again */
	F_BAD_SIG,     /* JMicron reply without its signature */
	F_NVME_STATUS, /* JMicron reply: the drive said Invalid Field */
};

struct replay {
	const struct script *s;
	size_t at;                  /* exchanges made */
	int mismatches;
	enum fault fault;
	size_t fault_at;            /* the exchange the fault hits */
	uint8_t last[4096];         /* the previous data-in, for F_STALE */
};

static int hexbyte(const char *t)
{
	char *end;
	unsigned long v = strtoul(t, &end, 16);

	return *end || end == t || v > 0xff ? -1 : (int)v;
}

/* "LEN [@OFF HEX...]" into a buffer of LEN bytes; or a FILE of fixtures/nvme/DRIVE. */
static void read_data(const struct script *s, char *args, struct step *st)
{
	char *tok = strtok(args, " \t\n"), *end;
	size_t off = 0;

	if (tok && !isdigit((unsigned char)tok[0])) {
		_cleanup_free_ char *path = xasprintf("%s/fixtures/nvme/%s/%s", srcdir, s->drive, tok);
		char *buf = NULL;

		CHECK(read_file_all(path, 1 << 16, &buf, &st->len) == 0);
		st->data = (uint8_t *)buf;
		return;
	}
	st->len = tok ? strtoul(tok, &end, 10) : 0;
	st->data = xcalloc(1, st->len + 1);
	while ((tok = strtok(NULL, " \t\n"))) {
		if (tok[0] == '@') {
			off = strtoul(tok + 1, NULL, 10);
			continue;
		}
		CHECK(off < st->len && hexbyte(tok) >= 0);
		if (off < st->len)
			st->data[off++] = (uint8_t)hexbyte(tok);
	}
}

static void load_script(const char *family, struct script *s)
{
	_cleanup_free_ char *path = xasprintf("%s/fixtures/usbnvme/%s/exchanges", srcdir, family);
	_cleanup_fclose_ FILE *f = fopen(path, "r");
	char line[512];

	*s = (struct script){ 0 };
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		char *rest = line + strcspn(line, " \t\n");
		struct step *st = &s->steps[s->n ? s->n - 1 : 0];

		if (*rest)
			*rest++ = '\0';
		if (streq(line, "bridge"))
			CHECK(sscanf(rest, "%7s %7s", s->vid, s->pid) == 2);
		else if (streq(line, "drive"))
			CHECK(sscanf(rest, "%31s", s->drive) == 1);
		else if (streq(line, "cdb")) {
			st = &s->steps[s->n++];
			for (char *tok = strtok(rest, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
				st->cdb[st->cdb_len++] = (uint8_t)hexbyte(tok);
		} else if (streq(line, "in") || streq(line, "out")) {
			st->dir = streq(line, "in") ? USBNVME_FROM_DEVICE : USBNVME_TO_DEVICE;
			read_data(s, rest, st);
		}
	}
	CHECK(s->n > 0);
}

static void free_script(struct script *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->steps[i].data);
}

static void hostile(struct replay *rp, struct usbnvme_xfer *x)
{
	static const uint8_t check[] = { 0x70, 0, 0x05, 0, 0, 0, 0, 10, 0, 0, 0, 0, 0x20, 0x00 };
	static const uint8_t medium[] = { 0x72, 0x03, 0x11, 0x00, 0, 0, 0, 0 };

	switch (rp->fault) {
	case F_SHORT: x->resid = x->len - 512; break;
	case F_OVERRUN: x->resid = x->len + 1; break;
	case F_CHECK:
		x->status = 0x02;
		x->driver_status = 0x08;
		memcpy(x->sense, check, sizeof(check));
		x->sense_len = sizeof(check);
		break;
	case F_SENSE_GOOD:
		memcpy(x->sense, medium, sizeof(medium));
		x->sense_len = sizeof(medium);
		break;
	case F_SENSE_ODD:
		x->sense[0] = 0x7f;
		x->sense_len = 18;
		break;
	case F_HOST: x->host_status = 0x07; break;
	case F_DRIVER: x->driver_status = 0x04; break;
	case F_ZEROS: memset(x->buf, 0, x->len); break;
	case F_GARBAGE:
		for (size_t i = 0; i < x->len; i++)
			((uint8_t *)x->buf)[i] = (uint8_t)(i * 131 + 7) | 0x80;
		break;
	case F_STALE: memcpy(x->buf, rp->last, x->len); break;
	case F_BAD_SIG: ((uint8_t *)x->buf)[0] = 'X'; break;
	case F_NVME_STATUS: ((uint8_t *)x->buf)[22] = 0x04; break; /* (0x002 << 17) >> 16: SC 0x02 */
	case F_NONE:
	case F_TRANSPORT: break;
	}
}

/* The transport: the next recorded exchange, checked byte for byte. */
static int replay_xfer(void *ud, struct usbnvme_xfer *x, char **why)
{
	struct replay *rp = ud;
	const struct step *st = rp->at < rp->s->n ? &rp->s->steps[rp->at] : NULL;
	bool faulty = rp->fault != F_NONE && rp->at == rp->fault_at;

	rp->at++;
	if (!st) {
		rp->mismatches++;
		return set_why(why, -EPROTO, "an exchange more than recorded");
	}
	if (x->cdb_len != st->cdb_len || memcmp(x->cdb, st->cdb, st->cdb_len) || x->dir != st->dir || x->len != st->len) {
		fprintf(stderr, "# exchange %zu: CDB, direction or length differ from the recording\n", rp->at);
		rp->mismatches++;
		return set_why(why, -EPROTO, "not the recorded exchange");
	}
	if (faulty && rp->fault == F_TRANSPORT)
		return set_why(why, -EIO, "SG_IO: Input/output error");
	if (x->dir == USBNVME_TO_DEVICE) {
		if (memcmp(x->buf, st->data, st->len)) {
			fprintf(stderr, "# exchange %zu: the bytes sent differ from the recording\n", rp->at);
			rp->mismatches++;
		}
	} else
		memcpy(x->buf, st->data, st->len);
	if (faulty)
		hostile(rp, x);
	if (x->dir == USBNVME_FROM_DEVICE && x->len <= sizeof(rp->last) && x->len > 512)
		memcpy(rp->last, x->buf, x->len);
	return 0;
}

static enum usbnvme_family family_of_script(const struct script *s)
{
	return usbnvme_family_of(s->vid, s->pid);
}

/* Every field of the identity, namespace and SMART log the same as the dumps give. */
static void same_as_dumps(const struct nvme_info *n, const char *drive)
{
	_cleanup_free_ char *dir = xasprintf("%s/fixtures/nvme/%s", srcdir, drive), *why = NULL;
	_cleanup_nvme_info_ struct nvme_info d = { 0 };
	const struct nvme_smart *a = &n->smart, *b = &d.smart;

	CHECK(nvme_load_dumps(dir, &d, &why) == 0);
	CHECK_STR(n->mn, d.mn);
	CHECK_STR(n->sn, d.sn);
	CHECK_STR(n->fr, d.fr);
	CHECK(n->vid == d.vid && n->ssvid == d.ssvid && n->tnvmcap == d.tnvmcap);
	CHECK(n->hmpre == d.hmpre && n->hmmin == d.hmmin && n->npss == d.npss && n->apsta == d.apsta);
	CHECK(n->wctemp == d.wctemp && n->cctemp == d.cctemp);
	CHECK(n->nns == 1 && d.nns == 1);
	if (n->nns == 1 && d.nns == 1) {
		CHECK(n->ns[0].nsid == 1 && n->ns[0].nsze == d.ns[0].nsze && n->ns[0].ncap == d.ns[0].ncap);
		CHECK(n->ns[0].nuse == d.ns[0].nuse && n->ns[0].lba_format == d.ns[0].lba_format);
		CHECK_U64(n->ns[0].lba_size, d.ns[0].lba_size);
		CHECK_U64(n->ns[0].size_bytes, d.ns[0].size_bytes);
	}
	CHECK(n->have_smart && d.have_smart);
	CHECK(a->critical_warning == b->critical_warning && a->temperature_k == b->temperature_k);
	CHECK(a->avail_spare == b->avail_spare && a->spare_thresh == b->spare_thresh && a->percent_used == b->percent_used);
	CHECK(a->data_units_read == b->data_units_read && a->data_units_written == b->data_units_written);
	CHECK(a->host_reads == b->host_reads && a->host_writes == b->host_writes && a->power_cycles == b->power_cycles);
	CHECK(a->power_on_hours == b->power_on_hours && a->unsafe_shutdowns == b->unsafe_shutdowns);
	CHECK(a->media_errors == b->media_errors && a->num_err_log_entries == b->num_err_log_entries);
	CHECK(a->warning_temp_time == b->warning_temp_time && a->critical_comp_time == b->critical_comp_time);
	CHECK(a->thm_temp1_trans_count == b->thm_temp1_trans_count && a->thm_temp2_total_time == b->thm_temp2_total_time);
	/* the error log is not read through a bridge */
	CHECK(!n->have_errlog);
}

/* Each family's recording replayed: every CDB and byte sent as recorded, the drive as its dumps say. */
static void test_replay(const char *family, const char *model, uint32_t lba)
{
	struct script s;
	struct replay rp = { .s = &s };
	struct usbnvme_dev d = { .xfer = replay_xfer, .ud = &rp };
	_cleanup_nvme_info_ struct nvme_info n = { 0 };
	_cleanup_free_ char *why = NULL;

	load_script(family, &s);
	d.family = family_of_script(&s);
	CHECK_STR(usbnvme_family_name(d.family), family);
	CHECK(usbnvme_read(&d, "/dev/sdz", &n, &why) == 0);
	if (why)
		fprintf(stderr, "# %s: %s\n", family, why);
	CHECK_U64(rp.at, s.n);
	CHECK(rp.mismatches == 0);
	CHECK_STR(n.mn, model);
	CHECK_STR(n.read_through, family);
	CHECK_STR(n.origin, "/dev/sdz");
	CHECK(!n.from_dumps && !n.ctrl[0]);
	CHECK_U64(n.ns[0].lba_size, lba);
	same_as_dumps(&n, s.drive);
	free_script(&s);
}

/* One hostile exchange (number `at`): the read refused after `calls` exchanges with an errno and a
 * reason, nothing of it kept. */
static void test_fault(const char *family, enum fault f, size_t at, size_t calls, int want, const char *words)
{
	struct script s;
	struct replay rp = { .s = &s, .fault = f, .fault_at = at };
	struct usbnvme_dev d = { .xfer = replay_xfer, .ud = &rp };
	struct nvme_info n = { 0 };
	_cleanup_free_ char *why = NULL;
	int r;

	load_script(family, &s);
	d.family = family_of_script(&s);
	r = usbnvme_read(&d, "/dev/sdz", &n, &why);
	CHECK(r == want);
	CHECK(why && strstr(why, words));
	if (r != want || !why || !strstr(why, words))
		fprintf(stderr, "# %s fault %d at %zu: r=%d, why '%s'\n", family, f, at, r, why ?: "(none)");
	CHECK(!n.mn[0] && !n.ns && !n.origin && !n.have_smart && !n.read_through);
	CHECK(rp.mismatches == 0);
	CHECK_U64(rp.at, calls); /* nothing after the refusal */
	free_script(&s);
}

static void test_hostile(void)
{
	/* Realtek: exchange 0 identify controller, 1 identify namespace, 2 SMART */
	test_fault("realtek", F_SHORT, 0, 1, -EIO, "512 of 4096 bytes returned");
	test_fault("realtek", F_OVERRUN, 0, 1, -EIO, "0 of 4096 bytes returned");
	test_fault("realtek", F_CHECK, 0, 1, -EIO, "SCSI status 0x02 (CHECK CONDITION), sense key 0x5 (ASC 0x20");
	test_fault("realtek", F_SENSE_GOOD, 1, 2, -EIO, "sense key 0x3 (ASC 0x11");
	test_fault("realtek", F_SENSE_ODD, 2, 3, -EIO, "sense data of no known format");
	test_fault("realtek", F_HOST, 0, 1, -EIO, "host status 0x07");
	test_fault("realtek", F_DRIVER, 1, 2, -EIO, "driver status 0x04");
	test_fault("realtek", F_TRANSPORT, 0, 1, -EIO, "SG_IO");
	test_fault("realtek", F_ZEROS, 0, 1, -EBADMSG, "identify controller through the realtek bridge: all zeros");
	test_fault("realtek", F_GARBAGE, 0, 1, -EBADMSG, "not ASCII");
	test_fault("realtek", F_ZEROS, 1, 2, -EBADMSG, "identify namespace 1 through the realtek bridge: all zeros");
	test_fault("realtek", F_STALE, 1, 2, -EBADMSG, "identify namespace 1 through the realtek bridge: the same bytes");
	test_fault("realtek", F_GARBAGE, 2, 3, -EBADMSG, "the SMART / Health log through the realtek bridge");
	test_fault("asmedia", F_SHORT, 1, 2, -EIO, "512 of 4096 bytes returned");
	test_fault("asmedia", F_ZEROS, 2, 3, -EBADMSG, "not a SMART/health log page");
	/* JMicron: exchanges 0 command, 1 data, 2 reply per NVMe command; a page is judged after its reply */
	test_fault("jmicron", F_CHECK, 0, 1, -EIO, "CHECK CONDITION");
	test_fault("jmicron", F_SHORT, 1, 2, -EIO, "512 of 4096 bytes returned");
	test_fault("jmicron", F_BAD_SIG, 2, 3, -EIO, "signature");
	test_fault("jmicron", F_NVME_STATUS, 5, 6, -EIO, "NVMe status 0x002");
	test_fault("jmicron", F_ZEROS, 4, 6, -EBADMSG, "all zeros");
}

/* A transport that records what it was asked and answers as a willing bridge. */
struct recorder {
	size_t calls;
	struct usbnvme_xfer seen[8];
	uint8_t sent[8][512];
};

static int record_xfer(void *ud, struct usbnvme_xfer *x, char **why)
{
	struct recorder *r = ud;

	(void)why;
	if (r->calls < ARRAY_SIZE(r->seen)) {
		r->seen[r->calls] = *x;
		if (x->dir == USBNVME_TO_DEVICE)
			memcpy(r->sent[r->calls], x->buf, x->len < 512 ? x->len : 512);
	}
	r->calls++;
	if (x->dir == USBNVME_FROM_DEVICE && x->len == 512 && x->cdb[0] == 0xa1)
		memcpy(x->buf, "NVME", 4); /* JMicron's reply */
	return 0;
}

/* Only the allow-list reaches a bridge; of what it builds, nothing writes. */
static void test_allow_list(void)
{
	const struct usbnvme_cmd *ok[] = { &usbnvme_identify_ctrl, &usbnvme_identify_ns1, &usbnvme_smart_log };
	/* near misses: other CNS values, namespaces, log pages, sizes */
	const struct usbnvme_cmd near[] = {
		{ 0x06, 0, 0x02, 4096 }, { 0x06, 2, 0x00, 4096 }, { 0x06, 0, 0x01, 512 }, { 0x06, 1, 0x01, 4096 },
		{ 0x02, 0xffffffffu, 0x007f0001, 512 }, { 0x02, 1, 0x007f0002, 512 }, { 0x02, 0xffffffffu, 0x03ff0002, 4096 },
		{ 0x02, 0xffffffffu, 0x007f8002, 512 }, { 0x02, 0xffffffffu, 0x007f0006, 512 },
	};
	uint8_t buf[4096];

	for (enum usbnvme_family f = USBNVME_ASMEDIA; f <= USBNVME_REALTEK; f++) {
		struct recorder rec = { 0 };
		struct usbnvme_dev d = { .family = f, .xfer = record_xfer, .ud = &rec };

		/* every opcode but Identify and Get Log Page: Format NVM (0x80), Sanitize (0x84), Firmware
		 * Download (0x11), Set Features (0x09), Namespace Management (0x0d), ... */
		for (unsigned op = 0; op < 256; op++) {
			struct usbnvme_cmd c = { (uint8_t)op, 1, 0, 4096 };
			_cleanup_free_ char *why = NULL;

			if (op == 0x06)
				continue;
			CHECK(usbnvme_admin(&d, &c, buf, &why) == -EPERM);
			CHECK(why && strstr(why, "only Identify and the SMART log"));
		}
		for (size_t i = 0; i < ARRAY_SIZE(near); i++) {
			_cleanup_free_ char *why = NULL;

			CHECK(!usbnvme_allowed(&near[i]));
			CHECK(usbnvme_admin(&d, &near[i], buf, &why) == -EPERM);
		}
		CHECK_U64(rec.calls, 0); /* refused before any exchange */

		/* the allowed commands: each family's one data-in CDB; JMicron's one data-out is its
		 * command block, holding an allowed opcode */
		for (size_t i = 0; i < ARRAY_SIZE(ok); i++) {
			_cleanup_free_ char *why = NULL;
			size_t from = rec.calls;

			CHECK(usbnvme_allowed(ok[i]));
			CHECK(usbnvme_admin(&d, ok[i], buf, &why) == 0);
			CHECK_U64(rec.calls - from, f == USBNVME_JMICRON ? 3 : 1);
			for (size_t k = from; k < rec.calls && k < ARRAY_SIZE(rec.seen); k++) {
				const struct usbnvme_xfer *x = &rec.seen[k];

				if (f == USBNVME_ASMEDIA)
					CHECK(x->cdb[0] == 0xe6 && x->dir == USBNVME_FROM_DEVICE);
				else if (f == USBNVME_REALTEK)
					CHECK(x->cdb[0] == 0xe4 && x->dir == USBNVME_FROM_DEVICE);
				else {
					CHECK(x->cdb[0] == 0xa1);
					CHECK(x->cdb[1] == 0x80 || x->cdb[1] == 0x82 || x->cdb[1] == 0x8f); /* never 0x83 */
					CHECK((x->dir == USBNVME_TO_DEVICE) == (x->cdb[1] == 0x80));
					if (x->dir == USBNVME_TO_DEVICE)
						CHECK(x->len == 512 && !memcmp(rec.sent[k], "NVME", 4) &&
						      rec.sent[k][8] == ok[i]->opcode);
				}
			}
		}
	}
	{
		struct recorder rec = { 0 };
		struct usbnvme_dev d = { .family = USBNVME_NONE, .xfer = record_xfer, .ud = &rec };
		_cleanup_free_ char *why = NULL;

		CHECK(usbnvme_admin(&d, &usbnvme_identify_ctrl, buf, &why) == -EOPNOTSUPP);
		CHECK_U64(rec.calls, 0);
	}
}

static void test_families(void)
{
	CHECK(usbnvme_family_of("0bda", "9210") == USBNVME_REALTEK);
	CHECK(usbnvme_family_of("0BDA", "9211") == USBNVME_REALTEK);
	CHECK(usbnvme_family_of("174c", "2362") == USBNVME_ASMEDIA);
	CHECK(usbnvme_family_of("174c", "2364") == USBNVME_ASMEDIA);
	CHECK(usbnvme_family_of("152d", "a583") == USBNVME_JMICRON);
	/* JMicron's default id, its USB-to-SATA bridges' too: not probed */
	CHECK(usbnvme_family_of("152d", "0583") == USBNVME_NONE);
	CHECK(usbnvme_family_of("174c", "55aa") == USBNVME_NONE); /* ASMedia's USB-to-SATA */
	CHECK(usbnvme_family_of("46f4", "0001") == USBNVME_NONE); /* QEMU's */
	CHECK(usbnvme_family_of("04e8", "4001") == USBNVME_NONE); /* Samsung's own id */
	CHECK(usbnvme_family_of(NULL, "9210") == USBNVME_NONE);
	CHECK(usbnvme_family_name(USBNVME_NONE) == NULL);
	CHECK_STR(usbnvme_family_chips(USBNVME_REALTEK), "Realtek RTL9210/RTL9211");
}

/* Item 3 of issue 29: the MP600 Mini (512-byte LBAs, read through the Realtek) in an enclosure that
 * presents 4096-byte blocks (a loop device of 4096-byte sectors where one can be made). The source is
 * mkdisk's scaled disk with its ESP re-made as a FAT of 4096-byte sectors, so that the target's
 * presented size alone would let path 2 pass: the slot's size refuses it, naming both sizes. */
static void test_slot_lba(void)
{
	const char *mkdisk = getenv("MKDISK");
	struct script s;
	struct replay rp = { .s = &s };
	struct usbnvme_dev d = { .xfer = replay_xfer, .ud = &rp };
	struct usbnvme_through th = { 0 };
	_cleanup_free_ char *why = NULL, *img = NULL, *loop = NULL;
	struct disk src = { .fd = -1 }, tgt = { .fd = -1 };
	uint64_t tgt_bytes = 4ull << 30, p1, p1kib;
	uint32_t tgt_lba = 4096;
	struct layout l;

	load_script("realtek", &s);
	th.family = d.family = family_of_script(&s);
	th.r = usbnvme_read(&d, "/dev/sdz", &th.n, &th.why);
	CHECK(usbnvme_through_read(&th));
	CHECK_U64(usbnvme_slot_lba(&th), 512);
	free_script(&s);
	if (!mkdisk) {
		fprintf(stderr, "# MKDISK not set: the layout case is skipped\n");
		usbnvme_through_free(&th);
		return;
	}
	need_tools("sgdisk mke2fs mkfs.vfat");
	CHECK(sh("'%s' scaled s.img > s.json", mkdisk) == 0);
	p1 = sh_u64("sgdisk -i 1 s.img | sed -n 's/^First sector: \\([0-9]*\\).*/\\1/p'");
	p1kib = (sh_u64("sgdisk -i 1 s.img | sed -n 's/^Last sector: \\([0-9]*\\).*/\\1/p'") - p1 + 1) / 2;
	CHECK(sh("mkfs.vfat --offset %" PRIu64 " -S 4096 --mbr=n --invariant -F 16 s.img %" PRIu64 " >/dev/null 2>&1",
		 p1 * 512 / 4096, p1kib) == 0);
	img = tpath("s.img");
	CHECK(disk_open(img, 512, &src, &why) == 0);
	if (geteuid() == 0 && sh("command -v losetup >/dev/null && truncate -s 4G t.img") == 0)
		loop = sh_str("losetup --show -f -r --sector-size 4096 t.img 2>/dev/null");
	if (loop && loop[0] && disk_open(loop, 512, &tgt, &why) == 0) {
		tgt_bytes = tgt.size_bytes;
		tgt_lba = tgt.lba_size;
		CHECK_U64(tgt_lba, 4096);
	} else
		fprintf(stderr, "# no loop device: the target's 4096-byte LBAs are given as numbers\n");

	/* presented size alone: path 2 holds (every filesystem works at 4096) */
	CHECK(layout_analyze(&src, tgt_bytes, tgt_lba, &l, &why) == 0);
	CHECK(l.fs_clone_possible && !l.lba_size_unsafe && !l.slot_lba_differs);
	layout_free(&l);
	/* with the slot's 512 read through the bridge: refused, both sizes named, no raw clone either */
	CHECK(layout_analyze_slot(&src, tgt_bytes, tgt_lba, usbnvme_slot_lba(&th), &l, &why) == 0);
	CHECK(!l.fs_clone_possible && l.lba_size_unsafe && l.slot_lba_differs && !l.raw_clone_possible);
	CHECK(strstr(l.fs_clone_why, "the target presents 4096-byte LBAs here, but its namespace is formatted with "
				     "512-byte LBAs") != NULL);
	layout_free(&l);
	/* plan and clone (plan_for) refuse path 2 the same way: clone exits 3 on !clone_possible before writing */
	{
		struct plan_target t = { .spec = "/dev/sdz", .bytes = tgt_bytes, .lba_size = tgt_lba, .slot_lba_size = 512 };
		struct profile *prof = NULL;
		struct plan p = { 0 };

		CHECK(profile_load(NULL, &prof, &why) == 0);
		CHECK(plan_for(&src, &t, prof, "/root", 0, &l, &p, &why) == 0);
		CHECK(!p.clone_possible && !p.raw_possible && p.lba_size_unsafe && p.slot_lba_differs);
		CHECK(strstr(p.clone_why, "but its namespace is formatted with 512-byte LBAs") != NULL);
		plan_free(&p);
		layout_free(&l);
		profile_free(prof);
	}
	/* a bridge that presents the drive's own size changes nothing */
	CHECK(layout_analyze_slot(&src, tgt_bytes, tgt_lba, 4096, &l, &why) == 0);
	CHECK(l.fs_clone_possible && !l.slot_lba_differs);
	layout_free(&l);

	/* the real transport and lookup on a disk that is not on USB: no bridge, nothing probed; SG_IO
	 * itself (an identify CDB, data in) refused by the loop driver with a reason */
	if (tgt.fd >= 0) {
		struct usbnvme_through none;
		uint8_t buf[4096];
		struct usbnvme_xfer x = { .cdb = { 0xe4, 0x00, 0x10, 0x06, 0x01 }, .cdb_len = 16, .buf = buf, .len = sizeof(buf) };
		_cleanup_free_ char *xwhy = NULL;

		usbnvme_through(tgt.fd, tgt.sysname, &none);
		CHECK(!none.bridge.vendor_id && none.family == USBNVME_NONE && !usbnvme_through_read(&none));
		CHECK_U64(usbnvme_slot_lba(&none), 0);
		usbnvme_through_free(&none);
		usbnvme_through(-1, tgt.sysname, &none);
		CHECK(none.family == USBNVME_NONE && none.r == 0 && !none.why);
		usbnvme_through_free(&none);
		CHECK(usbnvme_sg_xfer(&tgt.fd, &x, &xwhy) < 0);
		CHECK(xwhy && startswith(xwhy, "SG_IO: "));
	}
	disk_close(&src);
	if (tgt.fd >= 0)
		disk_close(&tgt);
	if (loop && loop[0])
		CHECK(sh("losetup -d %s", loop) == 0);
	usbnvme_through_free(&th);
}

int main(void)
{
	srcdir = getenv("SRCDIR");
	if (!srcdir || !*srcdir) {
		fprintf(stderr, "SKIP: SRCDIR not set (run through meson test)\n");
		return 77;
	}
	tdir_make("test-usbnvme");
	test_families();
	test_replay("realtek", "Corsair MP600 MINI", 512);
	test_replay("asmedia", "XG7000-2TB 2242", 512);
	test_replay("jmicron", "ESL01TBTLCZ-27J2-TYN", 512);
	test_hostile();
	test_allow_list();
	test_slot_lba();
	return tap_done();
}
