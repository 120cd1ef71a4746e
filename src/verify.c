/* SPDX-License-Identifier: MIT */
/* verify: the live system under a root against a backup manifest, one check per concern. */
#include "util.h"
#include "verify.h"
#include "extract.h" /* name_map_apply, restore_strays, stray_dirs */
#include "rootpath.h"
#include "tarball.h" /* struct arc */
#include "json.h"
#include "record.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>

struct fails {
	json_object *list; /* [{path, problem}] */
	size_t n;
};

static void fails_add(struct fails *f, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fails_add(struct fails *f, const char *path, const char *fmt, ...)
{
	json_object *o = json_object_new_object();
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		abort();
	va_end(ap);
	if (!f->list)
		f->list = json_object_new_array();
	jset_str(o, "path", path);
	jset_str(o, "problem", msg);
	json_object_array_add(f->list, o);
	f->n++;
}

static int finish(struct record *rec, const char *id, struct fails *f, size_t total, const char *what)
{
	json_object *c;

	if (f->n == 0)
		c = record_check(rec, id, ST_PASS, "%zu of %zu entries: %s", total, total, what);
	else {
		const char *first = jget_str(json_object_array_get_idx(f->list, 0), "path");
		const char *prob = jget_str(json_object_array_get_idx(f->list, 0), "problem");

		c = record_check(rec, id, ST_FAIL, "%zu of %zu entries differ: '%s' %s%s", f->n, total, first, prob,
				 f->n > 1 ? ", ..." : "");
	}
	json_object_object_add(c, "failures", f->list ? f->list : json_object_new_array());
	f->list = NULL;
	return f->n ? 1 : 0;
}

static char *expand_rel(const char *spec, const char *home)
{
	_cleanup_free_ char *x = profile_expand(spec, home ? home : "/");
	const char *q = x;
	char *r;
	size_t n;

	while (*q == '/')
		q++;
	r = xstrdup(q);
	n = strlen(r);
	while (n > 0 && r[n - 1] == '/')
		r[--n] = '\0';
	return r;
}

/* sha256 of a regular file, never blocking on a FIFO or device planted under the name */
static int hash_file(const char *path, char hex[65], uint64_t *n)
{
	_cleanup_close_ int fd = open_input_at(AT_FDCWD, path, 0, INPUT_NOFOLLOW, NULL, NULL);

	return fd < 0 ? fd : sha256_fd(fd, hex, n);
}

/* Ids of a name on the root; an offline root without its own etc/passwd: the backup's ids. */
static int owner_ids(const char *root, const char *u, const char *g, const struct mentry *e, uid_t *uid, gid_t *gid)
{
	int r = lookup_user(root, u, uid);

	if (r == -ENOMEDIUM && e)
		*uid = e->uid, r = 0;
	if (r < 0)
		return -ESRCH;
	r = lookup_group(root, g, gid);
	if (r == -ENOMEDIUM && e)
		*gid = e->gid, r = 0;
	return r < 0 ? -ENXIO : 0;
}

static bool is_private_key(const char *path)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (read_input_at(AT_FDCWD, path, 1 << 20, INPUT_NOFOLLOW, &text, &len, NULL) < 0)
		return false;
	return startswith(text, "-----BEGIN") && strstr(text, "PRIVATE KEY-----");
}

static bool hosts_names(const char *text, const char *host)
{
	_cleanup_free_ char *copy = xstrdup(text);
	char *save = NULL;

	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#'), *s2 = NULL;
		bool first = true;

		if (hash)
			*hash = '\0';
		for (char *w = strtok_r(line, " \t", &s2); w; w = strtok_r(NULL, " \t", &s2)) {
			if (!first) {
				size_t n = strlen(host);
				if (streq(w, host) || (strncmp(w, host, n) == 0 && w[n] == '.'))
					return true;
			}
			first = false;
		}
	}
	return false;
}

/* the manifest checks: the failures of each and how many entries each looked at */
struct entry_checks {
	struct fails present, type, content, mode, owner, links;
	size_t nfiles, nlinks, nmeta;
};

/* the fstab trap: no current file was there to keep, the old one went beside it */
static bool kept_beside(const struct mentry *e, const char *full)
{
	_cleanup_free_ char *pre = full ? xasprintf("%s.pre-swap", full) : NULL;
	char h2[65];

	return e->type == MT_FILE && pre && hash_file(pre, h2, NULL) == 0 && streq(h2, e->sha256);
}

/* a regular file's sha256; false when the fstab trap kept the current file and put the old one beside
 * it: the kept file's metadata is the new system's, not the backup's, so nothing more is checked */
