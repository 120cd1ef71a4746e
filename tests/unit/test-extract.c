/* SPDX-License-Identifier: MIT */
/* extract (src/extract.c): a node's tree backed up (tarball.h) and restored onto a second root with
 * etc/passwd of its own: the plan's actions, the files as cmp, stat and readlink see them, owners
 * by name (nv: uid 1000 on the node, 1500 on the new root), the fstab trap (the unresolved fstab
 * kept beside the current one), the undo tarball as GNU tar lists it, a second plan with nothing
 * to do, stray temporaries; refusals: a symlink on the way, a type conflict, an unknown owner
 * (and --map-user's fix); the name maps and the stray search alone. */
#include <fcntl.h>
#include <sys/stat.h>

#include "util.h"
#include "extract.h"
#include "tap.h"
#include "testsh.h"

#define KEY "home/nv/.config/flare/orbit/controller.key"

static struct profile *prof;

static bool strlist_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->v[i], s))
			return true;
	return false;
}
static char *node, *newroot;
static bool root_user; /* chown works: owners are checked by number too */

/* "gone" never resolves: the node's old drive */
static bool resolve(const char *tag, const char *value, void *ud)
{
	(void)tag, (void)ud;
	return !streq(value, "gone");
}

static void make_trees(void)
{
	CHECK(sh("mkdir -p node/home/nv/.config/flare/orbit node/etc new/etc new/home && "
		 "head -c 64 /dev/urandom > node/" KEY " && chmod 600 node/" KEY " && "
		 "ln -s orbit/controller.key node/home/nv/.config/flare/key-link && "
		 "printf '127.0.1.1 dgx4\\n' > node/etc/hosts && "
		 "printf 'UUID=gone / ext4 errors=remount-ro 0 1\\n' > node/etc/fstab && "
		 "printf 'root:x:0:0::/root:/bin/sh\\nnv:x:1000:1000::/home/nv:/bin/sh\\n' > node/etc/passwd && "
		 "printf 'root:x:0:\\nnv:x:1000:\\n' > node/etc/group && "
		 "printf '127.0.1.1 fresh-install\\n' > new/etc/hosts && "
		 "printf 'UUID=new-root / ext4 defaults 0 1\\n' > new/etc/fstab && "
		 "printf 'root:x:0:0::/root:/bin/sh\\nnv:x:1500:1500::/home/nv:/bin/sh\\nops:x:1600:1600::/home/ops:/bin/sh\\n' > new/etc/passwd && "
		 "printf 'root:x:0:\\nnv:x:1500:\\nops:x:1600:\\n' > new/etc/group && "
		 "cp -a new pristine") == 0);
	if (root_user)
		CHECK(sh("chown -R -h 1000:1000 node/home/nv") == 0);
}

static int backup(const char *out, struct arc *a)
{
	struct backup_opts o = { .root = node, .home = "/home/nv", .profile = prof };
	struct arc_source s = { 0 };
	_cleanup_free_ char *why = NULL, *p = tpath(out);
	char sha[65];
	uint64_t bytes;
	int r = backup_collect(&o, &s, &why);

	if (r == 0)
		r = arc_write(&s, p, (uid_t)-1, (gid_t)-1, sha, &bytes, &why);
	if (r == 0)
		r = arc_load(p, &prof->limits, a, &why);
	if (r < 0)
		fprintf(stderr, "backup: %s\n", why ? why : strerror(-r));
	arc_source_free(&s);
	return r;
}

static const struct restore_step *step_of(const struct restore_plan *p, const char *dest)
{
	for (size_t i = 0; i < p->n; i++)
		if (streq(p->v[i].dest, dest))
			return &p->v[i];
	return NULL;
}

