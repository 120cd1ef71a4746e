/* SPDX-License-Identifier: MIT */
/* fstab (src/fstab.c): which lines are identifier lines and how their tag and value are read
 * (cases, quotes, /dev/disk/by-* links, tabs, \040 escapes, crypttab's field 2), what each unresolved line
 * breaks at boot, the JSON rows; and the libblkid resolver against an ext4 on a loop device
 * (root), checked against blkid -t. */
#include "util.h"
#include "fstab.h"
#include "record.h"
#include "tap.h"
#include "testsh.h"

/* A resolver that records what it was asked and resolves only UUID=good */
struct asked {
	char tags[16][16], values[16][64];
	size_t n;
};

static bool record_resolve(const char *tag, const char *value, void *ud)
{
	struct asked *a = ud;

	if (a->n < 16) {
		snprintf(a->tags[a->n], sizeof(a->tags[0]), "%s", tag);
		snprintf(a->values[a->n], sizeof(a->values[0]), "%s", value);
		a->n++;
	}
	return streq(tag, "UUID") && streq(value, "good");
}

static void test_parse(void)
{
	struct asked a = { 0 };
	struct fstab_report rep;
	const char *text =
		"   # an indented comment: UUID=commented / ext4\n"             /* 1 */
		"uuid=good / ext4 defaults 0 1\n"                               /* 2: the tag in any case */
		"LABEL='data' /srv ext4 defaults 0 2\n"                         /* 3: single quotes */
		"PARTLABEL=\"\" /x ext4 defaults 0 2\n"                         /* 4: empty: not an identifier */
		"UUID=lonely\n"                                                 /* 5: no mount point */
		"/dev/disk/by-partlabel/esp\t/boot/efi\tvfat\tumask=0077 0 1\n" /* 6: tabs, a link */
		"/dev/disk/by-uuid/ /y ext4 defaults 0 0\n"                     /* 7: a link without a name */
		"/dev/sda1 /z ext4 defaults 0 0\n"                              /* 8: a device path */
		"UUID=gone none swap sw,nofail 0 0\n"                           /* 9 */
		"PARTUUID=p4 /data ext4 noauto 0 2\n"                           /* 10 */
		"\n"
		"UUID=home /home ext4 defaults 0 2";                            /* 12: no final newline */

	CHECK(fstab_check(text, false, record_resolve, &a, &rep) == 0);
	CHECK_U64(rep.ids, 6);
	CHECK_U64(a.n, 6);
	CHECK_STR(a.tags[0], "UUID");
	CHECK_STR(a.values[0], "good");
	CHECK_STR(a.tags[1], "LABEL");
	CHECK_STR(a.values[1], "data");
	CHECK_STR(a.tags[2], "PARTLABEL");
	CHECK_STR(a.values[2], "esp");
	CHECK_STR(a.values[3], "gone");
	CHECK_STR(a.tags[4], "PARTUUID");
	CHECK_STR(a.values[5], "home");
	CHECK_U64(rep.n, 5); /* all but UUID=good */
	CHECK_U64(rep.v[0].line, 3);
	CHECK_STR(rep.v[0].target, "/srv");
	CHECK_U64(rep.v[1].line, 6);
	CHECK_STR(rep.v[1].text, "/dev/disk/by-partlabel/esp\t/boot/efi\tvfat\tumask=0077 0 1");
	CHECK(strstr(rep.v[1].breaks, "kernel and bootloader updates fail") != NULL);
	CHECK_U64(rep.v[2].line, 9);
	CHECK_STR(rep.v[2].breaks, "swap is not enabled (nofail)");
	CHECK_U64(rep.v[3].line, 10);
	CHECK_STR(rep.v[3].breaks, "'/data' is not mounted (nofail: boot continues without it)");
	CHECK_U64(rep.v[4].line, 12);
	CHECK_STR(rep.v[4].breaks, "'/home' is not mounted: boot waits 90 s for the device, then drops to the emergency shell");

	/* the rows of verify's and restore's records */
	{
		json_object *j = fstab_report_json(&rep);
		json_object *o = json_object_array_get_idx(j, 2), *v;

		CHECK_U64(json_object_array_length(j), 5);
		CHECK(json_object_object_get_ex(o, "line", &v) && json_object_get_int(v) == 9);
		CHECK(json_object_object_get_ex(o, "tag", &v) && streq(json_object_get_string(v), "UUID"));
		CHECK(json_object_object_get_ex(o, "value", &v) && streq(json_object_get_string(v), "gone"));
		CHECK(json_object_object_get_ex(o, "target", &v) && streq(json_object_get_string(v), "none"));
		CHECK(json_object_object_get_ex(o, "text", &v) && streq(json_object_get_string(v), "UUID=gone none swap sw,nofail 0 0"));
		CHECK(json_object_object_get_ex(o, "breaks", &v));
		json_object_put(j);
	}
	fstab_report_free(&rep);
	CHECK(rep.v == NULL && rep.n == 0);

	/* crypttab: the device is field 2, the options field 4 */
	memset(&a, 0, sizeof(a));
	CHECK(fstab_check("cryptdata UUID=c1 none luks,nofail\ncryptswap /dev/disk/by-uuid/c2 /dev/urandom swap\n"
			  "UUID=wrongfield cryptx none luks\n", true, record_resolve, &a, &rep) == 0);
	CHECK_U64(rep.ids, 2);
	CHECK_U64(rep.n, 2);
	CHECK_STR(rep.v[0].target, "cryptdata");
	CHECK_STR(rep.v[0].breaks, "the encrypted volume 'cryptdata' is not unlocked (nofail: boot continues without it)");
	CHECK_STR(rep.v[1].value, "c2");
	CHECK(strstr(rep.v[1].breaks, "emergency shell") != NULL);
	fstab_report_free(&rep);

	/* fields are read as getmntent and libmount read them: a space in a label is written \040, the
	 * mount point too; an option is a word of its own ("x-nofailover" is not nofail) */
	memset(&a, 0, sizeof(a));
	CHECK(fstab_check("LABEL=my\\040disk /mnt/my\\040disk ext4 defaults,x-nofailover 0 2\n"
			  "UUID=good /srv ext4 defaults 0 2\n", false, record_resolve, &a, &rep) == 0);
	CHECK_U64(rep.ids, 2);
	CHECK_STR(a.values[0], "my disk");
	CHECK_U64(rep.n, 1);
	CHECK_STR(rep.v[0].value, "my disk");
	CHECK_STR(rep.v[0].target, "/mnt/my disk");
	CHECK_STR(rep.v[0].text, "LABEL=my\\040disk /mnt/my\\040disk ext4 defaults,x-nofailover 0 2");
	CHECK_STR(rep.v[0].breaks, "'/mnt/my disk' is not mounted: boot waits 90 s for the device, then drops to the emergency shell");
	fstab_report_free(&rep);

	/* nothing to check */
	CHECK(fstab_check("", false, record_resolve, &a, &rep) == 0);
	CHECK_U64(rep.ids, 0);
	fstab_report_free(&rep);

	CHECK(fstab_is_crypttab("crypttab"));
	CHECK(fstab_is_crypttab("/etc/crypttab.initramfs"));
	CHECK(!fstab_is_crypttab("etc/fstab"));
	CHECK(!fstab_is_crypttab("etc/mycrypttab"));
}

