/* SPDX-License-Identifier: MIT */
/* rescue (src/rescue.c): a stick's layout, table, ESP and state partition written on an image from
 * given files and records, read back (the checks pass, then fail on a changed byte), checked by
 * sgdisk -v, e2fsck -fn and debugfs independently; the state partition found again by its label, in
 * the image and as a partition of its own; Secure Boot read from efivarfs-shaped files. */
#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "rescue.h"
#include "tap.h"
#include "testsh.h"

#include <fcntl.h>

static size_t failed(json_object *checks)
{
	size_t n = 0;

	for (size_t i = 0; i < json_object_array_length(checks); i++)
		n += streq(json_object_get_string(json_object_object_get(json_object_array_get_idx(checks, i), "status")),
			   "fail");
	return n;
}

int main(void)
{
	static const char *const paths[] = { "EFI/BOOT/BOOTX64.EFI", "loader/loader.conf", "swaptool/vmlinuz",
					     "swaptool/initrd.img" };
	static const char rec[] = "{ \"schema\": \"swaptool/1\", \"step\": \"plan\" }\n";
	_cleanup_free_ char *why = NULL, *img = NULL, *out = NULL, *efi = NULL;
	struct rescue r;
	json_object *checks;
	uint64_t off = 1;
	int fd;

	tdir_make("test-rescue");
	need_tools("mke2fs e2fsck sgdisk debugfs");
	rescue_init_struct(&r);
	CHECK(sh("head -c 100000 /dev/urandom > f0 && echo timeout 3 > f1 && head -c 2000000 /dev/urandom > f2 && "
		 "head -c 5000000 /dev/urandom > f3") == 0);
	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		_cleanup_free_ char *p = xasprintf("%s/f%zu", tdir, i);

		r.esp[i] = (struct fat_file){ .path = paths[i], .fd = open(p, O_RDONLY | O_CLOEXEC) };
		r.esp[i].size = (uint64_t)lseek(r.esp[i].fd, 0, SEEK_END);
	}
	r.nesp = ARRAY_SIZE(paths);
	r.records[r.nrecords++] = (struct rescue_record){ "plan", xstrdup(rec), strlen(rec) };

	/* the layout: 1 MiB for the table, the ESP, 64 MiB of state, 1 MiB for the backup table */
	CHECK(rescue_layout(&r, 512, &why) == 0);
	CHECK_U64(r.esp_first, 2048);
	CHECK_U64(r.state_first, r.esp_last + 1);
	CHECK_U64((r.state_last - r.state_first + 1) * 512, RESCUE_STATE_BYTES);
	CHECK_U64(r.bytes, (r.state_last + 1) * 512 + (1u << 20));
	CHECK((r.esp_last - r.esp_first + 1) * 512 >= 32u << 20);

	img = tpath("stick.img");
	fd = open(img, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(ftruncate(fd, (off_t)r.bytes + (8 << 20)) == 0); /* a stick a little larger than needed */
	CHECK(rescue_write_table_esp(&r, fd, img, r.bytes + (8 << 20), 1700000000, &why) == 0);
	CHECK(rescue_write_state(&r, img, &why) == 0);
	checks = json_object_new_array();
	CHECK(rescue_verify_table_esp(&r, fd, img, r.bytes + (8 << 20), checks) == 0);
	CHECK(rescue_verify_state(&r, img, checks) == 0);
	CHECK_U64(json_object_array_length(checks), 3);
	CHECK_U64(failed(checks), 0);
	json_object_put(checks);

	/* independent tools: the table, the ext4, its label, the record in it */
	CHECK(sh("sgdisk -v stick.img | grep -q 'No problems found'") == 0);
	CHECK(sh("e2fsck -fn 'stick.img?offset=%" PRIu64 "' >/dev/null 2>&1", r.state_first * 512) == 0);
	out = sh_str("debugfs -R 'cat /swaptool/plan.json' 'stick.img?offset=%" PRIu64 "' 2>/dev/null", r.state_first * 512);
	CHECK_STR(out, "{ \"schema\": \"swaptool/1\", \"step\": \"plan\" }");
	free(out);
	out = sh_str("sgdisk -i 2 stick.img | sed -n \"s/^Partition name: '\\(.*\\)'/\\1/p\"");
	CHECK_STR(out, RESCUE_STATE_LABEL);
	free(out);
	out = sh_str("debugfs -R 'stat /swaptool' 'stick.img?offset=%" PRIu64 "' 2>/dev/null | sed -n 's/.*Mode: *\\([0-7]*\\).*/\\1/p'",
		     r.state_first * 512);
	CHECK_STR(out, "0700");

	/* found again: in the image, and as a partition of its own */
	CHECK(rescue_find_state(fd, img, &off, &why) == 0);
	CHECK_U64(off, r.state_first * 512);
	CHECK(sh("dd if=stick.img of=state.img bs=512 skip=%" PRIu64 " count=%" PRIu64 " status=none", r.state_first,
		 r.state_last - r.state_first + 1) == 0);
	{
		_cleanup_free_ char *p = tpath("state.img");
		_cleanup_close_ int s = open(p, O_RDONLY | O_CLOEXEC);

		CHECK(rescue_find_state(s, "state.img", &off, &why) == 0);
		CHECK_U64(off, 0);
	}
	{
		_cleanup_free_ char *p = tpath("f3");
		_cleanup_close_ int z = open(p, O_RDONLY | O_CLOEXEC);

		CHECK(rescue_find_state(z, "f3", &off, &why) == -ENOENT);
		CHECK(why && strstr(why, RESCUE_STATE_LABEL));
	}

	/* a byte of the ESP's first FAT changed on the stick: its check fails, the table's holds */
	CHECK(sh("printf 'X' | dd of=stick.img bs=1 seek=$((%" PRIu64 " * 512 + 32 * 512 + 100)) conv=notrunc status=none",
		 r.esp_first) == 0);
	checks = json_object_new_array();
	CHECK(rescue_verify_table_esp(&r, fd, img, r.bytes + (8 << 20), checks) == 1);
	CHECK_U64(failed(checks), 1);
	json_object_put(checks);
	/* the record changed in the state partition: the state check fails */
	CHECK(sh("debugfs -w -R 'rm /swaptool/plan.json' 'stick.img?offset=%" PRIu64 "' >/dev/null 2>&1", r.state_first * 512) == 0);
	checks = json_object_new_array();
	CHECK(rescue_verify_state(&r, img, checks) == 1);
	CHECK_U64(failed(checks), 1);
	json_object_put(checks);
	close(fd);

	/* Secure Boot as efivarfs shows it: 4 bytes of attributes, then the value */
	efi = tpath("efivars");
	CHECK(rescue_secure_boot(efi) == -ENOENT);
	CHECK(sh("mkdir efivars && printf '\\x06\\x00\\x00\\x00\\x01' > efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c") == 0);
	CHECK(rescue_secure_boot(efi) == 1);
	CHECK(sh("printf '\\x06\\x00\\x00\\x00\\x00' > efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c") == 0);
	CHECK(rescue_secure_boot(efi) == 0);
	CHECK(sh("printf '\\x06\\x00\\x00\\x00\\x01\\x01' > efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c") == 0);
	CHECK(rescue_secure_boot(efi) == -EBADMSG);

	rescue_free(&r);
	return tap_done();
}