static bool check_content(struct entry_checks *ec, const struct mentry *e, const char *full)
{
	char hex[65];
	uint64_t n = 0;

	ec->nfiles++;
	if (hash_file(full, hex, &n) < 0)
		fails_add(&ec->content, e->path, "cannot be read");
	else if (!streq(hex, e->sha256)) {
		if (kept_beside(e, full))
			return false;
		fails_add(&ec->content, e->path, "has sha256 %.16s..., the backup %.16s...", hex, e->sha256);
	}
	return true;
}

static void check_owner(struct entry_checks *ec, const char *root, const struct name_map *map, const struct mentry *e,
			const struct stat *st)
{
	const char *u = name_map_apply(map, e->user), *g = name_map_apply(map, e->group);
	uid_t uid;
	gid_t gid;
	int orr = owner_ids(root, u, g, e, &uid, &gid);

	if (orr == -ESRCH)
		fails_add(&ec->owner, e->path, "belongs to '%s', which does not exist here", u);
	else if (orr < 0)
		fails_add(&ec->owner, e->path, "belongs to the group '%s', which does not exist here", g);
	else if (st->st_uid != uid || st->st_gid != gid)
		fails_add(&ec->owner, e->path, "is owned by %u:%u, the backup says %s:%s (%u:%u here)", (unsigned)st->st_uid,
			  (unsigned)st->st_gid, u, g, (unsigned)uid, (unsigned)gid);
}

/* a symlink's target, or a hard link's inode against its target's */
static void check_link(struct entry_checks *ec, int rootfd, const struct mentry *e, const char *full, const struct stat *st)
{
	if (e->type == MT_SYMLINK) {
		char t[4096];
		ssize_t n = readlink(full, t, sizeof(t) - 1);

		ec->nlinks++;
		if (n < 0 || (t[n] = '\0', !streq(t, e->link)))
			fails_add(&ec->links, e->path, "points to '%s', the backup to '%s'", n < 0 ? "?" : t, e->link);
	} else if (e->type == MT_HARDLINK) {
		_cleanup_free_ char *tf = root_real(rootfd, e->link, false);
		struct stat ts;

		ec->nlinks++;
		if (!tf || lstat(tf, &ts) < 0 || ts.st_ino != st->st_ino || ts.st_dev != st->st_dev)
			fails_add(&ec->links, e->path, "is not a hard link to '%s'", e->link);
	}
}

static void check_entry(struct entry_checks *ec, int rootfd, const char *root, const struct name_map *map,
			const struct mentry *e)
{
	/* resolved inside the root as if it were "/": a symlinked ancestor must not lead to this host */
	/* an ancestor (parent) is stored for its owner: a link to a directory inside the root serves */
	_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, e->path, e->parent) : NULL;
	struct stat st;

	if (!full || lstat(full, &st) < 0) {
		if (!kept_beside(e, full))
			fails_add(&ec->present, e->path, "is missing");
		return;
	}
	bool ok_type = e->type == MT_DIR ? S_ISDIR(st.st_mode) : e->type == MT_SYMLINK ? S_ISLNK(st.st_mode)
											: S_ISREG(st.st_mode);
	if (!ok_type) {
		fails_add(&ec->type, e->path, "is not a %s", e->type == MT_HARDLINK ? "file" : mtype_name(e->type));
		return;
	}
	if (e->parent)
		return;
	ec->nmeta++;
	if (e->type == MT_FILE && !check_content(ec, e, full))
		return;
	if (e->type != MT_SYMLINK && (st.st_mode & 07777) != e->mode)
		fails_add(&ec->mode, e->path, "has mode %04o, the backup %04o", st.st_mode & 07777, e->mode);
	check_owner(ec, root, map, e, &st);
	check_link(ec, rootfd, e, full, &st);
}

/* every manifest entry: present, same type, content, mode, owner and link target; six checks */
static int verify_entries(const struct manifest *man, int rootfd, const char *root, const struct name_map *map,
			  struct record *rec)
{
	struct entry_checks ec = { 0 };
	int failed = 0;

	for (size_t i = 0; i < man->n; i++)
		check_entry(&ec, rootfd, root, map, &man->e[i]);
	failed += finish(rec, "entries-present", &ec.present, man->n, "present");
	failed += finish(rec, "entries-type", &ec.type, man->n, "same type");
	failed += finish(rec, "entries-content", &ec.content, ec.nfiles, "same sha256");
	failed += finish(rec, "entries-mode", &ec.mode, ec.nmeta, "same mode");
	failed += finish(rec, "entries-owner", &ec.owner, ec.nmeta, "same owner by name");
	failed += finish(rec, "entries-links", &ec.links, ec.nlinks, "same link target");
	return failed;
}

