/* SPDX-License-Identifier: MIT */
/* Safe extraction of a validated archive under a root: plan (no writes), undo archive, atomic
 * per-entry writes through directory fds opened with O_NOFOLLOW, the fstab trap. */
#include "util.h"
#include "extract.h"
#include "rootpath.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>

/* ---------------------------------------------------------------- names ---- */

int name_map_add(struct name_map *m, const char *spec)
{
	const char *eq = strchr(spec, '=');

	if (!eq || eq == spec || !eq[1] || strchr(eq + 1, '='))
		return -EINVAL;
	m->from = realloc(m->from, (m->n + 1) * sizeof(char *));
	m->to = realloc(m->to, (m->n + 1) * sizeof(char *));
	if (!m->from || !m->to)
		abort();
	m->from[m->n] = strndup(spec, (size_t)(eq - spec));
	m->to[m->n] = xstrdup(eq + 1);
	if (!m->from[m->n])
		abort();
	m->n++;
	return 0;
}

void name_map_free(struct name_map *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->from[i]);
		free(m->to[i]);
	}
	free(m->from);
	free(m->to);
	*m = (struct name_map){ 0 };
}

const char *name_map_apply(const struct name_map *m, const char *name)
{
	for (size_t i = 0; m && i < m->n; i++)
		if (streq(m->from[i], name))
			return m->to[i];
	return name;
}

const char *restore_action_name(enum restore_action a)
{
	static const char *const n[] = { [RA_CREATE] = "create", [RA_REPLACE] = "replace", [RA_UNCHANGED] = "unchanged",
					 [RA_KEEP] = "keep", [RA_REMOVE] = "remove" };
	return a < ARRAY_SIZE(n) ? n[a] : "?";
}

/* ---------------------------------------------------------------- walking ---- */

/*
 * Open the directory that holds `rel` below rootfd, one component at a time with
 * O_NOFOLLOW: a symlink anywhere on the way (planted by this archive, an earlier restore,
 * or anyone else) stops it with -ELOOP. *missing is set (and -ENOENT returned) at the
 * first component that does not exist, unless `create` makes it (mode 0755).
 */
