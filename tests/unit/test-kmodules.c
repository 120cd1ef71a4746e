/* SPDX-License-Identifier: MIT */
/* kmodules (src/kmodules.c): module closures from a modules.dep written as depmod writes it: every
 * module after what it needs, each once; built-in and absent names; hostile lines (absolute, climbing,
 * no colon, a dependency without a line), a cycle, no modules.dep. */
#include "util.h" /* first: the headers of src/ take size_t, bool from it */
#include "kmodules.h"
#include "tap.h"
#include "testsh.h"

static char *joined(const struct strlist *l)
{
	char *s = xstrdup("");

	for (size_t i = 0; i < l->n; i++) {
		char *n = xasprintf("%s%s%s", s, i ? " " : "", l->v[i]);

		free(s);
		s = n;
	}
	return s;
}

static int resolve(const char *dep, const char *const *names, size_t n, struct kmod_set *s, char **why)
{
	_cleanup_free_ char *d = tpath("m");

	CHECK(sh("rm -rf m && mkdir m && printf '%%b' '%s' > m/modules.dep && "
		 "printf 'kernel/drivers/usb/host/xhci-pci.ko\\nkernel/crypto/crc32c_generic.ko\\n' > m/modules.builtin", dep) == 0);
	free(*why);
	*why = NULL;
	return kmod_resolve(d, names, n, s, why);
}

int main(void)
{
	static const char dep[] =
		"kernel/fs/ext4/ext4.ko.xz: kernel/lib/crc16.ko.xz kernel/fs/mbcache.ko.xz kernel/fs/jbd2/jbd2.ko.xz\\n"
		"kernel/lib/crc16.ko.xz:\\n"
		"kernel/fs/mbcache.ko.xz:\\n"
		"kernel/fs/jbd2/jbd2.ko.xz: kernel/lib/crc16.ko.xz\\n"
		"kernel/drivers/usb/storage/uas.ko.xz: kernel/drivers/usb/storage/usb-storage.ko.xz kernel/drivers/scsi/scsi_mod.ko.xz\\n"
		"kernel/drivers/usb/storage/usb-storage.ko.xz: kernel/drivers/scsi/scsi_mod.ko.xz\\n"
		"kernel/drivers/scsi/scsi_mod.ko.xz:\\n";
	const char *names[] = { "uas", "ext4", "usb-storage", "xhci-pci", "crc32c_generic", "nvme" };
	_cleanup_free_ char *why = NULL, *files = NULL, *bi = NULL, *miss = NULL, *a = NULL, *b = NULL, *c = NULL;
	struct kmod_set s;

	tdir_make("test-kmodules");
	a = kmod_name("kernel/drivers/usb/host/xhci-pci.ko.zst");
	b = kmod_name("xhci-pci");
	c = kmod_name("xhci_pci.ko");
	CHECK_STR(a, "xhci_pci");
	CHECK_STR(b, "xhci_pci");
	CHECK_STR(c, "xhci_pci");

	CHECK(resolve(dep, names, ARRAY_SIZE(names), &s, &why) == 0);
	files = joined(&s.files);
	bi = joined(&s.builtin);
	miss = joined(&s.missing);
	/* depth first: scsi_mod before usb-storage before uas; crc16 once, before jbd2 and ext4 */
	CHECK_STR(files, "kernel/drivers/scsi/scsi_mod.ko.xz kernel/drivers/usb/storage/usb-storage.ko.xz "
			 "kernel/drivers/usb/storage/uas.ko.xz kernel/lib/crc16.ko.xz kernel/fs/mbcache.ko.xz "
			 "kernel/fs/jbd2/jbd2.ko.xz kernel/fs/ext4/ext4.ko.xz");
	CHECK_STR(bi, "xhci_pci crc32c_generic");
	CHECK_STR(miss, "nvme");
	kmod_set_free(&s);

	/* hostile or broken modules.dep: nothing returned, the line named */
	CHECK(resolve("/lib/modules/x/kernel/a.ko:\\n", names, 1, &s, &why) == -EBADMSG);
	CHECK(why && strstr(why, "line 1"));
	CHECK(resolve("kernel/a.ko:\\nkernel/../../../etc/shadow.ko:\\n", names, 1, &s, &why) == -EBADMSG);
	CHECK(why && strstr(why, "line 2"));
	CHECK(resolve("kernel/a.ko\\n", names, 1, &s, &why) == -EBADMSG);
	CHECK(resolve("kernel/a.ko: /etc/passwd\\n", names, 1, &s, &why) == -EBADMSG);
	CHECK(resolve("kernel/uas.ko: kernel/gone.ko\\n", names, 1, &s, &why) == -EBADMSG);
	CHECK(why && strstr(why, "no line of its own"));
	CHECK(resolve("kernel/uas.ko: kernel/b.ko\\nkernel/b.ko: kernel/uas.ko\\n", names, 1, &s, &why) == -ELOOP);
	CHECK(s.files.n == 0);
	CHECK(sh("rm m/modules.dep") == 0);
	free(why), why = NULL;
	{
		_cleanup_free_ char *m = tpath("m");

		CHECK(kmod_resolve(m, names, 1, &s, &why) == -ENOENT);
	}
	CHECK(why && strstr(why, "depmod"));
	return tap_done();
}
