/* SPDX-License-Identifier: MIT */
/* tarball (src/tarball.c), the backup and restore sides (the root_* helpers and path_check are
 * tested with their own module): a node's tree collected with the built-in profile, written, and
 * the tarball read by GNU tar and gzip (names, sizes, contents, the manifest first, mode 0600, the
 * hash sha256sum gives); the two-step write; the sweep of temporaries; the required file missing
 * or empty; the limits; SIGINT; and tarballs that GNU tar builds from a good one with an entry
 * changed, added or dropped, truncated, or not gzip at all: each refused with its reason. */
#include <signal.h>
#include <sys/stat.h>

#include "util.h"
#include "tarball.h"
#include "rootpath.h"
#include "tap.h"
#include "testsh.h"

#define KEY "home/nv/.config/flare/orbit/controller.key"

static struct profile *prof;

static void make_root(void)
{
	CHECK(sh("mkdir -p root/home/nv/.config/flare/orbit root/home/nv/.ssh root/etc state && "
		 "head -c 64 /dev/urandom > root/" KEY " && chmod 600 root/" KEY " && "
		 "printf '{\"node\":\"dgx4\"}\\n' > root/home/nv/.config/flare/agent.json && "
		 "ln -s orbit/controller.key root/home/nv/.config/flare/key-link && "
		 "printf 'ssh-ed25519 AAAA nv@dgx4\\n' > root/home/nv/.ssh/authorized_keys && chmod 700 root/home/nv/.ssh && "
		 "printf '127.0.1.1 dgx4\\n' > root/etc/hosts && "
		 "printf 'root:x:0:0::/root:/bin/sh\\nnv:x:1000:1000::/home/nv:/bin/sh\\n' > root/etc/passwd && "
		 "printf 'root:x:0:\\nnv:x:1000:\\n' > root/etc/group && "
		 "printf '{\"schema\":\"swaptool-preflight/1\"}\\n' > state/preflight.json && : > state/notes.txt") == 0);
}

static char *root, *state; /* s->root borrows the path: it lives as long as the test */

static int collect(struct arc_source *s, char **why)
{
	struct backup_opts o = { .root = root, .home = "/home/nv", .profile = prof, .state_dir = state };

	*s = (struct arc_source){ 0 };
	return backup_collect(&o, s, why);
}

static void test_write(void)
{
	struct arc_source s;
	struct arc a = { 0 };
	_cleanup_free_ char *why = NULL, *out = tpath("b.tar.gz"), *sum = NULL, *first = NULL, *listing = NULL;
	char sha[65];
	uint64_t bytes = 0;
	struct stat st;

	CHECK(collect(&s, &why) == 0);
	CHECK_U64(s.nreq, 1);
	CHECK(s.req[0].ok);
	CHECK_U64(s.req[0].size, 64);
	CHECK(s.unreadable == NULL);
	CHECK(manifest_find(&s.man, KEY) != NULL);
	CHECK(manifest_find(&s.man, "etc/hosts") != NULL);
	CHECK(manifest_find(&s.man, "etc/passwd") == NULL); /* not in the profile's set */
	CHECK_U64(s.man.nst, 1);                            /* preflight.json; notes.txt is no record */
	CHECK_STR(s.man.st[0].name, "preflight.json");
	/* the files of the set and the state record, as wc counts them */
	CHECK_U64(s.data_bytes, sh_u64("cat root/" KEY " root/home/nv/.config/flare/agent.json root/home/nv/.ssh/authorized_keys "
				       "root/etc/hosts state/preflight.json | wc -c"));

	CHECK(arc_write(&s, out, (uid_t)-1, (gid_t)-1, sha, &bytes, &why) == 0);
	/* the file as stat, sha256sum, gzip and tar see it */
	CHECK(stat(out, &st) == 0);
	CHECK_U64(bytes, (uint64_t)st.st_size);
	CHECK((st.st_mode & 07777) == 0600);
	sum = sh_str("sha256sum b.tar.gz | cut -d' ' -f1");
	CHECK_STR(sha, sum);
	CHECK(sh("gzip -t b.tar.gz") == 0);
	first = sh_str("tar -tzf b.tar.gz | head -1");
	CHECK_STR(first, MANIFEST_NAME);
	CHECK(sh("tar -tzf b.tar.gz | grep -qx '" KEY "'") == 0);
	CHECK(sh("tar -tzf b.tar.gz | grep -qx 'swaptool-state/preflight.json'") == 0);
	CHECK(sh("[ \"$(tar -xzOf b.tar.gz " KEY " | sha256sum)\" = \"$(sha256sum < root/" KEY ")\" ]") == 0);
	listing = sh_str("tar -tvzf b.tar.gz home/nv/.config/flare/key-link");
	CHECK(strstr(listing, "key-link -> orbit/controller.key") != NULL);
	CHECK(strncmp(listing, "lrwx", 4) == 0);
	free(listing);
	listing = sh_str("tar -tvzf b.tar.gz " KEY);
	CHECK(strncmp(listing, "-rw-------", 10) == 0);
	CHECK(strstr(listing, " 64 ") != NULL);
	/* the manifest as tar extracts it: each entry's hash is the file's */
	CHECK(sh("tar -xzOf b.tar.gz " MANIFEST_NAME " | jq -e '.entries[] | select(.path == \"" KEY "\") | .sha256' "
		 "| tr -d '\"' | grep -qx \"$(sha256sum < root/" KEY " | cut -d' ' -f1)\"") == 0);

	/* and read back by arc_load: the same entries, data and records */
	CHECK(arc_load(out, &prof->limits, &a, &why) == 0);
	CHECK_STR(a.sha256, sha);
	CHECK_U64(a.bytes, bytes);
	CHECK_U64(a.man.n, s.man.n);
	CHECK_U64(a.man.nst, 1);
	CHECK(a.state && a.state[0].len == sh_u64("stat -c %%s state/preflight.json"));
	for (size_t i = 0; i < a.n; i++)
		if (streq(a.items[i].path, KEY)) {
			_cleanup_free_ char *data = NULL, *k = tpath("root/" KEY);
			size_t len = 0;

			CHECK(read_file_all(k, 4096, &data, &len) == 0);
			CHECK(a.items[i].len == len && memcmp(a.items[i].data, data, len) == 0);
			CHECK(a.items[i].m && a.items[i].m->mode == 0600);
		}
	arc_free(&a);
	arc_source_free(&s);
}