static int open_parent(int rootfd, const char *rel, bool create, struct strlist *created, const char **leaf,
		       char **bad)
{
	_cleanup_free_ char *p = xstrdup(rel);
	int fd = dup(rootfd);
	char *s = p;

	if (fd < 0)
		return -errno;
	for (char *q; (q = strchr(s, '/')); s = q + 1) {
		int nfd;

		*q = '\0';
		nfd = openat(fd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && create) {
			if (mkdirat(fd, s, 0755) < 0 && errno != EEXIST) {
				int e = -errno;
				close(fd);
				return e;
			}
			if (created)
				strlist_add(created, p);
			nfd = openat(fd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int e = -errno;
			struct stat st;

			if (e == -ENOTDIR && fstatat(fd, s, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				e = -ELOOP;
			close(fd);
			if (bad)
				*bad = xstrdup(p);
			return e;
		}
		close(fd);
		fd = nfd;
		*q = '/';
	}
	if (leaf)
		*leaf = rel + (s - p);
	return fd;
}

static bool strlist_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (streq(l->v[i], s))
			return true;
	return false;
}

/* ---------------------------------------------------------------- strays ---- */

int restore_strays(int dfd, const char *dir, struct strlist *found, bool remove)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (!startswith(de->d_name, RESTORE_TMP_PREFIX) ||
		    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			continue;
		if (found) {
			_cleanup_free_ char *rel = *dir ? xasprintf("%s/%s", dir, de->d_name) : xstrdup(de->d_name);
			strlist_add(found, rel);
		}
		if (remove && unlinkat(dfd, de->d_name, 0) < 0 && errno != ENOENT && r == 0)
			r = -errno;
	}
	closedir(d);
	return r;
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Directories to look in for strays: the directory of each path and each path itself (the
 * callers skip what is not a directory), sorted and without repeats (8,192 entries). */
char **stray_dirs(char *const *paths, size_t n, size_t *count)
{
	char **v = xcalloc(2 * n + 1, sizeof(char *));
	size_t k = 0, u = 0;

	v[k++] = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		char *d = xstrdup(paths[i]), *sl = strrchr(d, '/');

		v[k++] = xstrdup(paths[i]);
		if (sl)
			*sl = '\0';
		else
			d[0] = '\0';
		v[k++] = d;
	}
	qsort(v, k, sizeof(char *), cmp_strp);
	for (size_t i = 0; i < k; i++) {
		if (u > 0 && streq(v[u - 1], v[i])) {
			free(v[i]);
			continue;
		}
		v[u++] = v[i];
	}
	*count = u;
	return v;
}

static void find_strays(int rootfd, const struct restore_plan *p, struct strlist *found)
{
	_cleanup_free_ char **dests = xcalloc(p->n + 1, sizeof(char *));
	char **dirs;
	size_t n;

	for (size_t i = 0; i < p->n; i++)
		dests[i] = p->v[i].dest;
	dirs = stray_dirs(dests, p->n, &n);
	for (size_t i = 0; i < n; i++) {
		_cleanup_close_ int dfd = -1;

		if (!*dirs[i])
			dfd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		else {
			/* through open_parent: a symlink on the way is not followed */
			_cleanup_free_ char *probe = xasprintf("%s/x", dirs[i]);
			const char *leaf;
			int pfd = open_parent(rootfd, probe, false, NULL, &leaf, NULL);

			dfd = pfd >= 0 ? pfd : -1;
		}
		if (dfd >= 0)
			restore_strays(dfd, dirs[i], found, false);
		free(dirs[i]);
	}
	free(dirs);
}

static bool endswith_pre_swap(const char *s)
{
	size_t n = strlen(s);
	return n >= 9 && streq(s + n - 9, ".pre-swap");
}

/* ---------------------------------------------------------------- plan ---- */

static void plan_add(struct restore_plan *p, const struct arc_item *it, const char *dest, enum restore_action a,
		     uid_t uid, gid_t gid)
{
	p->v = realloc(p->v, (p->n + 1) * sizeof(*p->v));
	if (!p->v)
		abort();
	p->v[p->n++] = (struct restore_step){ .item = it, .dest = xstrdup(dest), .action = a, .uid = uid, .gid = gid };
	if (a == RA_CREATE)
		p->ncreate++;
	else if (a == RA_REPLACE)
		p->nreplace++;
	else if (a == RA_UNCHANGED)
		p->nunchanged++;
	else if (a == RA_REMOVE)
		p->nremove++;
}

static bool same_content(int dfd, const char *leaf, const struct arc_item *it)
{
	_cleanup_close_ int fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char hex[65];
	uint64_t n;

	return fd >= 0 && sha256_fd(fd, hex, &n) == 0 && n == it->m->size && streq(hex, it->m->sha256);
}

/* Is this manifest path one of the profile's fstab files ("/etc/fstab" -> "etc/fstab")? */
static bool is_fstab(const struct profile *prof, const char *home, const char *path)
{
	for (size_t i = 0; prof && i < prof->fstab_files.n; i++) {
		_cleanup_free_ char *x = profile_expand(prof->fstab_files.v[i], home ? home : "/");
		const char *q = x;

		while (*q == '/')
			q++;
		if (streq(q, path))
			return true;
	}
	return false;
}

/* Classify one destination: missing, same, or to replace; refuse a directory/non-directory swap. */
static int classify(int rootfd, const char *dest, const struct mentry *m, const struct arc_item *it, uid_t uid,
		    gid_t gid, enum restore_action *act, char **why)
{
	_cleanup_free_ char *bad = NULL;
	const char *leaf;
	_cleanup_close_ int dfd = open_parent(rootfd, dest, false, NULL, &leaf, &bad);
	struct stat st;

	if (dfd == -ENOENT) {
		*act = RA_CREATE;
		return 0;
	}
	if (dfd == -ELOOP)
		return set_why(why, -EBADMSG, "refusing '%s': its path goes through the symlink '%s' on the root", dest, bad);
	if (dfd == -ENOTDIR)
		return set_why(why, -EBADMSG, "refusing '%s': '%s' on the root is not a directory", dest, bad);
	if (dfd < 0)
		return set_why(why, dfd, "cannot open the directory of '%s' on the root: %s", dest, strerror(-dfd));
	if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return set_why(why, -errno, "cannot stat '%s' on the root: %m", dest);
		*act = RA_CREATE;
		return 0;
	}
	if ((m->type == MT_DIR) != !!S_ISDIR(st.st_mode))
		return set_why(why, -EBADMSG, "refusing '%s': it would replace a %s with a %s", dest,
			    S_ISDIR(st.st_mode) ? "directory" : "non-directory", mtype_name(m->type));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return set_why(why, -EBADMSG, "refusing '%s': the root holds a special file there", dest);
	if (m->parent) {
		*act = RA_UNCHANGED;
		return 0;
	}
	*act = RA_REPLACE;
	if (st.st_uid != uid || st.st_gid != gid)
		return 0;
	if (m->type == MT_DIR && (st.st_mode & 07777) == m->mode)
		*act = RA_UNCHANGED;
	else if (m->type == MT_FILE && S_ISREG(st.st_mode) && (st.st_mode & 07777) == m->mode &&
		 (uint64_t)st.st_size == m->size && same_content(dfd, leaf, it) && st.st_nlink == 1)
		*act = RA_UNCHANGED;
	else if (m->type == MT_SYMLINK && S_ISLNK(st.st_mode)) {
		char t[4096];
		ssize_t n = readlinkat(dfd, leaf, t, sizeof(t) - 1);

		if (n >= 0) {
			t[n] = '\0';
			if (streq(t, m->link))
				*act = RA_UNCHANGED;
		}
	}
	return 0;
}