/* one required file (controller.key): present, non-empty, 0600 or stricter, owned by the node's user */
static int verify_required_one(const struct manifest *man, int rootfd, const char *root, const struct name_map *map,
			       const char *spec, struct record *rec)
{
	_cleanup_free_ char *rel = expand_rel(spec, man->home);
	_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, rel, false) : NULL;
	const char *user = name_map_apply(map, man->user ? man->user : "root");
	const struct mentry *me = manifest_find(man, rel);
	struct stat st;
	uid_t uid = (uid_t)-1;
	json_object *c;

	if (lookup_user(root, user, &uid) == -ENOMEDIUM && me)
		uid = me->uid;
	if (!full || lstat(full, &st) < 0)
		c = record_check(rec, "required", ST_FAIL, "'/%s' is missing: all agents must be re-paired without it", rel);
	else if (!S_ISREG(st.st_mode))
		c = record_check(rec, "required", ST_FAIL, "'/%s' is not a regular file", rel);
	else if (st.st_size == 0)
		c = record_check(rec, "required", ST_FAIL, "'/%s' is empty", rel);
	else if (st.st_mode & 07177)
		c = record_check(rec, "required", ST_FAIL, "'/%s' has mode %04o: it must be 0600 or stricter; chmod 600 it",
				 rel, st.st_mode & 07777);
	else if (st.st_uid != uid)
		c = record_check(rec, "required", ST_FAIL, "'/%s' is owned by uid %u, not by '%s'; chown it", rel,
				 (unsigned)st.st_uid, user);
	else
		c = record_check(rec, "required", ST_PASS, "'/%s' present, %lld bytes, mode %04o, owned by '%s'", rel,
				 (long long)st.st_size, st.st_mode & 07777, user);
	jset_str(c, "path", full ? full : rel);
	return streq(jget_str(c, "status"), "fail") ? 1 : 0;
}

static int verify_required(const struct manifest *man, int rootfd, const char *root, const struct name_map *map,
			   const struct profile *p, struct record *rec)
{
	int failed = 0;

	for (size_t i = 0; p && i < p->required.n; i++)
		failed += verify_required_one(man, rootfd, root, map, p->required.v[i], rec);
	return failed;
}

/* the private keys in DIR: each one 0600 or stricter; returns how many there are */
static size_t ssh_keys(const char *dir, const char *rel, struct fails *ssh)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t keys = 0;

	while (d && (de = readdir(d))) {
		_cleanup_free_ char *f = xasprintf("%s/%s", dir, de->d_name);
		struct stat fs;

		if (lstat(f, &fs) < 0 || !S_ISREG(fs.st_mode) || !is_private_key(f))
			continue;
		keys++;
		if (fs.st_mode & 077) {
			_cleanup_free_ char *r2 = xasprintf("%s/%s", rel, de->d_name);
			fails_add(ssh, r2, "is a private key with mode %04o: it must be 0600", fs.st_mode & 07777);
		}
	}
	if (d)
		closedir(d);
	return keys;
}

/* ~/.ssh 0700, private keys 0600 */
static int verify_ssh(const char *home, int rootfd, struct record *rec)
{
	_cleanup_free_ char *rel = NULL, *dir = NULL;
	struct fails ssh = { 0 };
	struct stat st;
	size_t keys = 0;
	json_object *c;
	int failed = 0;

	if (!home)
		return 0;
	rel = expand_rel("~/.ssh", home);
	dir = rootfd >= 0 ? root_real(rootfd, rel, false) : NULL;
	if (!dir || lstat(dir, &st) < 0) {
		record_check(rec, "ssh-perms", ST_SKIP, "'/%s' does not exist", rel);
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_mode & 077))
		fails_add(&ssh, rel, "has mode %04o: it must be 0700", st.st_mode & 07777);
	if (S_ISDIR(st.st_mode))
		keys = ssh_keys(dir, rel, &ssh);
	if (ssh.n == 0)
		c = record_check(rec, "ssh-perms", ST_PASS, "'/%s' is 0700, %zu private key(s) 0600 or stricter", rel, keys);
	else {
		c = record_check(rec, "ssh-perms", ST_FAIL, "'%s' %s", jget_str(json_object_array_get_idx(ssh.list, 0), "path"),
				 jget_str(json_object_array_get_idx(ssh.list, 0), "problem"));
		failed++;
	}
	json_object_object_add(c, "failures", ssh.list ? ssh.list : json_object_new_array());
	return failed;
}

