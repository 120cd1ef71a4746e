/* SPDX-License-Identifier: MIT */
/* preflight's drive part (steps/preflight_drive.c) with a target on USB: the drive read through its
 * bridge (the Realtek recording of fixtures/usbnvme, replayed by src/usbnvme.c) judged as in the slot
 * and the check usb-bridge passing; a bridge presenting another LBA size; a read through that was
 * refused and a bridge of no known family keeping the warning; --target-model against the drive read
 * through. The disks are described, not opened: only what preflight_drive reads of them is set. */
#include "steps.h"
#include "disk.h"
#include "profile.h"
#include "usbnvme.h"
#include "tap.h"

static const char *srcdir;

/* The recording's replies, in order (fixtures/usbnvme/realtek/exchanges: the MP600 Mini's dumps). */
struct replies {
	char *data[3];
	size_t len[3], at;
};

static int replay(void *ud, struct usbnvme_xfer *x, char **why)
{
	struct replies *r = ud;

	if (r->at >= 3 || r->len[r->at] != x->len)
		return set_why(why, -EPROTO, "not the recorded exchange");
	memcpy(x->buf, r->data[r->at], x->len);
	r->at++;
	return 0;
}

/* What usbnvme_through would give for the MP600 Mini behind an RTL9210B-CG; r < 0: refused; family
 * NONE: a bridge of no known family, not probed. */
static void make_through(struct usbnvme_through *t, enum usbnvme_family family, bool refused)
{
	static const char *files[] = { "id-ctrl.bin", "id-ns.bin", "smart-log.bin" };
	struct replies rp = { .at = 0 };
	struct usbnvme_dev d = { .family = USBNVME_REALTEK, .xfer = replay, .ud = &rp };

	*t = (struct usbnvme_through){ .family = family };
	t->bridge = (struct disk_bridge){ .vendor_id = xstrdup(family == USBNVME_NONE ? "46f4" : "0bda"),
					  .product_id = xstrdup(family == USBNVME_NONE ? "0001" : "9210"),
					  .manufacturer = xstrdup("Realtek"), .product = xstrdup("RTL9210B-CG"),
					  .speed_mbps = 10000, .driver = xstrdup("uas") };
	if (family == USBNVME_NONE)
		return;
	if (refused) {
		t->r = set_why(&t->why, -EIO, "identify controller through the realtek bridge: SCSI status 0x02");
		return;
	}
	for (size_t i = 0; i < 3; i++) {
		_cleanup_free_ char *p = xasprintf("%s/fixtures/nvme/mp600-mini/%s", srcdir, files[i]);

		CHECK(read_file_all(p, 8192, &rp.data[i], &rp.len[i]) == 0);
	}
	t->r = usbnvme_read(&d, "/dev/sdb", &t->n, &t->why);
	CHECK(t->r == 0);
	for (size_t i = 0; i < 3; i++)
		free(rp.data[i]);
}

static json_object *check_of(json_object *rec, const char *id)
{
	json_object *checks = jget(rec, "checks");

	for (size_t i = 0; checks && i < json_object_array_length(checks); i++)
		if (streq(jget_str(json_object_array_get_idx(checks, i), "id"), id))
			return json_object_array_get_idx(checks, i);
	return NULL;
}

/* preflight_drive on the XG7000's dumps (source) and the USB target; the record and its exit code. */
static int run(struct ctx *ctx, struct record *rec, uint32_t presented_lba, struct usbnvme_through *th,
	       const char *target_model)
{
	_cleanup_free_ char *dumps = xasprintf("%s/fixtures/nvme/xg7000", srcdir);
	struct usbnvme_through none = { 0 };
	struct disk tgt = { .path = "/dev/sdb", .dev = "/dev/sdb", .kind = DISK_BLOCK, .fd = -1, .sysname = "sdb",
			    .model = "RTL9210B-CG", .size_bytes = 2000398934016ull, .lba_size = presented_lba };
	int r;

	tgt.lba_count = tgt.size_bytes / presented_lba;
	CHECK(record_init(rec, "preflight") == 0);
	r = preflight_drive(ctx, rec, NULL, NULL, dumps, &tgt, target_model, tgt.lba_count, &none, th);
	usbnvme_through_free(th);
	return r;
}