static void test_restore(const struct arc *a)
{
	_cleanup_free_ char *why = NULL, *undo = tpath("undo.tar.gz");
	struct restore_opts o = { .root = newroot, .profile = prof, .undo_path = undo, .resolve = resolve };
	struct restore_plan p;
	const struct restore_step *st;

	CHECK(sh(": > new/etc/" RESTORE_TMP_PREFIX "hosts.x1Y2z3") == 0); /* left by a killed restore */
	CHECK(restore_plan(a, &o, &p, &why) == 0);
	if (why)
		fprintf(stderr, "# plan: %s\n", why);
	/* the fstab names a device that is gone: it goes beside the current one */
	CHECK_U64(p.nfst, 1);
	CHECK_STR(p.fst[0].path, "etc/fstab");
	CHECK_STR(p.fst[0].kept_as, "etc/fstab.pre-swap");
	CHECK_U64(p.fst[0].rep.n, 1);
	CHECK(step_of(&p, "etc/fstab") == NULL);
	st = step_of(&p, "etc/fstab.pre-swap");
	CHECK(st && st->action == RA_CREATE);
	st = step_of(&p, "etc/hosts");
	CHECK(st && st->action == RA_REPLACE);
	st = step_of(&p, KEY);
	CHECK(st && st->action == RA_CREATE);
	if (st && root_user)
		CHECK(st->uid == 1500 && st->gid == 1500); /* by name on the new root */
	st = step_of(&p, "home/nv/.config/flare/key-link");
	CHECK(st && st->action == RA_CREATE);
	CHECK(strlist_has(&p.created, "home/nv"));
	CHECK(strlist_has(&p.created, KEY));
	CHECK(!strlist_has(&p.created, "etc/hosts"));
	CHECK_U64(p.strays.n, 1);
	CHECK_U64(p.nreplace, 1);
	CHECK_U64(p.ncreate + p.nreplace + p.nunchanged, p.n);
	/* the plan wrote nothing */
	CHECK(sh("diff -r --no-dereference new pristine >/dev/null; [ $? = 1 ]") == 0); /* only the stray differs */
	CHECK(sh("[ ! -e new/home/nv ] && [ ! -e undo.tar.gz ]") == 0);

	CHECK(restore_apply(a, &o, &p, &why) == 0);
	if (why)
		fprintf(stderr, "# apply: %s\n", why);
	CHECK(sh("cmp node/" KEY " new/" KEY) == 0);
	CHECK(sh("[ \"$(stat -c %%a new/" KEY ")\" = 600 ]") == 0);
	if (root_user)
		CHECK(sh("[ \"$(stat -c %%u:%%g new/" KEY ")\" = 1500:1500 ] && [ \"$(stat -c %%u new/home/nv)\" = 1500 ]") == 0);
	CHECK(sh("[ \"$(readlink new/home/nv/.config/flare/key-link)\" = orbit/controller.key ]") == 0);
	CHECK(sh("cmp node/etc/hosts new/etc/hosts") == 0);
	CHECK(sh("cmp pristine/etc/fstab new/etc/fstab && cmp node/etc/fstab new/etc/fstab.pre-swap") == 0);
	CHECK(sh("[ -z \"$(ls -A new/etc | grep -F " RESTORE_TMP_PREFIX ")\" ]") == 0); /* the stray went */
	/* the undo tarball holds what was replaced, as it was */
	CHECK(sh("tar -tzf undo.tar.gz | grep -qx etc/hosts") == 0);
	CHECK(sh("[ \"$(tar -xzOf undo.tar.gz etc/hosts)\" = '127.0.1.1 fresh-install' ]") == 0);
	CHECK(sh("! tar -tzf undo.tar.gz | grep -q controller.key") == 0);
	{
		struct arc u = { 0 };
		_cleanup_free_ char *uwhy = NULL;

		CHECK(arc_load(undo, &prof->limits, &u, &uwhy) == 0);
		CHECK(u.man.undo);
		CHECK(strlist_has(&u.man.undo_created, KEY));
		arc_free(&u);
	}
	restore_plan_free(&p);

	/* again: nothing to do (the kept fstab.pre-swap is already there, the same) */
	o.undo_path = NULL;
	CHECK(restore_plan(a, &o, &p, &why) == 0);
	CHECK_U64(p.ncreate, 0);
	CHECK_U64(p.nreplace, 0);
	CHECK_U64(p.nunchanged, p.n);
	restore_plan_free(&p);
}

static void test_refusals(const struct arc *a)
{
	struct restore_opts o = { .root = newroot, .profile = prof, .resolve = resolve };
	struct restore_plan p;
	char *why = NULL;
	struct name_map map = { 0 };

	/* a symlink on the root where the archive has a directory (its parents are entries too): a
	 * conflict of types, never followed */
	CHECK(sh("rm -rf new && cp -a pristine new && mkdir outside && ln -s ../outside new/home/nv") == 0);
	CHECK(restore_plan(a, &o, &p, &why) == -EBADMSG);
	CHECK(why && strstr(why, "refusing 'home/nv': it would replace a non-directory"));
	CHECK(sh("[ -z \"$(ls -A outside)\" ]") == 0);
	restore_plan_free(&p), free(why), why = NULL;
	/* a directory where the archive has a file */
	CHECK(sh("rm -rf new && cp -a pristine new && rm new/etc/hosts && mkdir new/etc/hosts") == 0);
	CHECK(restore_plan(a, &o, &p, &why) == -EBADMSG);
	CHECK(why && strstr(why, "would replace a directory"));
	restore_plan_free(&p), free(why), why = NULL;
	if (!root_user)
		return;
	/* the node's user does not exist on the new root: refused, naming --map-user; mapped: planned */
	CHECK(sh("rm -rf new && cp -a pristine new && sed -i '/^nv:/d' new/etc/passwd new/etc/group") == 0);
	CHECK(restore_plan(a, &o, &p, &why) == -ESRCH);
	CHECK(why && strstr(why, "'nv'") && strstr(why, "--map-user nv=NAME"));
	restore_plan_free(&p), free(why), why = NULL;
	CHECK(name_map_add(&map, "nv=ops") == 0);
	o.map = &map;
	CHECK(restore_plan(a, &o, &p, &why) == 0);
	{
		const struct restore_step *st = step_of(&p, KEY);
		CHECK(st && st->uid == 1600 && st->gid == 1600);
	}
	restore_plan_free(&p);
	name_map_free(&map);
}

