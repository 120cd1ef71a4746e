/* SPDX-License-Identifier: MIT */
/* verify: the live system under a root against a backup manifest, one check per concern. */
#include "util.h"
#include "verify.h"
#include "extract.h"
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

int verify_system(const struct arc *a, const char *root, const struct name_map *map, const struct profile *p,
		  fstab_resolver resolve, void *resolve_data, struct record *rec)
{
	struct fails present = { 0 }, type = { 0 }, content = { 0 }, mode = { 0 }, owner = { 0 }, links = { 0 };
	const struct manifest *man = &a->man;
	const char *home = man->home;
	int failed = 0;
	size_t nfiles = 0, nlinks = 0, nmeta = 0;
	_cleanup_close_ int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	for (size_t i = 0; i < man->n; i++) {
		const struct mentry *e = &man->e[i];
		/* resolved inside the root as if it were "/": a symlinked ancestor must not lead to this host */
		/* an ancestor (parent) is stored for its owner: a link to a directory inside the root serves */
		_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, e->path, e->parent) : NULL;
		struct stat st;
		uid_t uid;
		gid_t gid;
		const char *u = name_map_apply(map, e->user), *g = name_map_apply(map, e->group);
		int orr;

		if (!full || lstat(full, &st) < 0) {
			/* the fstab trap: no current file was there to keep, the old one went beside it */
			_cleanup_free_ char *pre = full ? xasprintf("%s.pre-swap", full) : NULL;
			char h2[65];

			if (!(e->type == MT_FILE && pre && hash_file(pre, h2, NULL) == 0 && streq(h2, e->sha256)))
				fails_add(&present, e->path, "is missing");
			continue;
		}
		bool ok_type = e->type == MT_DIR ? S_ISDIR(st.st_mode) : e->type == MT_SYMLINK ? S_ISLNK(st.st_mode)
												: S_ISREG(st.st_mode);
		if (!ok_type) {
			fails_add(&type, e->path, "is not a %s", e->type == MT_HARDLINK ? "file" : mtype_name(e->type));
			continue;
		}
		if (e->parent)
			continue;
		nmeta++;
		if (e->type == MT_FILE) {
			char hex[65];
			uint64_t n = 0;

			nfiles++;
			if (hash_file(full, hex, &n) < 0)
				fails_add(&content, e->path, "cannot be read");
			else if (!streq(hex, e->sha256)) {
				/* the fstab trap kept the current file and put the old one beside it */
				_cleanup_free_ char *pre = xasprintf("%s.pre-swap", full);
				char h2[65];

				if (!(hash_file(pre, h2, NULL) == 0 && streq(h2, e->sha256)))
					fails_add(&content, e->path, "has sha256 %.16s..., the backup %.16s...", hex, e->sha256);
				else
					continue; /* the kept file's metadata is the new system's, not the backup's */
			}
		}
		if (e->type != MT_SYMLINK && (st.st_mode & 07777) != e->mode)
			fails_add(&mode, e->path, "has mode %04o, the backup %04o", st.st_mode & 07777, e->mode);
		orr = owner_ids(root, u, g, e, &uid, &gid);
		if (orr == -ESRCH)
			fails_add(&owner, e->path, "belongs to '%s', which does not exist here", u);
		else if (orr < 0)
			fails_add(&owner, e->path, "belongs to the group '%s', which does not exist here", g);
		else if (st.st_uid != uid || st.st_gid != gid)
			fails_add(&owner, e->path, "is owned by %u:%u, the backup says %s:%s (%u:%u here)", (unsigned)st.st_uid,
				  (unsigned)st.st_gid, u, g, (unsigned)uid, (unsigned)gid);
		if (e->type == MT_SYMLINK) {
			char t[4096];
			ssize_t n = readlink(full, t, sizeof(t) - 1);

			nlinks++;
			if (n < 0 || (t[n] = '\0', !streq(t, e->link)))
				fails_add(&links, e->path, "points to '%s', the backup to '%s'", n < 0 ? "?" : t, e->link);
		} else if (e->type == MT_HARDLINK) {
			_cleanup_free_ char *tf = root_real(rootfd, e->link, false);
			struct stat ts;

			nlinks++;
			if (!tf || lstat(tf, &ts) < 0 || ts.st_ino != st.st_ino || ts.st_dev != st.st_dev)
				fails_add(&links, e->path, "is not a hard link to '%s'", e->link);
		}
	}
	failed += finish(rec, "entries-present", &present, man->n, "present");
	failed += finish(rec, "entries-type", &type, man->n, "same type");
	failed += finish(rec, "entries-content", &content, nfiles, "same sha256");
	failed += finish(rec, "entries-mode", &mode, nmeta, "same mode");
	failed += finish(rec, "entries-owner", &owner, nmeta, "same owner by name");
	failed += finish(rec, "entries-links", &links, nlinks, "same link target");

	/* controller.key: present, non-empty, 0600 or stricter, owned by the node's user */
	for (size_t i = 0; p && i < p->required.n; i++) {
		_cleanup_free_ char *rel = expand_rel(p->required.v[i], home);
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
		if (streq(jget_str(c, "status"), "fail"))
			failed++;
	}

	/* ~/.ssh 0700, private keys 0600 */
	if (home) {
		_cleanup_free_ char *rel = expand_rel("~/.ssh", home);
		_cleanup_free_ char *dir = rootfd >= 0 ? root_real(rootfd, rel, false) : NULL;
		struct fails ssh = { 0 };
		struct stat st;
		size_t keys = 0;

		if (!dir || lstat(dir, &st) < 0)
			record_check(rec, "ssh-perms", ST_SKIP, "'/%s' does not exist", rel);
		else {
			DIR *d = S_ISDIR(st.st_mode) ? opendir(dir) : NULL;
			struct dirent *de;
			json_object *c;

			if (!S_ISDIR(st.st_mode) || (st.st_mode & 077))
				fails_add(&ssh, rel, "has mode %04o: it must be 0700", st.st_mode & 07777);
			while (d && (de = readdir(d))) {
				_cleanup_free_ char *f = xasprintf("%s/%s", dir, de->d_name);
				struct stat fs;

				if (lstat(f, &fs) < 0 || !S_ISREG(fs.st_mode) || !is_private_key(f))
					continue;
				keys++;
				if (fs.st_mode & 077) {
					_cleanup_free_ char *r2 = xasprintf("%s/%s", rel, de->d_name);
					fails_add(&ssh, r2, "is a private key with mode %04o: it must be 0600", fs.st_mode & 07777);
				}
			}
			if (d)
				closedir(d);
			if (ssh.n == 0)
				c = record_check(rec, "ssh-perms", ST_PASS, "'/%s' is 0700, %zu private key(s) 0600 or stricter", rel, keys);
			else {
				c = record_check(rec, "ssh-perms", ST_FAIL, "'%s' %s",
						 jget_str(json_object_array_get_idx(ssh.list, 0), "path"),
						 jget_str(json_object_array_get_idx(ssh.list, 0), "problem"));
				failed++;
			}
			json_object_object_add(c, "failures", ssh.list ? ssh.list : json_object_new_array());
		}
	}

	/* fstab/crypttab identifiers resolve here */
	for (size_t i = 0; p && i < p->fstab_files.n; i++) {
		_cleanup_free_ char *rel = expand_rel(p->fstab_files.v[i], home);
		_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, rel, false) : NULL;
		_cleanup_free_ char *text = NULL;
		struct fstab_report rep;
		json_object *c, *arr;

		if (!full || read_input_at(AT_FDCWD, full, 1 << 20, INPUT_NOFOLLOW, &text, NULL, NULL) < 0) {
			record_check(rec, "fstab-ids", ST_SKIP, "'/%s' is not there", rel);
			continue;
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
		arr = json_object_new_array();
		for (size_t k = 0; k < rep.n; k++) {
			json_object *o = json_object_new_object();
			jset_u64(o, "line", rep.v[k].line);
			jset_str(o, "text", rep.v[k].text);
			jset_str(o, "tag", rep.v[k].tag);
			jset_str(o, "value", rep.v[k].value);
			jset_str(o, "target", rep.v[k].target);
			jset_str(o, "breaks", rep.v[k].breaks);
			json_object_array_add(arr, o);
		}
		json_object_object_add(c, "unresolved", arr);
		fstab_report_free(&rep);
	}

	/* temporaries of an interrupted restore: copies of keys that nothing else removes */
	{
		_cleanup_free_ char **paths = xcalloc(man->n + 1, sizeof(char *));
		struct strlist found = { 0 };
		json_object *c, *arr = json_object_new_array();
		char **dirs;
		size_t nd;

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
	}

	/* /etc/hosts names this host */
	{
		_cleanup_free_ char *full = rootfd >= 0 ? root_real(rootfd, "etc/hosts", true) : NULL;
		_cleanup_free_ char *text = NULL;
		int rr = full ? read_input_at(AT_FDCWD, full, 1 << 20, INPUT_NOFOLLOW, &text, NULL, NULL) : -ENOENT;

		if (rr < 0) {
			record_check(rec, "hosts", ST_FAIL, "'/etc/hosts' %s", rr == -ENOENT ? "is missing" : rr == -ENODEV ?
				     "is not a regular file" : rr == -EFBIG ? "is larger than 1 MiB" : "cannot be read");
			failed++;
		} else if (!hosts_names(text, host_name())) {
			record_check(rec, "hosts", ST_FAIL, "'/etc/hosts' does not name this host '%s'; add '127.0.1.1 %s'",
				     host_name(), host_name());
			failed++;
		} else
			record_check(rec, "hosts", ST_PASS, "'/etc/hosts' names this host '%s'", host_name());
	}
	return failed;
}