static void test_read_through(struct ctx *ctx)
{
	struct usbnvme_through th;
	struct record rec = { 0 };
	json_object *tid, *c;

	make_through(&th, USBNVME_REALTEK, false);
	CHECK(run(ctx, &rec, 512, &th, NULL) == 0);
	tid = jget(rec.root, "target_identity");
	CHECK(jget_bool(tid, "nvme"));
	CHECK_STR(jget_str(tid, "read_through"), "realtek");
	CHECK_STR(jget_str(tid, "model"), "Corsair MP600 MINI");
	CHECK_STR(jget_str(tid, "serial"), "A5KFB2400001MINI");
	CHECK_STR(jget_str(tid, "origin"), "/dev/sdb");
	CHECK_U64(jget_u64(tid, "hmb_mb"), 64);
	CHECK_STR(jget_str(jget(tid, "bridge"), "vendor_id"), "0bda");
	CHECK_STR(jget_str(jget(tid, "class"), "name"), "Corsair MP600 Mini");
	CHECK_U64(jget_u64(json_object_array_get_idx(jget(tid, "namespaces"), 0), "lba_size"), 512);
	c = check_of(rec.root, "usb-bridge");
	CHECK_STR(jget_str(c, "status"), "pass");
	CHECK(strstr(jget_str(c, "summary") ?: "", "target behind USB bridge 0bda:9210 Realtek RTL9210B-CG, 10 Gb/s, uas, "
						    "read through it (Realtek RTL9210/RTL9211): identity, class") != NULL);
	c = check_of(rec.root, "health");
	CHECK(strstr(jget_str(c, "summary") ?: "", "target healthy: 1 h powered") != NULL);
	record_free(&rec);
}

static void test_other_lba(struct ctx *ctx)
{
	struct usbnvme_through th;
	struct record rec = { 0 };
	json_object *c;

	make_through(&th, USBNVME_REALTEK, false);
	CHECK(run(ctx, &rec, 4096, &th, NULL) == 0);
	c = check_of(rec.root, "usb-bridge");
	CHECK_STR(jget_str(c, "status"), "warn");
	CHECK(strstr(jget_str(c, "summary") ?: "", "its namespace is formatted with 512-byte LBAs and the bridge presents "
						    "4096-byte ones, so in the slot it presents 512-byte LBAs; path 2 is "
						    "refused (lba-format)") != NULL);
	record_free(&rec);
}

static void test_not_read(struct ctx *ctx)
{
	struct usbnvme_through th;
	struct record rec = { 0 };
	json_object *c, *tid;

	/* tried and refused: today's warning, and why */
	make_through(&th, USBNVME_REALTEK, true);
	CHECK(run(ctx, &rec, 512, &th, NULL) == 0);
	tid = jget(rec.root, "target_identity");
	CHECK(!jget_bool(tid, "nvme") && !jget_str(tid, "read_through"));
	CHECK(strstr(jget_str(tid, "reason") ?: "", "the drive's NVMe identity and health were not read: identify "
						  "controller through the realtek bridge") != NULL);
	c = check_of(rec.root, "usb-bridge");
	CHECK_STR(jget_str(c, "status"), "warn");
	CHECK(strstr(jget_str(c, "summary") ?: "", "its identity, class and health were not read; judge it in the slot "
						    "after the swap, or name it with --target-model; reading it through "
						    "the bridge failed: identify controller") != NULL);
	record_free(&rec);

	/* a bridge of no known family: not probed, today's warning word for word */
	rec = (struct record){ 0 };
	make_through(&th, USBNVME_NONE, false);
	CHECK(run(ctx, &rec, 512, &th, NULL) == 0);
	c = check_of(rec.root, "usb-bridge");
	CHECK_STR(jget_str(c, "summary"), "target behind USB bridge 46f4:0001 Realtek RTL9210B-CG, 10 Gb/s, uas: its "
					  "identity, class and health were not read; judge it in the slot after the swap, "
					  "or name it with --target-model");
	record_free(&rec);
}

/* --target-model is checked against the drive read through the bridge, as against one in the slot */
static void test_target_model(struct ctx *ctx)
{
	struct usbnvme_through th;
	struct record rec = { 0 };

	make_through(&th, USBNVME_REALTEK, false);
	CHECK(run(ctx, &rec, 512, &th, "Corsair MP600 Mini 2TB") == 0);
	CHECK_STR(jget_str(jget(rec.root, "target_identity"), "read_through"), "realtek");
	record_free(&rec);

	rec = (struct record){ 0 };
	make_through(&th, USBNVME_REALTEK, false);
	CHECK(run(ctx, &rec, 512, &th, "KingSpec XG7000 2TB") == EXIT_USAGE);
	CHECK(ctx->err_msg && strstr(ctx->err_msg, "which reports 'Corsair MP600 MINI'"));
	record_free(&rec);
}

int main(void)
{
	struct ctx ctx = { .step = "preflight" };
	_cleanup_free_ char *why = NULL;

	srcdir = getenv("SRCDIR");
	if (!srcdir || !*srcdir) {
		fprintf(stderr, "SKIP: SRCDIR not set (run through meson test)\n");
		return 77;
	}
	CHECK(profile_load(NULL, &ctx.profile, &why) == 0);
	test_read_through(&ctx);
	test_other_lba(&ctx);
	test_not_read(&ctx);
	test_target_model(&ctx);
	profile_free(ctx.profile);
	free(ctx.err_msg);
	return tap_done();
}