static void test_pieces(void)
{
	struct name_map m = { 0 };
	struct strlist found = { 0 };
	size_t n = 0;
	char **dirs;
	char *paths[] = { "home/nv/.ssh", "etc/fstab", "etc/hosts", "home/nv/.ssh" };

	CHECK(name_map_add(&m, "nv=nvidia") == 0);
	CHECK(name_map_add(&m, "=x") == -EINVAL);
	CHECK(name_map_add(&m, "x=") == -EINVAL);
	CHECK_STR(name_map_apply(&m, "nv"), "nvidia");
	CHECK_STR(name_map_apply(&m, "root"), "root");
	CHECK_STR(name_map_apply(NULL, "nv"), "nv");
	name_map_free(&m);

	CHECK_STR(restore_action_name(RA_CREATE), "create");
	CHECK_STR(restore_action_name(RA_KEEP), "keep");
	CHECK_STR(restore_action_name(RA_REMOVE), "remove");
	CHECK_STR(restore_action_name((enum restore_action)42), "?");

	/* the root, each path's directory and each path, sorted, once each */
	dirs = stray_dirs(paths, 4, &n);
	CHECK_U64(n, 6);
	if (n == 6) {
		CHECK_STR(dirs[0], "");
		CHECK_STR(dirs[1], "etc");
		CHECK_STR(dirs[2], "etc/fstab");
		CHECK_STR(dirs[3], "etc/hosts");
		CHECK_STR(dirs[4], "home/nv");
		CHECK_STR(dirs[5], "home/nv/.ssh");
	}
	for (size_t i = 0; i < n; i++)
		free(dirs[i]);
	free(dirs);

	/* swaptool's temporaries are regular files and symlinks; a directory or FIFO of that name is not */
	CHECK(sh("mkdir -p strays/etc && cd strays/etc && : > " RESTORE_TMP_PREFIX "a && ln -s /x " RESTORE_TMP_PREFIX "b && "
		 "mkdir " RESTORE_TMP_PREFIX "c && mkfifo " RESTORE_TMP_PREFIX "d && : > keep") == 0);
	{
		_cleanup_free_ char *d = tpath("strays/etc");
		int dfd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		CHECK(restore_strays(dfd, "etc", &found, false) == 0);
		CHECK_U64(found.n, 2);
		CHECK(strlist_has(&found, "etc/" RESTORE_TMP_PREFIX "a"));
		CHECK(strlist_has(&found, "etc/" RESTORE_TMP_PREFIX "b"));
		CHECK(sh("[ -e strays/etc/" RESTORE_TMP_PREFIX "a ]") == 0); /* found, not removed */
		strlist_clear(&found);
		CHECK(restore_strays(dfd, "etc", &found, true) == 0);
		CHECK(sh("cd strays/etc && [ ! -e " RESTORE_TMP_PREFIX "a ] && [ ! -L " RESTORE_TMP_PREFIX "b ] && "
			 "[ -d " RESTORE_TMP_PREFIX "c ] && [ -p " RESTORE_TMP_PREFIX "d ] && [ -e keep ]") == 0);
		strlist_clear(&found);
		close(dfd);
	}
}

int main(void)
{
	struct arc a = { 0 };
	char *perr = NULL;

	tdir_make("test-extract");
	need_tools("tar cmp diff");
	root_user = geteuid() == 0;
	if (!root_user)
		fprintf(stderr, "# not root: owners are not checked\n");
	CHECK(profile_load(NULL, &prof, &perr) == 0);
	node = tpath("node");
	newroot = tpath("new");
	make_trees();
	if (backup("b.tar.gz", &a) == 0) {
		test_restore(&a);
		test_refusals(&a);
	} else
		CHECK(!"the backup failed");
	arc_free(&a);
	test_pieces();
	profile_free(prof);
	free(node);
	free(newroot);
	return tap_done();
}