static void test_two_steps(void)
{
	struct arc_source s;
	_cleanup_free_ char *why = NULL, *out = tpath("two.tar.gz"), *tmp = NULL;
	char sha[65];
	uint64_t bytes;

	/* killed runs left copies of the keys beside the output: swept; look-alikes stay */
	CHECK(sh(": > two.tar.gz.tmp.Ab12Cd && : > two.tar.gz.tmp.zzzzzz && : > two.tar.gz.tmp.short && "
		 ": > two.tar.gz.tmp.a-b_cd && mkdir two.tar.gz.tmp.dir123 && : > other.tmp.Ab12Cd") == 0);
	CHECK(arc_sweep_tmps(out) == 2);
	CHECK(sh("[ ! -e two.tar.gz.tmp.Ab12Cd ] && [ ! -e two.tar.gz.tmp.zzzzzz ] && [ -e two.tar.gz.tmp.short ] && "
		 "[ -e two.tar.gz.tmp.a-b_cd ] && [ -d two.tar.gz.tmp.dir123 ] && [ -e other.tmp.Ab12Cd ]") == 0);
	CHECK(arc_sweep_tmps(out) == 0);

	CHECK(collect(&s, &why) == 0);
	CHECK(arc_write_tmp(&s, out, (uid_t)-1, (gid_t)-1, sha, &bytes, &tmp, &why) == 0);
	CHECK(tmp && startswith(tmp, out) && startswith(tmp + strlen(out), ".tmp."));
	CHECK(access(out, F_OK) < 0);
	CHECK(access(tmp, F_OK) == 0);
	CHECK(arc_commit(tmp, out, &why) == 0);
	CHECK(access(tmp, F_OK) < 0);
	{
		_cleanup_free_ char *sum = sh_str("sha256sum two.tar.gz | cut -d' ' -f1");
		CHECK_STR(sha, sum);
	}
	arc_source_free(&s);
}

static void test_required(void)
{
	struct arc_source s;
	_cleanup_free_ char *why = NULL;

	CHECK(sh(": > root/" KEY) == 0);
	CHECK(collect(&s, &why) == 0);
	CHECK(!s.req[0].ok);
	CHECK(s.req[0].why && startswith(s.req[0].why, "empty"));
	arc_source_free(&s);
	CHECK(sh("rm root/" KEY) == 0);
	CHECK(collect(&s, &why) == 0);
	CHECK(!s.req[0].ok);
	CHECK(s.req[0].why && startswith(s.req[0].why, "missing"));
	arc_source_free(&s);
	CHECK(sh("mkdir root/" KEY) == 0);
	CHECK(collect(&s, &why) == 0);
	CHECK(!s.req[0].ok);
	CHECK(s.req[0].why && startswith(s.req[0].why, "not a regular file"));
	arc_source_free(&s);
	CHECK(sh("rmdir root/" KEY " && head -c 64 /dev/urandom > root/" KEY) == 0);
}