/* one fstab or crypttab: its identifiers resolve here */
static int verify_fstab_one(const char *spec, const char *home, int rootfd, fstab_resolver resolve, void *resolve_data,
			    struct record *rec)
{
	_cleanup_free_ char *rel = expand_rel(spec, home);
	_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, rel, false) : NULL;
	_cleanup_free_ char *text = NULL;
	struct fstab_report rep;
	json_object *c;
	int failed = 0;

	if (!full || read_input_at(AT_FDCWD, full, 1 << 20, INPUT_NOFOLLOW, &text, NULL, NULL) < 0) {
		record_check(rec, "fstab-ids", ST_SKIP, "'/%s' is not there", rel);
		return 0;
	}
	fstab_check(text, fstab_is_crypttab(rel), resolve, resolve_data, &rep);
	if (rep.n == 0)
		c = record_check(rec, "fstab-ids", ST_PASS, "'/%s': %zu identifier(s), all resolve on this machine", rel, rep.ids);
	else {
		c = record_check(rec, "fstab-ids", ST_FAIL, "'/%s' line %u: %s=%s does not resolve here: %s", rel,
				 rep.v[0].line, rep.v[0].tag, rep.v[0].value, rep.v[0].breaks);
		failed++;
	}
	jset_str(c, "path", full);
	json_object_object_add(c, "unresolved", fstab_report_json(&rep));
	fstab_report_free(&rep);
	return failed;
}

/* fstab/crypttab identifiers resolve here */
static int verify_fstab(const char *home, int rootfd, const struct profile *p, fstab_resolver resolve,
			void *resolve_data, struct record *rec)
{
	int failed = 0;

	for (size_t i = 0; p && i < p->fstab_files.n; i++)
		failed += verify_fstab_one(p->fstab_files.v[i], home, rootfd, resolve, resolve_data, rec);
	return failed;
}

/* temporaries of an interrupted restore: copies of keys that nothing else removes */
static int verify_strays(const struct manifest *man, int rootfd, struct record *rec)
{
	_cleanup_free_ char **paths = xcalloc(man->n + 1, sizeof(char *));
	struct strlist found = { 0 };
	json_object *c, *arr = json_object_new_array();
	char **dirs;
	size_t nd;
	int failed = 0;

	for (size_t i = 0; i < man->n; i++)
		paths[i] = man->e[i].path;
	dirs = stray_dirs(paths, man->n, &nd);
	for (size_t i = 0; i < nd; i++) {
		/* each directory resolved inside the root, then opened without following */
		_cleanup_free_ char *real = rootfd >= 0 ? root_real(rootfd, dirs[i], false) : NULL;
		_cleanup_close_ int dfd = real ? open(real, O_RDONLY | O_DIRECTORY | (*dirs[i] ? O_NOFOLLOW : 0) | O_CLOEXEC) : -1;

		if (dfd >= 0)
			restore_strays(dfd, dirs[i], &found, false);
		free(dirs[i]);
	}
	free(dirs);
	for (size_t k = 0; k < found.n; k++)
		json_object_array_add(arr, json_object_new_string(found.v[k]));
	if (found.n == 0)
		c = record_check(rec, "strays", ST_PASS, "no temporaries of an interrupted restore");
	else {
		c = record_check(rec, "strays", ST_FAIL, "%zu stray temporar%s of an interrupted restore (copies of backed-up "
				 "files): '/%s'%s; 'swaptool restore' or 'restore --undo' removes them", found.n,
				 found.n == 1 ? "y" : "ies", found.v[0], found.n > 1 ? ", ..." : "");
		failed++;
	}
	json_object_object_add(c, "paths", arr);
	strlist_clear(&found);
	return failed;
}

/* /etc/hosts names this host */
static int verify_hosts(int rootfd, struct record *rec)
{
	_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, "etc/hosts", true) : NULL;
	_cleanup_free_ char *text = NULL;
	int rr = full ? read_input_at(AT_FDCWD, full, 1 << 20, INPUT_NOFOLLOW, &text, NULL, NULL) : -ENOENT;

	if (rr < 0) {
		record_check(rec, "hosts", ST_FAIL, "'/etc/hosts' %s", rr == -ENOENT ? "is missing" : rr == -ENODEV ?
			     "is not a regular file" : rr == -EFBIG ? "is larger than 1 MiB" : "cannot be read");
		return 1;
	}
	if (!hosts_names(text, host_name())) {
		record_check(rec, "hosts", ST_FAIL, "'/etc/hosts' does not name this host '%s'; add '127.0.1.1 %s'",
			     host_name(), host_name());
		return 1;
	}
	record_check(rec, "hosts", ST_PASS, "'/etc/hosts' names this host '%s'", host_name());
	return 0;
}

/* the checks in the order the record lists them; returns how many failed */
int verify_system(const struct arc *a, const char *root, const struct name_map *map, const struct profile *p,
		  fstab_resolver resolve, void *resolve_data, struct record *rec)
{
	const struct manifest *man = &a->man;
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int failed = 0;

	failed += verify_entries(man, rootfd, root, map, rec);
	failed += verify_required(man, rootfd, root, map, p, rec);
	failed += verify_ssh(man->home, rootfd, rec);
	failed += verify_fstab(man->home, rootfd, p, resolve, resolve_data, rec);
	failed += verify_strays(man, rootfd, rec);
	failed += verify_hosts(rootfd, rec);
	return failed;
}