static int owner_of(const struct arc *a, const struct restore_opts *o, const struct mentry *m, uid_t *uid, gid_t *gid,
		    char **why)
{
	const char *u = name_map_apply(o->map, m->user), *g = name_map_apply(o->map, m->group);
	int r;

	(void)a;
	/* an offline root with no etc/passwd of its own (a bare directory): the ids the backup
	 * recorded, never this host's idea of the names */
	r = lookup_user(o->root, u, uid);
	if (r == -ENOMEDIUM)
		*uid = m->uid;
	else if (r < 0)
		return set_why(why, -ESRCH, "the user '%s' of '%s' does not exist on %s; create it, or pass --map-user %s=NAME",
			    u, m->path, root_is_live(o->root) ? "this machine" : "the root's etc/passwd", m->user);
	r = lookup_group(o->root, g, gid);
	if (r == -ENOMEDIUM)
		*gid = m->gid;
	else if (r < 0)
		return set_why(why, -ESRCH, "the group '%s' of '%s' does not exist on %s; create it, or pass --map-user %s=NAME",
			    g, m->path, root_is_live(o->root) ? "this machine" : "the root's etc/group", m->group);
	return 0;
}

int restore_plan(const struct arc *a, const struct restore_opts *o, struct restore_plan *p, char **why)
{
	_cleanup_close_ int rootfd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	*p = (struct restore_plan){ 0 };
	if (rootfd < 0)
		return set_why(why, -errno, "cannot open the root '%s': %m", o->root);
	for (size_t i = 0; i < a->n; i++) {
		const struct arc_item *it = &a->items[i];
		const struct mentry *m = it->m;
		_cleanup_free_ char *dest = xstrdup(m->path);
		enum restore_action act;
		uid_t uid;
		gid_t gid;

		r = owner_of(a, o, m, &uid, &gid, why);
		if (r < 0)
			return r;
		if (!a->man.undo && m->type == MT_FILE && is_fstab(o->profile, a->man.home, m->path)) {
			struct restore_fstab *f;
			_cleanup_free_ char *text = strndup((const char *)it->data, it->len);

			p->fst = realloc(p->fst, (p->nfst + 1) * sizeof(*p->fst));
			if (!p->fst || !text)
				abort();
			f = &p->fst[p->nfst++];
			*f = (struct restore_fstab){ .path = xstrdup(m->path) };
			fstab_check(text, fstab_is_crypttab(m->path), o->resolve, o->resolve_data, &f->rep);
			if (f->rep.n > 0) {
				/* Restoring an fstab whose devices are gone is how machines stop booting:
				 * the current file stays, the old one goes beside it. */
				f->kept_as = xasprintf("%s.pre-swap", m->path);
				free(dest);
				dest = xstrdup(f->kept_as);
			}
		}
		r = classify(rootfd, dest, m, it, uid, gid, &act, why);
		if (r < 0)
			return r;
		plan_add(p, it, dest, act, uid, gid);
	}
	/* the undo archive needs every path restore will create, intermediate directories too */
	for (size_t i = 0; i < p->n; i++) {
		_cleanup_free_ char *d = xstrdup(p->v[i].dest);

		for (char *q = d; (q = strchr(q, '/')); q++) {
			struct stat st;

			*q = '\0';
			if (!strlist_has(&p->created, d) && fstatat(rootfd, d, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
				strlist_add(&p->created, d);
			*q = '/';
		}
		if (p->v[i].action == RA_CREATE && !strlist_has(&p->created, p->v[i].dest))
			strlist_add(&p->created, p->v[i].dest);
	}
	/* Two entries for one destination: an archive entry 'etc/fstab.pre-swap' next to the
	 * fstab the trap keeps there; the second would overwrite the first. */
	if (p->n > 1) {
		_cleanup_free_ char **d = xcalloc(p->n, sizeof(char *));

		for (size_t i = 0; i < p->n; i++)
			d[i] = p->v[i].dest;
		qsort(d, p->n, sizeof(char *), cmp_strp);
		for (size_t i = 1; i < p->n; i++)
			if (streq(d[i - 1], d[i]))
				return set_why(why, -EBADMSG, "refusing the archive: two of its entries would be written to '%s'%s",
					    d[i], endswith_pre_swap(d[i]) ? " (an entry of that name and the fstab kept there)" : "");
	}
	if (a->man.undo)
		for (size_t i = a->man.undo_created.n; i-- > 0;) {
			const char *rel = a->man.undo_created.v[i];
			_cleanup_free_ char *bad = NULL;
			const char *leaf;
			_cleanup_close_ int dfd = open_parent(rootfd, rel, false, NULL, &leaf, &bad);
			struct stat st;

			if (dfd == -ELOOP)
				return set_why(why, -EBADMSG, "refusing to remove '%s': its path goes through the symlink '%s'", rel, bad);
			if (dfd < 0 || fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			plan_add(p, NULL, rel, RA_REMOVE, (uid_t)-1, (gid_t)-1);
		}
	find_strays(rootfd, p, &p->strays);
	return 0;
}

void restore_plan_free(struct restore_plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].dest);
	free(p->v);
	for (size_t i = 0; i < p->nfst; i++) {
		free(p->fst[i].path);
		free(p->fst[i].kept_as);
		fstab_report_free(&p->fst[i].rep);
	}
	free(p->fst);
	strlist_clear(&p->created);
	strlist_clear(&p->strays);
	*p = (struct restore_plan){ 0 };
}

/* ---------------------------------------------------------------- apply ---- */

/* POSIX ACLs as the kernel stores them in system.posix_acl_*: version 2, then
 * {le16 tag, le16 perm, le32 id} sorted by tag and id (include/uapi/linux/posix_acl_xattr.h). */
struct kacl {
	uint16_t tag, perm;
	uint32_t id;
};

static int cmp_kacl(const void *a, const void *b)
{
	const struct kacl *x = a, *y = b;
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static size_t acl_xattr(struct archive_entry *ae, int type, const char *root, unsigned char *buf, size_t cap)
{
	struct kacl v[64];
	size_t n = 0, len;
	int t, perm, tag, qual;
	const char *name;
	bool extended = false, have_uo = false, have_go = false, have_o = false;
	mode_t mode = archive_entry_perm(ae);

	if (archive_entry_acl_reset(ae, type) <= 0)
		return 0;
	while (n < ARRAY_SIZE(v) - 3 && archive_entry_acl_next(ae, type, &t, &perm, &tag, &qual, &name) == ARCHIVE_OK) {
		struct kacl k = { .perm = (uint16_t)(perm & 7), .id = UINT32_MAX };

		switch (tag) {
		case ARCHIVE_ENTRY_ACL_USER_OBJ: k.tag = 0x01; have_uo = true; break;
		case ARCHIVE_ENTRY_ACL_USER: {
			uid_t u;
			k.tag = 0x02;
			k.id = name && lookup_user(root, name, &u) == 0 ? (uint32_t)u : (uint32_t)qual;
			extended = true;
			break;
		}
		case ARCHIVE_ENTRY_ACL_GROUP_OBJ: k.tag = 0x04; have_go = true; break;
		case ARCHIVE_ENTRY_ACL_GROUP: {
			gid_t g;
			k.tag = 0x08;
			k.id = name && lookup_group(root, name, &g) == 0 ? (uint32_t)g : (uint32_t)qual;
			extended = true;
			break;
		}
		case ARCHIVE_ENTRY_ACL_MASK: k.tag = 0x10; extended = true; break;
		case ARCHIVE_ENTRY_ACL_OTHER: k.tag = 0x20; have_o = true; break;
		default: continue;
		}
		v[n++] = k;
	}
	if (type == ARCHIVE_ENTRY_ACL_TYPE_ACCESS && !extended)
		return 0; /* the mode says it all */
	if (type == ARCHIVE_ENTRY_ACL_TYPE_DEFAULT && n == 0)
		return 0;
	if (!have_uo)
		v[n++] = (struct kacl){ 0x01, (uint16_t)((mode >> 6) & 7), UINT32_MAX };
	if (!have_go)
		v[n++] = (struct kacl){ 0x04, (uint16_t)((mode >> 3) & 7), UINT32_MAX };
	if (!have_o)
		v[n++] = (struct kacl){ 0x20, (uint16_t)(mode & 7), UINT32_MAX };
	qsort(v, n, sizeof(v[0]), cmp_kacl);
	len = 4 + 8 * n;
	if (len > cap)
		return 0;
	buf[0] = 2, buf[1] = buf[2] = buf[3] = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char *e = buf + 4 + 8 * i;
		e[0] = (unsigned char)(v[i].tag & 0xff), e[1] = (unsigned char)(v[i].tag >> 8);
		e[2] = (unsigned char)(v[i].perm & 0xff), e[3] = (unsigned char)(v[i].perm >> 8);
		for (int b = 0; b < 4; b++)
			e[4 + b] = (unsigned char)(v[i].id >> (8 * b));
	}
	return len;
}

/* Owner, mode, xattrs, ACLs and mtime on an open file or directory. */
static int apply_meta(int fd, const struct restore_step *s, const char *root, char **why)
{
	struct archive_entry *ae = s->item->ae;
	const struct mentry *m = s->item->m;
	const char *name;
	const void *value;
	size_t size;
	unsigned char acl[4 + 8 * 64];
	size_t alen;
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = m->mtime } };

	if (fchown(fd, s->uid, s->gid) < 0)
		return set_why(why, -errno, "cannot give '%s' to %s:%s: %m; run restore as root", s->dest, m->user, m->group);
	/* after chown: chown clears set-id bits */
	if (fchmod(fd, m->mode) < 0)
		return set_why(why, -errno, "cannot set the mode of '%s': %m", s->dest);
	archive_entry_xattr_reset(ae);
	while (archive_entry_xattr_next(ae, &name, &value, &size) == ARCHIVE_OK)
		if (fsetxattr(fd, name, value, size, 0) < 0)
			return set_why(why, -errno, "cannot set the extended attribute '%s' on '%s': %m", name, s->dest);
	alen = acl_xattr(ae, ARCHIVE_ENTRY_ACL_TYPE_ACCESS, root, acl, sizeof(acl));
	if (alen && fsetxattr(fd, "system.posix_acl_access", acl, alen, 0) < 0)
		return set_why(why, -errno, "cannot set the ACL of '%s': %m", s->dest);
	if (m->type == MT_DIR) {
		alen = acl_xattr(ae, ARCHIVE_ENTRY_ACL_TYPE_DEFAULT, root, acl, sizeof(acl));
		if (alen && fsetxattr(fd, "system.posix_acl_default", acl, alen, 0) < 0)
			return set_why(why, -errno, "cannot set the default ACL of '%s': %m", s->dest);
	}
	if (futimens(fd, ts) < 0)
		return set_why(why, -errno, "cannot set the time of '%s': %m", s->dest);
	return 0;
}