/* The real resolver: an ext4 with a fresh UUID and label on a loop device resolves, as blkid -t
 * finds it; a UUID no device has does not. */
static void test_blkid(void)
{
	_cleanup_free_ char *uuid = NULL, *label = NULL, *dev = NULL, *found = NULL;

	CHECK(!fstab_resolve_blkid("UUID", "00000000-dead-beef-0000-000000000000", NULL));
	if (geteuid() != 0 || sh("command -v losetup mke2fs blkid >/dev/null && losetup -f >/dev/null 2>&1") != 0) {
		fprintf(stderr, "# no root or no loop devices: the resolving case is skipped\n");
		return;
	}
	uuid = sh_str("cat /proc/sys/kernel/random/uuid");
	label = sh_str("echo swt$$");
	CHECK(sh("truncate -s 16M fs.img && mke2fs -q -F -t ext4 -U %s -L %s fs.img >/dev/null 2>&1", uuid, label) == 0);
	dev = sh_str("losetup --show -f -r fs.img");
	if (!dev[0])
		return;
	found = sh_str("blkid -p -o value -s UUID %s", dev);
	CHECK_STR(found, uuid);
	fstab_blkid_reset(); /* the cache was made before the device existed */
	CHECK(fstab_resolve_blkid("UUID", uuid, NULL));
	CHECK(fstab_resolve_blkid("LABEL", label, NULL));
	CHECK(!fstab_resolve_blkid("LABEL", "swt-no-such-label", NULL));
	{
		struct fstab_report rep;
		_cleanup_free_ char *text = xasprintf("UUID=%s / ext4 defaults 0 1\nLABEL=%s /srv ext4 defaults 0 2\n"
						      "UUID=00000000-dead-beef-0000-000000000000 /gone ext4 defaults 0 2\n",
						      uuid, label);

		CHECK(fstab_check(text, false, fstab_resolve_blkid, NULL, &rep) == 0);
		CHECK_U64(rep.ids, 3);
		CHECK_U64(rep.n, 1);
		CHECK_STR(rep.v[0].target, "/gone");
		fstab_report_free(&rep);
	}
	CHECK(sh("losetup -d %s", dev) == 0);
	fstab_blkid_reset();
	fstab_blkid_reset(); /* twice: nothing */
}

int main(void)
{
	tdir_make("test-fstab");
	test_parse();
	test_blkid();
	return tap_done();
}