static void test_limits(void)
{
	struct arc_source s = { 0 };
	struct arc_limits lim = prof->limits;
	_cleanup_free_ char *out = tpath("b.tar.gz");
	struct backup_opts o = { .root = root, .home = "/home/nv", .profile = prof };
	char *why = NULL;
	struct arc a = { 0 };

	prof->limits.entries = 3;
	CHECK(backup_collect(&o, &s, &why) == -E2BIG);
	CHECK(why && strstr(why, "more than 3 entries"));
	arc_source_free(&s), free(why), why = NULL;
	prof->limits = lim;
	prof->limits.entry_bytes = 63;
	CHECK(backup_collect(&o, &s, &why) == -EFBIG);
	CHECK(why && strstr(why, "entry_bytes"));
	arc_source_free(&s), free(why), why = NULL;
	prof->limits = lim;
	/* the reader's limits: a tarball larger than tarball_bytes, an archive of more entries */
	lim.tarball_bytes = 100;
	CHECK(arc_load(out, &lim, &a, &why) < 0);
	CHECK(why != NULL);
	arc_free(&a), free(why), why = NULL;
	lim = prof->limits;
	lim.expanded_bytes = 4096;
	CHECK(arc_load(out, &lim, &a, &why) == -EBADMSG);
	CHECK(why && strstr(why, "expanded_bytes"));
	arc_free(&a), free(why), why = NULL;

	/* SIGINT once caught: the walk stops with -EINTR */
	arc_catch_sigint();
	CHECK(arc_interrupted == 0);
	raise(SIGINT);
	CHECK(arc_interrupted == 1);
	CHECK(backup_collect(&o, &s, &why) == -EINTR);
	arc_source_free(&s), free(why), why = NULL;
	arc_interrupted = 0;
	signal(SIGINT, SIG_DFL);
}

/* load TARBALL: its result and reason */
static int load(const char *name, char **why)
{
	_cleanup_free_ char *p = tpath(name);
	struct arc a = { 0 };
	int r;

	free(*why);
	*why = NULL;
	r = arc_load(p, &prof->limits, &a, why);
	arc_free(&a);
	return r;
}

static void test_hostile(void)
{
	char *why = NULL;

	/* unpacked by tar, changed, packed again by tar, the manifest first as swaptool writes it */
	CHECK(sh("mkdir x && tar -xzf b.tar.gz -C x && cd x && "
		 "repack() { tar --format=pax --no-recursion -czf ../$1 $(tar -tzf ../b.tar.gz) ${2:-}; } && "
		 "repack same.tar.gz && "
		 "cp " KEY " key.orig && printf 'X' | dd of=" KEY " bs=1 seek=10 conv=notrunc status=none && repack changed.tar.gz && "
		 "cp key.orig " KEY " && printf 'x\\n' > etc/extra && repack extra.tar.gz etc/extra && "
		 "tar --format=pax -czf ../nomanifest.tar.gz etc/hosts && "
		 "tar --format=pax -czf ../dropped.tar.gz " MANIFEST_NAME " etc/hosts") == 0);
	CHECK(sh("head -c $(( $(stat -c %%s b.tar.gz) / 2 )) b.tar.gz > truncated.tar.gz && "
		 "tar -cf plain.tar -C x etc/hosts && printf 'not a tarball\\n' > text.tar.gz && : > empty.tar.gz") == 0);

	/* repacked unchanged (what tar keeps of a pax header is enough): accepted */
	CHECK(load("same.tar.gz", &why) == 0);
	if (why)
		fprintf(stderr, "# same.tar.gz: %s\n", why);
	CHECK(load("changed.tar.gz", &why) == -EBADMSG);
	CHECK(why && strstr(why, KEY) && strstr(why, "sha256"));
	CHECK(load("extra.tar.gz", &why) == -EBADMSG);
	CHECK(why && strstr(why, "more entries than its manifest lists"));
	CHECK(load("nomanifest.tar.gz", &why) == -EBADMSG);
	CHECK(why != NULL);
	CHECK(load("dropped.tar.gz", &why) == -EBADMSG);
	CHECK(why != NULL);
	CHECK(load("truncated.tar.gz", &why) == -EBADMSG);
	CHECK(why && (strstr(why, "truncated") || strstr(why, "corrupt")));
	CHECK(load("plain.tar", &why) == -EBADMSG);
	CHECK(why && strstr(why, "not gzip-compressed"));
	CHECK(load("text.tar.gz", &why) == -EBADMSG);
	CHECK(load("empty.tar.gz", &why) == -EBADMSG);
	CHECK(load("missing.tar.gz", &why) == -ENOENT);
	free(why);
}

int main(void)
{
	char *perr = NULL;
	uid_t u;
	gid_t g;

	tdir_make("test-tarball");
	need_tools("tar gzip sha256sum jq");
	if (profile_load(NULL, &prof, &perr) != 0) {
		fprintf(stderr, "built-in profile: %s\n", perr);
		return 1;
	}
	root = tpath("root");
	state = tpath("state");
	make_root();
	test_write();
	test_two_steps();
	test_required();
	test_limits();
	test_hostile();
	/* names on an offline root come from its etc/passwd and etc/group */
	CHECK(lookup_user(root, "nv", &u) == 0 && u == 1000);
	CHECK(lookup_group(root, "nv", &g) == 0 && g == 1000);
	CHECK(lookup_group(root, "1234", &g) == 0 && g == 1234);
	CHECK(lookup_user(root, "daemon", &u) == -ENOENT);
	profile_free(prof);
	free(root);
	free(state);
	return tap_done();
}