static int tmp_name(char buf[64])
{
	static unsigned counter;
	snprintf(buf, 64, ".swaptool-restore.%d.%u", (int)getpid(), counter++);
	return 0;
}

/* Write one entry. Files and symlinks go to a temporary name beside the destination; with
 * `prepared` set they stay there (the caller syncs once and renames them all, commit_step),
 * else they are flushed and renamed at once. */
static int write_step(int rootfd, const struct restore_step *s, const char *root, struct strlist *created,
		      char prepared[64], char **why)
{
	const struct mentry *m = s->item->m;
	_cleanup_free_ char *bad = NULL;
	const char *leaf;
	_cleanup_close_ int dfd = open_parent(rootfd, s->dest, true, created, &leaf, &bad);
	char tmp[64];
	int r;

	if (dfd < 0)
		return set_why(why, dfd, "cannot open the directory of '%s'%s%s%s: %s", s->dest, bad ? " ('" : "",
			    bad ? bad : "", bad ? "')" : "", strerror(-dfd));
	if (m->type == MT_DIR) {
		_cleanup_close_ int fd = -1;

		if (s->action == RA_CREATE && mkdirat(dfd, leaf, 0700) < 0 && errno != EEXIST)
			return set_why(why, -errno, "cannot create the directory '%s': %m", s->dest);
		fd = openat(dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return set_why(why, -errno, "cannot open the directory '%s': %m", s->dest);
		return apply_meta(fd, s, root, why);
	}
	tmp_name(tmp);
	if (m->type == MT_FILE) {
		_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			return set_why(why, -errno, "cannot create a file in the directory of '%s': %m", s->dest);
		r = write_all(fd, s->item->data, s->item->len);
		if (r < 0) {
			set_why(why, r, "cannot write '%s': %s", s->dest, strerror(-r));
			goto bad;
		}
		r = apply_meta(fd, s, root, why);
		if (r == 0 && !prepared && fsync(fd) < 0)
			r = set_why(why, -errno, "cannot flush '%s': %m", s->dest);
		if (r < 0)
			goto bad;
	} else if (m->type == MT_SYMLINK) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = m->mtime } };

		if (symlinkat(m->link, dfd, tmp) < 0)
			return set_why(why, -errno, "cannot create the symlink '%s': %m", s->dest);
		if (fchownat(dfd, tmp, s->uid, s->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
		    utimensat(dfd, tmp, ts, AT_SYMLINK_NOFOLLOW) < 0) {
			r = set_why(why, -errno, "cannot set the owner or time of the symlink '%s': %m", s->dest);
			goto bad;
		}
	} else {
		_cleanup_free_ char *tbad = NULL;
		const char *tleaf;
		_cleanup_close_ int tfd = open_parent(rootfd, m->link, false, NULL, &tleaf, &tbad);

		if (tfd < 0 || linkat(tfd, tleaf, dfd, tmp, 0) < 0)
			return set_why(why, tfd < 0 ? tfd : -errno, "cannot link '%s' to '%s': %s", s->dest, m->link,
				    strerror(tfd < 0 ? -tfd : errno));
	}
	if (prepared && m->type != MT_HARDLINK) {
		memcpy(prepared, tmp, 64);
		return 0;
	}
	if (renameat(dfd, tmp, dfd, leaf) < 0) {
		r = set_why(why, -errno, "cannot put '%s' in place: %m", s->dest);
		goto bad;
	}
	/* the directories are flushed once at the end (syncfs): one fsync per entry's directory
	 * made a 8,000-entry restore take 16,000 flushes */
	return 0;
