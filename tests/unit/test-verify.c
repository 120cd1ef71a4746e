/* SPDX-License-Identifier: MIT */
/* verify (src/verify.c): a node's tree backed up (tarball.h), then checked as the live system under
 * a root: every check passes on the tree itself; then one change at a time (a byte of a file, a
 * mode, a symlink's target, the required key gone, ~/.ssh opened up, an fstab naming a gone
 * device, a stray temporary of a restore, /etc/hosts without this host) fails the one check it
 * should, and the count of failed checks says how many. */
#include <sys/stat.h>

#include "util.h"
#include "extract.h"
#include "record.h"
#include "verify.h"
#include "tap.h"
#include "testsh.h"

#define KEY "home/nv/.config/flare/orbit/controller.key"

static struct profile *prof;
static char *root;

static bool resolve(const char *tag, const char *value, void *ud)
{
	(void)tag, (void)ud;
	return !streq(value, "gone");
}

/* The status of check ID in the record ("" when absent) */
static const char *status_of(const struct record *rec, const char *id)
{
	for (size_t i = 0; i < json_object_array_length(rec->checks); i++) {
		json_object *c = json_object_array_get_idx(rec->checks, i);

		if (streq(jget_str(c, "id"), id))
			return jget_str(c, "status");
	}
	return "";
}

static const char *summary_of(const struct record *rec, const char *id)
{
	for (size_t i = 0; i < json_object_array_length(rec->checks); i++) {
		json_object *c = json_object_array_get_idx(rec->checks, i);

		if (streq(jget_str(c, "id"), id))
			return jget_str(c, "summary");
	}
	return "";
}

/* verify the root against the archive: the number of failed checks; *rec keeps the checks */
static int run(const struct arc *a, struct record *rec)
{
	record_free(rec);
	CHECK(record_init(rec, "verify") == 0);
	return verify_system(a, root, NULL, prof, resolve, NULL, rec);
}

/* each case: a change to the tree, the check it fails, the command that puts it back */
static const struct {
	const char *change, *check, *undo, *says;
	int failed; /* the change also differs from the backup's entry: entries-mode or -content fails too */
} cases[] = {
	{ "printf x | dd of=root/home/nv/.config/flare/agent.json bs=1 seek=3 conv=notrunc status=none", "entries-content",
	  "cp saved/agent.json root/home/nv/.config/flare/agent.json", "agent.json", 1 },
	{ "chmod 644 root/home/nv/.config/flare/agent.json", "entries-mode", "chmod 600 root/home/nv/.config/flare/agent.json",
	  "agent.json", 1 },
	{ "ln -sfn orbit/elsewhere root/home/nv/.config/flare/key-link", "entries-links",
	  "ln -sfn orbit/controller.key root/home/nv/.config/flare/key-link", "key-link", 1 },
	{ "rm root/home/nv/.ssh/id_ed25519 && mkdir root/home/nv/.ssh/id_ed25519", "entries-type",
	  "rmdir root/home/nv/.ssh/id_ed25519 && cp -p saved/id_ed25519 root/home/nv/.ssh/", "id_ed25519", 1 },
	{ "chmod 755 root/home/nv/.ssh", "ssh-perms", "chmod 700 root/home/nv/.ssh", ".ssh", 2 },
	{ "printf 'UUID=gone / ext4 defaults 0 1\\n' > root/etc/fstab", "fstab-ids", "cp -p saved/fstab root/etc/fstab",
	  "UUID=gone", 2 },
	{ ": > root/etc/" RESTORE_TMP_PREFIX "fstab.Ab12Cd", "strays", "rm root/etc/" RESTORE_TMP_PREFIX "fstab.Ab12Cd",
	  "stray", 1 },
	{ "printf '127.0.0.1 localhost\\n' > root/etc/hosts", "hosts", "cp -p saved/hosts root/etc/hosts", "does not name this host", 2 },
};

