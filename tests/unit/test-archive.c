/* SPDX-License-Identifier: MIT */
/* Unit tests of the manifest, path safety, the fstab identifier check and the tarball
 * write / read-back / load round trip (src/manifest.c, src/fstab.c, src/tarball.c, src/extract.c). */
#include "tap.h"
#include "util.h"
#include "extract.h"
#include "tarball.h"
#include "rootpath.h"

#include <fcntl.h>
#include <sys/stat.h>

static void test_paths(void)
{
	const char *why = NULL;
	static const struct { const char *p; const char *why; } bad[] = {
		{ "", "empty path" },
		{ "/etc/shadow", "absolute path" },
		{ "home/nv/../../etc", "'..' component" },
		{ "..", "'..' component" },
		{ "home/./nv", "'.' component" },
		{ "home//nv", "empty path component" },
		{ "home/nv/", "trailing '/'" },
		{ "home/n\nv", "control character in the path" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		why = NULL;
		CHECK(path_check(bad[i].p, &why) == -EINVAL);
		CHECK_STR(why, bad[i].why);
	}
	CHECK(path_check("home/nv/.config/flare/orbit/controller.key", &why) == 0);
	CHECK(path_check("etc/fstab", &why) == 0);
	CHECK(path_check("home/nv/..x/...", &why) == 0); /* names that merely start with dots */
	{
		char longp[1100];
		memset(longp, 'a', sizeof(longp) - 1);
		longp[sizeof(longp) - 1] = '\0';
		CHECK(path_check(longp, &why) == -EINVAL);
	}
	_cleanup_free_ char *n = path_normalize("home/nv/");
	CHECK_STR(n, "home/nv");
	CHECK(state_name_ok("preflight.json"));
	CHECK(state_name_ok("verify-report.json"));
	CHECK(!state_name_ok("../x.json"));
	CHECK(!state_name_ok(".hidden.json"));
	CHECK(!state_name_ok("preflight.txt"));
	CHECK(!state_name_ok("a/b.json"));
}

static void test_manifest(void)
{
	struct manifest m = { 0 }, back = { 0 };
	struct mentry *e;
	_cleanup_free_ char *why = NULL;
	const char *text;

	m.host = xstrdup("dgx4");
	m.user = xstrdup("nv");
	m.home = xstrdup("/home/nv");
	m.created = xstrdup("2026-11-04T10:00:00Z");
	e = manifest_add(&m, "home/nv/.config/flare/orbit/controller.key");
	e->type = MT_FILE, e->mode = 0600, e->uid = 1000, e->gid = 1000, e->size = 89;
	e->user = xstrdup("nv"), e->group = xstrdup("nv");
	sha256_buf("x", 1, e->sha256);
	e = manifest_add(&m, "home/nv/.ssh/id_current.pub");
	e->type = MT_SYMLINK, e->mode = 0777, e->user = xstrdup("nv"), e->group = xstrdup("nv");
	e->link = xstrdup("id_ed25519.pub");
	json_object *j = manifest_to_json(&m);
	text = json_object_to_json_string(j);
	CHECK(manifest_parse(text, strlen(text), &back, &why) == 0);
	CHECK_U64(back.n, 2);
	CHECK_STR(back.host, "dgx4");
	CHECK_U64(back.e[0].mode, 0600);
	CHECK_U64(back.e[0].size, 89);
	CHECK_STR(back.e[0].sha256, m.e[0].sha256);
	CHECK(back.e[1].type == MT_SYMLINK);
	CHECK_STR(back.e[1].link, "id_ed25519.pub");
	CHECK(manifest_find(&back, "home/nv/.ssh/id_current.pub") == &back.e[1]);
	CHECK(manifest_find(&back, "home/nv/.ssh") == NULL);
	json_object_put(j);
	manifest_free(&back);
	manifest_free(&m);

	static const struct { const char *json; const char *why; } bad[] = {
		{ "{", "not valid JSON" },
		{ "{\"schema\":\"other/1\",\"entries\":[]}", "schema" },
		{ "{\"schema\":\"swaptool-manifest/1\"}", "no 'entries'" },
		{ "{\"schema\":\"swaptool-manifest/1\",\"entries\":[{\"path\":\"/etc/x\",\"type\":\"file\"}]}", "absolute path" },
		{ "{\"schema\":\"swaptool-manifest/1\",\"entries\":[{\"path\":\"a\",\"type\":\"fifo\"}]}", "unknown type" },
		{ "{\"schema\":\"swaptool-manifest/1\",\"entries\":[{\"path\":\"a\",\"type\":\"file\",\"mode\":\"0999\"}]}", "bad mode" },
		{ "{\"schema\":\"swaptool-manifest/1\",\"entries\":[{\"path\":\"a\",\"type\":\"file\",\"mode\":\"0600\",\"uid\":0,\"gid\":0,"
		  "\"size\":1,\"user\":\"root\",\"group\":\"root\",\"sha256\":\"zz\"}]}", "no valid sha256" },
		{ "{\"schema\":\"swaptool-manifest/1\",\"entries\":[{\"path\":\"a\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":0,\"gid\":0,"
		  "\"size\":0,\"user\":\"root\",\"group\":\"root\"},{\"path\":\"a\",\"type\":\"dir\",\"mode\":\"0755\",\"uid\":0,"
		  "\"gid\":0,\"size\":0,\"user\":\"root\",\"group\":\"root\"}]}", "twice" },
		{ "{\"schema\":\"swaptool-manifest/1\",\"entries\":[{\"path\":\"swaptool-state/x.json\",\"type\":\"file\"}]}", "reserved" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct manifest x = { 0 };
		char *w = NULL;

		CHECK(manifest_parse(bad[i].json, strlen(bad[i].json), &x, &w) == -EBADMSG);
		CHECK(w && strstr(w, bad[i].why));
		if (!(w && strstr(w, bad[i].why)))
			fprintf(stderr, "  case %zu: '%s'\n", i, w ? w : "(null)");
		free(w);
		manifest_free(&x);
	}
}

/* resolves only what the test says is "on this machine" */
static bool fake_resolve(const char *tag, const char *value, void *userdata)
{
	(void)userdata;
	return (streq(tag, "UUID") && streq(value, "1111-2222")) || (streq(tag, "LABEL") && streq(value, "EFI"));
}

static void test_fstab(void)
{
	struct fstab_report rep;
	const char *fstab =
		"# comment\n"
		"\n"
		"UUID=0d6c4e57-7e41-493d-a531-809dda000002 / ext4 errors=remount-ro 0 1\n"
		"UUID=\"1111-2222\" /home ext4 defaults 0 2\n"
		"LABEL=EFI /boot/efi vfat umask=0077 0 1\n"
		"PARTUUID=d6c40003-aaaa /data ext4 defaults,nofail 0 2\n"
		"/dev/disk/by-uuid/dead-beef none swap sw 0 0\n"
		"/swap.img none swap sw 0 0\n"
		"proc /proc proc defaults 0 0\n";

	CHECK(fstab_check(fstab, false, fake_resolve, NULL, &rep) == 0);
	CHECK_U64(rep.ids, 5);
	CHECK_U64(rep.n, 3);
	CHECK_U64(rep.v[0].line, 3);
	CHECK_STR(rep.v[0].tag, "UUID");
	CHECK_STR(rep.v[0].target, "/");
	CHECK(strstr(rep.v[0].breaks, "root filesystem") != NULL);
	CHECK_U64(rep.v[1].line, 6);
	CHECK_STR(rep.v[1].tag, "PARTUUID");
	CHECK(strstr(rep.v[1].breaks, "nofail") != NULL);
	CHECK_U64(rep.v[2].line, 7);
	CHECK_STR(rep.v[2].value, "dead-beef");
	CHECK(strstr(rep.v[2].breaks, "swap") != NULL);
	fstab_report_free(&rep);

	CHECK(fstab_check("cryptroot UUID=abcd none luks\n", true, fake_resolve, NULL, &rep) == 0);
	CHECK_U64(rep.n, 1);
	CHECK_STR(rep.v[0].target, "cryptroot");
	CHECK(strstr(rep.v[0].breaks, "not unlocked") != NULL);
	fstab_report_free(&rep);
	CHECK(fstab_is_crypttab("etc/crypttab"));
	CHECK(!fstab_is_crypttab("etc/fstab"));
}

static void test_names(void)
{
	struct name_map m = { 0 };

	CHECK(name_map_add(&m, "nv=nvidia") == 0);
	CHECK(name_map_add(&m, "=x") == -EINVAL);
	CHECK(name_map_add(&m, "x=") == -EINVAL);
	CHECK(name_map_add(&m, "x") == -EINVAL);
	CHECK_STR(name_map_apply(&m, "nv"), "nvidia");
	CHECK_STR(name_map_apply(&m, "root"), "root");
	name_map_free(&m);
	uid_t u;
	CHECK(lookup_user("/", "root", &u) == 0 && u == 0);
	CHECK(lookup_user("/", "4242", &u) == 0 && u == 4242); /* stored by number */
	CHECK(lookup_user("/", "no-such-user-swaptool", &u) == -ENOENT);
}

/* write a small set, read it back, then flip one byte: the load must refuse it */
static void test_roundtrip(void)
{
	char dir[] = "/tmp/test-archive.XXXXXX";
	struct profile *p = NULL;
	char *perr = NULL;
	struct arc_source s = { 0 };
	struct arc a = { 0 };
	_cleanup_free_ char *why = NULL, *root = NULL, *out = NULL, *cmd = NULL;
	char sha[65];
	uint64_t bytes = 0;

	CHECK(mkdtemp(dir) != NULL);
	root = xasprintf("%s/root", dir);
	out = xasprintf("%s/b.tar.gz", dir);
	CHECK(profile_load(NULL, &p, &perr) == 0);
	_cleanup_free_ char *d1 = xasprintf("%s/home/nv/.config/flare/orbit", root);
	_cleanup_free_ char *d2 = xasprintf("%s/etc", root);
	_cleanup_free_ char *k = xasprintf("%s/controller.key", d1);
	_cleanup_free_ char *h = xasprintf("%s/hosts", d2);
	CHECK(mkdir_p(d1, 0755) == 0 && mkdir_p(d2, 0755) == 0);
	CHECK(write_file_atomic(k, "secret-key\n", 11, 0600) == 0);
	CHECK(write_file_atomic(h, "127.0.1.1 dgx4\n", 15, 0644) == 0);

	struct backup_opts o = { .root = root, .home = "/home/nv", .profile = p };
	CHECK(backup_collect(&o, &s, &why) == 0);
	CHECK(s.nreq == 1 && s.req[0].ok);
	CHECK_U64(s.nmissing, 3); /* ~/.ssh, /etc/netplan, /etc/fstab */
	CHECK(arc_write(&s, out, (uid_t)-1, (gid_t)-1, sha, &bytes, &why) == 0);
	CHECK(bytes > 0);
	CHECK(arc_load(out, &p->limits, &a, &why) == 0);
	CHECK_U64(a.man.n, s.man.n);
	CHECK_STR(a.sha256, sha);
	const struct mentry *e = manifest_find(&a.man, "home/nv/.config/flare/orbit/controller.key");
	CHECK(e && e->type == MT_FILE && e->size == 11 && e->mode == 0600);
	arc_free(&a);
	arc_source_free(&s);

	/* one flipped byte in the middle: refused, whatever it hits */
	{
		char *data = NULL;
		size_t len = 0;
		CHECK(read_file_all(out, 1 << 20, &data, &len) == 0);
		data[len / 2] ^= 0x40;
		CHECK(write_file_atomic(out, data, len, 0600) == 0);
		free(data);
		free(why);
		why = NULL;
		CHECK(arc_load(out, &p->limits, &a, &why) == -EBADMSG);
		CHECK(why != NULL);
		arc_free(&a);
	}
	cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
	profile_free(p);
}

/* inputs typed before they are read; paths and names resolved inside an offline root */
static void test_roots(void)
{
	char dir[] = "/tmp/test-archive-root.XXXXXX";
	_cleanup_free_ char *cmd = NULL, *fifo = NULL, *r = NULL, *p = NULL, *outside = NULL;
	struct stat st;
	uid_t u;
	gid_t g;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	fifo = xasprintf("%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0);
	CHECK(open_input_at(AT_FDCWD, fifo, 0, INPUT_NOFOLLOW, &st, NULL) == -ENODEV); /* returns at once, no writer needed */
	CHECK(open_input_at(AT_FDCWD, "/dev/zero", 0, 0, &st, NULL) == -ENODEV);
	CHECK(open_input_at(AT_FDCWD, dir, 0, 0, &st, NULL) == -EISDIR);
	CHECK(open_input_at(AT_FDCWD, "/etc/passwd", 1, 0, &st, NULL) == -EFBIG);
	fd = open_input_at(AT_FDCWD, "/etc/passwd", 0, 0, &st, NULL);
	CHECK(fd >= 0 && !(fcntl(fd, F_GETFL) & O_NONBLOCK));
	if (fd >= 0)
		close(fd);

	/* R/home -> /data/home (absolute: R-relative), R/data/home/nv; and a link out by '..' */
	r = xasprintf("%s/R", dir);
	outside = xasprintf("%s/outside", dir);
	cmd = xasprintf("mkdir -p %s/data/home/nv %s/etc %s && ln -s /data/home %s/home && ln -s ../../../.. %s/data/up && "
			"printf 'root:x:0:0::/root:/bin/sh\nnvx:x:1:1::/home/nv:/bin/sh\n' >%s/etc/passwd && "
			"printf 'nvg:x:1:\n' >%s/etc/group", r, r, outside, r, r, r, r);
	CHECK(system(cmd) == 0);
	int rootfd = open(r, O_RDONLY | O_DIRECTORY);
	_cleanup_free_ char *want = xasprintf("%s/data/home/nv", r);
	_cleanup_free_ char *realwant = realpath(want, NULL);
	p = root_real(rootfd, "home/nv", true);
	CHECK_STR(p, realwant);
	free(p);
	/* '..' stops at the root: data/up/outside is R/outside, which does not exist */
	p = root_real(rootfd, "data/up/outside/x", false);
	CHECK(p == NULL && errno == ENOENT);
	free(p);
	p = NULL;
	/* the component walk gives the same directory as openat2 */
	int a = root_open_dir(rootfd, "home/nv"), b = walk_in_root(rootfd, "home/nv");
	struct stat sa, sb;
	CHECK(a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_ino == sb.st_ino);
	close(a);
	close(b);
	CHECK(walk_in_root(rootfd, "data/up/outside") == -ENOENT);
	close(rootfd);

	/* names from R/etc/passwd, not this host's (uid 1 is usually 'daemon' here) */
	CHECK(lookup_user(r, "nvx", &u) == 0 && u == 1);
	CHECK(lookup_user(r, "root", &u) == 0 && u == 0);
	CHECK(lookup_user(r, "daemon", &u) == -ENOENT);
	CHECK(lookup_group(r, "nvg", &g) == 0 && g == 1);
	_cleanup_free_ char *n1 = root_user_name(r, 1), *n2 = root_group_name(r, 1), *n3 = root_user_name(r, 4242);
	CHECK_STR(n1, "nvx");
	CHECK_STR(n2, "nvg");
	CHECK_STR(n3, "4242");
	/* a bare offline root has no names: the caller uses the backup's ids */
	CHECK(lookup_user(outside, "root", &u) == -ENOMEDIUM);
	free(cmd);
	cmd = xasprintf("rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

int main(void)
{
	test_roots();
	test_paths();
	test_manifest();
	test_fstab();
	test_names();
	test_roundtrip();
	return tap_done();
}