bad:
	unlinkat(dfd, tmp, 0);
	return r;
}

static int remove_step(int rootfd, const struct restore_step *s, char **why)
{
	const char *leaf;
	_cleanup_close_ int dfd = open_parent(rootfd, s->dest, false, NULL, &leaf, NULL);
	struct stat st;

	if (dfd < 0 || fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (unlinkat(dfd, leaf, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0 && errno != ENOTEMPTY && errno != EEXIST)
		return set_why(why, -errno, "cannot remove '%s': %m", s->dest);
	return 0;
}

/* The undo archive: what is there now at every path the plan replaces, and what it creates. */
static int write_undo(const struct arc *a, const struct restore_opts *o, const struct restore_plan *p, char **why)
{
	struct arc_source u = { 0 };
	char sha[65];
	uint64_t bytes;
	char now[32];
	int r = 0;

	(void)a;
	iso8601_utc(time(NULL), now);
	u.man.host = xstrdup(host_name());
	u.man.created = xstrdup(now);
	u.man.home = a->man.home ? xstrdup(a->man.home) : NULL;
	u.man.user = a->man.user ? xstrdup(a->man.user) : NULL;
	u.man.undo = true;
	u.root = o->root;
	u.lim = o->profile ? &o->profile->limits : NULL;
	for (size_t i = 0; i < p->created.n; i++)
		strlist_add(&u.man.undo_created, p->created.v[i]);
	for (size_t i = 0; i < p->n && r == 0; i++) {
		const struct restore_step *s = &p->v[i];
		_cleanup_free_ char *full = NULL;
		struct stat st;
		struct mentry *e;

		if (s->action != RA_REPLACE)
			continue;
		full = xasprintf("%s/%s", o->root, s->dest);
		if (lstat(full, &st) < 0) {
			r = set_why(why, -errno, "cannot stat '%s' to save it for undo: %m", full);
			break;
		}
		e = manifest_add(&u.man, s->dest);
		u.src = realloc(u.src, u.man.cap * sizeof(char *));
		if (!u.src)
			abort();
		u.src[u.man.n - 1] = xstrdup(full);
		e->mode = st.st_mode & 07777;
		e->uid = st.st_uid;
		e->gid = st.st_gid;
		/* named as the root names them, so that --undo maps them back to the same ids */
		e->user = root_user_name(o->root, st.st_uid);
		e->group = root_group_name(o->root, st.st_gid);
		e->mtime = st.st_mtim.tv_sec;
		if (S_ISREG(st.st_mode)) {
			e->type = MT_FILE;
			r = sha256_path(full, e->sha256, &e->size);
			if (r < 0)
				r = set_why(why, r, "cannot read '%s' to save it for undo: %s", full, strerror(-r));
		} else if (S_ISLNK(st.st_mode)) {
			char t[4096];
			ssize_t n = readlink(full, t, sizeof(t) - 1);

			if (n < 0) {
				r = set_why(why, -errno, "cannot read the link '%s': %m", full);
				break;
			}
			t[n] = '\0';
			e->type = MT_SYMLINK;
			e->link = xstrdup(t);
		} else
			e->type = MT_DIR;
	}
	if (r == 0) {
		const char *dup;
		if (manifest_index(&u.man, &dup) < 0)
			r = set_why(why, -EINVAL, "'%s' appears twice in the undo set", dup);
	}
	if (r == 0) {
		_cleanup_free_ char *dir = xstrdup(o->undo_path);
		char *sl = strrchr(dir, '/');

		if (sl && sl != dir) {
			*sl = '\0';
			mkdir_p(dir, 0700);
		}
		r = arc_write(&u, o->undo_path, (uid_t)-1, (gid_t)-1, sha, &bytes, why);
	}
	arc_source_free(&u);
	return r;
}

/* Rename a prepared temporary into place (or, with `drop`, remove it after a failure). */
static int commit_step(int rootfd, const struct restore_step *s, const char *tmp, bool drop, char **why)
{
	const char *leaf;
	_cleanup_close_ int dfd = open_parent(rootfd, s->dest, false, NULL, &leaf, NULL);

	if (dfd < 0)
		return drop ? 0 : set_why(why, dfd, "cannot open the directory of '%s': %s", s->dest, strerror(-dfd));
	if (drop) {
		unlinkat(dfd, tmp, 0);
		return 0;
	}
	if (renameat(dfd, tmp, dfd, leaf) < 0)
		return set_why(why, -errno, "cannot put '%s' in place: %m", s->dest);
	return 0;
}

/* The step records back into the state directory: each to a temporary of our own (mkostemp),
 * one syncfs, then the renames and one fsync of the directory (a fsync per record made 4,096
 * records take 40 s). */
static int restore_records(const struct arc *a, const char *dir, char **why)
{
	_cleanup_close_ int dfd = -1;
	char **tmps = xcalloc(a->man.nst, sizeof(char *));
	int r = mkdir_p(dir, 0700);

	if (r == 0 && (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		r = -errno;
	for (size_t i = 0; i < a->man.nst && r == 0; i++) {
		_cleanup_close_ int fd = -1;

		tmps[i] = xasprintf("%s/%s.tmp.XXXXXX", dir, a->state[i].name);
		fd = mkostemp(tmps[i], O_CLOEXEC);
		if (fd < 0) {
			r = -errno;
			free(tmps[i]);
			tmps[i] = NULL;
			break;
		}
		r = fchmod(fd, 0600) < 0 ? -errno : write_all(fd, a->state[i].data, a->state[i].len);
	}
	if (r == 0 && syncfs(dfd) < 0)
		r = -errno;
	for (size_t i = 0; i < a->man.nst; i++) {
		if (!tmps[i])
			continue;
		if (r == 0) {
			_cleanup_free_ char *path = xasprintf("%s/%s", dir, a->state[i].name);

			if (rename(tmps[i], path) < 0)
				r = -errno;
		}
		if (r < 0)
			unlink(tmps[i]);
		free(tmps[i]);
	}
	free(tmps);
	if (r == 0 && fsync(dfd) < 0)
		r = -errno;
	if (r < 0)
		return set_why(why, r, "cannot bring the step records back into '%s': %s", dir,
			    r == -ENOSPC ? "no space left on the device" : strerror(-r));
	return 0;
}

int restore_apply(const struct arc *a, const struct restore_opts *o, struct restore_plan *p, char **why)
{
	_cleanup_close_ int rootfd = open(o->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct strlist made = { 0 };
	int r = 0;

	if (rootfd < 0)
		return set_why(why, -errno, "cannot open the root '%s': %m", o->root);
	if (o->undo_path && (p->nreplace > 0 || p->created.n > 0)) {
		r = write_undo(a, o, p, why);
		if (r < 0)
			return r;
	}
	/* what an interrupted restore left: copies of keys under names no one else uses */
	for (size_t i = 0; i < p->strays.n; i++) {
		_cleanup_free_ char *bad = NULL;
		const char *leaf;
		_cleanup_close_ int dfd = open_parent(rootfd, p->strays.v[i], false, NULL, &leaf, &bad);
		struct stat st;

		if (dfd >= 0 && fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
		    unlinkat(dfd, leaf, 0) < 0 && errno != ENOENT)
			return set_why(why, -errno, "cannot remove '%s', left by an interrupted restore: %m", p->strays.v[i]);
	}
	/*
	 * Directories first (archive order: parents first); then every file and symlink to a
	 * temporary name beside its destination; one syncfs makes them all durable before any
	 * rename (an fsync per file made 8,000 entries take 36 s); then the renames; hard links
	 * after their targets; removals (undo) deepest first; directory times last.
	 */
	_cleanup_free_ char (*tmps)[64] = xcalloc(p->n ? p->n : 1, 64);
	for (int pass = 0; pass < 2 && r == 0; pass++)
		for (size_t i = 0; i < p->n && r == 0; i++) {
			const struct restore_step *s = &p->v[i];
			enum mtype t;

			if (!s->item || s->action == RA_UNCHANGED || s->action == RA_KEEP)
				continue;
			t = s->item->m->type;
			if (t == MT_HARDLINK || (pass == 0) != (t == MT_DIR))
				continue;
			if (arc_interrupted) {
				r = set_why(why, -EINTR, "interrupted before any file was put in place");
				break;
			}
			r = write_step(rootfd, s, o->root, &made, pass == 1 ? tmps[i] : NULL, why);
		}
	if (r == 0 && arc_interrupted)
		r = set_why(why, -EINTR, "interrupted before any file was put in place");
	if (r == 0 && syncfs(rootfd) < 0)
		r = set_why(why, -errno, "cannot flush the filesystem of '%s': %m", o->root);
	for (size_t i = 0; i < p->n; i++)
		if (tmps[i][0]) {
			int rr = commit_step(rootfd, &p->v[i], tmps[i], r < 0, why);

			if (r == 0 && rr < 0)
				r = rr;
			tmps[i][0] = '\0';
		}
	for (size_t i = 0; i < p->n && r == 0; i++) {
		const struct restore_step *s = &p->v[i];

		if (s->item && s->item->m->type == MT_HARDLINK && s->action != RA_UNCHANGED)
			r = write_step(rootfd, s, o->root, &made, NULL, why);
	}
	for (size_t i = 0; i < p->n && r == 0; i++)
		if (p->v[i].action == RA_REMOVE)
			r = remove_step(rootfd, &p->v[i], why);
	for (size_t i = p->n; i-- > 0 && r == 0;) {
		const struct restore_step *s = &p->v[i];

		if (s->item && s->item->m->type == MT_DIR && (s->action == RA_CREATE || s->action == RA_REPLACE)) {
			struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = s->item->m->mtime } };
			const char *leaf;
			_cleanup_close_ int dfd = open_parent(rootfd, s->dest, false, NULL, &leaf, NULL);

			if (dfd < 0 || utimensat(dfd, leaf, ts, AT_SYMLINK_NOFOLLOW) < 0)
				r = set_why(why, dfd < 0 ? dfd : -errno, "cannot set the time of '%s': %s", s->dest,
					 strerror(dfd < 0 ? -dfd : errno));
		}
	}
	strlist_clear(&made);
	if (r == 0 && syncfs(rootfd) < 0)
		r = set_why(why, -errno, "cannot flush the filesystem of '%s': %m", o->root);
	if (r == 0 && o->state_dir && a->man.nst > 0)
		r = restore_records(a, o->state_dir, why);
	return r;
}