int main(void)
{
	struct arc a = { 0 };
	struct record rec = { 0 };
	char *perr = NULL;
	_cleanup_free_ char *why = NULL, *tar = NULL, *host = NULL;
	struct backup_opts o;
	struct arc_source s = { 0 };
	char sha[65];
	uint64_t bytes;
	int failed;

	tdir_make("test-verify");
	CHECK(profile_load(NULL, &prof, &perr) == 0);
	root = tpath("root");
	tar = tpath("b.tar.gz");
	host = xstrdup(host_name());
	CHECK(sh("mkdir -p root/home/nv/.config/flare/orbit root/home/nv/.ssh root/etc saved && "
		 "head -c 64 /dev/urandom > root/" KEY " && chmod 600 root/" KEY " && "
		 "printf '{\"node\":\"dgx4\"}\\n' > root/home/nv/.config/flare/agent.json && chmod 600 root/home/nv/.config/flare/agent.json && "
		 "ln -s orbit/controller.key root/home/nv/.config/flare/key-link && "
		 "chmod 700 root/home/nv/.ssh && head -c 400 /dev/urandom > root/home/nv/.ssh/id_ed25519 && chmod 600 root/home/nv/.ssh/id_ed25519 && "
		 "printf '127.0.1.1 %s\\n' > root/etc/hosts && printf 'UUID=fine / ext4 defaults 0 1\\n' > root/etc/fstab && "
		 "cp -p root/home/nv/.config/flare/agent.json root/home/nv/.ssh/id_ed25519 root/etc/hosts root/etc/fstab saved/",
		 host) == 0);
	o = (struct backup_opts){ .root = root, .home = "/home/nv", .profile = prof };
	CHECK(backup_collect(&o, &s, &why) == 0);
	CHECK(arc_write(&s, tar, (uid_t)-1, (gid_t)-1, sha, &bytes, &why) == 0);
	CHECK(arc_load(tar, &prof->limits, &a, &why) == 0);
	arc_source_free(&s);

	/* the tree it was made from: everything passes */
	failed = run(&a, &rec);
	CHECK(failed == 0);
	for (size_t i = 0; i < json_object_array_length(rec.checks); i++) {
		json_object *c = json_object_array_get_idx(rec.checks, i);

		if (!streq(jget_str(c, "status"), "pass"))
			fprintf(stderr, "# %s: %s %s\n", jget_str(c, "id"), jget_str(c, "status"), jget_str(c, "summary"));
	}
	static const char *const ids[] = { "entries-present", "entries-type", "entries-content", "entries-mode",
					   "entries-owner", "entries-links", "required", "ssh-perms", "fstab-ids",
					   "strays", "hosts" };
	for (size_t i = 0; i < ARRAY_SIZE(ids); i++)
		CHECK_STR(status_of(&rec, ids[i]), "pass");
	CHECK(rec.worst == ST_PASS);

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		CHECK(sh("%s", cases[i].change) == 0);
		failed = run(&a, &rec);
		CHECK_STR(status_of(&rec, cases[i].check), "fail");
		CHECK(strstr(summary_of(&rec, cases[i].check), cases[i].says) != NULL);
		if (failed != cases[i].failed)
			fprintf(stderr, "# %s: %d checks failed\n", cases[i].check, failed);
		CHECK(failed == cases[i].failed);
		CHECK(sh("%s", cases[i].undo) == 0);
	}
	CHECK(run(&a, &rec) == 0);

	/* the required key gone: it is missing from the entries and the required check names it */
	CHECK(sh("rm root/" KEY) == 0);
	failed = run(&a, &rec);
	CHECK(failed >= 2);
	CHECK_STR(status_of(&rec, "required"), "fail");
	CHECK(strstr(summary_of(&rec, "required"), "is missing") != NULL);
	CHECK_STR(status_of(&rec, "entries-present"), "fail");
	/* and an empty one */
	CHECK(sh(": > root/" KEY " && chmod 600 root/" KEY) == 0);
	run(&a, &rec);
	CHECK(strstr(summary_of(&rec, "required"), "is empty") != NULL);
	/* a world-readable key */
	CHECK(sh("head -c 64 /dev/urandom > root/" KEY " && chmod 644 root/" KEY) == 0);
	run(&a, &rec);
	CHECK(strstr(summary_of(&rec, "required"), "0600 or stricter") != NULL);

	record_free(&rec);
	arc_free(&a);
	profile_free(prof);
	free(root);
	return tap_done();
}
